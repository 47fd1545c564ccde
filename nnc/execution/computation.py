"""Running an execution's computation: the plan its bindings fix, the native
call with deadlines and timing, and what the asynchronous worker waits for.

The execution's state machine decides *whether* a computation may run; this
module only runs it and returns its :class:`~nnc.execution.outputs.Outcome`
or raises its error.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from nnc.burst import Burst
from nnc.compilation import Compilation
from nnc.enums import DEFAULT_LOOP_TIMEOUT_NS, DurationCode, OperationType
from nnc.errors import (
    BadDataError,
    MissedDeadlineTransientError,
    NNError,
    OpFailedError,
    OutOfMemoryError,
    rebrand,
)
from nnc.event import Event
from nnc.execution.bindings import Bindings
from nnc.execution.outputs import Outcome, check_sufficient, dynamic_outcome, output_arrays
from nnc.memory import Memory
from nnc.operand_types import OperandInfo
from nnc.runtime import threadpool
from nnc.runtime.abi import LOOP_TIMEOUT_STATUS
from nnc.runtime.executable import NativeCall


@dataclass
class Options:
    """An execution's options, set only in the preparation state."""

    reusable: bool = False
    measure: bool = False
    timeout_ns: int = 0
    loop_timeout_ns: int = DEFAULT_LOOP_TIMEOUT_NS
    num_threads: int = field(default_factory=threadpool.default_num_threads)


@dataclass(slots=True)
class Plan:
    """A computation prepared from the bindings (see Runner._plan_for):
    the native call with its arguments converted, the outcome of a
    successful run without timing (the output shapes it writes; one object
    for every run, as outcomes are never modified once made), and the client
    memories whose mapping each run checks."""

    call: NativeCall
    outcome: Outcome
    memories: tuple[Memory, ...]
    #: outputs with a data-dependent dimension: (index, the bound-sized array
    #: the native code writes, which the run's actual rows are copied from)
    dynamic: tuple[tuple[int, np.ndarray], ...] = ()


class Runner:
    """Computes one execution: validates its bindings when a computation
    starts, and runs the native code, keeping the plan of a reusable
    execution's first computation for the next ones."""

    def __init__(self, compilation: Compilation, bindings: Bindings, options: Options):
        self.compilation = compilation
        self.model = compilation.model
        self.bindings = bindings
        self.options = options
        #: a reusable execution's computation, kept from its first (see _plan_for)
        self.plan: Plan | None = None

    def deadline(self) -> int | None:
        """The deadline of a computation starting now (None: none)."""
        timeout_ns = self.options.timeout_ns
        return time.monotonic_ns() + timeout_ns if timeout_ns else None

    def validate_start(self, fn: str) -> None:
        """What the runtime checks when a computation starts, in every mode:
        every argument bound (omitted counts), and device-memory inputs
        initialised with the shape of their last producer.
        Nothing to do with a kept plan: it exists only after a computation
        found every argument bound, and arguments can no longer change, and
        only when no device memory is bound."""
        if self.plan is not None:
            return
        self.bindings.check_complete(fn)

    def execute(self, fn: str, deadline: int | None, burst: Burst | None) -> Outcome:
        """Run the native code once: with the plan of the earlier computations
        when it is kept (see :meth:`_plan_for`), else with a new one.  This is
        the whole per-computation cost of a reusable execution, so the clock
        is read only when timing is measured."""
        measure = self.options.measure
        t0 = time.perf_counter_ns() if measure else 0
        if deadline is not None:
            check_deadline(fn, deadline, "before the computation started")
        plan = self.plan or self._plan_for(fn, deadline)
        for memory in plan.memories:
            memory.check_mapped(fn)
        call = plan.call
        threadpool.use(self.options.num_threads)
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
            check_deadline(fn, deadline, "before the computation ended")
        profiled = call.executable.profile_layout is not None
        outcome = (
            dynamic_outcome(fn, self.bindings.outputs, call, plan.outcome.sufficient, plan.dynamic)
            if plan.dynamic
            else plan.outcome
        )
        if not measure and not profiled:
            return outcome
        durations = {}
        if measure:
            hw, driver = t2 - t1, time.perf_counter_ns() - t0
            durations = {DurationCode.ON_HARDWARE: hw, DurationCode.IN_DRIVER: driver,
                         DurationCode.FENCED_ON_HARDWARE: hw, DurationCode.FENCED_IN_DRIVER: driver}  # fmt: skip
        stamps = call.stamps() if profiled else None
        profile = None if stamps is None else (call.executable.code.inputs, stamps)
        return Outcome(None, outcome.shapes, outcome.sufficient, durations, profile)

    def _variant(self, fn: str, infos: list[OperandInfo]):
        """The compiled variant for these input shapes.  Shapes that do not
        fit the model are OP_FAILED at execution, as the CPU executor
        reports them."""
        try:
            return self.compilation.executable(infos, fn)
        except BadDataError as e:
            raise OpFailedError(fn, e.message) from None

    def _plan_for(self, fn: str, deadline: int | None) -> Plan:
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
        bindings = self.bindings
        infos = bindings.input_infos(fn)
        exe = self._variant(fn, infos)
        check_deadline(fn, deadline, "while preparing the computation")
        shapes = [tuple(s) for s in exe.output_shapes]
        dynamic = [k for k, _ in exe.dynamic_outputs]
        outs, sufficient = output_arrays(fn, self.model, bindings.outputs, shapes, dynamic)
        check_sufficient(fn, shapes, sufficient)
        inputs = [bindings.inputs[k] for k in range(len(self.model.inputs))]
        ins = [
            _DUMMY if b.kind == "omitted" else bindings.input_array(b, self.model.operands[idx], fn)
            for b, idx in zip(inputs, self.model.inputs)
        ]
        check_no_overlap(fn, ins, outs)  # type: ignore[arg-type]
        bound = [*inputs, *bindings.outputs.values()]
        memories = tuple(b.memory for b in bound if b.kind == "memory" and b.memory is not None)
        call = exe.bind(ins, outs, self.options.loop_timeout_ns)
        plan = Plan(call, Outcome(None, shapes, sufficient), memories, tuple((k, outs[k]) for k in dynamic))
        specialised = self.compilation.specialised
        value_selects_variant = any(k in specialised and b.kind != "omitted" for k, b in enumerate(inputs))
        if self.options.reusable and not value_selects_variant and all(b.kind != "device" for b in bound):
            self.plan = plan
        return plan

    def _raise_status(self, fn: str, status: int) -> None:
        """The error for a nonzero native status: a WHILE loop past the loop
        timeout, or operation k's invalid run-time data."""
        if status == LOOP_TIMEOUT_STATUS:
            raise MissedDeadlineTransientError(
                fn, f"a WHILE loop ran longer than the loop timeout ({self.options.loop_timeout_ns} ns) and was stopped"
            )
        k = status - 1
        op = self.model.operations[k] if 0 <= k < len(self.model.operations) else None
        name = OperationType(op.type).name if op is not None else "?"
        raise OpFailedError(fn, f"operation {k} ({name}): invalid input data (e.g. an index out of range)")


def await_dependencies(fn: str, deps: list[Event], deadline: int | None, duration: int) -> int | None:
    """On the worker thread: block until every dependency is signalled
    (OP_FAILED naming the first that failed); the computation's deadline,
    ``duration`` (ns, 0 = none) after that if it is earlier."""
    for i, dep in enumerate(deps):
        error = dep.wait_error()
        if error is not None:
            raise OpFailedError(fn, f"dependency {i} failed: {error}")
    if duration:
        after = time.monotonic_ns() + duration
        deadline = after if deadline is None else min(deadline, after)
    return deadline


def check_deadline(fn: str, deadline: int | None, when: str) -> None:
    if deadline is not None and time.monotonic_ns() > deadline:
        raise MissedDeadlineTransientError(fn, f"the execution's deadline passed {when}")


def reported_by(error: NNError, fn: str) -> NNError:
    """A computation's error is reported by the call that computes: one
    raised deeper (the back end, a memory) is re-issued under ``fn``."""
    return error if error.function == fn else rebrand(error, fn)


def check_no_overlap(fn: str, ins: list[np.ndarray], outs: list[np.ndarray]) -> None:
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


_DUMMY = np.zeros(16, dtype=np.uint8)
