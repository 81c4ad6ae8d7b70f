"""``pubsearch batch``: query files in, TREC runs out, searched as ``pubsearch query`` does."""

from __future__ import annotations

import json
import multiprocessing
import random
from pathlib import Path

import pytest
from cli_support import assert_one_line_error
from click.testing import CliRunner, Result

from pubsearch.cli import trec
from pubsearch.cli.main import main
from pubsearch.cli.trec import read_queries
from pubsearch.core.errors import ReadError

DATA = Path(__file__).resolve().parent / "data"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def run_rows(text: str) -> list[list[str]]:
    return [line.split(" ") for line in text.splitlines()]


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def tsv(tmp_path: Path) -> Path:
    return write(
        tmp_path / "queries.tsv",
        "q1\tbatch size\n"
        "\n"
        "q2\tDoes a larger batch size make training of neural networks faster?\n"
        "q3\ttraining\n",
    )


def test_tsv_queries_give_a_trec_run(seed_index: Path, tsv: Path) -> None:
    result = run("batch", str(tsv), "--index", str(seed_index))
    assert result.exit_code == 0, result.output
    rows = run_rows(result.stdout)
    assert rows and all(len(row) == 6 for row in rows)
    assert {row[0] for row in rows} == {"q1", "q2", "q3"}
    assert all(row[1] == "Q0" and row[5] == "pubsearch" for row in rows)
    for qid in ("q1", "q2", "q3"):
        mine = [row for row in rows if row[0] == qid]
        assert [int(row[3]) for row in mine] == list(range(1, len(mine) + 1))
        scores = [float(row[4]) for row in mine]
        assert scores == sorted(scores, reverse=True)
        assert len({row[2] for row in mine}) == len(mine)


def test_run_is_what_query_returns(seed_index: Path, tsv: Path) -> None:
    rows = run_rows(run("batch", str(tsv), "--index", str(seed_index), "--hits", "10").stdout)
    for qid, text in [
        ("q1", "batch size"),
        ("q2", "Does a larger batch size make training of neural networks faster?"),
    ]:
        out = run("query", text, "--index", str(seed_index), "--format", "json")
        expected = [(h["id"], h["rank"]) for h in json.loads(out.stdout)["hits"]]
        assert [(row[2], int(row[3])) for row in rows if row[0] == qid] == expected


def test_a_pasted_sentence_finds_records(seed_index: Path, tsv: Path) -> None:
    rows = run_rows(run("batch", str(tsv), "--index", str(seed_index)).stdout)
    assert sum(1 for row in rows if row[0] == "q2") > 10


def test_jsonl_queries_with_id_or_underscore_id(seed_index: Path, tmp_path: Path) -> None:
    queries = write(
        tmp_path / "queries.jsonl",
        '{"_id": "0", "text": "batch size", "metadata": {}}\n{"id": 7, "text": "whale"}\n',
    )
    result = run("batch", str(queries), "--index", str(seed_index), "--tag", "mine")
    assert result.exit_code == 0, result.output
    rows = run_rows(result.stdout)
    assert {row[0] for row in rows} == {"0", "7"}
    assert {row[5] for row in rows} == {"mine"}


def test_hits_and_output(seed_index: Path, tsv: Path, tmp_path: Path) -> None:
    out = tmp_path / "run.txt"
    result = run("batch", str(tsv), "--index", str(seed_index), "--hits", "2", "--output", str(out))
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    rows = run_rows(out.read_text())
    assert [row[0] for row in rows] == ["q1", "q1", "q2", "q2", "q3", "q3"]


def test_more_hits_than_a_page(seed_index: Path, tmp_path: Path) -> None:
    queries = write(tmp_path / "q.tsv", "all\tlearning training model systems data\n")
    deep = run_rows(run("batch", str(queries), "--index", str(seed_index), "--hits", "500").stdout)
    shallow = run_rows(run("batch", str(queries), "--index", str(seed_index), "--hits", "7").stdout)
    assert len(deep) > 7
    assert deep[:7] == shallow


def test_docids_are_the_records_own_ids(tmp_path: Path) -> None:
    corpus = write(
        tmp_path / "corpus.jsonl",
        "\n".join(
            json.dumps(obj)
            for obj in [
                {"_id": "4983", "title": "Summary", "text": "Tiny whales sing in cold water."},
                {"_id": "77", "title": "Summary", "text": "Large batch training of networks."},
                {"_id": "12", "title": "Made-up paper", "text": "Nothing about either."},
            ]
        )
        + "\n",
    )
    index_dir = tmp_path / "ix"
    assert run("index", "--index", str(index_dir), str(corpus)).exit_code == 0
    queries = write(tmp_path / "q.tsv", "a\twhales singing in water\nb\tbatch training\n")
    rows = run_rows(run("batch", str(queries), "--index", str(index_dir)).stdout)
    assert [(row[0], row[2]) for row in rows] == [("a", "4983"), ("b", "77")]


@pytest.mark.parametrize(
    ("content", "fragments"),
    [
        ("q1\tbatch\nno tab here\n", ["queries.txt:2", "id<TAB>text"]),
        ("q1\tbatch\n\nq1\twhale\n", ["queries.txt:3", "repeats", "queries.txt:1"]),
        ('{"_id": "1", "text": "batch"}\n{"_id": "2"\n', ["queries.txt:2", "not JSON"]),
        ('{"_id": "1", "text": "batch"}\n{"text": "whale"}\n', ["queries.txt:2", "query id"]),
        (
            '{"_id": "1", "text": "batch"}\n{"_id": "2", "text": ""}\n',
            ["queries.txt:2", "query text"],
        ),
        ("q1\tbatch\na b\tbatch\n", ["queries.txt:2", "white space"]),
    ],
)
def test_a_line_that_is_no_query_is_named_and_the_others_run(
    seed_index: Path, tmp_path: Path, content: str, fragments: list[str]
) -> None:
    queries = write(tmp_path / "queries.txt", content)
    result = run("batch", str(queries), "--index", str(seed_index))
    assert result.exit_code == 0, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and all(f in errors[0] for f in fragments), result.stderr
    summary = result.stderr.splitlines()[-1]
    assert summary.startswith("searched 1 of 2 queries; 1 failed (")
    assert summary.endswith(f"{fragments[0]})")
    assert {row[0] for row in run_rows(result.stdout)} == {"q1" if "\t" in content else "1"}


@pytest.mark.parametrize(
    ("content", "fragments"),
    [
        ("\n\n", ["queries.txt", "no queries"]),
        ("no tab here\n", ["queries.txt:1", "id<TAB>text"]),
    ],
)
def test_a_file_without_a_query_fails(
    seed_index: Path, tmp_path: Path, content: str, fragments: list[str]
) -> None:
    queries = write(tmp_path / "queries.txt", content)
    result = run("batch", str(queries), "--index", str(seed_index))
    assert result.exit_code == 1
    assert all(f in result.stderr for f in fragments), result.stderr
    assert result.stdout == ""


def test_a_query_that_cannot_run_is_named_and_the_others_run(
    seed_index: Path, tmp_path: Path
) -> None:
    queries = write(
        tmp_path / "queries.tsv", "q1\tbatch\nq2\tyear:abc training\nq3\tyear:[2019 TO\n"
    )
    result = run("batch", str(queries), "--index", str(seed_index), "--processes", "1")
    assert result.exit_code == 0, result.output
    assert {row[0] for row in run_rows(result.stdout)} == {"q1"}
    errors = result.stderr.splitlines()
    assert errors[0].startswith("error: ") and "queries.tsv:2" in errors[0]
    assert "year:abc is not a year" in errors[0]
    assert "queries.tsv:3" in errors[1] and "not closed" in errors[1]
    assert errors[-1].startswith("searched 1 of 3 queries; 2 failed (")
    assert errors[-1].endswith("queries.tsv:3)") and "queries.tsv:2, " in errors[-1]


def test_exit_status_is_1_only_when_every_query_failed(seed_index: Path, tmp_path: Path) -> None:
    queries = write(tmp_path / "queries.tsv", "q1\tyear:abc\nq2\tyear:[2019 TO\n")
    result = run("batch", str(queries), "--index", str(seed_index))
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.splitlines()[-1].startswith("searched 0 of 2 queries; 2 failed")


def test_plain_text_that_looks_like_syntax_is_searched(seed_index: Path, tmp_path: Path) -> None:
    queries = write(
        tmp_path / "queries.tsv",
        "q1\tthe batch size (the ?large batch effect) .\n"
        "q2\tpermutation: batch size training: faster?\n"
        "q3\tfoo:bar batch training *\n",
    )
    result = run("batch", str(queries), "--index", str(seed_index))
    assert result.exit_code == 0, result.output
    assert {row[0] for row in run_rows(result.stdout)} == {"q1", "q2", "q3"}
    assert result.stderr.splitlines() == ["searched 3 of 3 queries"]


def test_not_utf8_names_the_line(tmp_path: Path) -> None:
    queries = tmp_path / "queries.tsv"
    queries.write_bytes(b"q1\tbatch\nq2\tbad \xff byte\n")
    with pytest.raises(ReadError, match="not UTF-8"):
        read_queries(queries)


def test_bad_hits_and_missing_index(seed_index: Path, tsv: Path, tmp_path: Path) -> None:
    assert_one_line_error(run("batch", str(tsv), "--index", str(seed_index), "--hits", "0"), 2)
    assert_one_line_error(run("batch", str(tsv), "--index", str(tmp_path / "none")), 1)


def test_300_pasted_paragraphs_with_stray_syntax_all_find_records(tmp_path: Path) -> None:
    """Paragraphs of real abstracts with ?, *, :, brackets and quotes strewn in: every one
    is searched and finds records, its own first."""
    sample = DATA / "arxiv-2024-2026.sample.jsonl"
    index_dir = tmp_path / "ix"
    assert run("index", "--index", str(index_dir), str(sample)).exit_code == 0
    records = [json.loads(line) for line in sample.read_text(encoding="utf-8").splitlines()]
    strays = ["?", "*", ":", "(", ")", "[", "]", '"', "\u201c", "{", "}", "-", "^", "~"]
    rng = random.Random(17)
    lines = []
    for number, record in enumerate(records[:300]):
        words = record["abstract"].split()[:45]
        for _ in range(6):
            at = rng.randrange(len(words))
            stray = rng.choice(strays)
            where = rng.random()
            if where < 0.4:
                words[at] = stray + words[at]
            elif where < 0.8:
                words[at] = words[at] + stray
            else:
                words.insert(at, stray)
        lines.append(f"p{number}\t{' '.join(words)}\n")
    queries = write(tmp_path / "pasted.tsv", "".join(lines))
    result = run("batch", str(queries), "--index", str(index_dir), "--hits", "5")
    assert result.exit_code == 0, result.stderr
    rows = run_rows(result.stdout)
    assert {row[0] for row in rows} == {f"p{n}" for n in range(300)}
    firsts = {row[0]: row[2] for row in rows if row[3] == "1"}
    own = sum(firsts[f"p{n}"] == records[n]["id"] for n in range(300))
    assert own >= 295, own
    assert result.stderr.splitlines()[-1] == "searched 300 of 300 queries"


def test_read_queries_raises_for_a_line_that_is_no_query_unless_collecting(tmp_path: Path) -> None:
    queries = write(tmp_path / "q.tsv", "q1\tbatch\nnot a query\nq3\tyear:[2019 TO\n")
    with pytest.raises(ReadError, match=r"q\.tsv:2: "):
        read_queries(queries)
    problems: list[str] = []
    read = read_queries(queries, problems)
    assert [q.id for q in read] == ["q1", "q3"]  # query text is checked when searched
    assert len(problems) == 1 and problems[0].startswith(f"{queries}:2: ")


def test_batch_has_help() -> None:
    result = run("batch", "--help")
    assert result.exit_code == 0
    assert "TREC run" in result.output


# -- several processes (trec.run_in_processes) ----------------------------------------------

SEED_QUERIES = [
    "batch size",
    "Does a larger batch size make training of neural networks faster?",
    "training",
    "learning rate",
    "gradient noise scale",
    "distributed training of deep networks",
    '"batch size"',
    "author:you",
    "subject:cs.lg",
    "optimization year:2017..2019",
    "GPU clusters scheduling",
    "warmup",
    "generalization gap of large batches",
    "sharp minima",
    "data parallel",
    "speech recognition",
    "image classification ImageNet in minutes",
    "stochastic gradient descent",
    "adaptive batch sizes",
    "memory",
]


@pytest.fixture
def many(tmp_path: Path) -> Path:
    lines = [f"q{n}\t{text}\n" for n, text in enumerate(SEED_QUERIES, start=1)]
    return write(tmp_path / "many.tsv", "".join(lines))


def test_the_run_is_the_same_with_several_processes(seed_index: Path, many: Path) -> None:
    base = ["batch", str(many), "--index", str(seed_index), "--hits", "20"]
    one = run(*base, "--processes", "1")
    two = run(*base, "--processes", "2")
    assert one.exit_code == 0 and two.exit_code == 0, two.output
    rows = run_rows(one.stdout)
    assert len({row[0] for row in rows}) >= 15  # a few find nothing in the seeds
    assert len(rows) > 100
    assert two.stdout == one.stdout


def test_several_processes_really_search(seed_index: Path, tmp_path: Path) -> None:
    queries = trec.read_queries(
        write(tmp_path / "q.tsv", "".join(f"q{n}\tbatch size\n" for n in range(32)))
    )
    runs = (query_run.lines for query_run in trec.run_in_processes(seed_index, queries, 3, 5))
    first = next(runs)
    workers = multiprocessing.active_children()
    rest = list(runs)
    assert len(workers) == 3
    runs_ = [first, *rest]
    assert [lines[0].split(" ")[0] for lines in runs_] == [f"q{n}" for n in range(32)]
    assert len({tuple(line.split(" ", 1)[1] for line in lines) for lines in runs_}) == 1
    assert len(first) == 5
    assert not multiprocessing.active_children()  # the pool is gone with the batch


def test_a_short_batch_uses_fewer_processes(seed_index: Path, tsv: Path) -> None:
    queries = trec.read_queries(tsv)  # 3 queries: one process, this one
    runs = trec.run_in_processes(seed_index, queries, processes=4, hits=5)
    assert len(next(runs).lines) == 5
    assert not multiprocessing.active_children()
    assert len(list(runs)) == 2


def test_errors_in_worker_processes_are_one_line(
    seed_index: Path, many: Path, tmp_path: Path
) -> None:
    missing = run("batch", str(many), "--index", str(tmp_path / "none"), "--processes", "2")
    assert_one_line_error(missing, 1)
    assert "none" in missing.output
    # A record id a run cannot hold, found by a worker: the same line as in one process.
    corpus = write(
        tmp_path / "corpus.jsonl",
        json.dumps({"_id": "has space", "title": "Batch size", "text": "Batch size."}) + "\n",
    )
    index_dir = tmp_path / "ix"
    assert run("index", "--index", str(index_dir), str(corpus)).exit_code == 0
    one = run("batch", str(many), "--index", str(index_dir), "--processes", "1")
    two = run("batch", str(many), "--index", str(index_dir), "--processes", "2")
    assert_one_line_error(two, 1)
    assert two.output == one.output
    assert "record id 'has space' contains white space" in two.output
