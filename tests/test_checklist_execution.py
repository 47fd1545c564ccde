"""Checklist sections 1 and 4: cross-cutting rules and ANeuralNetworksExecution_*.

Each test names the items of ``../shared/spec/api-behaviour-checklist.md`` it
covers and asserts the NNAPI result code and the NDK function name.  C's
``ANeuralNetworksExecution_f(NULL, ...)`` is ``nnc.Execution.f(None, ...)``
here (see :func:`nnc.errors.ndk`); out-pointers do not exist in Python (the
results are returned), so the "NULL out-pointer" halves of items have no
counterpart and are not tested.

The helpers at the top are shared with the other checklist test files.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import threading
import time

import numpy as np
import pytest

import nnc
from nnc import DurationCode
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc import ResultCode as RC
from nnc.errors import NNError
from nnc.runtime.executable import Executable

RW = mmap.PROT_READ | mmap.PROT_WRITE
MODES = ("compute", "start_compute", "burst", "fenced")
#: the NDK function that reports a computation's status, per mode
STATUS_FUNCTION = {
    "compute": "ANeuralNetworksExecution_compute",
    "burst": "ANeuralNetworksExecution_burstCompute",
    "start_compute": "ANeuralNetworksEvent_wait",
    "fenced": "ANeuralNetworksEvent_wait",
}
START_FUNCTION = {
    "compute": "ANeuralNetworksExecution_compute",
    "burst": "ANeuralNetworksExecution_burstCompute",
    "start_compute": "ANeuralNetworksExecution_startCompute",
    "fenced": "ANeuralNetworksExecution_startComputeWithDependencies",
}


# -- helpers (also imported by the other checklist test files) -------------------------------------


def add_model(dims=(2,), out_dims=None, t=T.TENSOR_FLOAT32, scale=0.0, act_input=False, zero_point=0) -> nnc.Model:
    """out = in0 + in1 (activation NONE, or a third model input); ``dims``
    None: inputs of unknown rank."""
    m = nnc.Model()
    a = m.add_operand(t, list(dims) if dims is not None else None, scale, zero_point)
    b = m.add_operand(t, list(dims) if dims is not None else None, scale, zero_point)
    act = m.add_operand(T.INT32)
    if not act_input:
        m.set_operand_value(act, 0)
    out = None if dims is None else list(out_dims if out_dims is not None else dims)
    o = m.add_operand(t, out, scale, zero_point)
    m.add_operation(Op.ADD, [a, b, act], [o])
    m.identify_inputs_and_outputs([a, b, act] if act_input else [a, b], [o])
    m.finish()
    return m


def compiled(model: nnc.Model | None = None, single: bool = False) -> nnc.Compilation:
    """A finished compilation; ``single``: for exactly one device (timing, timeouts)."""
    model = model or add_model()
    c = nnc.Compilation.for_devices(model, [nnc.get_device(0)]) if single else nnc.Compilation(model)
    c.finish()
    return c


@contextlib.contextmanager
def raises(code: RC, function: str):
    """Expect an NNError with exactly this result code and NDK function."""
    with pytest.raises(NNError) as info:
        yield info
    assert info.value.code == code, f"{info.value!r}: expected {code!r}"
    assert info.value.function == function, f"{info.value!r}: expected {function}"


def fd_memory(size: int = 4096, prot: int = RW, length: int | None = None) -> tuple[nnc.Memory, np.ndarray]:
    """An nnc.Memory over a fresh memfd, and an independent writable view of
    the same file (to fill inputs and read outputs)."""
    fd = os.memfd_create("nnc-test")
    try:
        os.ftruncate(fd, size)
        mem = nnc.Memory.from_fd(length or size, prot, fd, 0)
        peer = np.frombuffer(mmap.mmap(fd, size), dtype=np.uint8)
    finally:
        os.close(fd)  # the Memory holds its own duplicate
    return mem, peer


def bound(c: nnc.Compilation, x=None, y=None, out=None) -> nnc.Execution:
    """An execution of an ADD compilation with both inputs and the output set."""
    ex = nnc.Execution(c)
    x = np.array([1.0, 2.0], np.float32) if x is None else x
    ex.set_input(0, x)
    ex.set_input(1, x if y is None else y)
    ex.set_output(0, np.zeros(2, np.float32) if out is None else out)
    return ex


def status(ex: nnc.Execution, mode: str, burst: nnc.Burst | None = None) -> tuple[RC, str]:
    """Compute in ``mode`` and return (result code, reporting NDK function)."""
    try:
        if mode == "compute":
            ex.compute()
        elif mode == "burst":
            ex.burst_compute(burst or nnc.Burst(ex.compilation))
        elif mode == "start_compute":
            ex.start_compute().wait()
        else:
            ex.start_compute_with_dependencies([], 0).wait()
    except NNError as e:
        return e.code, e.function
    return RC.NO_ERROR, ""


class Gate:
    """Holds every native call (Executable.run) until released, so a test can
    look at an execution while its computation is really running."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.calls = 0


@pytest.fixture
def gate(monkeypatch):
    g = Gate()
    original = Executable.run

    def held(self, *args, **kwargs):
        g.calls += 1
        g.entered.set()
        assert g.release.wait(60), "gate never released"
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Executable, "run", held)
    yield g
    g.release.set()


def start_running(ex: nnc.Execution, mode: str, gate: Gate, burst: nnc.Burst | None = None):
    """Start a computation that stays in COMPUTATION until ``finish()`` is
    called; ``finish`` releases the gate and returns the (code, function)."""
    result: dict[str, tuple[RC, str]] = {}
    if mode in ("compute", "burst"):
        b = burst or nnc.Burst(ex.compilation)
        t = threading.Thread(target=lambda: result.setdefault("r", status(ex, mode, b)))
        t.start()
        assert gate.entered.wait(30)

        def finish():
            gate.release.set()
            t.join(30)
            return result["r"]

        return finish
    event = ex.start_compute() if mode == "start_compute" else ex.start_compute_with_dependencies([], 0)
    assert gate.entered.wait(30)

    def finish_async():
        gate.release.set()
        try:
            event.wait()
        except NNError as e:
            return e.code, e.function
        return RC.NO_ERROR, ""

    return finish_async


@pytest.fixture(scope="module")
def comp() -> nnc.Compilation:
    return compiled()


@pytest.fixture(scope="module")
def comp1() -> nnc.Compilation:
    """For exactly one device: timing and timeouts are allowed."""
    return compiled(single=True)


X = np.array([1.0, 2.0], np.float32)


# -- section 1: cross-cutting ----------------------------------------------------------------------


@pytest.mark.checklist(1)
def test_unknown_result_codes_are_failures():
    from nnc.errors import check, error_for

    check(RC.NO_ERROR, "ANeuralNetworksExecution_compute")  # success: returns
    with raises(99, "ANeuralNetworksExecution_compute") as info:
        check(99, "ANeuralNetworksExecution_compute")
    assert type(info.value) is NNError
    for code in RC:
        if code != RC.NO_ERROR:
            err = error_for(code, "ANeuralNetworksEvent_wait", "x")
            assert err.code == code and err.function == "ANeuralNetworksEvent_wait"


@pytest.mark.checklist(1)
def test_error_hierarchy_follows_section_11():
    E = nnc.errors
    assert issubclass(E.OutOfMemoryError, MemoryError)
    assert issubclass(E.UnexpectedNullError, TypeError)
    assert issubclass(E.BadDataError, ValueError)
    assert issubclass(E.BadStateError, RuntimeError)
    for sub, base in ((E.MissedDeadlineTransientError, E.MissedDeadlineError),
                      (E.MissedDeadlinePersistentError, E.MissedDeadlineError),
                      (E.ResourceExhaustedTransientError, E.ResourceExhaustedError),
                      (E.ResourceExhaustedPersistentError, E.ResourceExhaustedError)):  # fmt: skip
        assert issubclass(sub, base)
    assert E.error_for(RC.MISSED_DEADLINE_PERSISTENT, "f", "m").__class__ is E.MissedDeadlinePersistentError
    assert E.error_for(RC.RESOURCE_EXHAUSTED_TRANSIENT, "f", "m").__class__ is E.ResourceExhaustedTransientError
    old = E.MissedDeadlineError("ANeuralNetworksExecution_compute", "m", RC.MISSED_DEADLINE_PERSISTENT)
    assert old.code == RC.MISSED_DEADLINE_PERSISTENT
    assert E.MissedDeadlineError("f", "m").code == RC.MISSED_DEADLINE_TRANSIENT


def _null_self_calls():
    """(call with a None handle, NDK function) for every method of this part."""
    Ex, Ev, Md = nnc.Execution, nnc.Event, nnc.MemoryDesc
    x = np.zeros(2, np.float32)
    return [
        (lambda: Ex.set_input(None, 0, x), "ANeuralNetworksExecution_setInput"),
        (lambda: Ex.set_output(None, 0, x), "ANeuralNetworksExecution_setOutput"),
        (lambda: Ex.set_input_from_memory(None, 0, None, 0, 8), "ANeuralNetworksExecution_setInputFromMemory"),
        (lambda: Ex.set_output_from_memory(None, 0, None, 0, 8), "ANeuralNetworksExecution_setOutputFromMemory"),
        (lambda: Ex.compute(None), "ANeuralNetworksExecution_compute"),
        (lambda: Ex.start_compute(None), "ANeuralNetworksExecution_startCompute"),
        (lambda: Ex.start_compute_with_dependencies(None, [], 0),
         "ANeuralNetworksExecution_startComputeWithDependencies"),
        (lambda: Ex.burst_compute(None, None), "ANeuralNetworksExecution_burstCompute"),
        (lambda: Ex.get_output_operand_rank(None, 0), "ANeuralNetworksExecution_getOutputOperandRank"),
        (lambda: Ex.get_output_operand_dimensions(None, 0), "ANeuralNetworksExecution_getOutputOperandDimensions"),
        (lambda: Ex.get_duration(None, 0), "ANeuralNetworksExecution_getDuration"),
        (lambda: Ex.set_measure_timing(None, True), "ANeuralNetworksExecution_setMeasureTiming"),
        (lambda: Ex.set_timeout(None, 1), "ANeuralNetworksExecution_setTimeout"),
        (lambda: Ex.set_loop_timeout(None, 1), "ANeuralNetworksExecution_setLoopTimeout"),
        (lambda: Ex.set_reusable(None, True), "ANeuralNetworksExecution_setReusable"),
        (lambda: Ex.enable_input_and_output_padding(None, True),
         "ANeuralNetworksExecution_enableInputAndOutputPadding"),
        (lambda: Ev.wait(None), "ANeuralNetworksEvent_wait"),
        (lambda: Ev.get_sync_fence_fd(None), "ANeuralNetworksEvent_getSyncFenceFd"),
        (lambda: Md.add_input_role(None, None, 0, 1.0), "ANeuralNetworksMemoryDesc_addInputRole"),
        (lambda: Md.add_output_role(None, None, 0, 1.0), "ANeuralNetworksMemoryDesc_addOutputRole"),
        (lambda: Md.set_dimensions(None, [1]), "ANeuralNetworksMemoryDesc_setDimensions"),
        (lambda: Md.finish(None), "ANeuralNetworksMemoryDesc_finish"),
        (lambda: nnc.Execution(None), "ANeuralNetworksExecution_create"),
        (lambda: nnc.Burst(None), "ANeuralNetworksBurst_create"),
        (lambda: nnc.Memory.from_desc(None), "ANeuralNetworksMemory_createFromDesc"),
        (lambda: nnc.Memory.copy(None, None), "ANeuralNetworksMemory_copy"),
    ]


@pytest.mark.checklist(2, 108, 113, 127, 132, 143, 145, 147, 152, 164, 167, 188, 197, 199)
@pytest.mark.parametrize("k", range(len(_null_self_calls())))
def test_null_handle_is_unexpected_null(k):
    call, function = _null_self_calls()[k]
    with raises(RC.UNEXPECTED_NULL, function):
        call()


@pytest.mark.checklist(2)
def test_null_is_checked_before_state(comp):
    """A completed (non-reusable) execution: the BAD_STATE call with a NULL
    argument is UNEXPECTED_NULL."""
    ex = bound(comp)
    ex.compute()
    with raises(RC.UNEXPECTED_NULL, "ANeuralNetworksExecution_burstCompute"):
        ex.burst_compute(None)
    with raises(RC.UNEXPECTED_NULL, "ANeuralNetworksExecution_startComputeWithDependencies"):
        ex.start_compute_with_dependencies(None, 0)
    with raises(RC.UNEXPECTED_NULL, "ANeuralNetworksExecution_setInputFromMemory"):
        ex.set_input_from_memory(0, None, 0, 8)
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_burstCompute"):
        ex.burst_compute(nnc.Burst(comp))


@pytest.mark.checklist(3, 163, 169)
@pytest.mark.parametrize("cls", [nnc.Burst, nnc.Event, nnc.Execution, nnc.Memory, nnc.MemoryDesc])
def test_free_null_does_nothing(cls):
    assert cls.close(None) is None


@pytest.mark.checklist(4)
def test_free_objects_in_unusual_states(comp):
    m = nnc.Model()
    m.add_operand(T.TENSOR_FLOAT32, [2])
    m.close()
    m.close()
    model = add_model()
    for c in (nnc.Compilation(model), nnc.Compilation.for_devices(model, [nnc.get_device(0)])):
        c.close()
        c.close()
    ex = nnc.Execution(comp)
    ex.set_input(0, X)
    ex.close()
    ex.close()
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_compute"):
        ex.compute()  # a closed (freed) execution is never used


def test_every_object_is_a_context_manager_closed_once(comp):
    mem, _ = fd_memory()
    desc = nnc.MemoryDesc()
    desc.add_input_role(comp, 0, 1.0)
    desc.finish()
    objects = [nnc.Execution(comp), nnc.Burst(comp), mem, desc, nnc.Memory.from_desc(desc)]
    objects.append(bound(comp).start_compute())
    for obj in objects:
        with obj as same:
            assert same is obj
        obj.close()  # again: harmless
        assert obj._closed


@pytest.mark.checklist(5, 115)
@pytest.mark.parametrize("index", [-1, 999])
def test_bad_indexes_are_bad_data(comp, index):
    mem, _ = fd_memory()
    ex = nnc.Execution(comp)
    calls = [
        (lambda: ex.set_input(index, X), "ANeuralNetworksExecution_setInput"),
        (lambda: ex.set_output(index, np.zeros(2, np.float32)), "ANeuralNetworksExecution_setOutput"),
        (lambda: ex.set_input_from_memory(index, mem, 0, 8), "ANeuralNetworksExecution_setInputFromMemory"),
        (lambda: ex.set_output_from_memory(index, mem, 0, 8), "ANeuralNetworksExecution_setOutputFromMemory"),
    ]
    for call, function in calls:
        with raises(RC.BAD_DATA, function):
            call()
    done = bound(comp)
    done.compute()
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_getOutputOperandRank"):
        done.get_output_operand_rank(index)
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_getOutputOperandDimensions"):
        done.get_output_operand_dimensions(index)


@pytest.mark.checklist(6)
def test_rejected_setter_leaves_execution_unchanged(comp):
    ex = nnc.Execution(comp)
    for bad in (np.zeros(5, np.float32), np.zeros(2, np.float64), np.zeros(0, np.float32)):
        with raises(RC.BAD_DATA, "ANeuralNetworksExecution_setInput"):
            ex.set_input(0, bad)
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_setInput"):
        ex.set_input(0, X, [3])
    ex.set_input(0, X)
    ex.set_input(1, X)
    y = np.zeros(2, np.float32)
    ex.set_output(0, y)
    ex.compute()
    assert y.tolist() == [2.0, 4.0]


# -- section 4.1: lifecycle -----------------------------------------------------------------------------


def _modifiers(ex: nnc.Execution, mem: nnc.Memory):
    """Every call that must be BAD_STATE once a computation has started (C100, C101)."""
    c = ex.compilation
    return [
        (lambda: ex.set_loop_timeout(10**9), "ANeuralNetworksExecution_setLoopTimeout"),
        (lambda: ex.set_input(0, X), "ANeuralNetworksExecution_setInput"),
        (lambda: ex.set_output(0, np.zeros(2, np.float32)), "ANeuralNetworksExecution_setOutput"),
        (lambda: ex.set_input_from_memory(0, mem, 0, 8), "ANeuralNetworksExecution_setInputFromMemory"),
        (lambda: ex.set_output_from_memory(0, mem, 8, 8), "ANeuralNetworksExecution_setOutputFromMemory"),
        (lambda: ex.start_compute(), "ANeuralNetworksExecution_startCompute"),
        (lambda: ex.compute(), "ANeuralNetworksExecution_compute"),
        (lambda: ex.burst_compute(nnc.Burst(c)), "ANeuralNetworksExecution_burstCompute"),
        (lambda: ex.start_compute_with_dependencies([], 0), "ANeuralNetworksExecution_startComputeWithDependencies"),
        (lambda: ex.enable_input_and_output_padding(True), "ANeuralNetworksExecution_enableInputAndOutputPadding"),
        (lambda: ex.enable_input_and_output_padding(False), "ANeuralNetworksExecution_enableInputAndOutputPadding"),
        (lambda: ex.set_reusable(True), "ANeuralNetworksExecution_setReusable"),
        (lambda: ex.set_reusable(False), "ANeuralNetworksExecution_setReusable"),
    ]


@pytest.mark.checklist(100, 101, 108)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("explicit", [False, True], ids=["default", "set-non-reusable"])
def test_execution_usability_while_running_and_after(comp, gate, mode, explicit):
    mem, _ = fd_memory()
    ex = bound(comp)
    if explicit:
        ex.set_reusable(False)
    finish = start_running(ex, mode, gate)
    assert ex.state is nnc.execution.State.COMPUTATION
    for call, function in _modifiers(ex, mem):
        with raises(RC.BAD_STATE, function):
            call()
    assert finish() == (RC.NO_ERROR, "")
    assert ex.state is nnc.execution.State.COMPLETED
    for call, function in _modifiers(ex, mem):
        with raises(RC.BAD_STATE, function):
            call()


@pytest.mark.checklist(102, 162)
@pytest.mark.parametrize("mode", MODES)
def test_timing_and_timeout_setters_after_start(comp1, gate, mode):
    ex = bound(comp1)
    finish = start_running(ex, mode, gate)
    for measure in (True, False):
        with raises(RC.BAD_STATE, "ANeuralNetworksExecution_setMeasureTiming"):
            ex.set_measure_timing(measure)
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_setTimeout"):
        ex.set_timeout(10**9)
    assert finish()[0] == RC.NO_ERROR
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_setTimeout"):
        ex.set_timeout(10**9)
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_setMeasureTiming"):
        ex.set_measure_timing(True)


@pytest.mark.checklist(103, 106)
def test_results_before_any_computation(comp1):
    ex = bound(comp1)
    ex.set_measure_timing(True)
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_getOutputOperandRank"):
        ex.get_output_operand_rank(0)
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_getOutputOperandDimensions"):
        ex.get_output_operand_dimensions(0)
    for code in (DurationCode.ON_HARDWARE, DurationCode.IN_DRIVER):
        with raises(RC.BAD_STATE, "ANeuralNetworksExecution_getDuration"):
            ex.get_duration(code)


@pytest.mark.checklist(104, 106)
@pytest.mark.parametrize("mode", MODES)
def test_results_while_running(comp1, gate, mode):
    ex = bound(comp1)
    ex.set_measure_timing(True)
    finish = start_running(ex, mode, gate)
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_getOutputOperandDimensions"):
        ex.get_output_operand_dimensions(0)
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_getOutputOperandRank"):
        ex.get_output_operand_rank(0)
    for code in (DurationCode.ON_HARDWARE, DurationCode.IN_DRIVER):
        with raises(RC.BAD_STATE, "ANeuralNetworksExecution_getDuration"):
            ex.get_duration(code)
    assert finish()[0] == RC.NO_ERROR
    assert ex.get_output_operand_dimensions(0) == [2]


def embedding_compilation(single: bool = False) -> nnc.Compilation:
    """out = values[lookups]: an index out of range fails in native code (OP_FAILED)."""
    m = nnc.Model()
    lookups = m.add_operand(T.TENSOR_INT32, [2])
    values = m.add_operand(T.TENSOR_FLOAT32, [3, 2])
    out = m.add_operand(T.TENSOR_FLOAT32, [2, 2])
    m.add_operation(Op.EMBEDDING_LOOKUP, [lookups, values], [out])
    m.identify_inputs_and_outputs([lookups, values], [out])
    m.finish()
    return compiled(m, single)


@pytest.fixture(scope="module")
def lookup1() -> nnc.Compilation:
    return embedding_compilation(single=True)


def lookup_execution(c: nnc.Compilation, index: int, out=None) -> nnc.Execution:
    ex = nnc.Execution(c)
    ex.set_input(0, np.array([0, index], np.int32))
    ex.set_input(1, np.arange(6, dtype=np.float32).reshape(3, 2))
    ex.set_output(0, np.zeros((2, 2), np.float32) if out is None else out)
    return ex


@pytest.mark.checklist(105, 107, 138, 165)
@pytest.mark.parametrize("mode", MODES)
def test_failed_computation_has_no_results(lookup1, mode):
    ex = lookup_execution(lookup1, 7)
    ex.set_measure_timing(True)
    assert status(ex, mode) == (RC.OP_FAILED, STATUS_FUNCTION[mode])
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_getOutputOperandDimensions"):
        ex.get_output_operand_dimensions(0)
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_getOutputOperandRank"):
        ex.get_output_operand_rank(0)
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_getDuration"):
        ex.get_duration(DurationCode.ON_HARDWARE)


@pytest.mark.checklist(107)
def test_duration_without_measuring_is_bad_state(comp1):
    ex = bound(comp1)
    ex.compute()
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_getDuration"):
        ex.get_duration(DurationCode.IN_DRIVER)


@pytest.mark.checklist(108)
def test_set_reusable_only_in_preparation(comp):
    ex = bound(comp)
    ex.set_reusable(True)
    ex.set_reusable(False)
    ex.compute()
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_setReusable"):
        ex.set_reusable(True)
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_setReusable"):
        nnc.Execution(comp).set_reusable("yes")


@pytest.mark.checklist(109)
@pytest.mark.parametrize("first", MODES)
@pytest.mark.parametrize("second", MODES)
@pytest.mark.parametrize("reusable", [False, True])
def test_two_computations_at_once_on_one_execution(comp, gate, first, second, reusable):
    ex = bound(comp)
    ex.set_reusable(reusable)
    finish = start_running(ex, first, gate)
    assert status(ex, second) == (RC.BAD_STATE, START_FUNCTION[second])
    assert finish() == (RC.NO_ERROR, "")
    expect = RC.NO_ERROR if reusable else RC.BAD_STATE
    assert status(ex, second)[0] == expect


@pytest.mark.checklist(110)
@pytest.mark.parametrize("mode", MODES)
def test_reusable_execution_computes_again_in_every_mode(comp1, gate, mode):
    x = np.array([1.0, 2.0], np.float32)
    y = np.zeros(2, np.float32)
    ex = nnc.Execution(comp1)
    ex.set_reusable(True)
    ex.set_measure_timing(True)
    ex.set_input(0, x)
    ex.set_input(1, x)
    ex.set_output(0, y)
    gate.release.set()  # first computation runs at once
    assert status(ex, "compute") == (RC.NO_ERROR, "")
    assert y.tolist() == [2.0, 4.0]
    first = ex.get_duration(DurationCode.IN_DRIVER)
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_setInput"):
        ex.set_input(0, x)
    x[:] = [10.0, 20.0]  # the bound buffer is read at each computation
    gate.release.clear()
    gate.entered.clear()
    finish = start_running(ex, mode, gate)
    time.sleep(0.2)  # the second computation is held >= 200 ms
    assert finish() == (RC.NO_ERROR, "")
    assert y.tolist() == [20.0, 40.0]
    assert ex.get_output_operand_dimensions(0) == [2]
    latest = ex.get_duration(DurationCode.IN_DRIVER)
    assert latest >= 200_000_000 > first  # durations describe the latest computation
    assert status(ex, mode) == (RC.NO_ERROR, "")


@pytest.mark.checklist(111)
def test_failed_validation_completes_the_computation(comp):
    """Feature level 5 (Android 12): compute with an unset input is BAD_DATA
    and consumes a non-reusable execution."""
    ex = nnc.Execution(comp)
    ex.set_input(0, X)
    ex.set_output(0, np.zeros(2, np.float32))
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_compute"):
        ex.compute()
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_setInput"):
        ex.set_input(1, X)
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_compute"):
        ex.compute()


@pytest.mark.checklist(112)
@pytest.mark.parametrize("mode", MODES)
def test_closing_a_running_execution_is_deferred(comp, gate, mode):
    y = np.zeros(2, np.float32)
    ex = bound(comp, out=y)
    finish = start_running(ex, mode, gate)
    ex.close()  # refused for now: the computation keeps everything it uses
    ex.close()
    assert ex.state is nnc.execution.State.COMPUTATION
    assert finish() == (RC.NO_ERROR, "")
    assert y.tolist() == [2.0, 4.0]
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_getOutputOperandRank"):
        ex.get_output_operand_rank(0)  # released once the computation ended


# -- section 4.2: binding -------------------------------------------------------------------------------


@pytest.mark.checklist(114)
def test_buffer_length_must_be_exact_without_padding(comp):
    ex = nnc.Execution(comp)
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_setInput"):
        ex.set_input(0, np.zeros(5, np.float32))  # 20 bytes for an 8-byte {2}
    ex.set_input(0, np.zeros(2, np.float32))
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_setOutput"):
        ex.set_output(0, np.zeros(5, np.float32))
    ex.set_output(0, np.zeros(2, np.float32))


@pytest.mark.parametrize("dims", [3, ["a"], [None]], ids=["not-a-list", "not-ints", "none"])
def test_malformed_dimensions_are_bad_data(comp, dims):
    """C116 cannot happen in Python (one list carries its own length, see
    tests/checklist_na.py); what can is a dimensions argument that is not a
    list of ints, which is BAD_DATA in all four set calls."""
    mem, _ = fd_memory()
    ex = nnc.Execution(comp)
    for call, function in [
        (lambda: ex.set_input(0, X, dims), "ANeuralNetworksExecution_setInput"),
        (lambda: ex.set_output(0, np.zeros(2, np.float32), dims), "ANeuralNetworksExecution_setOutput"),
        (lambda: ex.set_input_from_memory(0, mem, 0, 8, dims), "ANeuralNetworksExecution_setInputFromMemory"),
        (lambda: ex.set_output_from_memory(0, mem, 8, 8, dims), "ANeuralNetworksExecution_setOutputFromMemory"),
    ]:
        with raises(RC.BAD_DATA, function):
            call()


@pytest.mark.checklist(117)
def test_binding_twice_is_bad_state(comp):
    mem, _ = fd_memory()
    ex = nnc.Execution(comp)
    ex.set_input(0, X)
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_setInput"):
        ex.set_input(0, X)
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_setInputFromMemory"):
        ex.set_input_from_memory(0, mem, 0, 8)
    ex.set_input_from_memory(1, mem, 0, 8)
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_setInput"):
        ex.set_input(1, X)
    ex.set_output_from_memory(0, mem, 8, 8)
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_setOutput"):
        ex.set_output(0, np.zeros(2, np.float32))
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_setOutputFromMemory"):
        ex.set_output_from_memory(0, mem, 16, 8)
    ex2 = nnc.Execution(comp)
    ex2.set_output(0, np.zeros(2, np.float32))
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_setOutput"):
        ex2.set_output(0, np.zeros(2, np.float32))


@pytest.mark.checklist(118)
def test_non_null_buffer_of_length_zero_is_bad_data():
    c = compiled(add_model(dims=(0,)))  # an output shaped by the computation accepts any size, but not 0
    ex = nnc.Execution(c)
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_setInput"):
        ex.set_input(0, np.zeros(0, np.float32))
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_setOutput"):
        ex.set_output(0, np.zeros(0, np.float32))
    mem, _ = fd_memory()
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_setOutputFromMemory"):
        ex.set_output_from_memory(0, mem, 64, 0)
    ex.set_input(0, None)  # NULL with length 0: omitted
    ex.set_output(0, None)


@pytest.mark.checklist(119)
def test_length_over_4_gib_is_bad_data(comp):
    huge = np.broadcast_to(np.float32(0), (2**30,))  # 4 GiB without allocating them
    ex = nnc.Execution(comp)
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_setInput"):
        ex.set_input(0, huge)
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_setOutput"):
        ex.set_output(0, huge)
    mem, _ = fd_memory()
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_setInputFromMemory"):
        ex.set_input_from_memory(0, mem, 0, 2**32)


@pytest.mark.checklist(120)
def test_execution_dimensions_overflowing_uint32_are_bad_data():
    c = compiled(add_model(dims=(0, 0, 0)))
    ex = nnc.Execution(c)
    dims = [65536, 65536, 2]
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_setInput"):
        ex.set_input(0, np.zeros(4, np.float32), dims)
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_setOutput"):
        ex.set_output(0, np.zeros(4, np.float32), dims)


@pytest.fixture(scope="module")
def dyn() -> nnc.Compilation:
    """ADD on {0, 2} inputs: the first dimension is given at execution."""
    return compiled(add_model(dims=(0, 2)))


@pytest.mark.checklist(121, 122)
def test_input_dimensions_at_execution(dyn):
    mem, _ = fd_memory()
    x = np.ones((3, 2), np.float32)
    for call, function in [
        (lambda ex: ex.set_input(0, x, [0, 2]), "ANeuralNetworksExecution_setInput"),  # still unknown
        (lambda ex: ex.set_input(0, x, []), "ANeuralNetworksExecution_setInput"),  # unknown rank
        (lambda ex: ex.set_input(0, x, [3, 3]), "ANeuralNetworksExecution_setInput"),  # contradicts the model's 2
        (lambda ex: ex.set_input(0, x, [3, 2, 1]), "ANeuralNetworksExecution_setInput"),  # another rank
        # the array's shape as the type: rank 1
        (lambda ex: ex.set_input(0, np.ones((6,), np.float32)), "ANeuralNetworksExecution_setInput"),
        # NULL type: a memory region has no shape
        (lambda ex: ex.set_input_from_memory(0, mem, 0, 24), "ANeuralNetworksExecution_setInputFromMemory"),
        (lambda ex: ex.set_input_from_memory(0, mem, 0, 24, [0, 2]), "ANeuralNetworksExecution_setInputFromMemory"),
        (lambda ex: ex.set_input_from_memory(0, mem, 0, 24, [3, 3]), "ANeuralNetworksExecution_setInputFromMemory"),
    ]:
        with raises(RC.BAD_DATA, function):
            call(nnc.Execution(dyn))
    ex = nnc.Execution(dyn)
    ex.set_input(0, x, [3, 2])
    ex.set_input_from_memory(1, mem, 0, 24, [3, 2])
    # a scalar given dimensions
    c = compiled(add_model(act_input=True))
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_setInput"):
        nnc.Execution(c).set_input(2, np.int32(0), [1])


@pytest.mark.checklist(123)
def test_other_type_properties_must_match(comp):
    ex = nnc.Execution(comp)
    for bad in (np.zeros(2, np.float64), np.zeros(2, np.int32), np.zeros(4, np.float16)):
        with raises(RC.BAD_DATA, "ANeuralNetworksExecution_setInput"):
            ex.set_input(0, bad)
        with raises(RC.BAD_DATA, "ANeuralNetworksExecution_setOutput"):
            ex.set_output(0, bad)


@pytest.mark.checklist(124)
def test_omitted_input(comp, dyn):
    nnc.Execution(comp).set_input(0, None)
    nnc.Execution(comp).set_input(0, None, [2])
    nnc.Execution(dyn).set_input(0, None, [0, 2])  # as specific as the model
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_setInput"):
        nnc.Execution(comp).set_input(0, None, [0])  # less specific than the model's {2}
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_setInput"):
        nnc.Execution(comp).set_input(0, None, [])  # unknown rank


@pytest.mark.checklist(125, 126)
def test_output_dimensions_at_set_time(comp, dyn):
    mem, _ = fd_memory()
    for c, array, dims, function in [
        (comp, np.zeros(2, np.float32), [0], "ANeuralNetworksExecution_setOutput"),  # less specific
        (comp, np.zeros(2, np.float32), [], "ANeuralNetworksExecution_setOutput"),  # unknown rank
        (comp, np.zeros(2, np.float32), [3], "ANeuralNetworksExecution_setOutput"),  # contradicts
        (comp, np.zeros(1, np.float32), None, "ANeuralNetworksExecution_setOutput"),  # smaller
        (comp, np.zeros(3, np.float32), None, "ANeuralNetworksExecution_setOutput"),  # larger
        (dyn, np.zeros(5, np.float32), [3, 2], "ANeuralNetworksExecution_setOutput"),  # full type, wrong size
    ]:
        with raises(RC.BAD_DATA, function):
            nnc.Execution(c).set_output(0, array, dims)
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_setOutputFromMemory"):
        nnc.Execution(comp).set_output_from_memory(0, mem, 0, 12)
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_setOutputFromMemory"):
        nnc.Execution(comp).set_output_from_memory(0, mem, 0, 8, [0])
    # shape decided by the computation: any size at set time (C126)
    for n in (1, 6, 20):
        nnc.Execution(dyn).set_output(0, np.zeros(n, np.float32))
        nnc.Execution(dyn).set_output_from_memory(0, mem, 0, 4 * n)


@pytest.mark.checklist(127)
def test_padding_must_be_enabled_before_binding(comp):
    mem, _ = fd_memory()
    for bind_one, in [
        (lambda ex: ex.set_input(0, X),),
        (lambda ex: ex.set_input_from_memory(0, mem, 0, 8),),
        (lambda ex: ex.set_output(0, np.zeros(2, np.float32)),),
        (lambda ex: ex.set_output_from_memory(0, mem, 8, 8),),
    ]:
        ex = nnc.Execution(comp)
        ex.enable_input_and_output_padding(True)
        bind_one(ex)
        with raises(RC.BAD_STATE, "ANeuralNetworksExecution_enableInputAndOutputPadding"):
            ex.enable_input_and_output_padding(False)


@pytest.mark.checklist(128)
def test_padded_buffers_and_regions(comp):
    mem, peer = fd_memory()
    floats = peer.view(np.float32)
    ex = nnc.Execution(comp)
    ex.enable_input_and_output_padding(True)
    for call, function in [
        (lambda: ex.set_input(0, np.zeros(1, np.float32)), "ANeuralNetworksExecution_setInput"),
        (lambda: ex.set_output(0, np.zeros(1, np.float32)), "ANeuralNetworksExecution_setOutput"),
        (lambda: ex.set_input_from_memory(0, mem, 0, 4), "ANeuralNetworksExecution_setInputFromMemory"),
        (lambda: ex.set_output_from_memory(0, mem, 64, 4), "ANeuralNetworksExecution_setOutputFromMemory"),
    ]:
        with raises(RC.BAD_DATA, function):
            call()
    floats[:16] = [1, 2, 99, 99] + [0] * 12
    y = np.full(4, -1.0, np.float32)
    ex.set_input(0, np.array([5, 6, 7], np.float32))  # longer than {2}: padding
    ex.set_input_from_memory(1, mem, 0, 16)
    ex.set_output(0, y)
    ex.compute()
    assert y.tolist() == [6.0, 8.0, -1.0, -1.0]
    ex = nnc.Execution(comp)
    ex.enable_input_and_output_padding(True)
    ex.set_input(0, X)
    ex.set_input(1, X)
    ex.set_output_from_memory(0, mem, 64, 64)
    ex.compute()
    assert floats[16:19].tolist() == [2.0, 4.0, 0.0]


@pytest.mark.checklist(129, 130)
@pytest.mark.parametrize("io", ["input", "output"])
def test_memory_region_checks(comp, io):
    mem, _ = fd_memory(size=4096, length=20)  # a 20-byte memory
    function = f"ANeuralNetworksExecution_set{io.capitalize()}FromMemory"
    for offset, length in [(0, 20), (24, 8), (16, 8), (0, 0)]:
        ex = nnc.Execution(comp)
        call = ex.set_input_from_memory if io == "input" else ex.set_output_from_memory
        with raises(RC.BAD_DATA, function):
            call(0, mem, offset, length)
    ex = nnc.Execution(comp)
    (ex.set_input_from_memory if io == "input" else ex.set_output_from_memory)(0, mem, 12, 8)


@pytest.mark.checklist(131)
def test_overlapping_outputs_are_bad_data(comp):
    mem, _ = fd_memory()
    x = np.zeros(2, np.float32)
    ex = bound(comp, x=x, out=x)
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_compute"):
        ex.compute()
    ex = nnc.Execution(comp)
    ex.set_input_from_memory(0, mem, 0, 8)
    ex.set_input(1, X)
    ex.set_output_from_memory(0, mem, 4, 8)  # overlaps input 0's region
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_compute"):
        ex.compute()


# -- section 4.3: computing -------------------------------------------------------------------------------


@pytest.mark.checklist(133)
def test_unbound_arguments_are_bad_data(comp):
    for bind_all_but in range(3):
        ex = nnc.Execution(comp)
        if bind_all_but != 0:
            ex.set_input(0, X)
        if bind_all_but != 1:
            ex.set_input(1, X)
        if bind_all_but != 2:
            ex.set_output(0, np.zeros(2, np.float32))
        with raises(RC.BAD_DATA, "ANeuralNetworksExecution_compute"):
            ex.compute()
    ex = nnc.Execution(comp)
    ex.set_input(0, X)
    ex.set_input(1, X)
    ex.set_output(0, None)  # omitted: counts as bound
    ex.compute()
    assert ex.get_output_operand_dimensions(0) == [2]


@pytest.mark.checklist(134)
@pytest.mark.parametrize("mode", MODES)
def test_input_shapes_that_do_not_fit_are_op_failed(dyn, mode):
    ex = nnc.Execution(dyn)
    ex.set_input(0, np.ones((3, 2), np.float32))
    ex.set_input(1, np.ones((4, 2), np.float32))
    ex.set_output(0, np.zeros((4, 2), np.float32), [4, 2])
    assert status(ex, mode) == (RC.OP_FAILED, STATUS_FUNCTION[mode])


@pytest.mark.checklist(135, 138, 165)
@pytest.mark.parametrize("mode", ["compute", "start_compute", "burst"])
def test_output_insufficient_size_reports_shapes(dyn, mode):
    ex = nnc.Execution(dyn)
    x = np.ones((3, 2), np.float32)
    ex.set_input(0, x)
    ex.set_input(1, x)
    ex.set_output(0, np.zeros(4, np.float32))
    with pytest.raises(nnc.OutputInsufficientSizeError) as info:
        if mode == "start_compute":
            ex.start_compute().wait()
        elif mode == "burst":
            ex.burst_compute(nnc.Burst(dyn))
        else:
            ex.compute()
    assert info.value.code == RC.OUTPUT_INSUFFICIENT_SIZE and info.value.function == STATUS_FUNCTION[mode]
    assert info.value.output_shapes == [(3, 2)] and info.value.sufficient == [False]
    dims = ex.get_output_operand_dimensions(0)
    rank = ex.get_output_operand_rank(0)
    assert dims == [3, 2] and dims.code == RC.OUTPUT_INSUFFICIENT_SIZE
    assert rank == 2 and rank.code == RC.OUTPUT_INSUFFICIENT_SIZE


@pytest.mark.checklist(136)
def test_dynamic_output_shape_read_back():
    m = nnc.Model()
    a = m.add_operand(T.TENSOR_FLOAT32, [2, 0])
    perm = m.add_operand(T.TENSOR_INT32, [2])
    m.set_operand_value(perm, np.array([1, 0], np.int32))
    o = m.add_operand(T.TENSOR_FLOAT32, [0, 0])
    m.add_operation(Op.TRANSPOSE, [a, perm], [o])
    m.identify_inputs_and_outputs([a], [o])
    m.finish()
    c = compiled(m)
    value_b = 3
    x = np.arange(2 * value_b, dtype=np.float32).reshape(2, value_b)
    for size in (2 * value_b, 2 * value_b + 5):  # EQUAL and MORE
        y = np.full(size, -1.0, np.float32)
        ex = nnc.Execution(c)
        ex.set_input(0, x, [2, value_b])
        ex.set_output(0, y)
        ex.compute()
        assert ex.get_output_operand_dimensions(0) == [value_b, 2]
        assert ex.get_output_operand_dimensions(0).code == RC.NO_ERROR
        assert y[: 2 * value_b].tolist() == x.T.reshape(-1).tolist()
        assert (y[2 * value_b :] == -1).all()


@pytest.mark.checklist(137)
def test_output_byte_size_overflow_fails():
    c = compiled(add_model(dims=(0, 0)))
    ex = nnc.Execution(c)
    ex.set_input(0, np.ones((65536, 1), np.float32))
    ex.set_input(1, np.ones((1, 65536), np.float32))  # broadcasts to 2**32 elements
    ex.set_output(0, np.zeros(4, np.float32))
    with raises(RC.OP_FAILED, "ANeuralNetworksExecution_compute"):
        ex.compute()


def _fail_in_back_end(monkeypatch, error: type[NNError]):
    def run(self, *args, **kwargs):
        raise error("nnc_run", "injected back-end status")

    monkeypatch.setattr(Executable, "run", run)


@pytest.mark.checklist(138, 165)
@pytest.mark.parametrize("mode", MODES)
def test_back_end_statuses_map_the_same_in_every_mode(comp, lookup1, monkeypatch, mode):
    # general failure: a real one (an index out of range in native code)
    assert status(lookup_execution(lookup1, 9), mode) == (RC.OP_FAILED, STATUS_FUNCTION[mode])
    # invalid argument: outputs overlapping inputs
    x = np.zeros(2, np.float32)
    assert status(bound(comp, x=x, out=x), mode) == (RC.BAD_DATA, STATUS_FUNCTION[mode])
    # device unavailable: nnc's device cannot die, so inject it at the native call
    _fail_in_back_end(monkeypatch, nnc.UnavailableDeviceError)
    assert status(bound(comp), mode) == (RC.UNAVAILABLE_DEVICE, STATUS_FUNCTION[mode])


@pytest.mark.checklist(139)
def test_output_insufficient_size_is_never_retried(dyn, monkeypatch):
    calls = []
    original = Executable.run
    monkeypatch.setattr(Executable, "run", lambda self, *a, **k: calls.append(1) or original(self, *a, **k))
    ex = nnc.Execution(dyn)
    ex.set_input(0, np.ones((3, 2), np.float32))
    ex.set_input(1, np.ones((3, 2), np.float32))
    ex.set_output(0, np.zeros(5, np.float32))
    with raises(RC.OUTPUT_INSUFFICIENT_SIZE, "ANeuralNetworksExecution_compute"):
        ex.compute()
    assert calls == []  # detected before running, and not run again elsewhere
    assert ex.get_output_operand_dimensions(0) == [3, 2]


@pytest.mark.checklist(140)
def test_constants_and_inputs_from_fd_memory():
    fd = os.memfd_create("weights")
    os.write(fd, b"\0" * 4096)
    os.pwrite(fd, np.array([1.5, -2.0], np.float32).tobytes(), 20)
    os.pwrite(fd, np.array([3.0, 0.25], np.float32).tobytes(), 200)
    mem = nnc.Memory.from_fd(4096, mmap.PROT_READ, fd, 0)
    os.close(fd)
    m = nnc.Model()
    a = m.add_operand(T.TENSOR_FLOAT32, [2])
    b = m.add_operand(T.TENSOR_FLOAT32, [2])
    m.set_operand_value_from_memory(b, mem, 20, 8)
    act = m.add_operand(T.INT32)
    m.set_operand_value(act, 0)
    t = m.add_operand(T.TENSOR_FLOAT32, [2])
    m.add_operation(Op.ADD, [a, b, act], [t])
    d = m.add_operand(T.TENSOR_FLOAT32, [2])
    m.set_operand_value_from_memory(d, mem, 200, 8)
    o = m.add_operand(T.TENSOR_FLOAT32, [2])
    m.add_operation(Op.MUL, [t, d, act], [o])
    m.identify_inputs_and_outputs([a], [o])
    m.finish()
    c = compiled(m)
    y = np.zeros(2, np.float32)
    ex = nnc.Execution(c)
    ex.set_input_from_memory(0, mem, 200, 8)  # an execution input from memory too
    ex.set_output(0, y)
    ex.compute()
    assert y.tolist() == [(3.0 + 1.5) * 3.0, (0.25 - 2.0) * 0.25]


@pytest.mark.checklist(141)
def test_one_compilation_serves_executions_one_after_another(comp):
    for k in range(5):
        x = np.array([k, -k], np.float32)
        y = np.zeros(2, np.float32)
        bound(comp, x=x, y=np.ones(2, np.float32), out=y).compute()
        assert y.tolist() == [k + 1.0, 1.0 - k]


# -- section 4.4: timing and timeouts -----------------------------------------------------------------


def _fake_two_devices(model: nnc.Model) -> nnc.Compilation:
    """nnc has one device, so a createForDevices with two cannot be built;
    stand in for it by giving a compilation two device entries."""
    c = compiled(model, single=True)
    c.devices = (c.devices[0], c.devices[0])
    return c


@pytest.mark.checklist(142, 145, 154)
@pytest.mark.parametrize("how", ["create", "two-devices"])
def test_timing_and_timeouts_need_one_device(comp, how):
    c = comp if how == "create" else _fake_two_devices(add_model())
    ex = bound(c)
    for measure in (True, False):
        with raises(RC.BAD_DATA, "ANeuralNetworksExecution_setMeasureTiming"):
            ex.set_measure_timing(measure)
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_setTimeout"):
        ex.set_timeout(10**9)
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_startComputeWithDependencies"):
        ex.start_compute_with_dependencies([], 10**9)
    ex = bound(c)
    ex.start_compute_with_dependencies([], 0).wait()  # duration 0 is allowed


@pytest.mark.checklist(143, 144)
@pytest.mark.parametrize("mode", MODES)
def test_measured_durations(comp1, mode):
    ex = bound(comp1)
    ex.set_measure_timing(True)
    assert status(ex, mode) == (RC.NO_ERROR, "")
    for bad in (-1, 4, "1"):
        with raises(RC.BAD_DATA, "ANeuralNetworksExecution_getDuration"):
            ex.get_duration(bad)
    d = {code: ex.get_duration(code) for code in DurationCode}
    assert all(isinstance(v, int) and 0 < v < 10**11 for v in d.values())
    assert d[DurationCode.ON_HARDWARE] <= d[DurationCode.IN_DRIVER]
    assert d[DurationCode.FENCED_ON_HARDWARE] <= d[DurationCode.FENCED_IN_DRIVER]


@pytest.mark.checklist(146, 162)
@pytest.mark.parametrize("mode", MODES)
def test_execution_timeouts(comp1, mode):
    for timeout, expect in [(1, {RC.MISSED_DEADLINE_TRANSIENT}),
                            (10**9, {RC.NO_ERROR, RC.MISSED_DEADLINE_TRANSIENT, RC.MISSED_DEADLINE_PERSISTENT}),
                            (2**64 - 1, {RC.NO_ERROR}), (0, {RC.NO_ERROR})]:  # fmt: skip
        ex = bound(comp1)
        ex.set_timeout(timeout)
        code, function = status(ex, mode)
        assert code in expect, (timeout, code)
        if code != RC.NO_ERROR:
            assert function == STATUS_FUNCTION[mode]
    for bad in (-1, 2**64, 1.5):
        with raises(RC.BAD_DATA, "ANeuralNetworksExecution_setTimeout"):
            bound(comp1).set_timeout(bad)


@pytest.mark.checklist(146)
def test_missed_deadline_is_the_transient_class(comp1):
    ex = bound(comp1)
    ex.set_timeout(1)
    with pytest.raises(nnc.errors.MissedDeadlineTransientError):
        ex.compute()


@pytest.mark.checklist(148, 150)
def test_loop_timeouts(comp):
    assert nnc.get_default_loop_timeout() == 2_000_000_000
    assert nnc.get_maximum_loop_timeout() == 15_000_000_000
    ex = nnc.Execution(comp)
    assert ex.loop_timeout_ns == 2_000_000_000
    ex.set_loop_timeout(20 * 10**9)  # above the maximum: lowered, not an error
    assert ex.loop_timeout_ns == 15_000_000_000
    ex.set_loop_timeout(2**64 - 1)
    assert ex.loop_timeout_ns == 15_000_000_000
    ex.set_loop_timeout(10**6)
    assert ex.loop_timeout_ns == 10**6
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_setLoopTimeout"):
        ex.set_loop_timeout(-1)


# -- section 4.5: fenced execution ------------------------------------------------------------------------


@pytest.mark.checklist(152)
def test_dependency_list_checks(comp):
    ex = bound(comp)
    with raises(RC.UNEXPECTED_NULL, "ANeuralNetworksExecution_startComputeWithDependencies"):
        ex.start_compute_with_dependencies(None, 0)
    with raises(RC.UNEXPECTED_NULL, "ANeuralNetworksExecution_startComputeWithDependencies"):
        ex.start_compute_with_dependencies([None], 0)
    first = bound(comp).start_compute()
    with raises(RC.UNEXPECTED_NULL, "ANeuralNetworksExecution_startComputeWithDependencies"):
        ex.start_compute_with_dependencies([first, None], 0)
    ex.start_compute_with_dependencies([], 0).wait()  # an empty list is valid
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_startComputeWithDependencies"):
        bound(comp).start_compute_with_dependencies([first, "event"], 0)


@pytest.mark.checklist(153)
def test_fenced_outputs_must_be_fully_specified(dyn):
    ex = nnc.Execution(dyn)
    x = np.ones((3, 2), np.float32)
    ex.set_input(0, x)
    ex.set_input(1, x)
    ex.set_output(0, np.zeros(6, np.float32))  # shape only known from the computation
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_startComputeWithDependencies"):
        ex.start_compute_with_dependencies([], 0)
    ex = nnc.Execution(dyn)
    ex.set_input(0, x)
    ex.set_input(1, x)
    y = np.zeros(6, np.float32)
    ex.set_output(0, y, [3, 2])
    ex.start_compute_with_dependencies([], 0).wait()
    assert (y == 2).all()


@pytest.mark.checklist(155)
def test_failed_fenced_execution_gives_no_event(comp, lookup1):
    failed = lookup_execution(lookup1, 5)
    first = failed.start_compute()
    with pytest.raises(nnc.OpFailedError):
        first.wait()
    ex = bound(comp)
    with raises(RC.OP_FAILED, "ANeuralNetworksExecution_startComputeWithDependencies"):
        ex.start_compute_with_dependencies([first], 0)  # its dependency already failed
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_getOutputOperandDimensions"):
        ex.get_output_operand_dimensions(0)
    with raises(RC.UNEXPECTED_NULL, "ANeuralNetworksEvent_wait"):
        nnc.Event.wait(None)  # what waiting on the NULL event of C means


@pytest.mark.checklist(156)
@pytest.mark.parametrize("fence", ["socket", "pipe", "eventfd"])
def test_fenced_execution_waits_for_a_sync_fence(comp, fence):
    import socket

    if fence == "socket":
        theirs, ours = socket.socketpair()
        fd, signal = theirs.fileno(), lambda: ours.send(b"\0")
    elif fence == "pipe":
        fd, w = os.pipe()
        signal = lambda: os.write(w, b"x")
    else:
        fd = os.eventfd(0)
        signal = lambda: os.eventfd_write(fd, 1)
    dep = nnc.Event.from_sync_fence_fd(fd)
    y = np.zeros(2, np.float32)
    ex = bound(comp, out=y)
    event = ex.start_compute_with_dependencies([dep], 0)
    time.sleep(0.2)
    assert not event.signalled and y.tolist() == [0.0, 0.0]  # held by the fence
    signal()
    event.wait()
    assert y.tolist() == [2.0, 4.0]
    dep.close()
    os.close(fd)
