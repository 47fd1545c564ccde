"""A model compiled for one input-shape signature, and how to run it.

The driver (:func:`nnc.driver.compile_model`) runs the pipeline up to LLVM IR
(:class:`CompiledIR`); :func:`generate_code` turns that into an object file
for the target CPU (:class:`NativeCode`, the unit that caches and native
artifacts store), and :class:`Executable` loads it into the process.  An
Executable knows its output shapes, so an execution can check the caller's
buffers *before* entering native code; its :meth:`Executable.run` is one
native call for the whole model.

The native entry (see :mod:`nnc.passes.entry_point` and :mod:`nnc.runtime.abi`)
is ``int32_t nnc_run(inputs, outputs, weights, arena, uint64_t loop_timeout_ns)``:
it returns 0, ``k + 1`` when operation ``k`` met invalid run-time data, or
:data:`~nnc.runtime.abi.LOOP_TIMEOUT_STATUS` when a WHILE loop ran longer
than the loop timeout.

Thread safety: an Executable is immutable once loaded and shared by every
execution of its compilation (and, through the in-process cache, by equal
models).  Its constant pool is only read by the native code; each call gets
its own scratch arena (a fresh one per call, or the caller's: a burst keeps
one per variant and runs one computation at a time, and a reusable
execution's :class:`NativeCall` one for its computations, which never
overlap), so any number of threads may run the same Executable at once --
ctypes releases the GIL for the native call, so they really run in parallel.  LLVM itself is not
thread-safe (llvmlite parses into the global LLVMContext), so optimising,
emitting and loading native code is serialised by :data:`LLVM_LOCK`.

Code compiled for profiling (:mod:`nnc.passes.profile`) exports
:data:`~nnc.runtime.abi.PROFILE_SYMBOL`; :attr:`Executable.profile_layout`
is then where each call leaves its operations' timestamps in its arena, and
:meth:`NativeCall.stamps` reads those of a call's last run.  Code with
data-dependent sizes exports :data:`~nnc.runtime.abi.COUNTS_SYMBOL` the same
way (:attr:`Executable.counts_layout`, :meth:`NativeCall.counts`): outputs
with a data-dependent dimension are written at their bound's size, and
:meth:`Executable.actual_output_shapes` gives their actual dimensions.

Parallel loops in the code call ``nnc_parallel_for``, which resolves to the
one thread pool of this process (:mod:`nnc.runtime.threadpool`, loaded before
the first Executable); the caller sets its thread count before running.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from nnc.enums import DEFAULT_LOOP_TIMEOUT_NS
from nnc.operand_types import OperandInfo, dtype_of
from nnc.runtime import threadpool
from nnc.runtime.abi import ARTIFACT_ENTRY_NAME, COUNTS_SYMBOL, ENTRY, ENTRY_NAME, PROFILE_SYMBOL
from nnc.runtime.jit import LLVM_LOCK, NativeModule, Target, emit_object, optimize


@dataclass
class CompiledIR:
    """Everything produced before native code: kept for --emit and caching."""

    llvm_ir: str
    #: the constant pool: bytes, or a read-only memoryview of a 64-byte-aligned
    #: buffer (what the driver makes), which the executable runs from
    weights: bytes | memoryview
    arena_size: int
    inputs: list[OperandInfo]
    outputs: list[OperandInfo]


@dataclass
class NativeCode:
    """Everything needed to run a compiled variant, independent of how it was
    produced: the relocatable object (exporting ``nnc_run``), the constant
    pool, the arena size and the operand types.  This is what a compilation
    cache stores and what native artifacts are built from."""

    object_code: bytes
    #: bytes, or (from the driver or the cache) a memoryview of a
    #: 64-byte-aligned buffer, which the executable runs from without another copy
    weights: bytes | memoryview
    arena_size: int
    inputs: list[OperandInfo]
    outputs: list[OperandInfo]
    target: Target


def generate_code(ir: CompiledIR, target: Target) -> NativeCode:
    """LLVM IR -> optimised object code for ``target``."""
    with LLVM_LOCK:
        obj = emit_object(optimize(ir.llvm_ir, target), target)
    return NativeCode(obj, ir.weights, ir.arena_size, ir.inputs, ir.outputs, target)


class Executable:
    """Native code for one specialisation of a model, loaded in this process."""

    def __init__(self, code: NativeCode):
        self.code = code
        self.target = code.target
        with LLVM_LOCK:
            threadpool.install()  # before loading: the object may call nnc_parallel_for
            self.native = NativeModule.from_object(code.object_code, code.target)
        # Weights live as long as the executable; 64-byte aligned.
        self._weights = aligned_bytes(code.weights)
        self._weights_address: int = self._weights.ctypes.data
        self.arena_size = code.arena_size
        self.output_shapes = [tuple(o.dims or ()) for o in code.outputs]
        self.output_dtypes = [dtype_of(o.type) for o in code.outputs]
        self._entry = ENTRY(self._entry_address())
        #: (byte offset in the arena, count) of the timestamps of code
        #: compiled for profiling; None for other code
        self.profile_layout: tuple[int, int] | None = self._layout(PROFILE_SYMBOL, 8)
        #: (byte offset in the arena, n) of the int32 counts of code with
        #: data-dependent sizes (:mod:`nnc.passes.counts`); None for other code
        self.counts_layout: tuple[int, int] | None = self._layout(COUNTS_SYMBOL, 4)
        #: the outputs with a data-dependent dimension: (index, its DynamicDim)
        self.dynamic_outputs = [(k, o.dynamic) for k, o in enumerate(code.outputs) if o.dynamic is not None]
        if self.dynamic_outputs and self.counts_layout is None:
            raise RuntimeError(f"outputs have data-dependent dimensions but the code exports no {COUNTS_SYMBOL}")

    def _layout(self, symbol: str, itemsize: int) -> tuple[int, int] | None:
        """``{offset, count}`` of an exported ``int64_t symbol[2]``, checked
        to lie in the arena (None when the code does not export it)."""
        address = self.native.global_address(symbol)
        if not address:
            return None
        offset, count = (ctypes.c_int64 * 2).from_address(address)
        if offset < 0 or count < 1 or offset + itemsize * count > self.arena_size:
            raise RuntimeError(f"{symbol} = {{{offset}, {count}}} lies outside the arena ({self.arena_size} bytes)")
        return offset, count

    def actual_output_shapes(self, counts: np.ndarray | None) -> list[tuple[int, ...]]:
        """Every output's dimensions after a run that left ``counts``: the
        compiled ones, with each data-dependent dimension at its actual size."""
        shapes = list(self.output_shapes)
        if counts is not None:
            for k, dyn in self.dynamic_outputs:
                shapes[k] = dyn.actual(shapes[k], counts)
        return shapes

    def _entry_address(self) -> int:
        """The five-argument entry: an artifact's ``nnc_run_with_loop_timeout``
        if the object is an artifact, else ``nnc_run``."""
        return self.native.address(ARTIFACT_ENTRY_NAME) or self.native.address(ENTRY_NAME)

    def run(
        self,
        inputs: Sequence[np.ndarray],
        outputs: Sequence[np.ndarray],
        arena: np.ndarray | None = None,
        loop_timeout_ns: int = DEFAULT_LOOP_TIMEOUT_NS,
        *,
        prepared: NativeCall | None = None,
    ) -> int:
        """Run the model; returns 0, ``k + 1`` if operation ``k`` met invalid
        runtime data, or :data:`LOOP_TIMEOUT_STATUS` if a WHILE loop ran
        longer than ``loop_timeout_ns``.  The caller guarantees C-contiguous
        arrays of the compiled shapes and dtypes (nnc.Execution checks before
        calling).  ``arena`` is scratch memory from :func:`new_arena` for this
        executable that no other call uses meanwhile; without it the call
        allocates its own, so concurrent calls never share scratch memory.

        ``prepared``: these very arguments converted by :meth:`bind` earlier
        (same executable, same ``inputs``/``outputs`` objects, same timeout),
        so that this call does not convert them again; with anything else
        they are converted now.  Every native call of the model goes through
        this method."""
        call = prepared
        if (
            call is None
            or call.executable is not self
            or call.inputs is not inputs
            or call.outputs is not outputs
            or call.loop_timeout_ns != loop_timeout_ns
        ):
            call = self.bind(inputs, outputs, loop_timeout_ns)
        return call(arena)

    def bind(
        self,
        inputs: Sequence[np.ndarray],
        outputs: Sequence[np.ndarray],
        loop_timeout_ns: int = DEFAULT_LOOP_TIMEOUT_NS,
    ) -> NativeCall:
        """These arguments converted once for the native entry, to be passed
        to :meth:`run` as ``prepared`` any number of times (see
        :class:`NativeCall`); same guarantees as :meth:`run`."""
        return NativeCall(self, inputs, outputs, loop_timeout_ns)


class NativeCall:
    """One executable's entry with its arguments converted once.

    Converting arguments is most of what a call of a small model costs in
    Python (a numpy array's address alone takes microseconds), so a reusable
    execution binds its buffers here once and then only runs: the pointer
    arrays, the constant pool's address and the loop timeout are fixed, and
    the scratch arena is the caller's (a burst's) or one this call owns,
    allocated at its first use.  The caller guarantees what
    :meth:`Executable.run` requires and that one NativeCall makes one call
    at a time (an execution refuses a second simultaneous computation),
    which is what makes the owned arena safe to reuse.  The arrays are
    referenced here, so their addresses stay valid as long as the call
    lives."""

    __slots__ = ("executable", "inputs", "outputs", "loop_timeout_ns", "_ins", "_outs", "_args", "_arena",
                 "_arena_address", "_arena_args")  # fmt: skip

    def __init__(
        self,
        executable: Executable,
        inputs: Sequence[np.ndarray],
        outputs: Sequence[np.ndarray],
        loop_timeout_ns: int = DEFAULT_LOOP_TIMEOUT_NS,
    ):
        self.executable = executable
        self.inputs, self.outputs, self.loop_timeout_ns = inputs, outputs, loop_timeout_ns
        self._ins = (ctypes.c_void_p * max(len(inputs), 1))(*[a.ctypes.data for a in inputs])
        self._outs = (ctypes.c_void_p * max(len(outputs), 1))(*[a.ctypes.data for a in outputs])
        timeout = min(max(int(loop_timeout_ns), 0), 2**64 - 1)
        #: the entry's arguments but the arena's address
        self._args = (ctypes.addressof(self._ins), ctypes.addressof(self._outs), executable._weights_address, timeout)
        self._arena: np.ndarray | None = None  # owned, allocated at the first call without one
        self._arena_address = 0
        self._arena_args: tuple | None = None  # (the arena argument, the entry's five arguments for it)

    def __call__(self, arena: np.ndarray | None = None) -> int:
        """Call the entry once; ``arena``: scratch memory from
        :func:`new_arena` for this executable that no other call uses
        meanwhile, or None (or one too small) for the one this call owns."""
        cached = self._arena_args
        if cached is None or cached[0] is not arena:
            cached = self._arena_args = (arena, self._arguments(arena))
        return self.executable._entry(*cached[1])

    def stamps(self) -> np.ndarray | None:
        """The timestamps (int64 ns of the monotonic clock) the last call
        left in its arena, copied, if the code was compiled for profiling
        (else, or before the first call, None).  Read before the arena is
        used again: the caller owns it until then (see :meth:`__call__`)."""
        layout = self.executable.profile_layout
        if layout is None or self._arena_args is None:
            return None
        offset, count = layout
        address = self._arena_args[1][3] + offset
        return np.ctypeslib.as_array((ctypes.c_int64 * count).from_address(address)).copy()

    def counts(self) -> np.ndarray | None:
        """The data-dependent sizes (int32) the last call left in its arena,
        copied, if the code has any (else, or before the first call, None)."""
        layout = self.executable.counts_layout
        if layout is None or self._arena_args is None:
            return None
        offset, n = layout
        address = self._arena_args[1][3] + offset
        return np.ctypeslib.as_array((ctypes.c_int32 * n).from_address(address)).copy()

    def _arguments(self, arena: np.ndarray | None) -> tuple:
        """The entry's five arguments with ``arena`` (or the owned one)."""
        if arena is None or arena.nbytes < self.executable.arena_size:
            if self._arena is None:
                self._arena, self._arena_address = _aligned_at(max(self.executable.arena_size, 1))
            address = self._arena_address
        else:
            address = arena.ctypes.data
        w_in, w_out, weights, timeout = self._args
        return (w_in, w_out, weights, address, timeout)


def new_arena(size: int) -> np.ndarray:
    """Scratch memory for one running call of an executable of this arena size."""
    return _aligned(max(size, 1))


def aligned_bytes(data, align: int = 64) -> np.ndarray:
    """``data`` (bytes-like) as an ``align``-byte-aligned uint8 array of at
    least one byte: a view of ``data`` itself when its bytes already start on
    such an address (what the cache loader produces, so a cache hit copies its
    constant pool once), else an aligned copy.  The native code only reads it
    (``const void *weights``), so a read-only view is fine."""
    view = np.frombuffer(data, dtype=np.uint8)
    if view.size and view.ctypes.data % align == 0:
        return view
    out = _aligned(max(view.size, 1), align)
    out[: view.size] = view
    return out


def _aligned(n: int, align: int = 64) -> np.ndarray:
    return _aligned_at(n, align)[0]


def _aligned_at(n: int, align: int = 64) -> tuple[np.ndarray, int]:
    """``n`` bytes aligned to ``align``, and their address (asking numpy for
    an address again costs microseconds)."""
    raw = np.empty(n + align, dtype=np.uint8)
    base = raw.ctypes.data
    off = (-base) % align
    return raw[off : off + n], base + off
