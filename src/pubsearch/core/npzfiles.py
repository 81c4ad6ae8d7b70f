"""Arrays saved beside an index generation: ``.npz`` files written whole and renamed into
place, each array's data aligned so that a reader maps it from the file instead of reading
it (the page cache is shared by every process reading the file)."""

from __future__ import annotations

import io
import math
import mmap
import os
import re
import struct
import tempfile
import zipfile
from pathlib import Path
from typing import Any


def save_arrays(path: Path, arrays: dict[str, Any]) -> None:
    """Write numpy ``arrays`` to ``path`` (``.npz``) as a new file renamed into place, so
    that a reader sees the old file or the whole new one. The file is what ``np.savez``
    writes (``np.load`` reads it), with each array's data stored at a multiple of 64 bytes
    from the file's start, so that :func:`load_arrays` can map it as it is."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".npz", dir=path.parent)
    try:
        with (
            os.fdopen(fd, "wb") as fh,
            zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED, allowZip64=True) as zf,
        ):
            for name, value in arrays.items():
                _write_member(zf, fh, name, value)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# Where an array's data starts in a saved file: a multiple of this (numpy's own alignment
# of an .npy header, enough for any dtype).
ARRAY_ALIGN = 64
# The id of the zip "extra field" that pads a member's local header to that alignment (the
# id Android's zipalign uses; zip readers skip extra fields they do not know).
_PADDING_FIELD = 0xD935
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature, ..., name length, extra length


def _write_member(zf: zipfile.ZipFile, fh: Any, name: str, value: Any) -> None:
    """``value`` as the member ``name.npy`` of ``zf`` (writing to ``fh``), padded so that
    the array's data starts at a multiple of :data:`ARRAY_ALIGN`."""
    import numpy as np

    array = np.asarray(value)
    if not array.flags.c_contiguous:
        array = np.ascontiguousarray(array)  # (which makes a 0-d array 1-d)
    info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    if array.dtype.hasobject:
        raise ValueError(f"cannot save {name}: an array of Python objects")
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, np.lib.format.header_data_from_array_1_0(array))
    info.file_size = header.tell() + array.nbytes
    # The local header: 30 bytes, the name, the extra field (4 bytes and the padding); a
    # member of 2 GB or more also gets a zip64 field, which is not allowed for here.
    before_data = fh.tell() + 30 + len(info.filename.encode("ascii")) + 4 + header.tell()
    padding = -before_data % ARRAY_ALIGN
    info.extra = struct.pack("<HH", _PADDING_FIELD, padding) + bytes(padding)
    with zf.open(info, "w") as out:
        out.write(header.getvalue())
        out.write(array.reshape(-1).view(np.uint8).data)


def load_arrays(path: Path) -> dict[str, Any]:
    """The arrays of a ``.npz`` file :func:`save_arrays` wrote, by name, read-only and
    mapped from the file (the page cache is shared by every process reading it, and
    nothing is read before it is used); arrays that cannot be mapped as they are
    (compressed, or not aligned: files written by ``np.savez``) are read into memory.
    Raises ValueError, OSError or zipfile.BadZipFile when the file is not such a file."""
    import numpy as np

    arrays: dict[str, Any] = {}
    with open(path, "rb") as fh, zipfile.ZipFile(fh) as zf:  # (an empty file is no zip)
        mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        for info in zf.infolist():
            name = info.filename.removesuffix(".npy")
            array = None
            if info.compress_type == zipfile.ZIP_STORED:
                array = _mapped_member(mapped, fh, info)
            if array is None:
                with zf.open(info) as member:
                    array = np.lib.format.read_array(member, allow_pickle=False)
            arrays[name] = array
    return arrays


def _mapped_member(mapped: mmap.mmap, fh: Any, info: zipfile.ZipInfo) -> Any:
    """The array of the stored member ``info``, over ``mapped``; None when its data is
    not aligned for its type (it is read instead)."""
    import numpy as np

    signature, name_length, extra_length = _LOCAL_HEADER.unpack_from(mapped, info.header_offset)
    if signature != b"PK\x03\x04":
        raise ValueError(f"{info.filename}: not a zip member")
    start = info.header_offset + 30 + name_length + extra_length
    found = _plain_header(mapped, start)
    if found is not None:
        shape, fortran_order, dtype, offset = found
    else:
        fh.seek(start)
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, fortran_order, dtype = np.lib.format.read_array_header_1_0(fh)
        elif version == (2, 0):
            shape, fortran_order, dtype = np.lib.format.read_array_header_2_0(fh)
        else:
            return None
        offset = fh.tell()
    count = math.prod(shape)
    if dtype.hasobject or offset + count * dtype.itemsize > start + info.file_size:
        raise ValueError(f"{info.filename}: not an array of numbers of its stated size")
    if offset % dtype.alignment:
        return None
    array = np.frombuffer(mapped, dtype=dtype, count=count, offset=offset)
    return array.reshape(shape, order="F" if fortran_order else "C")


# The header numpy writes for an array of numbers (format 1.0): its dict as Python writes
# it, padded with spaces to a line. Read with this rather than numpy's reader (which
# evaluates it as Python, about 0.1 ms each: a search opening a generation reads some 170
# arrays); any other header is left to numpy's reader.
_NPY_MAGIC = b"\x93NUMPY\x01\x00"
_NPY_HEADER = re.compile(
    rb"\{'descr': '([<>|=][a-zA-Z]\d{0,3})', 'fortran_order': (True|False), "
    rb"'shape': \(([\d, ]*)\), \} *\n"
)


def _plain_header(mapped: mmap.mmap, start: int) -> tuple[tuple[int, ...], bool, Any, int] | None:
    """The shape, order and dtype of the array whose ``.npy`` header starts at ``start``
    in ``mapped``, and where its data starts; None for a header of another form."""
    import numpy as np

    if mapped[start : start + 8] != _NPY_MAGIC or start + 10 > len(mapped):
        return None
    (length,) = struct.unpack_from("<H", mapped, start + 8)
    found = _NPY_HEADER.fullmatch(mapped[start + 10 : start + 10 + length])
    if found is None:
        return None
    descr, order, dims = found.groups()
    shape = tuple(int(d) for d in dims.split(b",") if d.strip())
    return shape, order == b"True", np.dtype(descr.decode("ascii")), start + 10 + length
