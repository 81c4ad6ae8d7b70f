"""Another sentence model, by a folder in the sentence-transformers layout (--model DIR or
PUBSEARCH_MODEL): read as its files say (pooling, prefixes, tokens), named by its weights'
fingerprint in the index, and never mixed with another model's vectors. Offline: the
bundled model's own files, laid out as such a folder, with their configuration changed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from pubsearch.cli.main import main
from pubsearch.index import embedding, models, storage
from pubsearch.index.embedding import Embedder
from pubsearch.index.models import ModelFolderError, read_model
from pubsearch.index.vectors import generation_table

pytestmark = pytest.mark.semantic

TEXTS = [
    "Graph neural networks for molecule property prediction",
    "Dark matter halos in cosmological simulations. We run N-body simulations.",
    "quantum error correction",
]
FILES = ["config.json", "tokenizer.json", "modules.json", "sentence_bert_config.json"]


def laid_out(folder: Path, pooling: str = "mean", prompts: dict[str, str] | None = None) -> Path:
    """The bundled model's files as a sentence-transformers folder (the weights linked)."""
    source = embedding.model_dir()
    folder.mkdir(parents=True)
    for name in FILES:
        shutil.copy(source / name, folder / name)
    (folder / "model.safetensors").symlink_to(source / "model.safetensors")
    (folder / "1_Pooling").mkdir()
    pooling_config = json.loads((source / "1_Pooling" / "config.json").read_text())
    pooling_config["pooling_mode_mean_tokens"] = pooling == "mean"
    pooling_config["pooling_mode_cls_token"] = pooling == "cls"
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(pooling_config))
    if prompts is not None:
        (folder / "config_sentence_transformers.json").write_text(json.dumps({"prompts": prompts}))
    return folder


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(embedding.ENV_CACHE, str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_the_bundled_files_as_a_folder_make_the_same_vectors(tmp_path: Path, cache: Path) -> None:
    model = read_model(laid_out(tmp_path / "minilm"))
    assert (model.layers, model.heads, model.width, model.max_tokens) == (6, 12, 384, 256)
    assert (model.pooling, model.normalize, model.query_prefix) == ("mean", True, "")
    ours = Embedder(model=model, quantised=False)
    assert ours.model_id == f"minilm-{embedding.WEIGHTS_SHA256[:12]}-f32-256t"
    bundled = Embedder(quantised=False)
    assert np.array_equal(ours.embed(TEXTS), bundled.embed(TEXTS))  # bit for bit
    assert np.array_equal(ours.embed_queries(TEXTS), bundled.embed(TEXTS))


def test_cls_pooling_makes_other_vectors(tmp_path: Path, cache: Path) -> None:
    mean = Embedder(model=read_model(laid_out(tmp_path / "mean")), quantised=False)
    cls = Embedder(model=read_model(laid_out(tmp_path / "cls", pooling="cls")), quantised=False)
    assert cls.model.pooling == "cls" and cls.model_id.startswith("cls-")
    a, b = mean.embed(TEXTS), cls.embed(TEXTS)
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)  # normalised all the same
    assert float((a * b).sum(axis=1).max()) < 0.95  # the [CLS] state is not the mean
    # Two folders with the same weights share the weights' fingerprint, not their graph.
    assert mean.model_id.split("-")[1] == cls.model_id.split("-")[1]
    assert len(list(cache.glob("*-x.onnx"))) == 2


def test_prefixes_come_from_the_prompts(tmp_path: Path, cache: Path) -> None:
    prompts = {"query": "query: ", "passage": "passage: "}
    prefixed = Embedder(model=read_model(laid_out(tmp_path / "e5", prompts=prompts)))
    plain = Embedder(model=read_model(laid_out(tmp_path / "plain")))
    assert np.array_equal(prefixed.embed(TEXTS[:1]), plain.embed(["passage: " + TEXTS[0]]))
    assert np.array_equal(prefixed.embed_queries(TEXTS[:1]), plain.embed(["query: " + TEXTS[0]]))


def test_the_model_is_asked_for_by_environment(tmp_path: Path, cache: Path) -> None:
    folder = laid_out(tmp_path / "minilm")
    assert models.chosen_folder(None, {models.ENV_MODEL: str(folder)}) == folder
    assert models.chosen_folder(tmp_path, {models.ENV_MODEL: str(folder)}) == tmp_path
    assert models.chosen_folder(None, {}) is None
    assert embedding.sentence_model(None).bundled


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda f: (f / "tokenizer.json").unlink(), "tokenizer.json: missing"),
        (lambda f: (f / "modules.json").write_text("{"), "modules.json: not readable JSON"),
        (
            lambda f: (f / "1_Pooling" / "config.json").write_text(
                json.dumps({"pooling_mode_max_tokens": True})
            ),
            "pooling pooling_mode_max_tokens",
        ),
        (
            lambda f: (f / "config.json").write_text(json.dumps({"model_type": "roberta"})),
            "model_type 'roberta'",
        ),
    ],
)
def test_a_folder_it_cannot_run_is_refused_in_a_line(tmp_path: Path, change, said: str) -> None:  # type: ignore[no-untyped-def]
    folder = laid_out(tmp_path / "m")
    change(folder)
    with pytest.raises(ModelFolderError, match=said) as raised:
        read_model(folder)
    assert str(folder) in str(raised.value) and "\n" not in str(raised.value)
    result = CliRunner().invoke(
        main, ["query", "--index", str(tmp_path / "none"), "--model", str(folder), "x"]
    )
    assert result.exit_code != 0


def test_an_index_keeps_one_models_vectors(tmp_path: Path, cache: Path, seeds_dir: Path) -> None:
    """Vectors made by a folder's model are named by it; a query or an update with another
    model is refused with a line that says which model made them and how to go on; embed
    with the other model makes them all again."""
    runner = CliRunner()
    cls = laid_out(tmp_path / "cls", pooling="cls")
    ix = str(tmp_path / "ix")
    built = runner.invoke(main, ["index", "--index", ix, "--model", str(cls), str(seeds_dir)])
    assert built.exit_code == 0, built.output
    table = generation_table(storage.current_generation(tmp_path / "ix"))  # type: ignore[arg-type]
    assert table is not None
    assert table.model == f"cls-{embedding.WEIGHTS_SHA256[:12]}-int8-256t"

    mixed = runner.invoke(main, ["query", "--index", ix, "--mode", "hybrid", "graph"])
    assert mixed.exit_code != 0
    line = mixed.output.strip()
    assert "\n" not in line and "made by cls-" in line and "not by all-MiniLM-L6-v2" in line
    assert "pubsearch embed --index" in line
    same = runner.invoke(
        main, ["query", "--index", ix, "--mode", "hybrid", "--model", str(cls), "graph"]
    )
    assert same.exit_code == 0, same.output
    assert "by meaning alone" in same.output

    update = runner.invoke(main, ["index", "--index", ix, "--update", str(seeds_dir)])
    assert update.exit_code != 0 and "an update would mix them" in update.output

    again = runner.invoke(main, ["embed", "--index", ix])  # the bundled model, all again
    assert again.exit_code == 0, again.output
    table = generation_table(storage.current_generation(tmp_path / "ix"))  # type: ignore[arg-type]
    assert table is not None and table.model == f"all-MiniLM-L6-v2-int8-{embedding.RECORD_TOKENS}t"
    assert runner.invoke(main, ["query", "--index", ix, "--mode", "hybrid", "graph"]).exit_code == 0
