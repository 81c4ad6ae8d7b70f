"""Vectors stored per generation: made by `pubsearch index`, added by `pubsearch embed`
(resumable), kept by updates and rebuilds, never mixed between models."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from pubsearch.cli.main import main
from pubsearch.index import embedding, storage, vectors
from pubsearch.index.build import build_index, update_index
from pubsearch.index.embedding import Embedder
from pubsearch.index.vectors import embed_index, generation_table, quantise, text_key
from pubsearch.ingest.readers import ReadReport, read_paths

pytestmark = pytest.mark.semantic

SEED_RECORDS = 36


def table_of(index_dir: Path) -> vectors.VectorTable:
    live = storage.current_generation(index_dir)
    assert live is not None
    table = generation_table(live)
    assert table is not None
    return table


def new_records(path: Path) -> Path:
    lines = [
        {
            "id": "new-1",
            "title": "Sparse attention for protein structure prediction",
            "abstract": "We predict how proteins fold with a sparse transformer.",
            "authors": ["A. Writer"],
            "year": 2025,
        },
        {
            "id": "new-2",
            "title": "Coral reef bleaching under marine heatwaves",
            "abstract": "Sea surface temperature anomalies and the loss of coral cover.",
            "authors": ["B. Diver"],
            "year": 2024,
        },
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_quantised_vectors_keep_their_direction() -> None:
    rng = np.random.default_rng(7)
    raw = rng.normal(size=(50, 384)).astype(np.float32)
    raw /= np.linalg.norm(raw, axis=1, keepdims=True)
    codes, scales = quantise(raw)
    assert codes.dtype == np.int8 and scales.dtype == np.float32
    back = codes.astype(np.float32) * scales[:, None]
    cosines = (back * raw).sum(axis=1) / np.linalg.norm(back, axis=1)
    assert cosines.min() > 0.999
    zero_codes, zero_scales = quantise(np.zeros((1, 384), dtype=np.float32))
    assert not zero_codes.any() and zero_scales[0] == 0


def test_text_keys_are_stable_and_differ() -> None:
    assert text_key("a title. an abstract") == text_key("a title. an abstract")
    assert text_key("a title. an abstract") != text_key("a title. an abstract!")


def test_index_makes_a_vector_per_record_within_400_bytes(tmp_path: Path, seeds_dir: Path) -> None:
    result = CliRunner().invoke(main, ["index", "--index", str(tmp_path / "ix"), str(seeds_dir)])
    assert result.exit_code == 0, result.output
    assert f"vectors: {SEED_RECORDS} records have one ({SEED_RECORDS} made, 0 kept" in result.stdout
    table = table_of(tmp_path / "ix")
    assert table.size == SEED_RECORDS and table.present.all()
    # The bundled model cuts records at RECORD_TOKENS unless told otherwise.
    assert table.model == f"all-MiniLM-L6-v2-int8-{embedding.RECORD_TOKENS}t"
    assert embedding.RECORD_TOKENS < embedding.MAX_TOKENS
    assert table.codes.shape[1] + table.scales.itemsize <= 400  # bytes a record
    assert not (tmp_path / "ix" / vectors.CHUNKS_DIR).exists()  # published: chunks removed


def test_no_vectors_then_embed_then_nothing_left_to_do(tmp_path: Path, seeds_dir: Path) -> None:
    runner = CliRunner()
    ix = str(tmp_path / "ix")
    built = runner.invoke(main, ["index", "--index", ix, "--no-vectors", str(seeds_dir)])
    assert built.exit_code == 0 and "vectors:" not in built.stdout
    live = storage.current_generation(tmp_path / "ix")
    assert live is not None and generation_table(live) is None
    embedded = runner.invoke(main, ["embed", "--index", ix])
    assert embedded.exit_code == 0, embedded.output
    assert f"{SEED_RECORDS} made" in embedded.stdout
    # Too few to time a sample first: said at once, without a forecast.
    assert embedded.stderr.startswith(f"vectors: making {SEED_RECORDS} (the index already")
    assert storage.current_generation(tmp_path / "ix") != live  # a new generation
    again = runner.invoke(main, ["embed", "--index", ix])
    assert again.stdout.startswith(f"vectors: all {SEED_RECORDS} records have one (0 made")


def test_max_tokens_is_kept_by_embed_and_update_and_changed_only_by_embed(
    tmp_path: Path, seeds_dir: Path
) -> None:
    runner = CliRunner()
    ix = str(tmp_path / "ix")
    built = runner.invoke(main, ["index", "--index", ix, "--max-tokens", "32", str(seeds_dir)])
    assert built.exit_code == 0, built.output
    assert table_of(tmp_path / "ix").model == "all-MiniLM-L6-v2-int8-32t"
    # Later runs follow the index's limit: nothing to embed again.
    again = runner.invoke(main, ["embed", "--index", ix])
    assert again.stdout.startswith(f"vectors: all {SEED_RECORDS} records have one (0 made")
    extra = str(new_records(tmp_path / "new.jsonl"))
    updated = runner.invoke(main, ["index", "--index", ix, "--update", extra])
    assert updated.exit_code == 0, updated.output
    table = table_of(tmp_path / "ix")
    assert table.model == "all-MiniLM-L6-v2-int8-32t" and table.present.all()
    # An update cannot change the limit: one line saying how to.
    refused = runner.invoke(main, ["index", "--index", ix, "--update", "--max-tokens", "64", extra])
    assert refused.exit_code == 2
    assert "pubsearch embed --max-tokens 64" in refused.stderr
    assert "Traceback" not in refused.output
    # embed with another limit makes every vector again.
    changed = runner.invoke(main, ["embed", "--index", ix, "--max-tokens", "64"])
    assert changed.exit_code == 0, changed.output
    assert f"{SEED_RECORDS + 2} made, 0 kept" in changed.stdout
    assert table_of(tmp_path / "ix").model == "all-MiniLM-L6-v2-int8-64t"
    too_few = runner.invoke(main, ["embed", "--index", ix, "--max-tokens", "8"])
    assert too_few.exit_code == 2 and "--max-tokens" in too_few.stderr


def test_an_index_of_the_models_own_limit_keeps_it(tmp_path: Path, seeds_dir: Path) -> None:
    """Vectors of 256 word pieces (the model's limit: every index embedded before the
    default became RECORD_TOKENS) keep their name and are not made again by embed or an
    update."""
    runner = CliRunner()
    ix = str(tmp_path / "ix")
    built = runner.invoke(main, ["index", "--index", ix, "--max-tokens", "256", str(seeds_dir)])
    assert built.exit_code == 0, built.output
    assert table_of(tmp_path / "ix").model == "all-MiniLM-L6-v2-int8"
    again = runner.invoke(main, ["embed", "--index", ix])
    assert again.stdout.startswith(f"vectors: all {SEED_RECORDS} records have one (0 made")
    updated = runner.invoke(
        main, ["index", "--index", ix, "--update", str(new_records(tmp_path / "new.jsonl"))]
    )
    assert updated.exit_code == 0, updated.output
    table = table_of(tmp_path / "ix")
    assert table.model == "all-MiniLM-L6-v2-int8" and table.present.all()
    assert table.size == SEED_RECORDS + 2


def test_embed_without_an_index_is_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["embed", "--index", str(tmp_path / "none")])
    assert result.exit_code == 1
    assert result.stderr.strip().startswith("Error: no index at")
    assert "Traceback" not in result.output


class Interrupted(Exception):
    pass


class StopsAfter:
    """The real model, interrupted (as by Ctrl-C) once it has made ``calls`` chunks."""

    def __init__(self, embedder: Embedder, calls: int) -> None:
        self._embedder = embedder
        self._left = calls
        self.model_id = embedder.model_id
        self.dimensions = embedder.dimensions

    def embed(self, texts: list[str]) -> np.ndarray:
        if self._left == 0:
            raise Interrupted
        self._left -= 1
        return self._embedder.embed(texts)


def test_an_interrupted_embed_keeps_what_it_made_and_the_next_run_goes_on(
    tmp_path: Path, seeds_dir: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    index_dir = tmp_path / "ix"
    build_index(index_dir, read_paths([seeds_dir], ReadReport()))
    before = storage.current_generation(index_dir)
    monkeypatch.setattr(vectors, "CHUNK_TEXTS", 10)
    with pytest.raises(Interrupted):
        embed_index(index_dir, StopsAfter(embedder, 2))  # type: ignore[arg-type]
    assert storage.current_generation(index_dir) == before  # nothing published
    chunks = list((index_dir / vectors.CHUNKS_DIR / embedder.model_id).glob("*.npz"))
    assert len(chunks) == 2
    summary = embed_index(index_dir, embedder)
    assert summary.embedded == SEED_RECORDS - 20
    assert summary.total == SEED_RECORDS
    assert not (index_dir / vectors.CHUNKS_DIR).exists()


def test_half_written_chunks_are_ignored(
    tmp_path: Path, seeds_dir: Path, embedder: Embedder
) -> None:
    index_dir = tmp_path / "ix"
    build_index(index_dir, read_paths([seeds_dir], ReadReport()))
    folder = index_dir / vectors.CHUNKS_DIR / embedder.model_id
    folder.mkdir(parents=True)
    (folder / "1-broken.npz").write_bytes(b"PK\x03\x04 cut short by a kill")
    assert embed_index(index_dir, embedder).total == SEED_RECORDS


def test_update_gives_new_records_vectors_and_keeps_the_others(
    tmp_path: Path, seeds_dir: Path, embedder: Embedder
) -> None:
    index_dir = tmp_path / "ix"
    build_index(index_dir, read_paths([seeds_dir], ReadReport()))
    embed_index(index_dir, embedder)
    before = table_of(index_dir)
    update_index(
        index_dir,
        read_paths([new_records(tmp_path / "new.jsonl")], ReadReport()),
        embedder=embedder,
    )
    after = table_of(index_dir)
    assert after.size == before.size + 2 and after.present.all()
    # The seeds' vectors are the same numbers, not made again.
    assert np.array_equal(after.codes[: before.size], before.codes)
    assert np.array_equal(after.keys[: before.size], before.keys)


def test_a_rebuild_of_the_same_records_makes_no_vector_again(
    tmp_path: Path, seeds_dir: Path
) -> None:
    runner = CliRunner()
    ix = str(tmp_path / "ix")
    assert runner.invoke(main, ["index", "--index", ix, str(seeds_dir)]).exit_code == 0
    again = runner.invoke(main, ["index", "--index", ix, str(seeds_dir)])
    assert again.exit_code == 0, again.output
    assert f"0 made, {SEED_RECORDS} kept" in again.stdout


def test_vectors_of_another_graph_are_not_used(
    tmp_path: Path, seeds_dir: Path, embedder: Embedder
) -> None:
    index_dir = tmp_path / "ix"
    build_index(index_dir, read_paths([seeds_dir], ReadReport()))
    embed_index(index_dir, embedder)
    exact = Embedder(quantised=False)
    summary = embed_index(index_dir, exact)
    assert summary.embedded == SEED_RECORDS
    assert table_of(index_dir).model == exact.model_id


def test_a_generation_copied_without_its_index_files_has_no_table(
    tmp_path: Path, vector_index: Path
) -> None:
    live = storage.current_generation(vector_index)
    assert live is not None
    copy = tmp_path / "gen"
    shutil.copytree(live, copy)
    (copy / vectors.VECTORS_FILE).write_bytes(b"not an npz")
    assert generation_table(copy) is None


def test_embed_beside_a_running_server_switches_it_to_hybrid(
    tmp_path: Path, seeds_dir: Path, serve: object
) -> None:
    import urllib.request

    index_dir = tmp_path / "ix"
    build_index(index_dir, read_paths([seeds_dir], ReadReport()))

    def mode(url: str) -> str:
        with urllib.request.urlopen(url + "/api/search?q=training+huge+networks") as answer:
            data = json.loads(answer.read())
        return str(data["mode"])

    with serve(index_dir, tmp_path / "serve.log") as url:  # type: ignore[operator]
        assert mode(url) == "lexical"
        result = CliRunner().invoke(main, ["embed", "--index", str(index_dir)])
        assert result.exit_code == 0, result.output
        assert mode(url) == "hybrid"


def test_query_and_batch_take_a_mode(tmp_path: Path, vector_index: Path) -> None:
    runner = CliRunner()
    ix = ["--index", str(vector_index)]
    text = runner.invoke(main, ["query", "training huge networks", "--mode", "semantic", *ix])
    assert text.exit_code == 0, text.output
    assert "by meaning" in text.stdout and "close in meaning:" in text.stdout
    as_json = runner.invoke(main, ["query", "training", "--format", "json", *ix])
    assert json.loads(as_json.stdout)["mode"] == "hybrid"
    queries = tmp_path / "q.tsv"
    queries.write_text("1\ttraining huge networks\n", encoding="utf-8")
    runs = {}
    for mode in ("lexical", "semantic"):
        result = runner.invoke(main, ["batch", str(queries), "--mode", mode, *ix])
        assert result.exit_code == 0, result.output
        runs[mode] = [line.split()[2] for line in result.stdout.splitlines()]
    assert runs["lexical"] and runs["semantic"] and runs["lexical"] != runs["semantic"]
    bad = runner.invoke(main, ["query", "x", "--mode", "fuzzy", *ix])
    assert bad.exit_code == 2 and "fuzzy" in bad.stderr


def test_the_first_chunk_is_a_sample_spread_over_the_texts_to_do() -> None:
    todo = np.arange(1000, 2300, dtype=np.int64)
    chunks = vectors._chunks(todo)
    sample = chunks[0]
    assert len(sample) == vectors.SAMPLE_TEXTS
    assert sample[0] == todo[0] and sample[-1] == todo[-1]
    gaps = np.diff(sample)
    assert gaps.min() >= len(todo) // vectors.SAMPLE_TEXTS - 1  # spread, not the first few
    assert all(len(chunk) <= vectors.CHUNK_TEXTS for chunk in chunks)
    together = np.concatenate(chunks)
    assert len(together) == len(todo) and np.array_equal(np.sort(together), todo)
    assert all(np.all(np.diff(chunk) > 0) for chunk in chunks[1:])  # the rest in order
    few = np.arange(100, dtype=np.int64)  # too few for a sample: in order
    assert [list(chunk) for chunk in vectors._chunks(few)] == [list(range(100))]


def many_records(path: Path, count: int) -> Path:
    """``count`` records of made-up sentences (titles and abstracts of a few hundred word
    pieces, as real ones are)."""
    words = (
        "protein folding galaxy cluster lattice gauge neural network sparse attention coral "
        "reef climate model quantum error correction graph spectral theory batch training "
        "dark matter halo superconductor phase transition gene expression optimisation"
    ).split()
    rng = np.random.default_rng(7)
    with path.open("w", encoding="utf-8") as out:
        for number in range(count):
            title = " ".join(rng.choice(words, 8))
            abstract = ". ".join(" ".join(rng.choice(words, 14)) for _ in range(9))
            line = {"id": f"many-{number}", "title": title, "abstract": abstract, "year": 2025}
            out.write(json.dumps(line) + "\n")
    return path


def test_embed_says_how_long_it_expects_then_ctrl_c_says_what_was_kept(tmp_path: Path) -> None:
    """A real process: its first line foretells the time (from the spread first chunk);
    SIGINT stops it with one line saying how many vectors were kept and how to go on, and
    the next embed keeps them."""
    import os
    import signal
    import subprocess
    import sys
    import time

    ix = tmp_path / "ix"
    source = many_records(tmp_path / "many.jsonl", 3000)
    built = CliRunner().invoke(main, ["index", "--index", str(ix), "--no-vectors", str(source)])
    assert built.exit_code == 0, built.output
    env = {k: v for k, v in os.environ.items() if k != "PUBSEARCH_NO_VECTORS"}
    command = [sys.executable, "-m", "pubsearch", "embed", "--index", str(ix)]
    # A suite run as a background job of a script inherits SIGINT ignored, and Python
    # keeps it so: the process gets Ctrl-C's disposition at a terminal, as users run it.
    process = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert process.stderr is not None
    first = process.stderr.readline()
    assert first.startswith("vectors: making 3,000, about "), first
    assert " a second (the index already answers by words;" in first
    time.sleep(0.5)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 130, (out, err)
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    found = re.fullmatch(
        r"vectors: stopped; ([\d,]+) of 3,000 made and kept \(the index answers by words "
        r"meanwhile\); to go on: pubsearch embed --index (.+)",
        last,
    )
    assert found is not None, last
    kept = int(found.group(1).replace(",", ""))
    assert vectors.SAMPLE_TEXTS <= kept < 3000
    assert found.group(2) == str(ix)
    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert f"({3000 - kept:,} made, {kept:,} kept;" in again.stdout
