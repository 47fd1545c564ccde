"""``Execution``: the facade of ANeuralNetworksExecution_*.

It owns the state machine (PREPARATION, COMPUTATION, COMPLETED), the options
and the lifetime, and hands the rest to its pieces: the argument table
(:mod:`nnc.execution.bindings`), the computation (:mod:`nnc.execution.computation`)
and the outputs and their shapes (:mod:`nnc.execution.outputs`).  The
package docstring (:mod:`nnc.execution`) describes the behaviour.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Sequence

import numpy as np

from nnc.burst import Burst
from nnc.compilation import Compilation, require_usable
from nnc.enums import MAXIMUM_LOOP_TIMEOUT_NS, UINT64_MAX, DurationCode
from nnc.errors import (
    BadDataError,
    BadStateError,
    NNError,
    OpFailedError,
    OutputInsufficientSizeError,
    UnexpectedNullError,
    ndk,
)
from nnc.event import Event
from nnc.execution.bindings import Bindings
from nnc.execution.computation import Options, Runner, await_dependencies, reported_by
from nnc.execution.outputs import Outcome, OutputDimensions, OutputRank
from nnc.memory import INPUT, OUTPUT, Memory
from nnc.operand_types import is_int
from nnc.profile import OperationProfile, profiles
from nnc.runtime import threadpool

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


def _is_bool(v: object) -> bool:
    return isinstance(v, bool | np.bool_)


def _uint64(fn: str, value: object, what: str) -> int:
    if not is_int(value) or not 0 <= int(value) <= UINT64_MAX:
        raise BadDataError(fn, f"{what} must be an int in [0, 2**64 - 1], got {value!r}")
    return int(value)


class Execution:
    """ANeuralNetworksExecution: bind inputs/outputs, compute, read shapes."""

    def __init__(self, compilation: Compilation):
        self.compilation = require_usable(compilation, _CREATE)  # strong: lives as long as its executions
        self.model = compilation.model
        self._bindings = Bindings(compilation)
        self._options = Options()
        self._runner = Runner(compilation, self._bindings, self._options)
        self._state = State.PREPARATION
        self._outcome: Outcome | None = None
        self._closed = False
        self._close_pending = False
        self._lock = threading.RLock()

    # -- read-only views of the configuration -------------------------------------------------------
    @property
    def state(self) -> State:
        return self._state

    @property
    def reusable(self) -> bool:
        return self._options.reusable

    @property
    def padding_enabled(self) -> bool:
        return self._bindings.padding

    @property
    def measure_timing(self) -> bool:
        return self._options.measure

    @property
    def timeout_ns(self) -> int:
        """The execution deadline set by :meth:`set_timeout` (0: none)."""
        return self._options.timeout_ns

    @property
    def loop_timeout_ns(self) -> int:
        """The WHILE-loop timeout (default 2 s, at most 15 s)."""
        return self._options.loop_timeout_ns

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
            self._options.measure = bool(measure)

    @ndk(_TIMEOUT)
    def set_timeout(self, duration_ns: int) -> None:
        """ANeuralNetworksExecution_setTimeout: nanoseconds, 0 = no deadline
        (single-device compilations only)."""
        self._single_device(_TIMEOUT, "a timeout")
        with self._lock:
            self._preparing(_TIMEOUT)
            self._options.timeout_ns = _uint64(_TIMEOUT, duration_ns, "the timeout")

    @ndk(_LOOP_TIMEOUT)
    def set_loop_timeout(self, duration_ns: int) -> None:
        """ANeuralNetworksExecution_setLoopTimeout: values above the maximum
        (15 s) are lowered to it, not rejected."""
        with self._lock:
            self._preparing(_LOOP_TIMEOUT)
            duration = _uint64(_LOOP_TIMEOUT, duration_ns, "the loop timeout")
            self._options.loop_timeout_ns = min(duration, MAXIMUM_LOOP_TIMEOUT_NS)

    @ndk(_REUSABLE)
    def set_reusable(self, reusable: bool) -> None:
        """ANeuralNetworksExecution_setReusable (feature level 5)."""
        with self._lock:
            self._preparing(_REUSABLE)
            if not _is_bool(reusable):
                raise BadDataError(_REUSABLE, f"reusable must be a bool, got {type(reusable).__name__}")
            self._options.reusable = bool(reusable)

    @ndk(_PADDING)
    def enable_input_and_output_padding(self, enable: bool) -> None:
        """ANeuralNetworksExecution_enableInputAndOutputPadding: buffers and
        regions may then be longer than the data (the rest is left alone).
        BAD_STATE once any input or output is set."""
        with self._lock:
            self._preparing(_PADDING)
            if self._bindings.bound:
                raise BadStateError(_PADDING, "inputs or outputs were already set")
            if not _is_bool(enable):
                raise BadDataError(_PADDING, f"enable must be a bool, got {type(enable).__name__}")
            self._bindings.padding = bool(enable)

    @property
    def num_threads(self) -> int:
        """The threads a computation runs on (nnc extension; see :meth:`set_num_threads`)."""
        return self._options.num_threads

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
            self._options.num_threads = min(int(n), threadpool.MAX_THREADS)

    # -- binding ---------------------------------------------------------------------------------------
    @ndk(_SET_INPUT)
    def set_input(self, index: int, array, dimensions=None) -> None:
        """ANeuralNetworksExecution_setInput; ``None`` omits an optional input.

        ``dimensions`` gives unspecified dimensions of the model's operand; a
        numpy array's own shape serves when it is not given.  The array is
        read when the computation runs (a C-contiguous array of the right
        dtype is used in place, others are copied now)."""
        with self._lock:
            self._preparing(_SET_INPUT)
            self._bindings.set_input(_SET_INPUT, index, array, dimensions)

    @ndk(_SET_OUTPUT)
    def set_output(self, index: int, array, dimensions=None) -> None:
        """ANeuralNetworksExecution_setOutput: ``array`` (a writeable,
        C-contiguous numpy array of the operand's dtype) is written in place;
        ``None`` omits an optional output (nnc computes it into scratch
        memory).  ``dimensions`` may leave sizes unknown (0): the buffer then
        only has to be large enough for the computed shape."""
        with self._lock:
            self._preparing(_SET_OUTPUT)
            self._bindings.set_output(_SET_OUTPUT, index, array, dimensions)

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
        checks: NULL, state, then the argument table's (see
        :meth:`Bindings.set_from_memory`)."""
        if memory is None:
            raise UnexpectedNullError(fn, "memory is null")
        with self._lock:
            self._preparing(fn)
            self._bindings.set_from_memory(fn, io, index, memory, offset, length, dimensions)

    # -- starting computations -------------------------------------------------------------------------
    def _begin(self, fn: str) -> None:
        """PREPARATION (or COMPLETED if reusable) -> COMPUTATION, atomically."""
        with self._lock:
            if self._state is State.COMPUTATION:
                raise BadStateError(fn, "a computation is already running on this execution")
            if self._state is State.COMPLETED and not self._options.reusable:
                raise BadStateError(fn, "the execution was already computed and is not reusable "
                                        "(create a new one, or call set_reusable(True) before computing)")  # fmt: skip
            self._state = State.COMPUTATION
            self._outcome = None

    def _finish(self, outcome: Outcome) -> None:
        """COMPUTATION -> COMPLETED; device memories written by the outputs
        become initialised, or uninitialised if the computation failed."""
        for k, memory in self._bindings.device_outputs:
            memory.mark_written(outcome.shapes[k] if outcome.error is None and outcome.shapes else None)
        with self._lock:
            self._outcome = outcome
            self._state = State.COMPLETED
            if self._close_pending:
                self._release()

    def _fail(self, error: NNError) -> Outcome:
        """The outcome of a failed computation.  OUTPUT_INSUFFICIENT_SIZE keeps
        its shapes, and its error carries ``.execution`` (this execution) so
        the caller can query them."""
        if isinstance(error, OutputInsufficientSizeError) and error.output_shapes:
            error.execution = self
            return Outcome(error, error.output_shapes, error.sufficient)
        return Outcome(error)

    def _run_here(self, fn: str, deadline: int | None, burst: Burst | None = None) -> None:
        """Validate and compute in this thread; the caller already began."""
        try:
            self._runner.validate_start(fn)
            outcome = self._runner.execute(fn, deadline, burst)
        except NNError as e:
            error = reported_by(e, fn)
            self._finish(self._fail(error))
            if error is e:
                raise
            raise error from e
        except BaseException as e:  # an nnc bug or an interrupt: never leave the execution running
            self._finish(Outcome(OpFailedError(fn, f"internal error: {type(e).__name__}: {e}")))
            raise
        self._finish(outcome)

    @ndk(_COMPUTE)
    def compute(self) -> None:
        """ANeuralNetworksExecution_compute: run synchronously."""
        self._begin(_COMPUTE)
        self._run_here(_COMPUTE, self._runner.deadline())

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
            self._run_here(fn, self._runner.deadline(), burst)
        finally:
            burst.release()

    @ndk(_START)
    def start_compute(self) -> Event:
        """ANeuralNetworksExecution_startCompute: run on a worker thread and
        return at once; :meth:`nnc.Event.wait` reports the result."""
        fn = _START
        self._begin(fn)
        deadline = self._runner.deadline()
        try:
            self._runner.validate_start(fn)
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
        deadline = self._runner.deadline()
        try:
            self._runner.validate_start(fn)
            if deps is None or not all(isinstance(e, Event) for e in deps):
                raise BadDataError(fn, "dependencies must be a list of nnc.Event")
            for e in deps:
                if e.closed:
                    raise BadStateError(fn, "a dependency event was closed (freed)")
            duration = _uint64(fn, duration, "the duration")
            if duration:
                self._single_device(fn, "a duration")
            self._bindings.check_fenced_outputs(fn)
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

    def _spawn(self, fn: str, event: Event, deadline: int | None, deps: list[Event], duration: int) -> None:
        worker = threading.Thread(
            target=self._run_async, args=(fn, event, deadline, deps, duration),
            name=f"nnc-{fn.rsplit('_', 1)[-1]}", daemon=True,
        )  # fmt: skip
        worker.start()

    def _run_async(self, fn: str, event: Event, deadline: int | None, deps: list[Event], duration: int) -> None:
        """The worker thread: wait for the dependencies, compute, signal."""
        try:
            deadline = await_dependencies(fn, deps, deadline, duration)
            outcome = self._runner.execute(fn, deadline, None)
        except NNError as e:
            outcome = self._fail(reported_by(e, fn))
        except BaseException as e:  # noqa: BLE001 - a bug must reach the waiter, not kill the thread silently
            outcome = Outcome(OpFailedError(fn, f"internal error: {type(e).__name__}: {e}"))
        self._finish(outcome)
        event.signal(outcome.error)

    # -- results --------------------------------------------------------------------------------------------
    def _completed(self, fn: str) -> Outcome:
        """The last computation's outcome if it may be queried."""
        outcome = self._outcome
        if self._state is not State.COMPLETED or outcome is None:
            raise BadStateError(fn, f"the execution is in the {self._state.value} state, not completed")
        if outcome.shapes is None:
            raise BadStateError(fn, f"the computation failed: {outcome.error}")
        return outcome

    @ndk(_RANK)
    def get_output_operand_rank(self, index: int) -> OutputRank:
        """ANeuralNetworksExecution_getOutputOperandRank of the last computation.
        Also after OUTPUT_INSUFFICIENT_SIZE: then ``.code`` says so."""
        shape, ok = self._completed(_RANK).output_shape(_RANK, index)
        return OutputRank(len(shape), ok)

    @ndk(_DIMS)
    def get_output_operand_dimensions(self, index: int) -> OutputDimensions:
        """ANeuralNetworksExecution_getOutputOperandDimensions of the last
        computation (a list; ``.code`` is OUTPUT_INSUFFICIENT_SIZE if that
        output's buffer was too small).  BAD_DATA for a scalar output."""
        shape, ok = self._completed(_DIMS).output_shape(_DIMS, index)
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
        if not self._options.measure:
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
        self._bindings.clear()
        self._runner.plan = None

    def __enter__(self) -> Execution:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
