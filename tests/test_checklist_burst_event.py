"""Checklist sections 5 and 6: ANeuralNetworksBurst_* and ANeuralNetworksEvent_*.

Also the Burst_create items of section 3 (C82, C83).  Helpers come from
test_checklist_execution.
"""

from __future__ import annotations

import gc
import os
import select
import socket
import threading
import time

import numpy as np
import pytest

import nnc
from nnc import DurationCode
from nnc import OperationType as Op
from nnc import ResultCode as RC
from test_checklist_execution import (  # noqa: F401 - fixtures
    X,
    add_model,
    bound,
    comp,
    comp1,
    compiled,
    fd_memory,
    gate,
    lookup1,
    lookup_execution,
    raises,
    start_running,
    status,
)

# -- section 5: bursts ----------------------------------------------------------------------------------


@pytest.mark.checklist(157)
def test_burst_compute_null_arguments(comp):
    with raises(RC.UNEXPECTED_NULL, "ANeuralNetworksExecution_burstCompute"):
        bound(comp).burst_compute(None)
    with raises(RC.UNEXPECTED_NULL, "ANeuralNetworksExecution_burstCompute"):
        nnc.Execution.burst_compute(None, nnc.Burst(comp))


@pytest.mark.checklist(82, 158, 163)
def test_burst_needs_a_finished_compilation():
    c = nnc.Compilation(add_model())
    with raises(RC.BAD_STATE, "ANeuralNetworksBurst_create"):
        nnc.Burst(c)
    with raises(RC.UNEXPECTED_NULL, "ANeuralNetworksBurst_create"):
        nnc.Burst(None)
    with raises(RC.BAD_DATA, "ANeuralNetworksBurst_create"):
        nnc.Burst(add_model())


@pytest.mark.checklist(83)
def test_burst_on_a_failed_compilation(monkeypatch):
    from nnc.passes.lowering import LOWERINGS

    monkeypatch.delitem(LOWERINGS, Op.ADD)  # ADD without a lowering: finish fails
    c = nnc.Compilation(add_model(dims=(5,)))
    with pytest.raises(nnc.UnsupportedOperationError):
        c.finish()
    with raises(RC.BAD_STATE, "ANeuralNetworksBurst_create"):
        nnc.Burst(c)


@pytest.mark.checklist(159)
def test_burst_from_another_compilation(comp):
    model = comp.model
    other = compiled(model)  # same model, another compilation
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_burstCompute"):
        bound(comp).burst_compute(nnc.Burst(other))
    with raises(RC.BAD_DATA, "ANeuralNetworksExecution_burstCompute"):
        bound(comp).burst_compute("burst")


@pytest.mark.checklist(160)
def test_one_computation_at_a_time_on_a_burst(comp, gate):
    burst = nnc.Burst(comp)
    first = bound(comp)
    finish = start_running(first, "burst", gate, burst)
    second = bound(comp)
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_burstCompute"):
        second.burst_compute(burst)
    assert finish() == (RC.NO_ERROR, "")
    third = bound(comp)
    third.burst_compute(burst)  # free again


@pytest.mark.checklist(160)
def test_concurrent_burst_computations_race(comp):
    """Unsynchronised: one of each pair succeeds, the other succeeds or is
    BAD_STATE; nothing else happens and nothing crashes."""
    burst = nnc.Burst(comp)
    for _ in range(20):
        results: list[RC] = []
        outs = [np.zeros(2, np.float32) for _ in range(2)]
        exs = [bound(comp, out=o) for o in outs]
        barrier = threading.Barrier(2)

        def run(ex):
            barrier.wait()  # noqa: B023 - the threads are joined in this iteration
            results.append(status(ex, "burst", burst)[0])  # noqa: B023

        threads = [threading.Thread(target=run, args=(ex,)) for ex in exs]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert RC.NO_ERROR in results and set(results) <= {RC.NO_ERROR, RC.BAD_STATE}
        for r, o in zip(results, outs):
            if r == RC.NO_ERROR:
                assert o.tolist() == [2.0, 4.0]


@pytest.mark.checklist(161)
@pytest.mark.parametrize("order", ["memory-first", "burst-first"])
def test_freeing_memory_and_burst_in_either_order(comp, order):
    mem, peer = fd_memory()
    burst = nnc.Burst(comp)
    ex = nnc.Execution(comp)
    ex.set_input(0, X)
    ex.set_input(1, X)
    ex.set_output_from_memory(0, mem, 0, 8)
    ex.burst_compute(burst)
    assert peer.view(np.float32)[:2].tolist() == [2.0, 4.0]
    first, second = (mem, burst) if order == "memory-first" else (burst, mem)
    first.close()
    second.close()
    del ex
    gc.collect()
    assert peer.view(np.float32)[:2].tolist() == [2.0, 4.0]
    bound(comp).burst_compute(nnc.Burst(comp))  # the runtime is fine afterwards


@pytest.mark.checklist(162)
def test_burst_computed_execution_is_one_shot_unless_reusable(comp1):
    burst = nnc.Burst(comp1)
    ex = bound(comp1)
    ex.burst_compute(burst)
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_burstCompute"):
        ex.burst_compute(burst)
    y = np.zeros(2, np.float32)
    ex = bound(comp1, out=y)
    ex.set_reusable(True)
    ex.set_measure_timing(True)
    for _ in range(3):
        y[:] = 0
        ex.burst_compute(burst)
        assert y.tolist() == [2.0, 4.0]
        assert ex.get_duration(DurationCode.ON_HARDWARE) <= ex.get_duration(DurationCode.IN_DRIVER)
    ex = bound(comp1)
    ex.set_timeout(1)
    with raises(RC.MISSED_DEADLINE_TRANSIENT, "ANeuralNetworksExecution_burstCompute"):
        ex.burst_compute(burst)


@pytest.mark.checklist(163)
def test_closed_burst(comp):
    burst = nnc.Burst(comp)
    with burst:
        bound(comp).burst_compute(burst)
    burst.close()  # twice: harmless
    with raises(RC.BAD_STATE, "ANeuralNetworksExecution_burstCompute"):
        bound(comp).burst_compute(burst)


# -- section 6: events -----------------------------------------------------------------------------------


@pytest.mark.checklist(165)
@pytest.mark.parametrize("mode", ["start_compute", "fenced"])
def test_wait_returns_the_final_status(comp1, lookup1, mode):
    def start(ex):
        return ex.start_compute() if mode == "start_compute" else ex.start_compute_with_dependencies([], 0)

    start(bound(comp1)).wait()  # NO_ERROR: returns
    with raises(RC.OP_FAILED, "ANeuralNetworksEvent_wait") as info:
        start(lookup_execution(lookup1, 3)).wait()
    assert isinstance(info.value.__cause__, nnc.OpFailedError)  # the computation's own error
    ex = bound(comp1)
    ex.set_timeout(1)
    with raises(RC.MISSED_DEADLINE_TRANSIENT, "ANeuralNetworksEvent_wait"):
        start(ex).wait()
    x = np.zeros(2, np.float32)
    with raises(RC.BAD_DATA, "ANeuralNetworksEvent_wait"):
        start(bound(comp1, x=x, out=x)).wait()


@pytest.mark.checklist(7, 165)
def test_many_threads_wait_on_one_event(comp, gate):
    y = np.zeros(2, np.float32)
    ex = bound(comp, out=y)
    event = ex.start_compute()
    assert gate.entered.wait(30)
    seen: list[list[float]] = []
    waiters = [threading.Thread(target=lambda: (event.wait(), seen.append(y.tolist()))) for _ in range(8)]
    for t in waiters:
        t.start()
    time.sleep(0.1)
    assert seen == []  # all blocked
    gate.release.set()
    for t in waiters:
        t.join(30)
    assert seen == [[2.0, 4.0]] * 8


@pytest.mark.checklist(166)
def test_event_from_a_bad_fd(tmp_path):
    for fd in (-1, 0):
        with raises(RC.BAD_DATA, "ANeuralNetworksEvent_createFromSyncFenceFd"):
            nnc.Event.from_sync_fence_fd(fd)
    r, w = os.pipe()
    os.close(r)
    os.close(w)
    with raises(RC.BAD_DATA, "ANeuralNetworksEvent_createFromSyncFenceFd"):
        nnc.Event.from_sync_fence_fd(r)  # not open
    with raises(RC.BAD_DATA, "ANeuralNetworksEvent_createFromSyncFenceFd"):
        nnc.Event.from_sync_fence_fd("3")


@pytest.mark.checklist(168)
def test_sync_fence_fds(comp):
    event = bound(comp).start_compute()
    with raises(RC.BAD_DATA, "ANeuralNetworksEvent_getSyncFenceFd"):
        event.get_sync_fence_fd()  # no fence behind start_compute (Android 12: BAD_DATA)
    event.wait()
    fenced = bound(comp).start_compute_with_dependencies([], 0)
    fd = fenced.get_sync_fence_fd()
    try:
        assert fd >= 0
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        assert poller.poll(30_000), "the fence never became readable"
        with socket.socket(fileno=os.dup(fd)) as s:
            assert s.recv(1, socket.MSG_PEEK) == b"\0"  # NO_ERROR
        fenced.wait()
        again = nnc.Event.from_sync_fence_fd(fd)  # round trip: signalled, NO_ERROR
        again.wait()
    finally:
        os.close(fd)


@pytest.mark.checklist(168, 165)
def test_failed_fenced_status_travels_with_the_fence(lookup1):
    event = lookup_execution(lookup1, 4).start_compute_with_dependencies([], 0)
    fd = event.get_sync_fence_fd()
    try:
        with pytest.raises(nnc.OpFailedError):
            event.wait()
        other = nnc.Event.from_sync_fence_fd(fd)
        with raises(RC.OP_FAILED, "ANeuralNetworksEvent_wait"):
            other.wait()
    finally:
        os.close(fd)


@pytest.mark.checklist(169)
def test_free_waits_for_the_computation(comp, gate):
    y = np.zeros(2, np.float32)
    event = bound(comp, out=y).start_compute()
    assert gate.entered.wait(30)
    closed = threading.Event()
    t = threading.Thread(target=lambda: (event.close(), closed.set()))
    t.start()
    assert not closed.wait(0.2)  # still waiting for the computation
    gate.release.set()
    assert closed.wait(30)
    assert y.tolist() == [2.0, 4.0]
    event.close()  # twice: harmless
    with raises(RC.BAD_STATE, "ANeuralNetworksEvent_wait"):
        event.wait()


@pytest.mark.checklist(169)
def test_event_owns_a_duplicate_of_the_fence_fd():
    r, w = os.pipe()
    event = nnc.Event.from_sync_fence_fd(r)
    os.close(r)  # the caller's fd: the event has its own
    assert not event.signalled
    os.write(w, b"x")
    event.wait()
    fd = event.get_sync_fence_fd()  # a new duplicate the caller owns
    os.close(fd)
    os.close(w)
    event.wait()  # the event's own fd is unaffected by both closes
    event.close()


@pytest.mark.checklist(170)
def test_event_as_context_manager_and_dropped_events(comp, gate):
    y = np.zeros(2, np.float32)
    ex = bound(comp, out=y)
    with ex.start_compute() as event:
        assert not event.signalled
        gate.release.set()
    assert event.signalled and y.tolist() == [2.0, 4.0]  # __exit__ waited
    # An event dropped unwaited: the computation keeps what it needs and completes.
    z = np.zeros(2, np.float32)
    ex2 = bound(comp, out=z)
    ex2.start_compute()
    gc.collect()
    deadline = time.monotonic() + 30
    while ex2.state is not nnc.execution.State.COMPLETED and time.monotonic() < deadline:
        time.sleep(0.01)
    assert z.tolist() == [2.0, 4.0]
