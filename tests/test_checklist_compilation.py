"""Checklist section 3 (Compilation, C79-C99) and the Compilation part of
section 1 (C2-C6).  Python spellings as in test_checklist_model.py:
``nnc.Compilation.finish(None)`` is ``ANeuralNetworksCompilation_finish(NULL)``.
"""

from __future__ import annotations

import gc
import threading
import time
import weakref

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc import ResultCode as RC
from nnc.compilation import PriorityGate
from nnc.enums import UINT64_MAX
from test_checklist_model import (
    F32,
    Case,
    add_model,
    compute,
    cpu,
    raises,
    run_case,
)

CREATE = "ANeuralNetworksCompilation_create"
FOR_DEVICES = "ANeuralNetworksCompilation_createForDevices"
PREFERENCE = "ANeuralNetworksCompilation_setPreference"
PRIORITY = "ANeuralNetworksCompilation_setPriority"
TIMEOUT = "ANeuralNetworksCompilation_setTimeout"
CACHING = "ANeuralNetworksCompilation_setCaching"
FINISH = "ANeuralNetworksCompilation_finish"
EXECUTION_CREATE = "ANeuralNetworksExecution_create"
BURST_CREATE = "ANeuralNetworksBurst_create"
ALIGN_IN = "ANeuralNetworksCompilation_getPreferredMemoryAlignmentForInput"
ALIGN_OUT = "ANeuralNetworksCompilation_getPreferredMemoryAlignmentForOutput"
PAD_IN = "ANeuralNetworksCompilation_getPreferredMemoryPaddingForInput"
PAD_OUT = "ANeuralNetworksCompilation_getPreferredMemoryPaddingForOutput"
TOKEN = bytes(range(32))


def created(finish: bool = False) -> nnc.Compilation:
    c = nnc.Compilation(add_model())
    if finish:
        c.finish()
    return c


def for_cpu(finish: bool = False, model: nnc.Model | None = None) -> nnc.Compilation:
    c = nnc.Compilation.for_devices(model or add_model(), [cpu()])
    if finish:
        c.finish()
    return c


def unsupported_model() -> nnc.Model:
    """OEM_OPERATION: valid NNAPI (a vendor's operation) that nnc's CPU
    device, like Android's CPU implementation, does not implement."""
    m = nnc.Model()
    x = m.add_operand(T.TENSOR_FLOAT32, [3, 2])
    out = m.add_operand(T.TENSOR_FLOAT32, [3, 2])
    m.add_operation(Op.OEM_OPERATION, [x], [out])
    m.identify_inputs_and_outputs([x], [out])
    m.finish()
    return m


def failed(kind: str = "for_devices") -> nnc.Compilation:
    """A compilation whose finish failed (FINISHED-FAILED)."""
    if kind == "for_devices":
        c = nnc.Compilation.for_devices(unsupported_model(), [cpu()])
        with raises(RC.BAD_DATA, FINISH):
            c.finish()
    else:
        c = nnc.Compilation(unsupported_model())
        with raises(RC.OP_FAILED, FINISH):
            c.finish()
    return c


@pytest.fixture
def two_devices(monkeypatch):
    """Offer a second device (a stand-in that supports only RELU) next to
    nnc-cpu, to exercise the rules that need more than one device."""
    from nnc import device as device_mod

    other = device_mod.DeviceInfo(
        name="test-relu",
        type=nnc.DeviceType.ACCELERATOR,
        feature_level=nnc.FeatureLevel.LEVEL_1,
        version=lambda: "1",
        cache_files=lambda: (0, 0),
        unsupported_reason=lambda call: None if call.type == Op.RELU else "only RELU",
        preferred_memory_alignment=128,
        preferred_memory_padding=16,
    )
    devices = device_mod.admit([device_mod.CPU, other])
    monkeypatch.setattr(device_mod, "_DEVICES", (device_mod._DEVICES[0], devices[1]))
    return device_mod._DEVICES


# -- the state machine (C79-C84) -------------------------------------------------------------------------

_SETTERS = {
    "setPreference": (PREFERENCE, lambda c: c.set_preference(nnc.Preference.LOW_POWER)),
    "setPriority": (PRIORITY, lambda c: c.set_priority(nnc.Priority.HIGH)),
    "setTimeout": (TIMEOUT, lambda c: c.set_timeout(1_000_000)),
    "setCaching": (CACHING, lambda c: c.set_caching("/nonexistent", TOKEN)),
    "finish": (FINISH, lambda c: c.finish()),
}

STATE_CASES = [
    *(Case(f"{kind}-finished-{name}", (79,), (lambda a=act, k=kind: a(created(True) if k == "create" else for_cpu(True))),
           RC.BAD_STATE, fn)
      for kind in ("create", "for_devices") for name, (fn, act) in _SETTERS.items()),
    *(Case(f"failed-{name}", (79, 81), (lambda a=act: a(failed())), RC.BAD_STATE, fn)
      for name, (fn, act) in _SETTERS.items()),
    Case("execution-of-unfinished", (80,), lambda: nnc.Execution(created()), RC.BAD_STATE, EXECUTION_CREATE),
    Case("execution-of-unfinished-for_devices", (80,), lambda: nnc.Execution(for_cpu()), RC.BAD_STATE, EXECUTION_CREATE),
    Case("execution-of-null", (80,), lambda: nnc.Execution(None), RC.UNEXPECTED_NULL, EXECUTION_CREATE),
    Case("execution-of-failed", (81,), lambda: nnc.Execution(failed()), RC.BAD_STATE, EXECUTION_CREATE),
    Case("execution-of-failed-create", (81,), lambda: nnc.Execution(failed("create")), RC.BAD_STATE, EXECUTION_CREATE),
    Case("burst-of-unfinished", (82,), lambda: nnc.Burst(created()), RC.BAD_STATE, BURST_CREATE),
    Case("burst-of-unfinished-for_devices", (82,), lambda: nnc.Burst(for_cpu()), RC.BAD_STATE, BURST_CREATE),
    Case("burst-of-failed", (83,), lambda: nnc.Burst(failed()), RC.BAD_STATE, BURST_CREATE),
    Case("burst-of-null", (83,), lambda: nnc.Burst(None), RC.UNEXPECTED_NULL, BURST_CREATE),
]  # fmt: skip


@pytest.mark.parametrize("case", [c.param() for c in STATE_CASES])
def test_state_machine(case: Case) -> None:
    """Setters only while UNFINISHED (the state is checked before the data:
    setTimeout on a Compilation(model) is BAD_STATE once finished, not
    BAD_DATA); consumers need FINISHED-OK."""
    run_case(case)


@pytest.mark.checklist(84)
def test_executions_keep_their_compilation_alive() -> None:
    """An execution holds its compilation (and so the model): dropping every
    other reference does not free them under it (C84)."""
    c = created(True)
    ex = nnc.Execution(c)
    ref = weakref.ref(c)
    model_ref = weakref.ref(c.model)
    del c
    gc.collect()
    assert ref() is not None and model_ref() is not None
    x = np.array([1.0, 2.0], np.float32)
    y = np.zeros(2, np.float32)
    ex.set_input(0, x)
    ex.set_input(1, x)
    ex.set_output(0, y)
    ex.compute()
    np.testing.assert_array_equal(y, 2 * x)


# -- creation (C85-C87) ---------------------------------------------------------------------------------

CREATE_CASES = [
    Case("null-model", (85,), lambda: nnc.Compilation.for_devices(None, [cpu()]), RC.UNEXPECTED_NULL, FOR_DEVICES),
    Case("null-device-list", (85,), lambda: nnc.Compilation.for_devices(add_model(), None), RC.UNEXPECTED_NULL,
         FOR_DEVICES),
    Case("empty-device-list", (85,), lambda: nnc.Compilation.for_devices(add_model(), []), RC.BAD_DATA, FOR_DEVICES),
    Case("same-device-twice", (85,), lambda: nnc.Compilation.for_devices(add_model(), [cpu(), cpu()]), RC.BAD_DATA,
         FOR_DEVICES),
    Case("null-device", (85,), lambda: nnc.Compilation.for_devices(add_model(), [None]), RC.UNEXPECTED_NULL,
         FOR_DEVICES),
    Case("null-device-second", (85,), lambda: nnc.Compilation.for_devices(add_model(), [cpu(), None]),
         RC.UNEXPECTED_NULL, FOR_DEVICES),
    Case("foreign-device-object", (86,), lambda: nnc.Compilation.for_devices(
        add_model(), [nnc.Device(cpu()._info, (1, 1))]), RC.BAD_DATA, FOR_DEVICES),
    Case("device-name-not-handle", (86,), lambda: nnc.Compilation.for_devices(add_model(), ["nnc-cpu"]),
         RC.BAD_DATA, FOR_DEVICES),
    Case("devices-not-a-list", (86,), lambda: nnc.Compilation.for_devices(add_model(), cpu()), RC.BAD_DATA,
         FOR_DEVICES),
    Case("unfinished-model", (85, 19), lambda: nnc.Compilation.for_devices(add_model(finish=False), [cpu()]),
         RC.BAD_STATE, FOR_DEVICES),
    Case("device-checks-before-model-state", (85,), lambda: nnc.Compilation.for_devices(add_model(finish=False), []),
         RC.BAD_DATA, FOR_DEVICES),
    Case("not-a-model", (85,), lambda: nnc.Compilation("model"), RC.BAD_DATA, CREATE),
]  # fmt: skip


@pytest.mark.parametrize("case", [c.param() for c in CREATE_CASES])
def test_create_for_devices_rejected(case: Case) -> None:
    run_case(case)


@pytest.mark.checklist(85)
def test_devices_attribute() -> None:
    assert created().devices is None
    assert for_cpu().devices == (cpu(),)
    assert nnc.Compilation.for_devices(add_model(), nnc.get_devices()).devices == nnc.get_devices()


@pytest.mark.checklist(87)
def test_for_devices_has_no_fallback() -> None:
    """An operation the chosen device does not support fails finish with
    BAD_DATA (never NO_ERROR), naming the operation; Compilation(model)
    reports the same model as UnsupportedOperationError (OP_FAILED)."""
    c = nnc.Compilation.for_devices(unsupported_model(), [cpu()])
    with raises(RC.BAD_DATA, FINISH) as info:
        c.finish()
    assert "OEM_OPERATION" in str(info.value) and "nnc-cpu" in str(info.value)
    assert isinstance(info.value.__cause__, nnc.UnsupportedOperationError)
    with raises(RC.OP_FAILED, FINISH):
        nnc.Compilation(unsupported_model()).finish()
    np.testing.assert_array_equal(compute(for_cpu(True), np.ones(2, np.float32), np.ones(2, np.float32)), [2, 2])


@pytest.mark.checklist(87)
def test_for_devices_uses_only_the_chosen_devices(two_devices) -> None:
    """A device that cannot run ADD fails the ADD model even though nnc-cpu
    could: no fallback; a model of RELU only is fine for it."""
    other = two_devices[1]
    assert add_model().get_supported_operations_for_devices([other]) == [False]
    assert add_model().get_supported_operations_for_devices([other, two_devices[0]]) == [True]
    with raises(RC.BAD_DATA, FINISH):
        nnc.Compilation.for_devices(add_model(), [other]).finish()


# -- setters (C90-C95) -----------------------------------------------------------------------------------

SETTER_CASES = [
    *(Case(f"preference-{v!r}", (90,), (lambda v=v: created().set_preference(v)), RC.BAD_DATA, PREFERENCE)
      for v in (40, 3, -1, None, "fast", 1.5)),
    *(Case(f"priority-{v!r}", (91,), (lambda v=v: created().set_priority(v)), RC.BAD_DATA, PRIORITY)
      for v in (0, 89, 91, 99, 101, 109, 111, None)),
    Case("preference-null-compilation", (90, 2), lambda: nnc.Compilation.set_preference(None, 1),
         RC.UNEXPECTED_NULL, PREFERENCE),
    Case("priority-null-compilation", (91, 2), lambda: nnc.Compilation.set_priority(None, 100),
         RC.UNEXPECTED_NULL, PRIORITY),
    Case("timeout-null-compilation", (92, 2), lambda: nnc.Compilation.set_timeout(None, 1), RC.UNEXPECTED_NULL, TIMEOUT),
    Case("timeout-on-create", (92,), lambda: created().set_timeout(1_000_000), RC.BAD_DATA, TIMEOUT),
    Case("timeout-zero-on-create", (92,), lambda: created().set_timeout(0), RC.BAD_DATA, TIMEOUT),
    Case("timeout-negative", (94,), lambda: for_cpu().set_timeout(-1), RC.BAD_DATA, TIMEOUT),
    Case("timeout-over-uint64", (94,), lambda: for_cpu().set_timeout(UINT64_MAX + 1), RC.BAD_DATA, TIMEOUT),
    Case("timeout-not-an-int", (94,), lambda: for_cpu().set_timeout(1.5), RC.BAD_DATA, TIMEOUT),
    Case("caching-null-compilation", (95, 2), lambda: nnc.Compilation.set_caching(None, "/tmp", TOKEN),
         RC.UNEXPECTED_NULL, CACHING),
    Case("caching-null-directory", (95,), lambda: created().set_caching(None, TOKEN), RC.UNEXPECTED_NULL, CACHING),
    Case("caching-null-token", (95,), lambda: created().set_caching("/tmp", None), RC.UNEXPECTED_NULL, CACHING),
    Case("caching-null-token-finished", (95, 2), lambda: created(True).set_caching("/tmp", None),
         RC.UNEXPECTED_NULL, CACHING),
    Case("finish-null-compilation", (79, 2), lambda: nnc.Compilation.finish(None), RC.UNEXPECTED_NULL, FINISH),
]  # fmt: skip


@pytest.mark.parametrize("case", [c.param() for c in SETTER_CASES])
def test_setters_rejected(case: Case) -> None:
    run_case(case)


@pytest.mark.checklist(90, 91, 6)
def test_setters_accept_valid_values_after_rejections() -> None:
    c = created()
    for v in (0, 1, 2):
        c.set_preference(v)
        assert c.preference == v
    with raises(RC.BAD_DATA, PRIORITY):
        c.set_priority(95)
    for v in (90, 100, 110, nnc.Priority.DEFAULT):
        c.set_priority(v)
        assert c.priority == v
    c.finish()


@pytest.mark.checklist(92)
def test_timeout_needs_exactly_one_device(two_devices) -> None:
    both = nnc.Compilation.for_devices(add_model(), list(two_devices))
    with raises(RC.BAD_DATA, TIMEOUT):
        both.set_timeout(1_000_000_000)
    one = nnc.Compilation.for_devices(add_model(), [two_devices[0]])
    one.set_timeout(1_000_000_000)


def _fresh_model() -> nnc.Model:
    """A model the in-process code cache has not seen (unique shape), so
    finish really runs the compiler."""
    _fresh_model.n += 1
    return add_model(dims=(3, _fresh_model.n + 100))


_fresh_model.n = 0


@pytest.mark.checklist(93)
def test_timeout_of_one_second() -> None:
    """finish returns NO_ERROR or MISSED_DEADLINE_*, nothing else."""
    c = nnc.Compilation.for_devices(_fresh_model(), [cpu()])
    c.set_timeout(1_000_000_000)
    try:
        c.finish()
    except nnc.MissedDeadlineError as e:
        assert e.code in (RC.MISSED_DEADLINE_TRANSIENT, RC.MISSED_DEADLINE_PERSISTENT)
        assert e.function == FINISH
    else:
        assert c.finished


@pytest.mark.checklist(93)
def test_missed_compilation_deadline() -> None:
    """A deadline that has passed before compiling: MISSED_DEADLINE_PERSISTENT,
    and the compilation is FINISHED-FAILED."""
    c = nnc.Compilation.for_devices(_fresh_model(), [cpu()])
    c.set_timeout(1)
    with raises(RC.MISSED_DEADLINE_PERSISTENT, FINISH):
        c.finish()
    assert c.failed
    with raises(RC.BAD_STATE, EXECUTION_CREATE):
        nnc.Execution(c)
    with raises(RC.BAD_STATE, FINISH):
        c.finish()


@pytest.mark.checklist(93)
def test_deadline_checked_when_compiler_returns(monkeypatch) -> None:
    """A compiler run is not interrupted, but one that ends past the deadline
    fails finish with MISSED_DEADLINE_PERSISTENT."""
    import nnc.compilation as comp_mod

    real = comp_mod.Compilation._compile

    def slow(self, *a, **k):
        exe = real(self, *a, **k)
        time.sleep(0.3)
        return exe

    monkeypatch.setattr(comp_mod.Compilation, "_compile", slow)
    c = nnc.Compilation.for_devices(_fresh_model(), [cpu()])
    c.set_timeout(200_000_000)
    with raises(RC.MISSED_DEADLINE_PERSISTENT, FINISH):
        c.finish()


@pytest.mark.checklist(94)
@pytest.mark.parametrize("timeout", [UINT64_MAX, 0], ids=["uint64-max", "zero-is-infinite"])
def test_huge_or_zero_timeout_never_misses(timeout) -> None:
    c = nnc.Compilation.for_devices(_fresh_model(), [cpu()])
    c.set_timeout(timeout)
    c.finish()
    assert c.finished


def test_priority_orders_waiting_compilations() -> None:
    """Priority is honoured: with the compiler busy, waiting compilations are
    admitted HIGH first, then MEDIUM, then LOW (first come, first served
    within a priority)."""
    gate = PriorityGate(1)
    order: list[str] = []
    hold = threading.Event()

    def holder():
        with gate.admit(nnc.Priority.MEDIUM, None, FINISH):
            hold.wait(10)

    def waiter(name: str, priority: int):
        with gate.admit(priority, None, FINISH):
            order.append(name)

    first = threading.Thread(target=holder)
    first.start()
    while gate.waiting() or gate._running == 0:
        time.sleep(0.001)
    threads = []
    for name, p in (("low", 90), ("medium", 100), ("high-1", 110), ("high-2", 110)):
        t = threading.Thread(target=waiter, args=(name, p))
        t.start()
        threads.append(t)
        while gate.waiting() < len(threads):
            time.sleep(0.001)
    hold.set()
    for t in [first, *threads]:
        t.join(10)
    assert order == ["high-1", "high-2", "medium", "low"]


def test_deadline_expires_while_waiting_for_the_compiler() -> None:
    """The deadline covers the wait for the compiler."""
    from nnc.compilation import Deadline

    gate = PriorityGate(1)
    with gate.admit(100, None, FINISH):
        with raises(RC.MISSED_DEADLINE_PERSISTENT, FINISH):
            with gate.admit(110, Deadline.after(50_000_000), FINISH):
                pass
    assert gate.waiting() == 0
    with gate.admit(90, Deadline.after(50_000_000), FINISH):
        pass


# -- preferred alignment and padding (C96-C99) -------------------------------------------------------------

_GETTERS = {
    ALIGN_IN: lambda c, i: c.get_preferred_memory_alignment_for_input(i),
    ALIGN_OUT: lambda c, i: c.get_preferred_memory_alignment_for_output(i),
    PAD_IN: lambda c, i: c.get_preferred_memory_padding_for_input(i),
    PAD_OUT: lambda c, i: c.get_preferred_memory_padding_for_output(i),
}
_SHORT = {ALIGN_IN: "align-in", ALIGN_OUT: "align-out", PAD_IN: "pad-in", PAD_OUT: "pad-out"}
_UNBOUND = {
    ALIGN_IN: nnc.Compilation.get_preferred_memory_alignment_for_input,
    ALIGN_OUT: nnc.Compilation.get_preferred_memory_alignment_for_output,
    PAD_IN: nnc.Compilation.get_preferred_memory_padding_for_input,
    PAD_OUT: nnc.Compilation.get_preferred_memory_padding_for_output,
}

PREFERRED_CASES = [
    *(Case(f"{_SHORT[fn]}-unfinished", (96,), (lambda g=g: g(created(), 0)), RC.BAD_STATE, fn)
      for fn, g in _GETTERS.items()),
    *(Case(f"{_SHORT[fn]}-unfinished-bad-index", (96,), (lambda g=g: g(created(), 1000)), RC.BAD_STATE, fn)
      for fn, g in _GETTERS.items()),
    *(Case(f"{_SHORT[fn]}-index-1000", (97,), (lambda g=g: g(created(True), 1000)), RC.BAD_DATA, fn)
      for fn, g in _GETTERS.items()),
    *(Case(f"{_SHORT[fn]}-index-minus-1", (97, 5), (lambda g=g: g(created(True), -1)), RC.BAD_DATA, fn)
      for fn, g in _GETTERS.items()),
    *(Case(f"{_SHORT[fn]}-null", (97, 2), (lambda u=u: u(None, 0)), RC.UNEXPECTED_NULL, fn)
      for fn, u in _UNBOUND.items()),
    *(Case(f"{_SHORT[fn]}-failed", (98,), (lambda g=g: g(failed(), 0)), RC.BAD_STATE, fn)
      for fn, g in _GETTERS.items()),
]  # fmt: skip


@pytest.mark.parametrize("case", [c.param() for c in PREFERRED_CASES])
def test_preferred_alignment_and_padding_rejected(case: Case) -> None:
    run_case(case)


@pytest.mark.checklist(97, 99)
@pytest.mark.parametrize("make", [lambda: created(True), lambda: for_cpu(True)], ids=["create", "for_devices"])
def test_preferred_values_are_powers_of_two(make) -> None:
    c = make()
    values = [g(c, i) for g in _GETTERS.values() for i in (0, 1) if not (g in (_GETTERS[ALIGN_OUT], _GETTERS[PAD_OUT])
                                                                          and i == 1)]
    assert values and all(v > 0 and v & (v - 1) == 0 for v in values), values
    assert c.get_preferred_memory_alignment_for_input(0) == cpu().preferred_memory_alignment == 64


@pytest.mark.checklist(99)
def test_preferred_values_over_several_devices(two_devices) -> None:
    """With several devices the largest preference wins; still powers of 2."""
    m = nnc.Model()
    a = m.add_operand(F32, [2])
    o = m.add_operand(F32, [2])
    m.add_operation(Op.RELU, [a], [o])
    m.identify_inputs_and_outputs([a], [o])
    m.finish()
    c = nnc.Compilation.for_devices(m, list(two_devices))
    c.finish()
    assert c.get_preferred_memory_alignment_for_input(0) == 128
    assert c.get_preferred_memory_padding_for_output(0) == 64


# -- section 1 for the compilation --------------------------------------------------------------------------


@pytest.mark.checklist(3, 4)
def test_close_is_harmless() -> None:
    """Compilation_free(NULL) does nothing; closing twice, or an unfinished
    compilation from either constructor, never fails; a closed compilation
    refuses further calls with BAD_STATE; an execution made before keeps
    working."""
    nnc.Compilation.close(None)
    for c in (created(), for_cpu()):
        c.close()
        c.close()
        with raises(RC.BAD_STATE, FINISH):
            c.finish()
    with for_cpu() as c:
        c.set_preference(0)
    done = created(True)
    ex = nnc.Execution(done)
    done.close()
    with raises(RC.BAD_STATE, ALIGN_IN):
        done.get_preferred_memory_alignment_for_input(0)
    x = np.ones(2, np.float32)
    y = np.zeros(2, np.float32)
    ex.set_input(0, x)
    ex.set_input(1, x)
    ex.set_output(0, y)
    ex.compute()
    np.testing.assert_array_equal(y, [2, 2])


@pytest.mark.checklist(1)
def test_every_error_is_a_failure_of_its_class() -> None:
    from test_checklist_model import check_error

    for case in [*STATE_CASES, *CREATE_CASES, *SETTER_CASES, *PREFERRED_CASES]:
        with pytest.raises(nnc.NNError) as info:
            case.act()
        check_error(info.value, case.code, case.function)


@pytest.mark.checklist(6)
def test_rejected_setters_leave_the_compilation_unchanged(tmp_path) -> None:
    c = for_cpu()
    for bad in (lambda: c.set_preference(7), lambda: c.set_priority(1), lambda: c.set_timeout(-5),
                lambda: c.set_caching(tmp_path, b"short"), lambda: c.set_caching(tmp_path, "x" * 32)):
        with pytest.raises(nnc.BadDataError):
            bad()
    assert (c.preference, c.priority, c.timeout_ns, c.cache_dir) == (1, 100, 0, None)
    c.set_caching(tmp_path, TOKEN)
    c.finish()
    np.testing.assert_array_equal(compute(c, np.ones(2, np.float32), np.ones(2, np.float32)), [2, 2])

