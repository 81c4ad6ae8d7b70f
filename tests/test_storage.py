"""Arrays saved beside a generation: written as np.savez's files are, read mapped."""

from __future__ import annotations

import io
import mmap
import zipfile
from pathlib import Path

import numpy as np
import pytest

from pubsearch.core import npzfiles

ARRAYS = {
    "meta": np.asarray([3, 7, 11], dtype=np.int64),
    "years": np.asarray([2024, 0, 1999], dtype=np.int16),
    "labels": np.frombuffer("Ada Lovelace\x1fÉmilie du Châtelet".encode(), dtype=np.uint8),
    "empty": np.zeros(0, dtype=np.int32),
    "matrix": np.arange(12, dtype=np.float32).reshape(3, 4),
    "fortran": np.asfortranarray(np.arange(6, dtype=np.int64).reshape(2, 3)),
    "odd": np.asarray([1.5, -2.25], dtype=np.float64),
    "model": np.asarray("all-MiniLM-L6-v2-int8"),  # 0-d, unicode
}


def _check_equal(loaded: dict[str, np.ndarray]) -> None:
    assert set(loaded) == set(ARRAYS)
    for name, array in ARRAYS.items():
        assert loaded[name].dtype == array.dtype, name
        assert loaded[name].shape == array.shape, name
        assert np.array_equal(loaded[name], array), name


def test_saved_arrays_load_mapped_aligned_and_read_only(tmp_path: Path) -> None:
    path = tmp_path / "a.npz"
    npzfiles.save_arrays(path, ARRAYS)
    loaded = npzfiles.load_arrays(path)
    _check_equal(loaded)
    for name, array in loaded.items():
        assert not array.flags.writeable, name  # the file's pages, not a copy
        assert not array.flags.owndata, name
        if array.size:
            assert array.ctypes.data % npzfiles.ARRAY_ALIGN == 0, name
    with pytest.raises(ValueError):
        loaded["meta"][0] = 1


def test_saved_arrays_are_a_file_numpy_reads(tmp_path: Path) -> None:
    path = tmp_path / "a.npz"
    npzfiles.save_arrays(path, ARRAYS)
    with np.load(path, allow_pickle=False) as data:
        _check_equal({name: data[name] for name in data.files})
    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() is None  # every member's checksum holds


def test_files_numpy_wrote_are_read_too(tmp_path: Path) -> None:
    # An index saved before this module wrote aligned files: its arrays are read, not
    # mapped, where they are not aligned; compressed ones are inflated.
    for save in (np.savez, np.savez_compressed):
        path = tmp_path / f"{save.__name__}.npz"
        save(path, **ARRAYS)  # type: ignore[operator]
        loaded = npzfiles.load_arrays(path)
        _check_equal(loaded)
        for name, array in loaded.items():
            assert array.ctypes.data % array.dtype.alignment == 0, name


def test_loaded_arrays_outlive_the_file(tmp_path: Path) -> None:
    # A generation's files are removed while searchers may still use what they loaded.
    path = tmp_path / "a.npz"
    npzfiles.save_arrays(path, ARRAYS)
    loaded = npzfiles.load_arrays(path)
    path.unlink()
    npzfiles.save_arrays(tmp_path / "b.npz", {"meta": np.asarray([9, 9, 9], dtype=np.int64)})
    _check_equal(loaded)


@pytest.mark.parametrize("cut", [0, 10, 200, -40])
def test_damaged_files_raise_what_callers_catch(tmp_path: Path, cut: int) -> None:
    path = tmp_path / "a.npz"
    npzfiles.save_arrays(path, ARRAYS)
    data = path.read_bytes()
    path.write_bytes(data[:cut] if cut >= 0 else data[:cut] + b"\0" * 40)
    with pytest.raises((ValueError, OSError, zipfile.BadZipFile)):
        loaded = npzfiles.load_arrays(path)
        _check_equal(loaded)  # a member damaged past its header: the values differ


@pytest.mark.parametrize(
    "array",
    [
        np.zeros(()),
        np.zeros(0, dtype=np.uint8),
        np.arange(5, dtype=">i4"),
        np.zeros((7, 0), dtype=np.int16),
        np.asfortranarray(np.ones((2, 3, 4), dtype=np.float16)),
        np.asarray(["ab", "c"]),
        np.arange(1_000_003, dtype=np.uint64),
    ],
)
def test_array_headers_read_as_numpy_reads_them(array: np.ndarray) -> None:
    """The headers numpy writes, read by the module's own reader (or left to numpy's):
    the same shape, order and type, and the data where numpy finds it."""
    out = io.BytesIO()
    np.lib.format.write_array(out, array)
    data = out.getvalue()
    mapped = mmap.mmap(-1, len(data))
    mapped.write(data)
    stream = io.BytesIO(data)
    np.lib.format.read_magic(stream)
    expected = np.lib.format.read_array_header_1_0(stream)
    found = npzfiles._plain_header(mapped, 0)
    assert found is not None or array.dtype.kind == "U"  # (numpy's reader reads those)
    if found is not None:
        assert found == (*expected, stream.tell())


def test_objects_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="objects"):
        npzfiles.save_arrays(tmp_path / "a.npz", {"x": np.asarray(["a", None], dtype=object)})
    assert list(tmp_path.iterdir()) == []  # nothing half-written left behind


_BUILD_AS_BEFORE = """
import sys
from pathlib import Path
from pubsearch.index import analysis, tokenizer
from pubsearch.index.build import build_index
from pubsearch.ingest.readers import ReadReport, read_paths

# The classes pickled with the schema, named as they were before the packages.
for old, module, names in [
    ("pubsearch.analysis", analysis, ["FastAnalyzer"]),
    ("pubsearch.tokenizer", tokenizer, ["SearchableTokenizer"]),
]:
    sys.modules[old] = module
    for name in names:
        getattr(module, name).__module__ = old
build_index(Path(sys.argv[1]), read_paths([Path(sys.argv[2])], ReadReport()))
"""

_SEARCH = """
import sys
from pathlib import Path
assert "pubsearch.analysis" not in sys.modules
from pubsearch.search.request import SearchRequest
from pubsearch.search.service import SearchService
service = SearchService(Path(sys.argv[1]))
print(service.search(SearchRequest(q="batch size")).total)
service.close()
"""


def test_an_index_built_before_the_packages_opens_and_searches(
    tmp_path: Path, seeds_dir: Path, seed_index: Path
) -> None:
    """Whoosh pickles the schema with its analyzers' module paths, and unpickles it for
    every reader: an index built when they were ``pubsearch.analysis`` and
    ``pubsearch.tokenizer`` still opens, and finds what a new one finds."""
    import subprocess
    import sys

    from pubsearch.index import storage
    from pubsearch.search.request import SearchRequest
    from pubsearch.search.service import SearchService

    old = tmp_path / "old"
    subprocess.run([sys.executable, "-c", _BUILD_AS_BEFORE, str(old), str(seeds_dir)], check=True)
    generation = storage.current_generation(old)
    assert generation is not None
    toc = b"".join(path.read_bytes() for path in generation.glob("_MAIN_*.toc"))
    assert b"pubsearch.analysis" in toc and b"pubsearch.index.analysis" not in toc
    found = subprocess.run(
        [sys.executable, "-c", _SEARCH, str(old)], check=True, capture_output=True, text=True
    )
    service = SearchService(seed_index)
    try:
        expected = service.search(SearchRequest(q="batch size")).total
    finally:
        service.close()
    assert expected > 0
    assert int(found.stdout) == expected
