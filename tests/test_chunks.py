"""The constant pool's pieces (nnc.runtime.chunks): no copies on the way,
one aligned buffer at the end, and mapped pages released only where that
cannot change what is read."""

from __future__ import annotations

import mmap
import re

import numpy as np
import pytest

import nnc
from nnc.passes.convert_nnapi_to_linalg import ConstantPool
from nnc.runtime.chunks import ALIGN, ByteChunks, mapped_read_only, owned_copy, release_pages


def _mapping_rss_kib(path: str) -> int:
    """Resident KiB of this process's mappings of ``path``."""
    total, current = 0, ""
    with open("/proc/self/smaps") as f:
        for line in f:
            if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                current = line.rstrip()
            elif line.startswith("Rss:") and current.endswith(path):
                total += int(line.split()[1])
    return total


def test_pieces_are_views_at_aligned_offsets() -> None:
    weights = np.arange(100, dtype=np.float32)
    c = ByteChunks()
    assert c.append(b"abc") == 0
    at = c.append(weights)
    assert at == ALIGN and len(c) == ALIGN + weights.nbytes
    view = c.read(at, weights.nbytes)
    assert view.readonly and np.shares_memory(np.frombuffer(view, np.float32), weights)
    # a read across pieces is a copy with the zeros between them
    assert bytes(c.read(0, ALIGN + 4)) == b"abc" + b"\0" * (ALIGN - 3) + weights[:1].tobytes()
    assert c.tobytes() == b"abc" + b"\0" * (ALIGN - 3) + weights.tobytes()


def test_select_keeps_views_and_says_where_they_moved() -> None:
    c = ByteChunks()
    first, second, third = c.append(b"x" * 10), c.append(b"y" * 100), c.append(b"z" * 5)
    out, moved = c.select([(third, 5), (first + 2, 3), (first, 4)])
    # first..first+5 merged; third follows at the next boundary
    assert moved == {first: 0, first + 2: 2, third: ALIGN}
    assert bytes(out.read(0, 5)) == b"xxxxx" and bytes(out.read(ALIGN, 5)) == b"zzzzz"
    assert len(out) == ALIGN + 5
    assert second not in moved


def test_into_aligned_copies_once_and_empties_the_chunks() -> None:
    c = ByteChunks()
    c.append(b"abc")
    c.append(np.ones(70_000, np.uint8))  # an owned mapping's worth
    buf = c.into_aligned()
    assert buf.readonly and np.frombuffer(buf, np.uint8).ctypes.data % ALIGN == 0
    assert bytes(buf[:3]) == b"abc" and bytes(buf[ALIGN : ALIGN + 70_000]) == b"\1" * 70_000
    assert len(c) == 0 and list(c.pieces()) == []
    assert len(ByteChunks().into_aligned()) == 1  # the code always gets a buffer


def test_owned_copy_is_independent_of_its_source() -> None:
    for n in (10, 1 << 17):
        src = np.arange(n, dtype=np.uint8)
        copy = owned_copy(src)
        src[:] = 0
        assert copy.readonly and bytes(copy) == np.arange(n, dtype=np.uint8).tobytes()


def test_pool_appends_to_its_own_pieces_not_the_importers() -> None:
    imported = ByteChunks()
    imported.append(b"w" * 64)
    pool = ConstantPool(imported)
    off = pool.append(np.arange(4, dtype=np.int32))
    assert pool.append(np.arange(4, dtype=np.int32)) == off  # equal arrays once
    assert len(imported) == 64 and pool.size == off + 16


def test_release_drops_resident_pages_of_a_read_only_mapping(tmp_path) -> None:
    path = tmp_path / "w.bin"
    data = np.random.default_rng(0).integers(0, 255, 4 << 20, dtype=np.uint8)
    path.write_bytes(data.tobytes())
    with open(path, "rb") as f:
        mm = mapped_read_only(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))
    view = np.frombuffer(mm, np.uint8)
    assert int(view.astype(np.int64).sum()) == int(data.astype(np.int64).sum())  # touch every page
    before = _mapping_rss_kib(str(path))
    release_pages(view[100:])
    assert _mapping_rss_kib(str(path)) < before / 4
    assert np.array_equal(view, data)  # read again from the page cache
    del view
    mm.close()


def test_release_never_touches_a_private_mapping(tmp_path) -> None:
    """A copy-on-write mapping's written pages are not in the file: nnc never
    releases a mapping it did not make read-only itself."""
    path = tmp_path / "w.bin"
    path.write_bytes(b"\0" * mmap.PAGESIZE * 4)
    with open(path, "r+b") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
    view = np.frombuffer(mm, np.uint8)
    view[:] = 7
    release_pages(view)
    assert (view == 7).all()
    del view
    mm.close()


@pytest.mark.parametrize("value", [np.float32(1.0), "not a buffer", b"bytes", bytearray(3)])
def test_release_ignores_what_is_not_a_mapping(value) -> None:
    release_pages(value)


def test_import_leaves_the_files_pages_released(tmp_path) -> None:
    """Reading a TFLite file's tables faults in pages around every buffer;
    the import gives them back, and the weights still read right."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from tflite_builder import TFLiteBuilder

    b = TFLiteBuilder()
    rng = np.random.default_rng(1)
    x = b.tensor("x", [1, 256], 0)
    weights = []
    for k in range(8):
        w = rng.standard_normal((256, 256), np.float32)
        weights.append(w)
        y = b.tensor(f"y{k}", [1, 256], 0)
        b.op("FULLY_CONNECTED", [x, b.tensor(f"w{k}", [256, 256], 0, w), -1], [y], ("FullyConnectedOptions", {}))
        x = y
    path = tmp_path / "fc.tflite"
    path.write_bytes(b.build(inputs=[0], outputs=[x]))
    model = nnc.import_tflite(str(path))
    assert _mapping_rss_kib(str(path)) <= 64  # a few table pages at most
    values = [o.value for o in model.operands if o.value is not None and o.value.size == 256 * 256]
    assert all(np.array_equal(v, w) for v, w in zip(values, weights))
