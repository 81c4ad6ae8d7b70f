"""Type stubs of pubsearch.core._speedups (built from src/pubsearch/core/csrc/*.c)."""

from collections.abc import Callable, Sequence
from typing import Any, Literal, overload

Buffer = Any  # an object with a contiguous buffer (numpy arrays, bytes)

def write_blocks(
    *,
    bounds: Buffer,
    docs: Buffer,
    weights: Buffer,
    lengths: Buffer | None,
    values: Buffer | None,
    starts: Buffer | None,
    ends: Buffer | None,
    fixed_values: Buffer | None,
    fixed: int,
    mode: int,
    has_empty: bool,
    int_weights: bool,
    blocklimit: int,
    compression: int,
    min_compressed: int,
    magic: bytes,
    pos: int,
    compress: Callable[[bytes, int], bytes],
) -> tuple[bytes, list[bytes]]: ...
def doc_postings(
    numbers: dict[bytes | str, int],
    stem_lists: Sequence[list[str]],
    first: int,
    positions: bool,
    boost: float,
    fieldboost: float,
) -> tuple[int, list[str], bytes, bytes, bytes, bytes, int, int, bytes]: ...
def run_stems(
    text: str,
    cache: dict[str, tuple[str, ...]],
    leads: dict[str, tuple[int, int]],
    edge: str,
    lead_of: Callable[[Any, str], tuple[int, int]],
) -> tuple[list[str], int]: ...
def run_ids(
    text: str,
    cache: dict[str, bytes],
    leads: dict[str, tuple[int, int]],
    edge: str,
    lead_of: Callable[[Any, str], tuple[int, int]],
) -> tuple[bytes, int]: ...
def doc_postings_ids(
    numbers: dict[bytes | str, int],
    fieldmap: bytearray,
    stems: list[str],
    ids: Buffer,
    first: int,
    positions: bool,
    boost: float,
    fieldboost: float,
) -> tuple[int, list[str], bytes, bytes, bytes, bytes, int, int, bytes]: ...
def position_table(values: list[bytes]) -> tuple[bytes, bytes]: ...
def phrase_fits(values: list[tuple[Buffer, Buffer, Buffer]], slop: int) -> bytes: ...
def decode_lists(
    joined: Buffer, starts: Buffer, lengths: Buffer, magic: bytes, decompress: Callable[..., bytes]
) -> tuple[bytes, bytes, bytes]: ...
def scan_terms(
    table: Buffer, pos: int, start: bytes, field_size: int, stats_size: int
) -> tuple[int, bool, list[str], bytes, bytes, bytes]: ...
def add_word_scores(
    total: Buffer,
    seen: Buffer,
    ids: Buffer,
    tfs: Buffer,
    word_of: Buffer,
    idfs: Buffer,
    norms: Buffer,
    k1: float,
    boost: float,
) -> None: ...
def add_scores(
    total: Buffer,
    seen: Buffer,
    offset: int,
    ids: Buffer,
    tfs: Buffer,
    norms: Buffer | None,
    idf: float,
    k1: float,
    boost: float,
) -> None: ...
@overload
def decode_list(
    raw: bytes, magic: bytes, decompress: Callable[[bytes], bytes]
) -> tuple[bytes, bytes]: ...
@overload
def decode_list(
    raw: bytes, magic: bytes, decompress: Callable[[bytes], bytes], with_values: Literal[False, 0]
) -> tuple[bytes, bytes]: ...
@overload
def decode_list(
    raw: bytes, magic: bytes, decompress: Callable[[bytes], bytes], with_values: Literal[True, 1]
) -> tuple[bytes, bytes, list[bytes]]: ...
@overload
def decode_list(
    raw: bytes, magic: bytes, decompress: Callable[[bytes], bytes], with_values: Literal[2]
) -> tuple[bytes, bytes, bytes, bytes]: ...
def table_get_many(
    fd: int, base: int, tables: Buffer, keys: list[bytes], hashes: Buffer
) -> list[bytes | None]: ...
def common_indices(a: Buffer, b: Buffer) -> tuple[bytes, bytes]: ...
def int8_similarities(
    codes: Buffer, scales: Buffer, query: Buffer, unit: float, out: Buffer
) -> None: ...
