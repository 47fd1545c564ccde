"""Memory objects (ANeuralNetworksMemory_*, ANeuralNetworksMemoryDesc_*).

Two kinds of :class:`Memory`, as in NNAPI:

* **Client memory** (``kind == "fd"``), :meth:`Memory.from_fd`: an ``mmap``
  (``MAP_SHARED``, the protection asked for) of a duplicate of the caller's
  file descriptor, so the caller may close its own.  Executions bind views of
  the mapping: the bytes are read (inputs) and written (outputs) in place at
  compute time, never copied at binding.  Client memory is always
  initialised.  Before each use nnc checks that a regular file still covers
  the mapped range (``fstat``), so a file truncated behind nnc's back is
  UNMAPPABLE rather than a SIGBUS; a truncation *during* a computation is the
  caller's race, as with any shared mapping.
* **Device memory** (``kind == "device"``), :meth:`Memory.from_desc`: what
  IDevice 1.3 ``allocate`` hands out for a :class:`MemoryDesc` -- an opaque
  buffer owned by nnc, usable only in the roles the descriptor declared,
  with offset and length 0.  It starts UNINITIALISED and becomes initialised
  when it is the output of a successful computation or the destination of a
  successful :meth:`Memory.copy`; a failed computation or copy writing it
  makes it uninitialised again.  Its shape is the descriptor's, refined by
  whichever output or copy last wrote it.

AHardwareBuffer does not exist on Linux: :meth:`Memory.from_ahardware_buffer`
always raises BadDataError saying so.

Data of an element type must be aligned to its size inside a memory (NNAPI
requires it and the generated code relies on it); nnc checks this where it
binds a region.

Closing (the NDK's ``_free``) is idempotent and never frees bytes under a
running computation: executions and models that bound a region hold views of
the mapping, and the mapping is only unmapped when the last view is gone.
"""

from __future__ import annotations

import math
import mmap
import os
import stat
import threading
import weakref
from dataclasses import dataclass

import numpy as np

from nnc.compilation import Compilation
from nnc.enums import OperandType
from nnc.errors import (
    BadDataError,
    BadStateError,
    NNError,
    OpFailedError,
    UnexpectedNullError,
    UnmappableError,
    ndk,
)
from nnc.model import ConstantMemory
from nnc.operand_types import element_bytes, is_int, unify_dims

_CREATE_FD = "ANeuralNetworksMemory_createFromFd"
_CREATE_DESC = "ANeuralNetworksMemory_createFromDesc"
_CREATE_AHWB = "ANeuralNetworksMemory_createFromAHardwareBuffer"
_COPY = "ANeuralNetworksMemory_copy"
_FREE = "ANeuralNetworksMemory_free"

INPUT, OUTPUT = "input", "output"
#: the largest file descriptor (the NDK takes a C int)
_FD_MAX = 2**31 - 1
_PROT_MASK = mmap.PROT_READ | mmap.PROT_WRITE


def fully_known(dims: tuple[int, ...] | None) -> bool:
    return dims is not None and all(d > 0 for d in dims)


@dataclass(frozen=True)
class OperandMeta:
    """What every role of a descriptor must agree on."""

    type: OperandType
    scale: float
    zero_point: int
    channel_quant: tuple[tuple[float, ...], int] | None

    def byte_size(self, dims: tuple[int, ...] | None) -> int:
        """Bytes of a value of these dimensions (0 while any is unknown)."""
        if not fully_known(dims):
            return 0
        assert dims is not None
        return math.prod(dims) * element_bytes(self.type)


def _aligned_zeros(n: int, align: int = 64) -> np.ndarray:
    raw = np.zeros(n + align, dtype=np.uint8)
    off = (-raw.ctypes.data) % align
    return raw[off : off + n]


# -- Memory ---------------------------------------------------------------------------------------


class Memory(ConstantMemory):
    """ANeuralNetworksMemory: a region shared with the runtime.

    Create one with :meth:`from_fd` or :meth:`from_desc`.  ``size`` is the
    region's byte size (a device memory's logical size, 0 while its shape is
    unknown), ``kind`` is ``"fd"`` or ``"device"``.
    """

    kind: str

    def __init__(self, *, _kind: str):
        if _kind not in ("fd", "device"):
            raise TypeError("use Memory.from_fd or Memory.from_desc")
        self.kind = _kind
        self._closed = False
        self._lock = threading.RLock()
        # fd memory
        self._mmap: mmap.mmap | None = None
        self._mapping: _Mapping | None = None
        self._size = 0
        self._offset = 0
        self.protect = 0
        # device memory
        self._meta: OperandMeta | None = None
        self._initial_dims: tuple[int, ...] | None = None
        self._roles: dict[tuple[int, str, int], object] = {}
        self._data: np.ndarray | None = None
        self._dims: tuple[int, ...] | None = None
        self._initialized = False

    # -- creation --------------------------------------------------------------------------
    @staticmethod
    def from_fd(size: int, protect: int, fd: int, offset: int) -> Memory:
        """ANeuralNetworksMemory_createFromFd: map ``size`` bytes of ``fd``
        from ``offset`` (a multiple of the page size) with ``protect`` (0 for
        PROT_NONE, or an OR of ``mmap.PROT_READ`` and ``mmap.PROT_WRITE``).  The
        descriptor is duplicated; the caller keeps (and closes) its own."""
        fn = _CREATE_FD
        for name, v in (("size", size), ("protect", protect), ("fd", fd), ("offset", offset)):
            if not is_int(v):
                raise BadDataError(fn, f"{name} must be an int, got {type(v).__name__}")
        size, protect, fd, offset = int(size), int(protect), int(fd), int(offset)
        if size <= 0 or not 0 <= fd <= _FD_MAX:  # a C int: larger numbers are no descriptor
            raise BadDataError(fn, f"invalid size {size} or fd {fd}")
        if offset < 0 or offset % mmap.ALLOCATIONGRANULARITY:
            raise BadDataError(fn, f"offset {offset} is not a multiple of the page size {mmap.ALLOCATIONGRANULARITY}")
        if protect & ~_PROT_MASK:
            raise BadDataError(fn, f"protect {protect:#x} is not PROT_NONE or an OR of PROT_READ and PROT_WRITE")
        try:
            dup = os.dup(fd)
        except OSError as e:
            raise UnmappableError(fn, f"cannot duplicate fd {fd}: {e.strerror}") from None
        try:
            st = os.fstat(dup)
            if stat.S_ISREG(st.st_mode) and offset + size > st.st_size:
                raise BadDataError(
                    fn, f"offset {offset} + size {size} is past the end of the file ({st.st_size} bytes)"
                )
            try:
                mm = mmap.mmap(dup, size, flags=mmap.MAP_SHARED, prot=protect, offset=offset)
            except (OSError, ValueError, OverflowError) as e:
                raise UnmappableError(fn, f"cannot map fd {fd}: {e}") from None
        except NNError:
            os.close(dup)
            raise
        mem = Memory(_kind="fd")
        mem._mapping = _Mapping(mm, dup)
        mem._mmap, mem._size, mem._offset, mem.protect = mm, size, offset, protect
        weakref.finalize(mem, mem._mapping.release, True)
        return mem

    @staticmethod
    def from_desc(desc: MemoryDesc) -> Memory:
        """ANeuralNetworksMemory_createFromDesc: device memory for a finished
        descriptor.  nnc allocates it itself (there is no other allocator to
        fall back to); a failed allocation is OP_FAILED.  A descriptor
        with unknown dimensions is allowed: the buffer is sized by each
        output that writes it."""
        fn = _CREATE_DESC
        if desc is None:
            raise UnexpectedNullError(fn, "the memory descriptor is null")
        if not isinstance(desc, MemoryDesc):
            raise BadDataError(fn, f"expected an nnc.MemoryDesc, got {type(desc).__name__}")
        if desc._closed:
            raise BadStateError(fn, "the memory descriptor was closed")
        if not desc._finished:
            raise BadStateError(fn, "the memory descriptor is not finished")
        assert desc._meta is not None
        mem = Memory(_kind="device")
        mem._meta = desc._meta
        mem._initial_dims = desc._dims
        mem._roles = dict(desc._roles)
        if fully_known(desc._dims):
            mem._data = _allocate(fn, desc._meta.byte_size(desc._dims))
        return mem

    @staticmethod
    def from_ahardware_buffer(ahwb: object) -> Memory:
        """ANeuralNetworksMemory_createFromAHardwareBuffer: not on this platform.

        AHardwareBuffer is an Android graphics allocation; Linux has none, so
        nothing passed here can be one.  ``None`` is UNEXPECTED_NULL (the
        NULL check comes first); anything else is BAD_DATA."""
        if ahwb is None:
            raise UnexpectedNullError(_CREATE_AHWB, "the AHardwareBuffer is null")
        raise BadDataError(
            _CREATE_AHWB,
            "AHardwareBuffer does not exist on this platform (Linux); use Memory.from_fd "
            "(e.g. on a memfd) or Memory.from_desc instead",
        )

    # -- properties ----------------------------------------------------------------------------
    @property
    def size(self) -> int:
        """Byte size: the mapped length, or a device memory's logical size."""
        if self.kind == "fd":
            return self._size
        assert self._meta is not None
        return self._meta.byte_size(self._dims if self._initialized else self._initial_dims)

    @property
    def initialized(self) -> bool:
        """Client memory always is; device memory once written (see module doc)."""
        return self.kind == "fd" or self._initialized

    @property
    def dimensions(self) -> tuple[int, ...] | None:
        """Device memory: its current shape (None: unknown rank); fd memory: None."""
        if self.kind == "fd":
            return None
        return self._dims if self._initialized else self._initial_dims

    # -- views -------------------------------------------------------------------------------------
    def view(
        self, offset: int, length: int, function: str = "ANeuralNetworksModel_setOperandValueFromMemory"
    ) -> memoryview:
        """The live bytes ``[offset, offset + length)`` of client memory (read
        only unless mapped with PROT_WRITE).  BAD_DATA for device memory
        (it has no client-visible bytes), offset 0 with length 0
        (the size cannot be implied), or a range past the end;
        UNMAPPABLE when the region cannot be read."""
        self.check_open(function)
        if self.kind != "fd":
            raise BadDataError(function, "device memory (from a MemoryDesc) has no client-visible bytes")
        self._check_range(function, offset, length)
        if not self.protect & mmap.PROT_READ:
            raise UnmappableError(function, "the memory was mapped without PROT_READ")
        self.check_mapped(function)
        assert self._mmap is not None
        return memoryview(self._mmap)[int(offset) : int(offset) + int(length)]

    def read(self, fn: str, offset: int, length: int) -> bytes:
        """A copy of the bytes of a region (see :meth:`view`)."""
        return bytes(self.view(offset, length, fn))

    def check_open(self, fn: str) -> None:
        """BAD_STATE once the memory was closed (freed)."""
        if self._closed:
            raise BadStateError(fn, "the memory was closed (freed)")

    def _check_range(self, fn: str, offset: int, length: int) -> None:
        """SizedMemoryValidator: a region inside the mapping, size not implied."""
        if not is_int(offset) or not is_int(length):
            raise BadDataError(fn, "offset and length must be ints")
        offset, length = int(offset), int(length)
        if offset < 0 or length < 0:
            raise BadDataError(fn, f"negative offset {offset} or length {length}")
        if offset == 0 and length == 0:
            raise BadDataError(fn, "offset 0 and length 0: the size cannot be implied for this memory")
        if offset > self._size or offset + length > self._size:
            raise BadDataError(
                fn, f"region [{offset}, {offset + length}) is past the end of the {self._size}-byte memory"
            )

    def check_mapped(self, fn: str) -> None:
        """The file still covers the mapping (else touching it would SIGBUS)."""
        if self._mmap is None or self._mmap.closed or self._mapping is None or self._mapping.fd < 0:
            raise UnmappableError(fn, "the mapping was released")
        try:
            st = os.fstat(self._mapping.fd)
        except OSError as e:
            raise UnmappableError(fn, f"cannot stat the memory's file: {e.strerror}") from None
        if stat.S_ISREG(st.st_mode) and st.st_size < self._offset + self._size:
            raise UnmappableError(
                fn, f"the file shrank to {st.st_size} bytes; the mapping needs {self._offset + self._size}"
            )

    # -- used by executions (nnc.execution) to bind and run ----------------------------------------
    def region_array(self, fn: str, io: str, offset: int, length: int, dtype: np.dtype) -> np.ndarray:
        """A typed view of a client region bound as an execution input or output."""
        self._check_range(fn, offset, length)
        offset, length = int(offset), int(length)
        if offset % dtype.itemsize:
            raise BadDataError(fn, f"offset {offset} is not aligned to the element size {dtype.itemsize}")
        need = mmap.PROT_READ if io == INPUT else mmap.PROT_READ | mmap.PROT_WRITE
        if self.protect & need != need:
            what = "PROT_READ" if io == INPUT else "PROT_READ | PROT_WRITE"
            raise UnmappableError(fn, f"an {io} memory must be mapped with {what} (protect={self.protect:#x})")
        self.check_mapped(fn)
        assert self._mmap is not None
        return np.frombuffer(self._mmap, dtype=dtype, count=length // dtype.itemsize, offset=offset)

    def check_role(
        self, fn: str, compilation: object, io: str, index: int, offset: object, length: object,
        dims: tuple[int, ...] | None,
    ) -> None:
        """DeviceMemoryValidator::validate at set*FromMemory: a declared role,
        offset and length 0 (the whole memory), compatible dimensions."""
        if (id(compilation), io, index) not in self._roles:
            raise BadDataError(fn, f"the device memory was not described with this compilation's {io} {index} role")
        if not (is_int(offset) and is_int(length) and int(offset) == 0 and int(length) == 0):
            raise BadDataError(
                fn, f"device memory takes offset 0 and length 0 (the whole memory), got {offset}, {length}"
            )
        try:
            unify_dims(dims, self._initial_dims)
        except ValueError as e:
            raise BadDataError(fn, f"dimensions incompatible with the device memory's: {e}") from None

    def input_data(self, fn: str, dims: tuple[int, ...]) -> np.ndarray:
        """The device memory's bytes as an input of shape ``dims``."""
        with self._lock:
            if not self._initialized or self._data is None:
                raise OpFailedError(fn, "the device memory used as an input is uninitialised")
            if self._dims != tuple(dims):
                raise OpFailedError(
                    fn, f"the device memory holds shape {list(self._dims or ())}, the input is {list(dims)}"
                )
            return self._data

    def output_data(self, fn: str, shape: tuple[int, ...]) -> np.ndarray | None:
        """Bytes for an output of ``shape``, or None if the memory's declared
        shape cannot hold it (the caller reports the error)."""
        assert self._meta is not None
        with self._lock:
            try:
                unify_dims(tuple(shape), self._initial_dims)
            except ValueError:
                return None
            nbytes = self._meta.byte_size(tuple(shape))
            if self._data is None or self._data.nbytes != nbytes:
                self._data = _allocate(fn, nbytes)
            return self._data

    @property
    def capacity(self) -> int:
        """Bytes of a fixed-shape device memory (0: sized by its outputs)."""
        assert self._meta is not None
        return self._meta.byte_size(self._initial_dims)

    def mark_written(self, shape: tuple[int, ...] | None) -> None:
        """After a computation: initialised with ``shape``, or reset (None)."""
        with self._lock:
            self._initialized = shape is not None
            self._dims = tuple(shape) if shape is not None else None

    # -- copy ---------------------------------------------------------------------------------------
    @staticmethod
    def copy(src: Memory, dst: Memory) -> None:
        """ANeuralNetworksMemory_copy: copy ``src``'s bytes into ``dst``.

        Client <-> any: equal logical sizes.  Device -> device:
        compatible shapes and equal operand types; ``dst`` takes
        ``src``'s shape.  An uninitialised device source is BAD_DATA.
        A failed copy leaves a device ``dst`` uninitialised; a
        successful one initialises it.  ``copy(m, m)`` does nothing."""
        fn = _COPY
        if src is None or dst is None:
            raise UnexpectedNullError(fn, "source and destination must not be null")
        for m in (src, dst):
            if not isinstance(m, Memory):
                raise BadDataError(fn, f"expected an nnc.Memory, got {type(m).__name__}")
            m.check_open(fn)
        if src is dst:
            return
        first, second = sorted((src, dst), key=id)
        with first._lock, second._lock:
            try:
                shape = _copy_checked(fn, src, dst)
            except NNError:
                if dst.kind == "device":
                    dst.mark_written(None)
                raise
            if dst.kind == "device":
                dst.mark_written(shape)

    # -- lifetime -----------------------------------------------------------------------------------
    @ndk(_FREE, free=True)
    def close(self) -> None:
        """ANeuralNetworksMemory_free: idempotent.  A mapping still viewed by
        an execution or model is unmapped when the last view goes away."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._mapping is not None:
                self._mapping.release()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{self.size} bytes"
        return f"<nnc.Memory {self.kind} {state}>"


class _Mapping:
    """An mmap and the duplicate fd behind it, released exactly once.

    The mapping cannot be unmapped while views of it exist (CPython refuses
    with BufferError): then it is unmapped when the last view is collected.
    The fd is kept while the mapping may still be checked (:meth:`release`
    with ``final=False``) and closed for good when the Memory is collected."""

    def __init__(self, mm: mmap.mmap, fd: int):
        self.mm = mm
        self.fd = fd
        self._lock = threading.Lock()

    def release(self, final: bool = False) -> None:
        with self._lock:
            try:
                self.mm.close()
                unmapped = True
            except BufferError:
                unmapped = False
            if (unmapped or final) and self.fd >= 0:
                try:
                    os.close(self.fd)
                except OSError:
                    pass
                self.fd = -1


def _allocate(fn: str, nbytes: int) -> np.ndarray:
    try:
        return _aligned_zeros(max(nbytes, 1))[:nbytes]
    except MemoryError:
        raise OpFailedError(fn, f"the device cannot allocate {nbytes} bytes") from None


def _logical(m: Memory) -> tuple[int, tuple[int, ...] | None, OperandMeta | None]:
    """(logical size, dimensions, operand type) of a copy source (Memory::getMetadata)."""
    if m.kind == "fd":
        return m._size, None, None
    assert m._meta is not None
    return m._meta.byte_size(m._dims), m._dims, m._meta


def _copy_checked(fn: str, src: Memory, dst: Memory) -> tuple[int, ...] | None:
    """Validate and perform a copy; returns the shape ``dst`` now has."""
    if src.kind == "device" and (not src._initialized or src._data is None):
        raise BadDataError(fn, "the source device memory is uninitialised")
    size, dims, meta = _logical(src)
    shape: tuple[int, ...] | None = None
    if dst.kind == "device":
        assert dst._meta is not None
        if meta is not None and meta != dst._meta:
            raise BadDataError(fn, f"operand types differ: {meta} vs {dst._meta}")
        try:
            shape = unify_dims(dims, dst._initial_dims)
        except ValueError as e:
            raise BadDataError(fn, f"incompatible dimensions: {e}") from None
        if size != dst._meta.byte_size(shape):
            raise BadDataError(fn, f"logical sizes differ: {size} vs {dst._meta.byte_size(shape)} bytes")
    elif size != dst._size:
        raise BadDataError(fn, f"sizes differ: {size} vs {dst._size} bytes")
    data = _source_bytes(fn, src)
    _destination_bytes(fn, dst, size)[:] = data
    return shape


def _source_bytes(fn: str, m: Memory) -> np.ndarray:
    if m.kind == "device":
        assert m._data is not None
        return m._data
    if not m.protect & mmap.PROT_READ:
        raise UnmappableError(fn, "the source memory was mapped without PROT_READ")
    m.check_mapped(fn)
    assert m._mmap is not None  # mapped
    return np.frombuffer(m._mmap, dtype=np.uint8)


def _destination_bytes(fn: str, m: Memory, size: int) -> np.ndarray:
    if m.kind == "device":
        if m._data is None or m._data.nbytes != size:
            m._data = _allocate(fn, size)
        return m._data
    if m.protect & _PROT_MASK != _PROT_MASK:
        raise UnmappableError(fn, "the destination memory must be mapped with PROT_READ | PROT_WRITE")
    m.check_mapped(fn)
    assert m._mmap is not None  # mapped
    return np.frombuffer(m._mmap, dtype=np.uint8)


# -- MemoryDesc ---------------------------------------------------------------------------------------


class MemoryDesc:
    """ANeuralNetworksMemoryDesc: describes a device memory by its roles.

    OPEN after creation: :meth:`add_input_role`, :meth:`add_output_role` and
    :meth:`set_dimensions` build it; :meth:`finish` makes it FINISHED, after
    which :meth:`Memory.from_desc` accepts it and modifications are
    BAD_STATE.  A failed call leaves the descriptor unchanged.  The
    descriptor may be closed as soon as its memories are created.
    """

    def __init__(self) -> None:
        self._roles: dict[tuple[int, str, int], object] = {}
        self._meta: OperandMeta | None = None
        self._dims: tuple[int, ...] | None = None  # None: unknown rank
        self._finished = False
        self._closed = False

    @property
    def finished(self) -> bool:
        return self._finished

    @property
    def dimensions(self) -> tuple[int, ...] | None:
        """The combined dimensions so far (None: rank unknown; 0: unknown size)."""
        return self._dims

    @ndk("ANeuralNetworksMemoryDesc_addInputRole")
    def add_input_role(self, compilation, index: int, frequency: float) -> None:
        """The memory will be input ``index`` of executions of ``compilation``."""
        self._add_role("ANeuralNetworksMemoryDesc_addInputRole", compilation, INPUT, index, frequency)

    @ndk("ANeuralNetworksMemoryDesc_addOutputRole")
    def add_output_role(self, compilation, index: int, frequency: float) -> None:
        """The memory will be output ``index`` of executions of ``compilation``."""
        self._add_role("ANeuralNetworksMemoryDesc_addOutputRole", compilation, OUTPUT, index, frequency)

    def _add_role(self, fn: str, compilation, io: str, index: int, frequency: float) -> None:
        """MemoryBuilder::addRole, checks in the runtime's order."""
        if compilation is None:
            raise UnexpectedNullError(fn, "the compilation is null")
        if self._finished:
            raise BadStateError(fn, "the memory descriptor is already finished")
        if not isinstance(compilation, Compilation):
            raise BadDataError(fn, f"expected an nnc.Compilation, got {type(compilation).__name__}")
        if not is_int(index):
            raise BadDataError(fn, f"{io} index must be an int, got {type(index).__name__}")
        key = (id(compilation), io, int(index))
        if key in self._roles:
            raise BadDataError(fn, f"{io} {index} of this compilation is already a role of the descriptor")
        if not compilation.finished or getattr(compilation, "failed", False) or getattr(compilation, "closed", False):
            raise BadDataError(fn, "the compilation is not finished, its finish failed, or it was closed")
        positions = compilation.model.inputs if io == INPUT else compilation.model.outputs
        if not 0 <= int(index) < len(positions):
            raise BadDataError(fn, f"{io} index {index} out of range [0, {len(positions)})")
        operand = compilation.model.operands[positions[int(index)]]
        meta = OperandMeta(operand.type, operand.scale, operand.zero_point, operand.channel_quant)
        if self._meta is not None and meta != self._meta:
            raise BadDataError(fn, f"operand type {meta} differs from the descriptor's {self._meta}")
        if operand.type.is_scalar and self._dims:
            raise BadDataError(fn, f"a scalar role on a descriptor with dimensions {list(self._dims)}")
        try:
            dims = unify_dims(self._dims, operand.dims)
        except ValueError as e:
            raise BadDataError(fn, f"incompatible dimensions: {e}") from None
        if isinstance(frequency, bool) or not isinstance(frequency, int | float | np.floating | np.integer):
            raise BadDataError(fn, f"frequency must be a number, got {type(frequency).__name__}")
        if not 0.0 < float(frequency) <= 1.0:
            raise BadDataError(fn, f"frequency {frequency} outside (0.0, 1.0]")
        self._roles[key] = compilation  # keeps it alive, so its id stays unique
        self._meta, self._dims = meta, dims

    @ndk("ANeuralNetworksMemoryDesc_setDimensions")
    def set_dimensions(self, dimensions) -> None:
        """Refine the dimensions (0 = unknown; ``[]`` = rank unknown, or the
        rank 0 of a scalar).  ``None`` is UNEXPECTED_NULL: pass a list."""
        fn = "ANeuralNetworksMemoryDesc_setDimensions"
        if dimensions is None:
            raise UnexpectedNullError(fn, "dimensions are null (pass [] for rank 0)")
        if self._finished:
            raise BadStateError(fn, "the memory descriptor is already finished")
        try:
            dims = tuple(int(d) for d in dimensions)
        except (TypeError, ValueError):
            raise BadDataError(fn, f"dimensions must be a sequence of ints: {dimensions!r}") from None
        if any(d < 0 or d > 0xFFFFFFFF for d in dims):
            raise BadDataError(fn, f"invalid dimensions {list(dims)}")
        if self._meta is not None and self._meta.type.is_scalar and dims:
            raise BadDataError(fn, f"dimensions {list(dims)} for a scalar role")
        try:
            self._dims = unify_dims(self._dims, dims or None)
        except ValueError as e:
            raise BadDataError(fn, f"incompatible dimensions: {e}") from None

    @ndk("ANeuralNetworksMemoryDesc_finish")
    def finish(self) -> None:
        """BAD_DATA without any role, BAD_STATE the second time."""
        fn = "ANeuralNetworksMemoryDesc_finish"
        if self._finished:
            raise BadStateError(fn, "the memory descriptor is already finished")
        if not self._roles:
            raise BadDataError(fn, "the memory descriptor has no role")
        self._finished = True

    @ndk("ANeuralNetworksMemoryDesc_free", free=True)
    def close(self) -> None:
        """ANeuralNetworksMemoryDesc_free: idempotent; memories made from the
        descriptor stay valid."""
        self._closed = True

    def __enter__(self) -> MemoryDesc:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
