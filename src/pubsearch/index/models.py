"""Which sentence model makes an index's vectors: the bundled all-MiniLM-L6-v2, or a folder
of another in the sentence-transformers layout, given by ``--model DIR`` or the
``PUBSEARCH_MODEL`` environment variable.

A folder is read as sentence-transformers writes one for a BERT-family model (bge-small-en,
e5-small, MiniLM and the like): ``config.json`` (``model_type`` bert: its layers, heads,
width and layer-norm epsilon), ``tokenizer.json``, ``model.safetensors``, ``modules.json``
(a Pooling module, and a Normalize one or not), the pooling module's ``config.json`` (mean
of the tokens or the [CLS] token), ``sentence_bert_config.json`` (``max_seq_length``) and,
if there, ``config_sentence_transformers.json``'s ``prompts`` (the query's and the
passage's prefixes, as e5 and bge ask for). Anything else is refused with a one-line error
naming the file. Only JSON is read here; the weights and the tokenizer are read by
:mod:`pubsearch.index.embedding`.

A model's id (what an index records with its vectors, ``VectorTable.model``) is its name
and a fingerprint of its weights (the first 12 hex digits of their sha256), then the graph
(``int8`` or ``f32``) and the tokens a text is cut to: ``bge-small-en-v1.5-1a2b3c4d5e6f-
int8-512t``. The bundled model's stays ``all-MiniLM-L6-v2-int8`` (its weights' sha256 is
checked against :data:`pubsearch.index.embedding.WEIGHTS_SHA256`), so that the indexes
made before keep their vectors.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pubsearch.core.errors import UsageError

ENV_MODEL = "PUBSEARCH_MODEL"
POOLINGS = ("mean", "cls")


class ModelFolderError(UsageError):
    """A model folder pubsearch cannot read (the message names the file and why)."""


@dataclass(frozen=True)
class SentenceModel:
    """A BERT-family sentence model: where its files are and what its graph is."""

    folder: Path
    name: str
    layers: int
    heads: int
    width: int
    eps: float
    max_tokens: int  # sentence_bert_config.json's max_seq_length (at most the positions)
    pooling: str  # "mean" (of the real tokens) or "cls" (the first token's state)
    normalize: bool  # unit vectors (a Normalize module)
    query_prefix: str = ""
    passage_prefix: str = ""
    bundled: bool = False

    @property
    def weights(self) -> Path:
        return self.folder / "model.safetensors"

    @property
    def graph_key(self) -> str:
        """What the graph built from the weights depends on, as a short hex string."""
        shape = (self.layers, self.heads, self.width, self.eps, self.max_tokens)
        text = json.dumps([*shape, self.pooling, self.normalize])
        return hashlib.sha256(text.encode()).hexdigest()[:8]


def read_model(folder: Path) -> SentenceModel:
    """The model in ``folder`` (see the module's doc); ModelFolderError when it is not one
    pubsearch can run."""
    if not folder.is_dir():
        raise ModelFolderError(f"{folder}: no such model folder")
    config = _json(folder / "config.json")
    kind = config.get("model_type")
    if kind != "bert":
        raise ModelFolderError(
            f"{folder / 'config.json'}: model_type {kind!r}; pubsearch runs BERT-family "
            "sentence models (model_type 'bert')"
        )
    if config.get("hidden_act", "gelu") != "gelu":
        raise ModelFolderError(
            f"{folder / 'config.json'}: hidden_act {config.get('hidden_act')!r}; only gelu"
        )
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise ModelFolderError(f"{folder / 'config.json'}: only absolute position embeddings")
    layers = _number(config, "num_hidden_layers", folder / "config.json")
    heads = _number(config, "num_attention_heads", folder / "config.json")
    width = _number(config, "hidden_size", folder / "config.json")
    positions = _number(config, "max_position_embeddings", folder / "config.json")
    if width % heads:
        raise ModelFolderError(
            f"{folder / 'config.json'}: hidden_size {width} is not a multiple of "
            f"num_attention_heads {heads}"
        )
    for needed in ("tokenizer.json", "model.safetensors"):
        if not (folder / needed).is_file():
            raise ModelFolderError(f"{folder / needed}: missing (a model folder needs it)")
    modules = _json(folder / "modules.json")
    if not isinstance(modules, list):
        raise ModelFolderError(f"{folder / 'modules.json'}: not a list of modules")
    types = {str(m.get("type", "")).rsplit(".", 1)[-1]: m for m in modules if isinstance(m, dict)}
    if "Pooling" not in types:
        raise ModelFolderError(f"{folder / 'modules.json'}: no Pooling module")
    pooling_file = folder / str(types["Pooling"].get("path") or "1_Pooling") / "config.json"
    pooling = _pooling(_json(pooling_file), pooling_file)
    max_tokens = positions
    bert_config = folder / "sentence_bert_config.json"
    if bert_config.is_file():
        max_tokens = min(positions, _number(_json(bert_config), "max_seq_length", bert_config))
    query, passage = _prefixes(folder / "config_sentence_transformers.json")
    return SentenceModel(
        folder=folder,
        name=_name(folder),
        layers=layers,
        heads=heads,
        width=width,
        eps=float(config.get("layer_norm_eps", 1e-12)),
        max_tokens=max_tokens,
        pooling=pooling,
        normalize="Normalize" in types,
        query_prefix=query,
        passage_prefix=passage,
    )


def chosen_folder(
    option: Path | None, environ: os._Environ[str] | dict[str, str] | None = None
) -> Path | None:
    """The model folder asked for: ``--model``, else ``PUBSEARCH_MODEL``; None for the
    bundled model."""
    if option is not None:
        return option
    env = os.environ if environ is None else environ
    chosen = env.get(ENV_MODEL, "").strip()
    return Path(chosen).expanduser() if chosen else None


def model_base(model_id: str) -> str:
    """The model of a model id, without its graph and tokens (``-int8``, ``-f32-128t``):
    the part two sets of vectors must share to be compared."""
    return re.sub(r"-(?:int8|f32)(?:-\d+t)?$", "", model_id)


def fingerprint(weights: Path, cache: Path) -> str:
    """The sha256 of ``weights`` (hex), kept in ``cache``/fingerprints.json by the file's
    path, size and time, so that a process hashes a model's 100 MB or so once."""
    stat = weights.stat()
    key = f"{weights.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    store = cache / "fingerprints.json"
    try:
        known = json.loads(store.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    found = known.get(key) if isinstance(known, dict) else None
    if isinstance(found, str) and re.fullmatch(r"[0-9a-f]{64}", found):
        return found
    digest = hashlib.sha256()
    with open(weights, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    value = digest.hexdigest()
    known = known if isinstance(known, dict) else {}
    known[key] = value
    try:
        cache.mkdir(parents=True, exist_ok=True)
        scratch = store.with_suffix(f".{os.getpid()}.tmp")
        scratch.write_text(json.dumps(known), encoding="utf-8")
        os.replace(scratch, store)
    except OSError:
        pass  # hashed again next time
    return value


# -- reading the folder ----------------------------------------------------------------------


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelFolderError(f"{path}: missing (a model folder needs it)") from None
    except (OSError, ValueError) as exc:
        raise ModelFolderError(f"{path}: not readable JSON ({exc})") from None


def _number(config: Any, key: str, path: Path) -> int:
    value = config.get(key) if isinstance(config, dict) else None
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ModelFolderError(f"{path}: {key} must be a positive whole number, not {value!r}")
    return value


def _pooling(config: Any, path: Path) -> str:
    if not isinstance(config, dict):
        raise ModelFolderError(f"{path}: not a pooling configuration")
    modes = [key for key, on in config.items() if key.startswith("pooling_mode_") and on is True]
    names = {"pooling_mode_mean_tokens": "mean", "pooling_mode_cls_token": "cls"}
    if len(modes) != 1 or modes[0] not in names:
        shown = ", ".join(modes) or "none"
        raise ModelFolderError(
            f"{path}: pooling {shown}; pubsearch pools by one of pooling_mode_mean_tokens "
            "and pooling_mode_cls_token"
        )
    return names[modes[0]]


def _prefixes(path: Path) -> tuple[str, str]:
    """The query's and the passage's prefixes of ``prompts`` (none when not there)."""
    if not path.is_file():
        return "", ""
    prompts = _json(path).get("prompts") or {}
    if not isinstance(prompts, dict):
        raise ModelFolderError(f"{path}: prompts is not a table of prefixes")
    query = prompts.get("query", "")
    passage = prompts.get("passage", prompts.get("document", prompts.get("corpus", "")))
    if not isinstance(query, str) or not isinstance(passage, str):
        raise ModelFolderError(f"{path}: a prompt is not text")
    return query, passage


def _name(folder: Path) -> str:
    """The folder's name as a model name (sentence-transformers__x is x), made safe for a
    file name."""
    name = folder.resolve().name.split("__")[-1]
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "model"
