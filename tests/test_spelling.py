"""Spelling corrections: title words and surnames, never a word the index knows, and the
candidates of a query's words weighed by how many records have them together."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from pubsearch.index.build import build_index
from pubsearch.index.spelling import MAX_WORDS, SPELLING_FILE, Candidate, Spelling
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.search.request import SearchRequest
from pubsearch.search.service import SearchService

TITLES = {
    "diffusion": 900,
    "models": 5000,
    "segmentation": 700,
    "language": 3000,
    "retrieval": 400,
    "generation": 800,
    "neural": 2000,
    "size": 4000,
    "wise": 300,
    "batch": 200,
    "2021": 50,
}
SURNAMES = {"hinton": 30, "patel": 40}
SPELLING = Spelling.build(TITLES.items(), SURNAMES.items())


def nothing_known(word: str) -> bool:
    return False


def together(words: Sequence[Candidate]) -> int:
    return 1


def corrected(text: str, known: object = nothing_known, count: object = together) -> str:
    words, at = [], 0
    for word in text.split():
        start = text.index(word, at)
        words.append((start, start + len(word), word))
        at = start + len(word)
    out = text
    for fix in reversed(SPELLING.corrections(words, known, count)):  # type: ignore[arg-type]
        out = out[: fix.start] + fix.word + out[fix.end :]
    return out


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("difusion", "diffusion"),  # a letter left out
        ("segmantation", "segmentation"),  # one replaced
        ("langauge", "language"),  # two swapped
        ("retreival", "retrieval"),
        ("generaton", "generation"),
        ("neurral", "neural"),  # one added
        ("Difusion", "diffusion"),  # case
        ("sise", "size"),  # "wise" is as near, but less used
        ("Hintn", "hinton"),  # a surname
    ],
)
def test_a_typo_is_corrected_to_the_nearest_word(typed: str, meant: str) -> None:
    assert corrected(typed) == meant


@pytest.mark.parametrize("typed", ["diffusion", "qwertyuiop", "nn", "2022", "sizzzles"])
def test_what_is_left_alone(typed: str) -> None:
    """A word of the table, nothing near, too short, digits, three edits away."""
    assert corrected(typed) == typed


def test_a_word_the_index_knows_is_never_corrected() -> None:
    assert corrected("langauge models", known=lambda word: word == "langauge") == (
        "langauge models"
    )


def test_a_capital_prefers_a_surname_and_a_small_letter_the_more_used_word() -> None:
    spelling = Spelling.build([("hint", 500)], [("hinton", 30)])

    def counted(words: Sequence[Candidate]) -> int:
        return 10 if words[0].word == "hint" else 1

    words = [(0, 5, "Hintn")]
    assert [c.word for c in spelling.corrections(words, nothing_known, counted)] == ["hinton"]
    words = [(0, 5, "hintn")]
    assert [c.word for c in spelling.corrections(words, nothing_known, counted)] == ["hint"]


def test_the_combination_most_records_have_together_wins() -> None:
    spelling = Spelling.build([("ways", 900), ("waves", 300), ("wave", 600)], [])

    def counted(words: Sequence[Candidate]) -> int:
        found = {c.word for c in words}
        return 1221 if {"gravitational", "waves"} <= found or "wave" in found else 263

    words = [(0, 13, "gravitational"), (14, 18, "wavs")]
    # "ways" is the most used of the nearest words; "waves" is what is found with the rest.
    fixes = spelling.corrections(words, lambda word: word == "gravitational", counted)
    assert [fix.word for fix in fixes] == ["waves"]  # "wave" as often: "waves" keeps the s


def test_corrections_say_where_and_skip_pasted_text() -> None:
    words = [(0, 8, "difusion"), (9, 15, "models")]
    fixes = SPELLING.corrections(words, nothing_known, together)
    assert [(f.start, f.end, f.word) for f in fixes] == [(0, 8, "diffusion")]
    many = [(i, i + 1, "difusion") for i in range(MAX_WORDS + 1)]
    assert SPELLING.corrections(many, nothing_known, together) == []


def test_a_saved_table_is_the_built_one(tmp_path: Path) -> None:
    SPELLING.save(tmp_path, 3)
    saved = Spelling.load(tmp_path, 3)
    assert saved is not None and Spelling.load(tmp_path, 4) is None
    for word in ["difusion", "hintn", "sise", "models", "zzz"]:
        assert saved.candidates(word) == SPELLING.candidates(word)
    assert "models" in saved and "model" not in saved and "hinton" in saved


# -- on a real index -------------------------------------------------------------------

# Records where correcting word by word goes wrong: "ways" is used by more titles than
# "waves", but "gravitational waves" is what the records say together.
RECORDS = [
    *(
        {"title": f"Gravitational waves from binary mergers {i}", "authors": ["Ana Ruiz"]}
        for i in range(6)
    ),
    *({"title": f"Ways to teach physics {i}", "authors": ["Tom Ways"]} for i in range(9)),
    {"title": "Gravitational lensing in ways we did not expect", "authors": ["Tom Ways"]},
    {"title": "Capsule networks revisited", "authors": ["Geoffrey E. Hinton"]},
    {"title": "Dynamic routing between capsules", "authors": ["Geoffrey Hinton", "Sara Sabour"]},
    {"title": "Neural rendering of scenes", "authors": ["Matthias Nießner", "Angela Dai"]},
    {"title": "Graph sparsification", "authors": ["Jakub Łącki"]},
    {"title": "Into the wild: hints for learning", "authors": ["Mary Smith"]},
]


def write_records(path: Path, records: list[dict[str, object]]) -> Path:
    with path.open("w", encoding="utf-8") as out:
        for number, record in enumerate(records):
            full = {
                "id": f"2401.{number:05d}",
                "abstract": f"An abstract of record {number}.",
                "categories": ["cs.LG"],
                "year": 2024,
                **record,
            }
            out.write(json.dumps(full) + "\n")
    return path


@pytest.fixture(scope="module")
def spelt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchService]:
    folder = tmp_path_factory.mktemp("spelling")
    source = write_records(folder / "records.jsonl", RECORDS)
    build_index(folder / "index", read_paths([source], ReadReport()))
    service = SearchService(folder / "index")
    yield service
    service.close()


def test_the_phrase_as_a_whole_chooses_the_correction(spelt: SearchService) -> None:
    results = spelt.search(SearchRequest(q="gravitaional wavs"))
    assert results.corrected_from == "gravitaional wavs"
    assert results.request.q == "gravitational waves"
    assert results.total == 6


@pytest.mark.parametrize("name", ["Hinton", "Niessner", "Nießner", "Lacki", "Łącki"])
def test_a_name_of_the_index_is_never_corrected(spelt: SearchService, name: str) -> None:
    results = spelt.search(SearchRequest(q=name))
    assert results.corrected_from is None and results.suggestion is None
    assert results.total >= 1 and results.request.q == name


def test_a_misspelt_name_is_corrected_to_the_name(spelt: SearchService) -> None:
    results = spelt.search(SearchRequest(q="Hintn"))
    assert results.corrected_from == "Hintn"
    assert results.request.q == "hinton"
    assert {"Geoffrey E. Hinton", "Geoffrey Hinton"} >= {
        a for hit in results.hits for a in hit.authors if "Hinton" in a
    }
    assert results.total == 2


def test_the_tables_are_saved_with_the_generation_and_read_from_it(
    spelt: SearchService, tmp_path: Path
) -> None:
    """A build saves the name and spelling tables; a generation without them (built by
    the version before) builds them when asked, and corrects the same."""
    generation = next(spelt.index_dir.glob("gen-*"))
    assert (generation / SPELLING_FILE).is_file() and (generation / "names.npz").is_file()
    older = tmp_path / "older"
    shutil.copytree(spelt.index_dir, older, ignore=shutil.ignore_patterns(".lock"))
    for table in older.glob("gen-*/*.npz"):
        if table.name in (SPELLING_FILE, "names.npz"):
            table.unlink()
    service = SearchService(older)
    try:
        for text in ["gravitaional wavs", "Hintn", "Lacki"]:
            assert service.suggest(text) == spelt.suggest(text), text
        gen = service._current_generation()
        assert gen._spelling is not None and gen._names is not None
    finally:
        service.close()
    # ... and saves them, for the processes after it.
    rebuilt = next(older.glob("gen-*"))
    assert (rebuilt / SPELLING_FILE).is_file() and (rebuilt / "names.npz").is_file()
    again = SearchService(older)
    try:
        assert again.suggest("Hintn") == spelt.suggest("Hintn")
    finally:
        again.close()


def test_an_update_leaves_the_tables_to_the_first_search(spelt: SearchService) -> None:
    """An update does not build the tables (9.6 s at 102,289 records); the first search
    that needs them builds and saves them, with the update's words and names."""
    from pubsearch.index.build import update_index
    from pubsearch.ingest.records import Record

    index_dir = spelt.index_dir.parent / "updated"
    shutil.copytree(spelt.index_dir, index_dir, ignore=shutil.ignore_patterns(".lock"))
    update_index(
        index_dir, [Record(title="Quasinormal ringdown spectroscopy", authors=("Zofia Kowal",))]
    )

    def saved() -> bool:
        """Whether the live generation holds a spelling table of its own."""
        service = SearchService(index_dir)
        try:
            gen = service._current_generation()
            found = Spelling.load(index_dir / gen.name, gen.index.latest_generation())
        finally:
            service.close()
        return found is not None

    assert not saved()
    service = SearchService(index_dir)
    try:
        assert service.suggest("ringdwn") == "ringdown"
        assert service.suggest("Kowak") == "kowal"
    finally:
        service.close()
    assert saved()
