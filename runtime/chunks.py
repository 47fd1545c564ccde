"""A model's constant pool while it is compiled: bytes held as pieces, not copied.

A compiled model reads its weights from one contiguous buffer (the constant
pool, ``const void *weights``).  On the way there the same bytes used to be
joined several times: the importer joined every constant into one ``bytes``,
the lowering joined that with the packed copies it appended, compaction
copied the live ranges out, the loader copied the result to an aligned
buffer and the cache joined it with a header.  A 100 MB model then held
seven or eight copies at the peak of a cold compile.

:class:`ByteChunks` keeps the pool as pieces instead: each constant is a
read-only view of the bytes it came from (a model's operand value, itself a
view of a mapped file after :func:`nnc.import_tflite`) or of what the
lowering appended, at a 64-byte-aligned offset; the zeros between pieces are
implied, never stored.  Compaction keeps views of the ranges still read.
Only :meth:`ByteChunks.into_aligned` writes the bytes, once, into the buffer
the code runs from, letting go of each piece as it is copied, so the
transformed weights and the final buffer are never both whole.

:func:`release_pages` returns pages of a file nnc mapped
(:func:`mapped_read_only`) to the page cache once they were read: the
resident set of a process then holds the weights it needs (the final pool),
not also every page of the model file it read once.  A released page is
read again from the page cache if touched again, so this changes memory,
never contents; nnc only releases its own read-only mappings, never a
private writable one (dropping its pages would drop its writes).
"""

from __future__ import annotations

import bisect
import ctypes
import mmap
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Protocol

import numpy as np

#: alignment of every piece's offset, and of the buffer the code runs from
ALIGN = 64

#: mappings nnc made read-only (:func:`mapped_read_only`): the only ones
#: :func:`release_pages` touches
_READ_ONLY_MAPPINGS: weakref.WeakSet[mmap.mmap] = weakref.WeakSet()


class _Hash(Protocol):
    def update(self, data: bytes | memoryview, /) -> None: ...


def mapped_read_only(mm: mmap.mmap) -> mmap.mmap:
    """Record ``mm`` (opened with ``ACCESS_READ``) as a mapping whose pages
    :func:`release_pages` may drop; ``mm``."""
    _READ_ONLY_MAPPINGS.add(mm)
    return mm


def _mapping_of(buf: object) -> mmap.mmap | None:
    """The mmap object at the end of ``buf``'s chain of views (numpy bases,
    memoryview exporters), if it is one nnc mapped read-only."""
    seen = 0
    while buf is not None and seen < 64:
        if isinstance(buf, mmap.mmap):
            return buf if buf in _READ_ONLY_MAPPINGS else None
        buf = buf.base if isinstance(buf, np.ndarray) else buf.obj if isinstance(buf, memoryview) else None
        seen += 1
    return None


def release_pages(buf: object) -> None:
    """Tell the kernel this process no longer needs the pages under ``buf``
    (an array or memoryview) if they are pages of a file nnc mapped
    read-only; otherwise do nothing.  Whole pages around ``buf`` are released
    (neighbouring bytes stay readable: they are read again when touched)."""
    mm = _mapping_of(buf)
    if mm is None or mm.closed:
        return
    try:
        view = np.frombuffer(buf, dtype=np.uint8)  # type: ignore[call-overload]
        whole = np.frombuffer(mm, dtype=np.uint8)
    except (TypeError, ValueError):  # an empty or non-contiguous view, a closed map
        return
    start = view.ctypes.data - whole.ctypes.data
    if view.size == 0 or not 0 <= start < whole.size:
        return
    first = start - start % mmap.PAGESIZE
    mm.madvise(mmap.MADV_DONTNEED, first, min(start + view.size, whole.size) - first)


#: copies of at least this many bytes get their own anonymous mapping
_MAPPED_COPY_BYTES = 1 << 16


def owned_copy(arr: np.ndarray) -> memoryview:
    """A read-only copy of a C-contiguous array's bytes that gives its memory
    back to the system when dropped.  A big ``bytes`` would come from
    ``malloc``, which keeps freed blocks below its (growing) mapping
    threshold in the heap: the pool's pieces, dropped one by one while
    :meth:`ByteChunks.into_aligned` copies them, would then stay resident
    beside the buffer they were copied to.  An anonymous mapping of its own
    is unmapped as soon as the last view of it goes."""
    flat = arr.reshape(-1).view(np.uint8)
    if flat.size < _MAPPED_COPY_BYTES:
        return memoryview(flat.tobytes())
    buf = mmap.mmap(-1, flat.size)
    np.frombuffer(buf, dtype=np.uint8)[:] = flat
    return memoryview(buf).toreadonly()


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, if this process has it."""
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None


_MALLOC_TRIM = _malloc_trim()


def return_freed_memory() -> None:
    """Give the heap's free pages back to the system (glibc: ``malloc_trim``).

    Why: numpy's big temporaries (a layer's widened filter while its panel
    is packed) come from ``malloc``, whose mapping threshold grows to the
    largest block freed so far; after the first big layer, later
    temporaries come from the heap and stay resident once freed, beside the
    pieces the pool keeps.  Trimming after each such layer costs
    microseconds."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


def _byte_view(data: object) -> memoryview:
    """``data`` (bytes-like, a C-contiguous array) as a flat read-only byte view."""
    return memoryview(data).cast("B").toreadonly()  # type: ignore[arg-type]


class ByteChunks:
    """Bytes made of read-only pieces at 64-byte-aligned offsets, zeros
    between them (see the module docstring).  The owner of a piece's bytes
    must not change them while the chunks live."""

    def __init__(self, pieces: Iterable[tuple[int, memoryview]] = (), size: int = 0):
        self._offsets: list[int] = []
        self._pieces: list[memoryview] = []
        self.size = size
        for offset, piece in pieces:
            self._offsets.append(offset)
            self._pieces.append(piece)
            self.size = max(self.size, offset + piece.nbytes)

    def __len__(self) -> int:
        return self.size

    def append(self, data: object) -> int:
        """Add ``data`` (bytes-like, referenced, not copied) at the next
        64-byte boundary; its offset."""
        piece = _byte_view(data)
        offset = self.size + (-self.size) % ALIGN
        self._offsets.append(offset)
        self._pieces.append(piece)
        self.size = offset + piece.nbytes
        return offset

    def pieces(self) -> Iterator[tuple[int, memoryview]]:
        return zip(self._offsets, self._pieces)

    def read(self, offset: int, nbytes: int) -> memoryview:
        """Bytes ``[offset, offset + nbytes)``: a view when one piece holds
        them (every constant is one piece), else a copy (zeros where no
        piece is)."""
        k = bisect.bisect_right(self._offsets, offset) - 1
        if k >= 0:
            lo = offset - self._offsets[k]
            if lo + nbytes <= self._pieces[k].nbytes:
                return self._pieces[k][lo : lo + nbytes]
        out = bytearray(nbytes)
        for start, piece in self.pieces():
            lo, hi = max(start, offset), min(start + piece.nbytes, offset + nbytes)
            if lo < hi:
                out[lo - offset : hi - offset] = piece[lo - start : hi - start]
        return memoryview(bytes(out))

    def select(self, spans: Sequence[tuple[int, int]]) -> tuple[ByteChunks, dict[int, int]]:
        """The chunks of just the byte ranges ``spans`` (offset, size), in
        offset order, overlapping ones merged, each at the next 64-byte
        boundary: views, no bytes copied; and where each span's offset moved."""
        merged: list[list[int]] = []
        for off, n in sorted(spans):
            if merged and off < merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], off + n)
            else:
                merged.append([off, off + n])
        out = ByteChunks()
        starts: list[tuple[int, int, int]] = []
        for lo, hi in merged:
            starts.append((lo, hi, out.append(self.read(lo, hi - lo))))
        moved = {off: new + off - lo for off, _ in spans for lo, hi, new in starts if lo <= off < hi or off == lo}
        return out, moved

    def hash_into(self, h: _Hash) -> None:
        """Feed every piece, with its offset and size, to hash ``h`` (and
        release the mapped pages hashed: see :func:`release_pages`)."""
        for offset, piece in self.pieces():
            h.update(offset.to_bytes(8, "little") + piece.nbytes.to_bytes(8, "little"))
            h.update(piece)
            release_pages(piece)
        h.update(self.size.to_bytes(8, "little"))

    def tobytes(self) -> bytes:
        return bytes(self.read(0, self.size)) if self.size else b""

    def into_aligned(self) -> memoryview:
        """The bytes as one 64-byte-aligned, read-only buffer of at least one
        byte, made by copying each piece once; each piece is let go of as it
        is copied (and its mapped pages released), so these chunks are empty
        afterwards."""
        raw = np.zeros(max(self.size, 1) + ALIGN, dtype=np.uint8)
        start = (-raw.ctypes.data) % ALIGN
        out = raw[start : start + max(self.size, 1)]
        offsets, pieces = self._offsets, self._pieces
        self._offsets, self._pieces, self.size = [], [], 0
        for k, offset in enumerate(offsets):
            piece = pieces[k]
            out[offset : offset + piece.nbytes] = np.frombuffer(piece, dtype=np.uint8)
            release_pages(piece)
            pieces[k] = _EMPTY
            del piece
        out.flags.writeable = False
        return out.data


_EMPTY = memoryview(b"")
