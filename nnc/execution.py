"""``nnc.Execution``: running a compilation (ANeuralNetworksExecution_*).

Every argument is checked here, in Python, before native code is entered:
index ranges, dtypes, exact byte sizes, dimensions against the model, and the
output buffers against the shapes the compiled variant will write.  Native
code therefore only ever sees buffers of exactly the sizes it was compiled for.

States (Android 12, feature level 5)
------------------------------------
PREPARATION after creation: only then may inputs, outputs and options be set.
Starting a computation -- :meth:`~Execution.compute` (synchronous),
:meth:`~Execution.start_compute` (on a worker thread; returns an
:class:`~nnc.Event`), :meth:`~Execution.start_compute_with_dependencies`
(waits for other events first; its event has a sync fence) or
:meth:`~Execution.burst_compute` (synchronous, on a :class:`~nnc.Burst`) --
moves it to COMPUTATION, and the end of the computation to COMPLETED.  Output
shapes and durations are readable only in COMPLETED.  An execution computes
once, unless :meth:`~Execution.set_reusable` made it reusable: then it may be
computed again from COMPLETED, any number of times and in any mode, still
with the same bindings.  Two computations at once on one execution: the
second is BAD_STATE.

Where Android 11 and 12 differ nnc follows Android 12: a computation whose
arguments fail validation (e.g. an unset input) has *started* and completed
with that error, so a non-reusable execution cannot be computed again;
and ``get_sync_fence_fd`` on an event without a fence is BAD_DATA (see
:mod:`nnc.event`).

Errors of a computation are raised by the call that reports its status: the
synchronous calls themselves, or :meth:`nnc.Event.wait` for the asynchronous
ones (whose own call raises only what is detected before the computation
starts: state, unset arguments, uninitialised device memory).

Timing and deadlines
--------------------
With :meth:`~Execution.set_measure_timing` nnc measures each computation with
the monotonic clock: ``DurationCode.ON_HARDWARE`` is the native call that runs
the whole model, ``IN_DRIVER`` everything nnc did for the computation
(argument preparation, finding or compiling the variant for the input shapes,
the native call); so ON_HARDWARE <= IN_DRIVER.  The FENCED_* codes report the
same pair (for ``start_compute_with_dependencies`` measured from the moment
its dependencies were signalled).  :meth:`~Execution.set_timeout` sets a
deadline from the start of the computation; it is checked before a variant is
compiled, before the native call and after it, and a missed one is
MISSED_DEADLINE_TRANSIENT (a running native call is not interrupted; its
outputs are then undefined).  Timing and timeouts need a compilation made for
exactly one device (``Compilation.for_devices(model, [device])``), as in
NNAPI.  :meth:`~Execution.set_loop_timeout` bounds each WHILE loop (default
2 s, values above 15 s are lowered to 15 s): the compiled loop reads the
monotonic clock every iteration, stops once it has run longer, and the
computation fails with MISSED_DEADLINE_TRANSIENT.

Per-operation profile (nnc extension): an execution of a compilation made
with ``Compilation.set_profiling(True)`` keeps the timestamps its code
recorded around each operation of the main graph, and
:meth:`~Execution.get_operation_profile` returns the last computation's
per-operation times (:mod:`nnc.profile`).

Cost of a computation: everything a computation needs that its bindings
fix -- the variant, the output checks, the native call's pointer arrays, the
scratch arena -- is prepared by the first computation of a reusable
execution and kept (arguments can be bound only before it), so the next ones
only check what can still change (state, deadline, client memory mappings)
and make the native call; inputs whose values select the variant, and device
memories, are looked up again every time (see ``Execution._plan_for``).
``benchmarks/overhead_bench.py`` measures it.

Thread safety: executions of one compilation may run on any number of
threads at once (each native call gets its own scratch memory, see
:mod:`nnc.runtime.executable`).  One execution must not be modified by two
threads at once; it refuses a second simultaneous computation with BAD_STATE
instead of misbehaving.  Closing an execution while it computes is deferred
until the computation ends.
"""

from __future__ import annotations

import enum
import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from nnc.burst import Burst
from nnc.compilation import Compilation, require_usable
from nnc.enums import (
    DEFAULT_LOOP_TIMEOUT_NS,
    MAXIMUM_LOOP_TIMEOUT_NS,
    UINT64_MAX,
    DurationCode,
    OperationType,
    ResultCode,
)
from nnc.errors import (
    BadDataError,
    BadStateError,
    MissedDeadlineTransientError,
    NNError,
    OpFailedError,
    OutOfMemoryError,
    OutputInsufficientSizeError,
    UnexpectedNullError,
    ndk,
    rebrand,
)
from nnc.event import Event
from nnc.memory import INPUT, OUTPUT, Memory, fully_known
from nnc.model import Operand
from nnc.operand_types import OperandInfo, dtype_of, is_int
from nnc.profile import OperationProfile, profiles
from nnc.runtime import threadpool
from nnc.runtime.abi import LOOP_TIMEOUT_STATUS
from nnc.runtime.executable import NativeCall

_UINT32_MAX = 0xFFFFFFFF

_CREATE = "ANeuralNetworksExecution_create"
_SET_INPUT = "ANeuralNetworksExecution_setInput"
_SET_OUTPUT = "ANeuralNetworksExecution_setOutput"
_SET_INPUT_MEM = "ANeuralNetworksExecution_setInputFromMemory"
_SET_OUTPUT_MEM = "ANeuralNetworksExecution_setOutputFromMemory"
_COMPUTE = "ANeuralNetworksExecution_compute"
_START = "ANeuralNetworksExecution_startCompute"
_START_DEPS = "ANeuralNetworksExecution_startComputeWithDependencies"
_BURST = "ANeuralNetworksExecution_burstCompute"
_RANK = "ANeuralNetworksExecution_getOutputOperandRank"
_DIMS = "ANeuralNetworksExecution_getOutputOperandDimensions"
_DURATION = "ANeuralNetworksExecution_getDuration"
_MEASURE = "ANeuralNetworksExecution_setMeasureTiming"
_TIMEOUT = "ANeuralNetworksExecution_setTimeout"
_LOOP_TIMEOUT = "ANeuralNetworksExecution_setLoopTimeout"
_REUSABLE = "ANeuralNetworksExecution_setReusable"
_PADDING = "ANeuralNetworksExecution_enableInputAndOutputPadding"
_FREE = "ANeuralNetworksExecution_free"
_NUM_THREADS = "ANeuralNetworksExecution_setNumThreads"  # an nnc extension, named in the NDK's style
_PROFILE = "ANeuralNetworksExecution_getOperationProfile"  # an nnc extension, named in the NDK's style


class State(enum.Enum):
    """The NDK's execution states."""

    PREPARATION = "preparation"
    COMPUTATION = "computation"
    COMPLETED = "completed"


@dataclass
class _Binding:
    """One bound input or output.

    ``kind``: "buffer" (a numpy array), "memory" (a client Memory region),
    "device" (a device Memory) or "omitted".  ``dims``: the execution-time
    dimensions (the model's, refined by the set call).  ``array``: for inputs
    the data in its shape, for outputs a flat view of the whole buffer."""

    kind: str
    dims: tuple[int, ...] | None
    array: np.ndarray | None = None
    memory: Memory | None = None


@dataclass
class _Outcome:
    """What a finished computation leaves queryable."""

    error: NNError | None
    shapes: list[tuple[int, ...]] | None = None
    sufficient: list[bool] | None = None
    durations: dict[DurationCode, int] = field(default_factory=dict)
    #: code compiled for profiling: (the variant's input infos, the
    #: timestamps its computation recorded)
    profile: tuple[list[OperandInfo], np.ndarray] | None = None


@dataclass(slots=True)
class _Plan:
    """A computation prepared from the bindings (see Execution._plan_for):
    the native call with its arguments converted, the outcome of a
    successful run without timing (the output shapes it writes; one object
    for every run, as outcomes are never modified once made), and the client
    memories whose mapping each run checks."""

    call: NativeCall
    outcome: _Outcome
    memories: tuple[Memory, ...]
    #: outputs with a data-dependent dimension: (index, the bound-sized array
    #: the native code writes, which the run's actual rows are copied from)
    dynamic: tuple[tuple[int, np.ndarray], ...] = ()


class OutputDimensions(list):
    """The dimensions of an output, with the NDK's result code: ``code`` is
    NO_ERROR, or OUTPUT_INSUFFICIENT_SIZE when the output's buffer was too
    small (the dimensions are still the real ones)."""

    code: ResultCode
    sufficient: bool

    def __init__(self, dims: Sequence[int], sufficient: bool):
        super().__init__(dims)
        self.sufficient = sufficient
        self.code = ResultCode.NO_ERROR if sufficient else ResultCode.OUTPUT_INSUFFICIENT_SIZE


class OutputRank(int):
    """An output's rank, with ``code``/``sufficient`` as :class:`OutputDimensions`."""

    code: ResultCode
    sufficient: bool

    def __new__(cls, rank: int, sufficient: bool) -> OutputRank:
        self = super().__new__(cls, rank)
        self.sufficient = sufficient
        self.code = ResultCode.NO_ERROR if sufficient else ResultCode.OUTPUT_INSUFFICIENT_SIZE
        return self


def _check_sufficient(fn: str, shapes: Sequence[tuple[int, ...]], sufficient: Sequence[bool]) -> None:
    """OUTPUT_INSUFFICIENT_SIZE naming the outputs whose buffers are smaller
    than their computed shapes (``shapes`` and ``sufficient`` travel with
    the error for ``get_output_operand_dimensions``)."""
    if all(sufficient):
        return
    small = [k for k, ok in enumerate(sufficient) if not ok]
    raise OutputInsufficientSizeError(
        fn, f"outputs {small} are too small for the computed shapes {[list(shapes[k]) for k in small]}",
        output_shapes=list(shapes), sufficient=list(sufficient),
    )  # fmt: skip


def _product(dims) -> int:
    return math.prod(dims) if dims else 1


def _is_bool(v: object) -> bool:
    return isinstance(v, bool | np.bool_)


def _uint64(fn: str, value: object, what: str) -> int:
    if not is_int(value) or not 0 <= int(value) <= UINT64_MAX:
        raise BadDataError(fn, f"{what} must be an int in [0, 2**64 - 1], got {value!r}")
    return int(value)


def resolve_dims(
    fn: str, operand: Operand, dims, what: str, allow_unspecified: bool = True
) -> tuple[int, ...] | None:
    """NNAPI's checkDimensionInfo: the execution-time dimensions ``dims``
    (None: the model's) against the model operand."""
    if dims is None:
        return operand.dims
    try:
        dims = tuple(int(d) for d in dims)
    except (TypeError, ValueError):
        raise BadDataError(fn, f"{what}: dimensions must be integers") from None
    if operand.type.is_scalar:
        if dims:
            raise BadDataError(fn, f"{what}: a scalar cannot have dimensions")
        return ()
    if any(d < 0 or d > _UINT32_MAX for d in dims):
        raise BadDataError(fn, f"{what}: invalid dimensions {list(dims)}")
    if not dims:  # rank 0 for a tensor: an unknown rank
        if operand.dims is not None:
            raise BadDataError(fn, f"{what}: rank unknown, the model's is {len(operand.dims)}")
        if not allow_unspecified:
            raise BadDataError(fn, f"{what}: the rank must be given")
        return None
    if not allow_unspecified and any(d == 0 for d in dims):
        raise BadDataError(fn, f"{what}: dimensions {list(dims)} are not fully specified")
    if operand.dims is not None:
        if len(dims) != len(operand.dims):
            raise BadDataError(fn, f"{what}: rank {len(dims)} differs from the model's {len(operand.dims)}")
        for m, d in zip(operand.dims, dims):
            if m and d != m:
                raise BadDataError(
                    fn, f"{what}: dimensions {list(dims)} conflict with the model's {list(operand.dims)}"
                )
    if _product(d for d in dims if d) * dtype_of(operand.type).itemsize > _UINT32_MAX:
        raise BadDataError(fn, f"{what}: the byte size of dimensions {list(dims)} overflows uint32")
    return dims


class Execution:
    """ANeuralNetworksExecution: bind inputs/outputs, compute, read shapes."""

    def __init__(self, compilation: Compilation):
        self.compilation = require_usable(compilation, _CREATE)  # strong: lives as long as its executions
        self.model = compilation.model
        self._inputs: dict[int, _Binding] = {}
        self._outputs: dict[int, _Binding] = {}
        self._state = State.PREPARATION
        self._outcome: _Outcome | None = None
        self._reusable = False
        self._padding = False
        self._has_bindings = False
        self._measure = False
        self._timeout_ns = 0
        self._loop_timeout_ns = DEFAULT_LOOP_TIMEOUT_NS
        self._closed = False
        self._close_pending = False
        self._lock = threading.RLock()
        #: (index, memory) of the outputs bound to device memories, which a computation initialises
        self._device_outputs: list[tuple[int, Memory]] = []
        #: a reusable execution's computation, kept from its first (see _plan_for)
        self._plan: _Plan | None = None
        self._num_threads = threadpool.default_num_threads()

    # -- read-only views of the configuration -------------------------------------------------------
    @property
    def state(self) -> State:
        return self._state

    @property
    def reusable(self) -> bool:
        return self._reusable

    @property
    def padding_enabled(self) -> bool:
        return self._padding

    @property
    def measure_timing(self) -> bool:
        return self._measure

    @property
    def timeout_ns(self) -> int:
        """The execution deadline set by :meth:`set_timeout` (0: none)."""
        return self._timeout_ns

    @property
    def loop_timeout_ns(self) -> int:
        """The WHILE-loop timeout (default 2 s, at most 15 s)."""
        return self._loop_timeout_ns

    # -- options -------------------------------------------------------------------------------------
    def _preparing(self, fn: str) -> None:
        if self._state is not State.PREPARATION:
            raise BadStateError(fn, f"the execution is in the {self._state.value} state; options and "
                                    "arguments can only be set before it is computed")  # fmt: skip

    def _single_device(self, fn: str, what: str) -> None:
        devices = getattr(self.compilation, "devices", None)
        if devices is None or len(devices) != 1:
            raise BadDataError(
                fn, f"{what} needs a compilation created for exactly one device (Compilation.for_devices)"
            )

    @ndk(_MEASURE)
    def set_measure_timing(self, measure: bool) -> None:
        """ANeuralNetworksExecution_setMeasureTiming (single-device compilations only)."""
        self._single_device(_MEASURE, "measuring timing")
        with self._lock:
            self._preparing(_MEASURE)
            if not _is_bool(measure):
                raise BadDataError(_MEASURE, f"measure must be a bool, got {type(measure).__name__}")
            self._measure = bool(measure)

    @ndk(_TIMEOUT)
    def set_timeout(self, duration_ns: int) -> None:
        """ANeuralNetworksExecution_setTimeout: nanoseconds, 0 = no deadline
        (single-device compilations only)."""
        self._single_device(_TIMEOUT, "a timeout")
        with self._lock:
            self._preparing(_TIMEOUT)
            self._timeout_ns = _uint64(_TIMEOUT, duration_ns, "the timeout")

    @ndk(_LOOP_TIMEOUT)
    def set_loop_timeout(self, duration_ns: int) -> None:
        """ANeuralNetworksExecution_setLoopTimeout: values above the maximum
        (15 s) are lowered to it, not rejected."""
        with self._lock:
            self._preparing(_LOOP_TIMEOUT)
            duration = _uint64(_LOOP_TIMEOUT, duration_ns, "the loop timeout")
            self._loop_timeout_ns = min(duration, MAXIMUM_LOOP_TIMEOUT_NS)

    @ndk(_REUSABLE)
    def set_reusable(self, reusable: bool) -> None:
        """ANeuralNetworksExecution_setReusable (feature level 5)."""
        with self._lock:
            self._preparing(_REUSABLE)
            if not _is_bool(reusable):
                raise BadDataError(_REUSABLE, f"reusable must be a bool, got {type(reusable).__name__}")
            self._reusable = bool(reusable)

    @ndk(_PADDING)
    def enable_input_and_output_padding(self, enable: bool) -> None:
        """ANeuralNetworksExecution_enableInputAndOutputPadding: buffers and
        regions may then be longer than the data (the rest is left alone).
        BAD_STATE once any input or output is set."""
        with self._lock:
            self._preparing(_PADDING)
            if self._has_bindings:
                raise BadStateError(_PADDING, "inputs or outputs were already set")
            if not _is_bool(enable):
                raise BadDataError(_PADDING, f"enable must be a bool, got {type(enable).__name__}")
            self._padding = bool(enable)

    @property
    def num_threads(self) -> int:
        """The threads a computation runs on (nnc extension; see :meth:`set_num_threads`)."""
        return self._num_threads

    @ndk(_NUM_THREADS)
    def set_num_threads(self, n: int) -> None:
        """nnc extension: run this execution's computations on ``n`` threads
        (an int >= 1; above :data:`nnc.runtime.threadpool.MAX_THREADS` it is
        lowered to that).  The default is ``NNC_NUM_THREADS`` when set to a
        positive integer, else the CPUs this process may run on.  Outputs do
        not depend on it.  The native pool's count is per process and is set
        at the start of each computation, so concurrent computations that ask
        for different counts get one or the other."""
        with self._lock:
            self._preparing(_NUM_THREADS)
            if not is_int(n) or int(n) < 1:
                raise BadDataError(_NUM_THREADS, f"the thread count must be an int >= 1, got {n!r}")
            self._num_threads = min(int(n), threadpool.MAX_THREADS)

    # -- binding ---------------------------------------------------------------------------------------
    def _operand(self, fn: str, index: int, roles: list[int], what: str) -> Operand:
        if not is_int(index) or not 0 <= index < len(roles):
            raise BadDataError(fn, f"{what} index {index} out of range [0, {len(roles)})")
        return self.model.operands[roles[int(index)]]

    def _check_length(self, fn: str, what: str, have: int, dims: tuple[int, ...] | None, itemsize: int) -> None:
        """The exact size, or at least it with padding enabled."""
        if have == 0:
            raise BadDataError(fn, f"{what}: a buffer of length 0 (pass None to omit an optional argument)")
        if not fully_known(dims):
            return  # an output shaped by the computation: any size now
        need = _product(dims) * itemsize
        if have < need or (have != need and not self._padding):
            padding = " (padding is enabled)" if self._padding else ""
            raise BadDataError(
                fn, f"{what}: {have} bytes for dimensions {list(dims or ())}, which need {need}{padding}"
            )

    def _bind(self, fn: str, table: dict[int, _Binding], index: int, binding: _Binding) -> None:
        if int(index) in table:
            raise BadStateError(fn, f"argument {index} is already set")
        table[int(index)] = binding
        self._has_bindings = True

    @ndk(_SET_INPUT)
    def set_input(self, index: int, array, dimensions=None) -> None:
        """ANeuralNetworksExecution_setInput; ``None`` omits an optional input.

        ``dimensions`` gives unspecified dimensions of the model's operand; a
        numpy array's own shape serves when it is not given.  The array is
        read when the computation runs (a C-contiguous array of the right
        dtype is used in place, others are copied now)."""
        fn = _SET_INPUT
        with self._lock:
            self._preparing(fn)
            operand = self._operand(fn, index, self.model.inputs, "input")
            what = f"input {index}"
            dims = resolve_dims(fn, operand, dimensions, what, allow_unspecified=array is None)
            if array is None:
                self._bind(fn, self._inputs, index, _Binding("omitted", dims))
                return
            arr = self._array(fn, operand, array, what)
            if dimensions is None and not fully_known(dims):
                shape = arr.shape if operand.type.is_tensor else ()
                dims = resolve_dims(fn, operand, shape, what, allow_unspecified=False)
            if int(index) in self._inputs:
                raise BadStateError(fn, f"input {index} is already set")
            self._check_length(fn, what, arr.nbytes, dims, arr.itemsize)
            data = np.ascontiguousarray(arr).reshape(-1)[: _product(dims)].reshape(dims)
            self._bind(fn, self._inputs, index, _Binding("buffer", dims, data))

    @ndk(_SET_OUTPUT)
    def set_output(self, index: int, array, dimensions=None) -> None:
        """ANeuralNetworksExecution_setOutput: ``array`` (a writeable,
        C-contiguous numpy array of the operand's dtype) is written in place;
        ``None`` omits an optional output (nnc computes it into scratch
        memory).  ``dimensions`` may leave sizes unknown (0): the buffer then
        only has to be large enough for the computed shape."""
        fn = _SET_OUTPUT
        with self._lock:
            self._preparing(fn)
            operand = self._operand(fn, index, self.model.outputs, "output")
            what = f"output {index}"
            dims = resolve_dims(fn, operand, dimensions, what)
            if array is None:
                self._bind(fn, self._outputs, index, _Binding("omitted", dims))
                return
            if not isinstance(array, np.ndarray):
                raise BadDataError(fn, f"{what}: expected a numpy array, got {type(array).__name__}")
            arr = self._array(fn, operand, array, what)
            if not arr.flags.writeable or not arr.flags.c_contiguous:
                raise BadDataError(fn, f"{what}: array must be writeable and C-contiguous")
            if int(index) in self._outputs:
                raise BadStateError(fn, f"output {index} is already set")
            self._check_length(fn, what, arr.nbytes, dims, arr.itemsize)
            self._bind(fn, self._outputs, index, _Binding("buffer", dims, arr.reshape(-1)))

    @ndk(_SET_INPUT_MEM)
    def set_input_from_memory(self, index: int, memory: Memory, offset: int, length: int, dimensions=None) -> None:
        """ANeuralNetworksExecution_setInputFromMemory: ``length`` bytes at
        ``offset`` of ``memory`` (both 0 for device memory), read when the
        computation runs.  The dimensions must be fully known (from the model
        or ``dimensions``): a memory region has no shape of its own."""
        self._bind_memory(_SET_INPUT_MEM, INPUT, index, memory, offset, length, dimensions)

    @ndk(_SET_OUTPUT_MEM)
    def set_output_from_memory(self, index: int, memory: Memory, offset: int, length: int, dimensions=None) -> None:
        """ANeuralNetworksExecution_setOutputFromMemory: the computation writes
        ``length`` bytes at ``offset`` of ``memory`` (both 0 for device memory)."""
        self._bind_memory(_SET_OUTPUT_MEM, OUTPUT, index, memory, offset, length, dimensions)

    def _bind_memory(self, fn: str, io: str, index, memory, offset, length, dimensions) -> None:
        """setInputFromMemory / setOutputFromMemory, in the runtime's order of
        checks: NULL, state, index, dimensions, the memory's own rules
        (range, roles), already set, length."""
        if memory is None:
            raise UnexpectedNullError(fn, "memory is null")
        with self._lock:
            self._preparing(fn)
            roles = self.model.inputs if io == INPUT else self.model.outputs
            operand = self._operand(fn, index, roles, io)
            what = f"{io} {index}"
            dims = resolve_dims(fn, operand, dimensions, what, allow_unspecified=io == OUTPUT)
            if io == INPUT and not fully_known(dims):
                raise BadDataError(fn, f"{what}: dimensions {dims} are not fully specified")
            if not isinstance(memory, Memory):
                raise BadDataError(fn, f"expected an nnc.Memory, got {type(memory).__name__}")
            memory.check_open(fn)
            table = self._inputs if io == INPUT else self._outputs
            dtype = dtype_of(operand.type)
            if memory.kind == "device":
                memory.check_role(fn, self.compilation, io, int(index), offset, length, dims)
                if int(index) in table:
                    raise BadStateError(fn, f"{what} is already set")
                self._bind(fn, table, index, _Binding("device", dims, None, memory))
                if io == OUTPUT:
                    self._device_outputs.append((int(index), memory))
                return
            view = memory.region_array(fn, io, offset, length, dtype)
            if int(index) in table:
                raise BadStateError(fn, f"{what} is already set")
            self._check_length(fn, what, int(length), dims, dtype.itemsize)
            if io == INPUT:
                view = view[: _product(dims)].reshape(dims)
            self._bind(fn, table, index, _Binding("memory", dims, view, memory))

    @staticmethod
    def _array(fn: str, operand: Operand, array, what: str) -> np.ndarray:
        dtype = dtype_of(operand.type)
        if isinstance(array, np.ndarray):
            arr = array
        else:
            # Numbers or (nested) sequences of numbers; anything else (str,
            # bytes, dict, objects) is BAD_DATA, never a numpy exception.
            try:
                arr = np.asarray(array)
                if arr.dtype.kind not in "biuf":
                    raise TypeError(f"not numeric ({type(array).__name__})")
                if arr.dtype != dtype:
                    arr = arr.astype(dtype)
            except (TypeError, ValueError, OverflowError) as e:
                raise BadDataError(fn, f"{what}: expected a numpy array or numbers: {e}") from None
        if arr.dtype != dtype:
            raise BadDataError(fn, f"{what}: dtype {arr.dtype} does not match {operand.type.name} ({dtype})")
        if arr.nbytes > _UINT32_MAX:
            raise BadDataError(fn, f"{what}: buffer larger than 4 GiB")
        return arr

    # -- starting computations -------------------------------------------------------------------------
    def _begin(self, fn: str) -> None:
        """PREPARATION (or COMPLETED if reusable) -> COMPUTATION, atomically."""
        with self._lock:
            if self._state is State.COMPUTATION:
                raise BadStateError(fn, "a computation is already running on this execution")
            if self._state is State.COMPLETED and not self._reusable:
                raise BadStateError(fn, "the execution was already computed and is not reusable "
                                        "(create a new one, or call set_reusable(True) before computing)")  # fmt: skip
            self._state = State.COMPUTATION
            self._outcome = None

    def _finish(self, outcome: _Outcome) -> None:
        """COMPUTATION -> COMPLETED; device memories written by the outputs
        become initialised, or uninitialised if the computation failed."""
        for k, memory in self._device_outputs:
            memory.mark_written(outcome.shapes[k] if outcome.error is None and outcome.shapes else None)
        with self._lock:
            self._outcome = outcome
            self._state = State.COMPLETED
            if self._close_pending:
                self._release()

    def _fail(self, error: NNError) -> _Outcome:
        """The outcome of a failed computation.  OUTPUT_INSUFFICIENT_SIZE keeps
        its shapes, and its error carries ``.execution`` (this execution) so
        the caller can query them."""
        if isinstance(error, OutputInsufficientSizeError) and error.output_shapes:
            error.execution = self
            return _Outcome(error, error.output_shapes, error.sufficient)
        return _Outcome(error)

    def _deadline(self) -> int | None:
        return time.monotonic_ns() + self._timeout_ns if self._timeout_ns else None

    def _validate_start(self, fn: str) -> None:
        """What the runtime checks when a computation starts, in every mode:
        every argument bound (omitted counts), and device-memory inputs
        initialised with the shape of their last producer.
        Nothing to do with a kept plan: it exists only after a computation
        found every argument bound, and arguments can no longer change, and
        only when no device memory is bound."""
        if self._plan is not None:
            return
        arguments = (("input", self.model.inputs, self._inputs), ("output", self.model.outputs, self._outputs))
        for what, roles, table in arguments:
            for k in range(len(roles)):
                if k not in table:
                    raise BadDataError(fn, f"{what} {k} is not set")
        for b in self._inputs.values():
            if b.kind == "device":
                assert b.memory is not None and b.dims is not None
                b.memory.input_data(fn, b.dims)

    def _run_here(self, fn: str, deadline: int | None, burst: Burst | None = None) -> None:
        """Validate and compute in this thread; the caller already began."""
        try:
            self._validate_start(fn)
            outcome = self._execute(fn, deadline, burst)
        except NNError as e:
            error = _reported_by(e, fn)
            self._finish(self._fail(error))
            if error is e:
                raise
            raise error from e
        except BaseException as e:  # an nnc bug or an interrupt: never leave the execution running
            self._finish(_Outcome(OpFailedError(fn, f"internal error: {type(e).__name__}: {e}")))
            raise
        self._finish(outcome)

    @ndk(_COMPUTE)
    def compute(self) -> None:
        """ANeuralNetworksExecution_compute: run synchronously."""
        self._begin(_COMPUTE)
        self._run_here(_COMPUTE, self._deadline())

    @ndk(_BURST)
    def burst_compute(self, burst: Burst) -> None:
        """ANeuralNetworksExecution_burstCompute: run synchronously on
        ``burst``, which must come from the same compilation and not be
        running another computation."""
        fn = _BURST
        if burst is None:
            raise UnexpectedNullError(fn, "burst is null")
        if not isinstance(burst, Burst):
            raise BadDataError(fn, f"expected an nnc.Burst, got {type(burst).__name__}")
        if burst.compilation is not self.compilation:
            raise BadDataError(fn, "the burst and the execution come from different compilations")
        if burst.closed:
            raise BadStateError(fn, "the burst was closed (freed)")
        burst.acquire(fn)
        try:
            self._begin(fn)
            self._run_here(fn, self._deadline(), burst)
        finally:
            burst.release()

    @ndk(_START)
    def start_compute(self) -> Event:
        """ANeuralNetworksExecution_startCompute: run on a worker thread and
        return at once; :meth:`nnc.Event.wait` reports the result."""
        fn = _START
        self._begin(fn)
        deadline = self._deadline()
        try:
            self._validate_start(fn)
        except NNError as e:
            self._finish(self._fail(e))
            raise
        event = Event.for_computation(self, fenced=False)
        self._spawn(fn, event, deadline, [], 0)
        return event

    @ndk(_START_DEPS)
    def start_compute_with_dependencies(self, events: Sequence[Event], duration: int = 0) -> Event:
        """ANeuralNetworksExecution_startComputeWithDependencies: run on a
        worker thread once every event in ``events`` is signalled (``[]``
        for none; ``None`` is UNEXPECTED_NULL).  ``duration`` (ns, 0 = none)
        bounds the computation after the dependencies are signalled and
        needs a single-device compilation.  Every output must have fully
        specified dimensions.  The returned event has a sync fence."""
        fn = _START_DEPS
        if events is None:
            raise UnexpectedNullError(fn, "the dependency list is null (pass [] for none)")
        try:
            deps: list | None = list(events)
        except TypeError:
            deps = None  # BAD_DATA, once the state has been checked
        if deps is not None and any(e is None for e in deps):
            raise UnexpectedNullError(fn, "a dependency is null")
        self._begin(fn)
        deadline = self._deadline()
        try:
            self._validate_start(fn)
            if deps is None or not all(isinstance(e, Event) for e in deps):
                raise BadDataError(fn, "dependencies must be a list of nnc.Event")
            for e in deps:
                if e.closed:
                    raise BadStateError(fn, "a dependency event was closed (freed)")
            duration = _uint64(fn, duration, "the duration")
            if duration:
                self._single_device(fn, "a duration")
            self._check_fenced_outputs(fn)
            for i, e in enumerate(deps):
                done, error = e.poll()
                if done and error is not None:
                    raise OpFailedError(fn, f"dependency {i} failed: {error}")
        except NNError as e:
            self._finish(self._fail(e))
            raise
        event = Event.for_computation(self, fenced=True)
        self._spawn(fn, event, deadline, deps, duration)
        return event

    def _check_fenced_outputs(self, fn: str) -> None:
        """A fenced computation cannot report shapes: outputs must be fully
        specified by the model and the set call."""
        for k in range(len(self.model.outputs)):
            if not fully_known(self._outputs[k].dims):
                raise BadDataError(fn, f"output {k} has dimensions {self._outputs[k].dims} that are not fully "
                                       "specified; fenced computations cannot report dynamic shapes")  # fmt: skip

    def _spawn(self, fn: str, event: Event, deadline: int | None, deps: list[Event], duration: int) -> None:
        worker = threading.Thread(
            target=self._run_async, args=(fn, event, deadline, deps, duration),
            name=f"nnc-{fn.rsplit('_', 1)[-1]}", daemon=True,
        )  # fmt: skip
        worker.start()

    def _run_async(self, fn: str, event: Event, deadline: int | None, deps: list[Event], duration: int) -> None:
        """The worker thread: wait for the dependencies, compute, signal."""
        try:
            for i, dep in enumerate(deps):
                error = dep.wait_error()
                if error is not None:
                    raise OpFailedError(fn, f"dependency {i} failed: {error}")
            if duration:
                after = time.monotonic_ns() + duration
                deadline = after if deadline is None else min(deadline, after)
            outcome = self._execute(fn, deadline, None)
        except NNError as e:
            outcome = self._fail(_reported_by(e, fn))
        except BaseException as e:  # noqa: BLE001 - a bug must reach the waiter, not kill the thread silently
            outcome = _Outcome(OpFailedError(fn, f"internal error: {type(e).__name__}: {e}"))
        self._finish(outcome)
        event.signal(outcome.error)

    # -- the computation itself -------------------------------------------------------------------------
    def _check_deadline(self, fn: str, deadline: int | None, when: str) -> None:
        if deadline is not None and time.monotonic_ns() > deadline:
            raise MissedDeadlineTransientError(fn, f"the execution's deadline passed {when}")

    def _input_infos(self, fn: str) -> list[OperandInfo]:
        infos = []
        for k, idx in enumerate(self.model.inputs):
            b = self._inputs[k]
            operand = self.model.operands[idx]
            if b.kind == "omitted":
                infos.append(OperandInfo(operand.type, b.dims, operand.scale, operand.zero_point,
                                         operand.channel_quant, omitted=True))  # fmt: skip
                continue
            value = self._input_array(b, operand, fn) if k in self.compilation.specialised else None
            infos.append(OperandInfo(operand.type, b.dims, operand.scale, operand.zero_point,
                                     operand.channel_quant, value))  # fmt: skip
        return infos

    @staticmethod
    def _input_array(b: _Binding, operand: Operand, fn: str) -> np.ndarray:
        if b.kind == "device":
            assert b.memory is not None and b.dims is not None
            raw = b.memory.input_data(fn, b.dims)
            return raw.view(dtype_of(operand.type)).reshape(b.dims)
        assert b.array is not None
        return b.array

    def _variant(self, fn: str, infos: list[OperandInfo]):
        """The compiled variant for these input shapes.  Shapes that do not
        fit the model are OP_FAILED at execution, as the CPU executor
        reports them."""
        try:
            return self.compilation.executable(infos, fn)
        except BadDataError as e:
            raise OpFailedError(fn, e.message) from None

    def _output_arrays(
        self, fn: str, shapes: list[tuple[int, ...]], dynamic: Sequence[int] = ()
    ) -> tuple[list[np.ndarray | None], list[bool]]:
        """Each output's destination in its computed shape (None: too small).
        An output in ``dynamic`` (a data-dependent dimension; ``shapes``
        holds its bound) gets an array of the bound, checked after the run
        (:meth:`_dynamic_outputs`)."""
        outs: list[np.ndarray | None] = []
        sufficient: list[bool] = []
        for k, shape in enumerate(shapes):
            b = self._outputs[k]
            operand = self.model.operands[self.model.outputs[k]]
            dtype = dtype_of(operand.type)
            if k in dynamic:
                outs.append(np.zeros(shape, dtype))
                sufficient.append(True)
                continue
            if _product(shape) * dtype.itemsize > _UINT32_MAX:
                raise OpFailedError(fn, f"output {k}: the computed shape {list(shape)} overflows uint32 bytes")
            if fully_known(b.dims) and tuple(b.dims or ()) != tuple(shape):
                raise OpFailedError(fn, f"output {k}: set with dimensions {list(b.dims or ())}, computed {list(shape)}")
            out = self._output_array(fn, k, b, shape, dtype)
            outs.append(out)
            sufficient.append(out is not None)
        return outs, sufficient

    @staticmethod
    def _output_array(fn: str, k: int, b: _Binding, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray | None:
        need = _product(shape)
        if b.kind == "omitted":
            return np.empty(shape, dtype)
        if b.kind == "device":
            assert b.memory is not None
            raw = b.memory.output_data(fn, shape)
            if raw is None:
                if need * dtype.itemsize > b.memory.capacity:
                    return None
                raise OpFailedError(fn, f"output {k}: computed shape {list(shape)} does not fit the device memory's "
                                        f"dimensions {list(b.memory.dimensions or ())}")  # fmt: skip
            return raw.view(dtype).reshape(shape)
        assert b.array is not None
        if b.array.size < need:
            return None
        return b.array[:need].reshape(shape)

    def _execute(self, fn: str, deadline: int | None, burst: Burst | None) -> _Outcome:
        """Run the native code once: with the plan of the earlier computations
        when it is kept (see :meth:`_plan_for`), else with a new one.  This is
        the whole per-computation cost of a reusable execution, so the clock
        is read only when timing is measured."""
        measure = self._measure
        t0 = time.perf_counter_ns() if measure else 0
        if deadline is not None:
            self._check_deadline(fn, deadline, "before the computation started")
        plan = self._plan or self._plan_for(fn, deadline)
        for memory in plan.memories:
            memory.check_mapped(fn)
        call = plan.call
        threadpool.use(self._num_threads)
        t1 = time.perf_counter_ns() if measure else 0
        try:
            arena = burst.arena(call.executable) if burst is not None else None
            status = call.executable.run(call.inputs, call.outputs, arena, call.loop_timeout_ns, prepared=call)
        except MemoryError:
            raise OutOfMemoryError(fn, "cannot allocate the execution's working memory") from None
        t2 = time.perf_counter_ns() if measure else 0
        if status:
            self._raise_status(fn, status)
        if deadline is not None:
            self._check_deadline(fn, deadline, "before the computation ended")
        profiled = call.executable.profile_layout is not None
        outcome = self._dynamic_outputs(fn, plan) if plan.dynamic else plan.outcome
        if not measure and not profiled:
            return outcome
        durations = {}
        if measure:
            hw, driver = t2 - t1, time.perf_counter_ns() - t0
            durations = {DurationCode.ON_HARDWARE: hw, DurationCode.IN_DRIVER: driver,
                         DurationCode.FENCED_ON_HARDWARE: hw, DurationCode.FENCED_IN_DRIVER: driver}  # fmt: skip
        stamps = call.stamps() if profiled else None
        profile = None if stamps is None else (call.executable.code.inputs, stamps)
        return _Outcome(None, outcome.shapes, outcome.sufficient, durations, profile)

    def _dynamic_outputs(self, fn: str, plan: _Plan) -> _Outcome:
        """After a run of code with data-dependent sizes: the outputs' actual
        dimensions (from the counts the run left in its arena), each such
        output's actual rows (a prefix of the bound-sized array the code
        wrote) copied into the caller's buffer, or OUTPUT_INSUFFICIENT_SIZE
        with the actual dimensions when it is too small."""
        call = plan.call
        shapes = call.executable.actual_output_shapes(call.counts())
        sufficient = list(plan.outcome.sufficient or [True] * len(shapes))
        for k, written in plan.dynamic:
            shape, b = shapes[k], self._outputs[k]
            if fully_known(b.dims) and tuple(b.dims or ()) != shape:
                raise OpFailedError(fn, f"output {k}: set with dimensions {list(b.dims or ())}, computed {list(shape)}")
            dtype = call.executable.output_dtypes[k]
            out = self._output_array(fn, k, b, shape, dtype)
            if out is None:
                sufficient[k] = False
                continue
            n = _product(shape)
            out.reshape(-1)[:n] = written.reshape(-1)[:n]
        _check_sufficient(fn, shapes, sufficient)
        return _Outcome(None, shapes, sufficient)

    def _plan_for(self, fn: str, deadline: int | None) -> _Plan:
        """Everything about a computation that depends only on the bindings:
        the variant, the output shapes, the checks of the outputs against
        them and of overlaps, and the native call with its pointers.

        A reusable execution keeps it for its next computations when nothing
        in it can change once the execution left the preparation state:
        arguments are bound only then, so the buffers, their sizes and the
        variant are fixed -- unless an input's *value* selects the variant
        (a specialised input, whose data the caller may change between
        computations) or a device memory is bound (its contents and shape
        change with the executions that write it; its buffer may be
        reallocated).  Client memories are kept, but each computation
        checks again that their mapping is still there."""
        infos = self._input_infos(fn)
        exe = self._variant(fn, infos)
        self._check_deadline(fn, deadline, "while preparing the computation")
        shapes = [tuple(s) for s in exe.output_shapes]
        dynamic = [k for k, _ in exe.dynamic_outputs]
        outs, sufficient = self._output_arrays(fn, shapes, dynamic)
        _check_sufficient(fn, shapes, sufficient)
        inputs = [self._inputs[k] for k in range(len(self.model.inputs))]
        ins = [
            _DUMMY if b.kind == "omitted" else self._input_array(b, self.model.operands[idx], fn)
            for b, idx in zip(inputs, self.model.inputs)
        ]
        _check_no_overlap(fn, ins, outs)  # type: ignore[arg-type]
        bindings = [*inputs, *self._outputs.values()]
        memories = tuple(b.memory for b in bindings if b.kind == "memory" and b.memory is not None)
        call = exe.bind(ins, outs, self._loop_timeout_ns)
        plan = _Plan(call, _Outcome(None, shapes, sufficient), memories, tuple((k, outs[k]) for k in dynamic))
        specialised = self.compilation.specialised
        value_selects_variant = any(k in specialised and b.kind != "omitted" for k, b in enumerate(inputs))
        if self._reusable and not value_selects_variant and all(b.kind != "device" for b in bindings):
            self._plan = plan
        return plan

    def _raise_status(self, fn: str, status: int) -> None:
        """The error for a nonzero native status: a WHILE loop past the loop
        timeout, or operation k's invalid run-time data."""
        if status == LOOP_TIMEOUT_STATUS:
            raise MissedDeadlineTransientError(
                fn, f"a WHILE loop ran longer than the loop timeout ({self._loop_timeout_ns} ns) and was stopped"
            )
        k = status - 1
        op = self.model.operations[k] if 0 <= k < len(self.model.operations) else None
        name = OperationType(op.type).name if op is not None else "?"
        raise OpFailedError(fn, f"operation {k} ({name}): invalid input data (e.g. an index out of range)")

    # -- results --------------------------------------------------------------------------------------------
    def _completed(self, fn: str) -> _Outcome:
        """The last computation's outcome if it may be queried."""
        outcome = self._outcome
        if self._state is not State.COMPLETED or outcome is None:
            raise BadStateError(fn, f"the execution is in the {self._state.value} state, not completed")
        if outcome.shapes is None:
            raise BadStateError(fn, f"the computation failed: {outcome.error}")
        return outcome

    def _output_shape(self, fn: str, index: int) -> tuple[tuple[int, ...], bool]:
        outcome = self._completed(fn)
        assert outcome.shapes is not None
        if not is_int(index) or not 0 <= index < len(outcome.shapes):
            raise BadDataError(fn, f"output index {index} out of range [0, {len(outcome.shapes)})")
        ok = outcome.sufficient[int(index)] if outcome.sufficient else True
        return outcome.shapes[int(index)], ok

    @ndk(_RANK)
    def get_output_operand_rank(self, index: int) -> OutputRank:
        """ANeuralNetworksExecution_getOutputOperandRank of the last computation.
        Also after OUTPUT_INSUFFICIENT_SIZE: then ``.code`` says so."""
        shape, ok = self._output_shape(_RANK, index)
        return OutputRank(len(shape), ok)

    @ndk(_DIMS)
    def get_output_operand_dimensions(self, index: int) -> OutputDimensions:
        """ANeuralNetworksExecution_getOutputOperandDimensions of the last
        computation (a list; ``.code`` is OUTPUT_INSUFFICIENT_SIZE if that
        output's buffer was too small).  BAD_DATA for a scalar output."""
        shape, ok = self._output_shape(_DIMS, index)
        if self.model.operands[self.model.outputs[int(index)]].type.is_scalar:
            raise BadDataError(_DIMS, f"output {index} is a scalar: it has no dimensions")
        return OutputDimensions(shape, ok)

    @ndk(_DURATION)
    def get_duration(self, code: DurationCode | int) -> int:
        """ANeuralNetworksExecution_getDuration in nanoseconds, of the last
        computation; BAD_STATE unless it succeeded with timing measured."""
        fn = _DURATION
        try:
            duration = DurationCode(code) if is_int(code) else None
        except ValueError:
            duration = None
        if duration is None:
            raise BadDataError(fn, "duration code must be one of DurationCode (0..3)")
        outcome = self._outcome
        if self._state is not State.COMPLETED or outcome is None:
            raise BadStateError(fn, f"the execution is in the {self._state.value} state, not completed")
        if outcome.error is not None:
            raise BadStateError(fn, f"the computation failed: {outcome.error}")
        if not self._measure:
            raise BadStateError(fn, "timing was not measured (set_measure_timing(True) before computing)")
        return outcome.durations.get(duration, UINT64_MAX)

    @ndk(_PROFILE)
    def get_operation_profile(self) -> list[OperationProfile]:
        """nnc extension: the last computation's time per operation of the
        main graph, in model order (:class:`nnc.profile.OperationProfile`:
        index, type, output shapes, MACs, start on the monotonic clock,
        duration in ns).  BAD_STATE unless the computation succeeded and the
        compilation was made with ``Compilation.set_profiling(True)``.  The
        first call per input-shape variant runs shape inference to describe
        the operations."""
        fn = _PROFILE
        outcome = self._outcome
        if self._state is not State.COMPLETED or outcome is None:
            raise BadStateError(fn, f"the execution is in the {self._state.value} state, not completed")
        if outcome.error is not None:
            raise BadStateError(fn, f"the computation failed: {outcome.error}")
        if outcome.profile is None:
            raise BadStateError(fn, "the compilation was not made for profiling "
                                    "(Compilation.set_profiling(True) before finish)")  # fmt: skip
        infos, stamps = outcome.profile
        return profiles(self.compilation.operation_details(infos), stamps)

    # -- lifetime ---------------------------------------------------------------------------------------
    @ndk(_FREE, free=True)
    def close(self) -> None:
        """ANeuralNetworksExecution_free: idempotent, never raises; while a
        computation runs the release is deferred until it ends."""
        with self._lock:
            if self._closed:
                return
            if self._state is State.COMPUTATION:
                self._close_pending = True
                return
            self._release()

    def _release(self) -> None:
        self._closed = True
        self._inputs.clear()
        self._outputs.clear()
        self._plan = None
        self._device_outputs.clear()

    def __enter__(self) -> Execution:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_DUMMY = np.zeros(16, dtype=np.uint8)


def _reported_by(error: NNError, fn: str) -> NNError:
    """A computation's error is reported by the call that computes: one
    raised deeper (the back end, a memory) is re-issued under ``fn``."""
    return error if error.function == fn else rebrand(error, fn)


def _check_no_overlap(fn: str, ins: list[np.ndarray], outs: list[np.ndarray]) -> None:
    """An output may not share memory with an input or another output:
    the generated code assumes distinct buffers (LLVM noalias)."""
    for k, out in enumerate(outs):
        if out.size == 0:
            continue
        for j, other in enumerate(ins):
            if other.size and np.may_share_memory(out, other):
                raise BadDataError(fn, f"output {k} overlaps input {j}")
        for j, other in enumerate(outs[:k]):
            if other.size and np.may_share_memory(out, other):
                raise BadDataError(fn, f"output {k} overlaps output {j}")
