"""Each record's sentence vector, stored per index generation beside the Whoosh files.

A generation's ``vectors.npz`` holds, by document number, a key of the text the vector was
made of, the vector as 384 int8 numbers and its scale (388 bytes a record, plus the 8-byte
key). Keys let a new generation take the vectors of texts already embedded, whatever their
document numbers were: an update, a merge of segments or a rebuild of the same records
embeds only what is new.

Embedding is slow (tens of records a second), so it is resumable: vectors are written to
``<index>/vectors/`` in chunks as they are made, and a generation with them all is published
at the end (:func:`embed_index`). A chunk written before a Ctrl-C or a kill is used by the next
run; once a generation holds every vector, the chunks are removed.
"""

from __future__ import annotations

import hashlib
import shutil
import time
import uuid
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from pubsearch.core import npzfiles
from pubsearch.core.config import LOCK_TIMEOUT_SECONDS
from pubsearch.core.errors import IndexMissingError
from pubsearch.index import storage
from pubsearch.index.documents import record_from_stored

if TYPE_CHECKING:
    from pubsearch.index.embedding import Embedder

VECTORS_FILE = "vectors.npz"
CHUNKS_DIR = "vectors"
FORMAT_VERSION = 1
# Texts embedded between two chunk files: what a kill can cost at most.
CHUNK_TEXTS = 512
# Texts embedded first, spread evenly over those to do, so that the time the first of
# them took foretells the rest (a progress callback's first step after (0, to do)).
SAMPLE_TEXTS = 64

FloatArray = npt.NDArray[np.float32]
KeyArray = npt.NDArray[np.uint64]
Progress = Callable[[int, int], None]  # (done, to do)


def text_key(text: str) -> int:
    """A 64-bit key of the text a vector is made of."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")


def quantise(vectors: FloatArray) -> tuple[npt.NDArray[np.int8], FloatArray]:
    """Vectors as int8 numbers and one scale each (a vector of zeros has scale 0)."""
    peaks = np.abs(vectors).max(axis=1) if len(vectors) else np.zeros(0, dtype=np.float32)
    scales = (peaks / 127.0).astype(np.float32)
    safe = np.where(scales > 0, scales, 1.0)[:, None]
    return np.rint(vectors / safe).astype(np.int8), scales


@dataclass(frozen=True)
class Stored:
    """Vectors by key: the parts of :class:`VectorTable` that outlive document numbers."""

    keys: KeyArray
    codes: npt.NDArray[np.int8]
    scales: FloatArray

    def __len__(self) -> int:
        return len(self.keys)

    @classmethod
    def join(cls, parts: list[Stored], dimensions: int) -> Stored:
        if not parts:
            return cls(
                np.zeros(0, dtype=np.uint64),
                np.zeros((0, dimensions), dtype=np.int8),
                np.zeros(0, dtype=np.float32),
            )
        keys = np.concatenate([p.keys for p in parts])
        codes = np.concatenate([p.codes for p in parts])
        scales = np.concatenate([p.scales for p in parts])
        order = np.argsort(keys, kind="stable")
        return cls(keys[order], codes[order], scales[order])

    def rows_of(self, keys: KeyArray) -> npt.NDArray[np.int64]:
        """For each key, its row here, or -1 (``self.keys`` must be sorted: see join)."""
        if not len(self.keys):
            return np.full(len(keys), -1, dtype=np.int64)
        rows = np.searchsorted(self.keys, keys)
        rows = np.minimum(rows, len(self.keys) - 1)
        found = (self.keys[rows] == keys) & (self.scales[rows] > 0)
        return np.where(found, rows, -1).astype(np.int64)


@dataclass(frozen=True)
class VectorTable:
    """The vectors of one generation's documents, by document number."""

    model: str
    keys: KeyArray
    codes: npt.NDArray[np.int8]
    scales: FloatArray

    @property
    def size(self) -> int:
        return len(self.keys)

    @property
    def present(self) -> npt.NDArray[np.bool_]:
        return self.scales > 0

    def stored(self) -> Stored:
        have = self.present
        part = Stored(self.keys[have], self.codes[have], self.scales[have])
        return Stored.join([part], self.codes.shape[1])

    @classmethod
    def load(cls, directory: Path, generation: int, size: int) -> VectorTable | None:
        """The table saved in ``directory`` for Whoosh generation ``generation`` with
        ``size`` documents, or None (none saved, or saved for another): mapped from the
        file, read-only, so that the processes of a server share its pages."""
        try:
            data = npzfiles.load_arrays(directory / VECTORS_FILE)
            meta = data["meta"]
            if int(meta[0]) != FORMAT_VERSION or int(meta[1]) != generation:
                return None
            if int(meta[2]) != size:
                return None
            return cls(
                model=str(data["model"]),
                keys=data["keys"],
                codes=data["codes"],
                scales=data["scales"],
            )
        except (OSError, KeyError, ValueError, zipfile.BadZipFile):
            return None

    def save(self, directory: Path, generation: int) -> None:
        npzfiles.save_arrays(
            directory / VECTORS_FILE,
            {
                "meta": np.asarray([FORMAT_VERSION, generation, self.size], dtype=np.int64),
                "model": np.asarray(self.model),
                "keys": self.keys,
                "codes": self.codes,
                "scales": self.scales,
            },
        )


def generation_table(directory: Path) -> VectorTable | None:
    """The vectors of the generation in ``directory`` (None when it has none)."""
    ix = storage.open_index(directory)
    try:
        with ix.reader() as reader:
            return VectorTable.load(directory, ix.latest_generation(), reader.doc_count_all())
    finally:
        ix.close()


def index_model(index_dir: Path) -> str | None:
    """The model (Embedder.model_id) of the vectors the index at ``index_dir`` has: that of
    a run that did not finish (to go on with it), else that of the live generation's; None
    for neither."""
    runs = index_dir / CHUNKS_DIR
    started = sorted(runs.iterdir()) if runs.is_dir() else []
    if len(started) == 1:
        return started[0].name
    live = storage.current_generation(index_dir)
    if live is None:
        return None
    try:
        with open(live / VECTORS_FILE, "rb") as fh, np.load(fh) as data:
            return str(data["model"])
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return None


# -- the chunks of a run in progress -------------------------------------------------------


def _chunks_dir(index_dir: Path, model: str) -> Path:
    return index_dir / CHUNKS_DIR / model


def _read_chunks(folder: Path) -> list[Stored]:
    parts = []
    for path in sorted(folder.glob("*.npz")):
        try:
            with open(path, "rb") as fh, np.load(fh) as data:
                parts.append(Stored(data["keys"], data["codes"], data["scales"]))
        except (OSError, KeyError, ValueError, zipfile.BadZipFile):
            path.unlink(missing_ok=True)  # half a chunk from a crash before its rename
    return parts


def _write_chunk(folder: Path, keys: KeyArray, vectors: FloatArray) -> Stored:
    codes, scales = quantise(vectors)
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{time.time_ns()}-{uuid.uuid4().hex[:8]}.npz"
    npzfiles.save_arrays(folder / name, {"keys": keys, "codes": codes, "scales": scales})
    return Stored(keys, codes, scales)


# -- embedding an index ---------------------------------------------------------------------


@dataclass(frozen=True)
class EmbedSummary:
    embedded: int  # texts run through the model
    reused: int  # documents whose vector was known
    total: int  # documents with a vector in the generation
    generation: str | None  # published, or None when nothing needed doing
    seconds: float


def _document_texts(reader: Any) -> tuple[KeyArray, list[str], npt.NDArray[np.bool_]]:
    """Every document's key and text (by document number) and which are live."""
    from pubsearch.index.embedding import record_text

    size = reader.doc_count_all()
    keys = np.zeros(size, dtype=np.uint64)
    texts = [""] * size
    live = np.zeros(size, dtype=np.bool_)
    for docnum in range(size):
        if reader.is_deleted(docnum):
            continue
        record = record_from_stored(reader.stored_fields(docnum))
        text = record_text(record.title, record.abstract)
        keys[docnum] = text_key(text)
        texts[docnum] = text
        live[docnum] = bool(text)
    return keys, texts, live


def _embed_missing(
    embedder: Embedder,
    folder: Path,
    keys: KeyArray,
    texts: list[str],
    wanted: npt.NDArray[np.bool_],
    known: Stored,
    progress: Progress | None,
) -> tuple[Stored, int]:
    """``known`` plus vectors for the wanted documents it lacks, made in chunks written as
    they are made. The first chunk is :data:`SAMPLE_TEXTS` texts spread over all of them
    (its time foretells the rest's); the others go in document order, not by length: the
    model runs each text alone (see Embedder.embed), and a steady rate keeps the time left
    honest."""
    missing_docs = np.flatnonzero(wanted & (known.rows_of(keys) < 0))
    # One text per key (duplicates' texts are often the same).
    _, first = np.unique(keys[missing_docs], return_index=True)
    todo = missing_docs[np.sort(first)]
    made: list[Stored] = []
    done = 0
    if progress:
        progress(0, len(todo))
    for docs in _chunks(todo):
        vectors = embedder.embed([texts[d] for d in docs])
        made.append(_write_chunk(folder, keys[docs], vectors))
        done += len(docs)
        if progress:
            progress(done, len(todo))
    if not made:
        return known, 0
    return Stored.join([known, *made], known.codes.shape[1]), done


def sampled_first(count: int) -> bool:
    """Whether :func:`_embed_missing` makes a spread sample first of ``count`` texts to do
    (of a few, it makes them all at once)."""
    return count > 2 * SAMPLE_TEXTS


def _chunks(todo: npt.NDArray[np.int64]) -> list[npt.NDArray[np.int64]]:
    """``todo`` in the chunks :func:`_embed_missing` makes: a spread sample (see
    :func:`sampled_first`), then the rest in order, :data:`CHUNK_TEXTS` at most each."""
    if not sampled_first(len(todo)):
        return [todo[start : start + CHUNK_TEXTS] for start in range(0, len(todo), CHUNK_TEXTS)]
    picked = np.zeros(len(todo), dtype=np.bool_)
    picked[np.linspace(0, len(todo) - 1, SAMPLE_TEXTS).round().astype(np.int64)] = True
    rest = todo[~picked]
    return [todo[picked]] + [
        rest[start : start + CHUNK_TEXTS] for start in range(0, len(rest), CHUNK_TEXTS)
    ]


def table_for(
    reader: Any,
    embedder: Embedder,
    folder: Path,
    known: Stored,
    progress: Progress | None = None,
) -> tuple[VectorTable, int, int]:
    """The vector table of the documents ``reader`` reads: (table, embedded, reused)."""
    keys, texts, wanted = _document_texts(reader)
    reused = int((wanted & (known.rows_of(keys) >= 0)).sum())
    known, embedded = _embed_missing(embedder, folder, keys, texts, wanted, known, progress)
    rows = known.rows_of(keys)
    have = wanted & (rows >= 0)
    codes = np.zeros((len(keys), embedder.dimensions), dtype=np.int8)
    scales = np.zeros(len(keys), dtype=np.float32)
    codes[have] = known.codes[rows[have]]
    scales[have] = known.scales[rows[have]]
    table = VectorTable(embedder.model_id, np.where(have, keys, 0).astype(np.uint64), codes, scales)
    return table, embedded, reused


def known_vectors(index_dir: Path, model: str, dimensions: int) -> Stored:
    """Every vector this index already has for ``model``: the live generation's and those
    of runs that did not finish."""
    parts = _read_chunks(_chunks_dir(index_dir, model))
    live = storage.current_generation(index_dir)
    if live is not None:
        table = generation_table(live)
        if table is not None and table.model == model:
            parts.append(table.stored())
    return Stored.join(parts, dimensions)


def keep_for_rebuild(index_dir: Path) -> None:
    """Before a rebuild replaces the live generation: keep its vectors as a chunk, so that
    the new generation's records with the same text need not be embedded again."""
    live = storage.current_generation(index_dir)
    if live is None:
        return
    table = generation_table(live)
    if table is None or not table.present.any():
        return
    stored = table.stored()
    folder = _chunks_dir(index_dir, table.model)
    folder.mkdir(parents=True, exist_ok=True)
    npzfiles.save_arrays(
        folder / f"{time.time_ns()}-{live.name}.npz",
        {"keys": stored.keys, "codes": stored.codes, "scales": stored.scales},
    )


def embed_index(
    index_dir: Path,
    embedder: Embedder,
    progress: Progress | None = None,
    lock_timeout: float = LOCK_TIMEOUT_SECONDS,
) -> EmbedSummary:
    """Give every record of the live generation a vector and publish that as a new
    generation (nothing is published when every record has one).

    The slow part (the model) runs without the writer lock, so updates are not held up;
    the lock is taken to publish, and records an update added meanwhile are embedded then.
    """
    started = time.perf_counter()
    live = storage.current_generation(index_dir)
    if live is None:
        raise IndexMissingError(f"no index at {index_dir} to embed (build one first)")
    folder = _chunks_dir(index_dir, embedder.model_id)
    known = known_vectors(index_dir, embedder.model_id, embedder.dimensions)
    embedded = 0
    ix = storage.open_index(live)
    try:
        with ix.reader() as reader:
            table, embedded, reused = table_for(reader, embedder, folder, known, progress)
    finally:
        ix.close()
    with storage.writer_lock(index_dir, lock_timeout):
        storage.remove_stale(index_dir)
        current = storage.current_generation(index_dir)
        if current is None:
            raise IndexMissingError(f"no index at {index_dir} to embed (build one first)")
        existing = generation_table(current)
        build_dir = storage.new_build_dir(index_dir)
        try:
            storage.copy_generation(current, build_dir)
            (build_dir / VECTORS_FILE).unlink(missing_ok=True)
            ix = storage.open_index(build_dir)
            try:
                with ix.reader() as reader:
                    if current != live:  # an update came in meanwhile: its records too
                        known = known_vectors(index_dir, embedder.model_id, embedder.dimensions)
                        table, more, _ = table_for(reader, embedder, folder, known, progress)
                        embedded += more
                    if (
                        existing is not None
                        and existing.model == table.model
                        and np.array_equal(existing.present, table.present)
                    ):
                        shutil.rmtree(build_dir, ignore_errors=True)
                        _clear_chunks(index_dir)
                        return EmbedSummary(
                            embedded,
                            reused,
                            int(table.present.sum()),
                            None,
                            time.perf_counter() - started,
                        )
                    table.save(build_dir, ix.latest_generation())
            finally:
                ix.close()
            gen = storage.publish(index_dir, build_dir)
        except BaseException:
            shutil.rmtree(build_dir, ignore_errors=True)
            raise
        _clear_chunks(index_dir)
    return EmbedSummary(
        embedded, reused, int(table.present.sum()), gen.name, time.perf_counter() - started
    )


def _clear_chunks(index_dir: Path) -> None:
    shutil.rmtree(index_dir / CHUNKS_DIR, ignore_errors=True)
