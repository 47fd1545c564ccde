"""Thread safety (checklist C7): one compilation, many executions on many threads.

The native code of a compiled variant is shared by every execution; each
native call gets its own scratch arena (or its burst's), and LLVM work is
serialised (see nnc.runtime.executable).  These tests run real concurrent
computations and check every single output.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc import ResultCode as RC
from test_checklist_execution import MODES, add_model, bound, compiled, status

THREADS = 8
RUNS = 200
N = 1 << 16


def squares_model(n: int = N) -> nnc.Model:
    """(a + b) * (a - b), the sum copied by a (1-D, identity) TRANSPOSE: the
    sum and its copy are temporaries in the scratch arena (element-wise
    fusion computes SUB inside MUL's loop, but cannot see through the copy)."""
    m = nnc.Model()
    a = m.add_operand(T.TENSOR_FLOAT32, [n])
    b = m.add_operand(T.TENSOR_FLOAT32, [n])
    act = m.add_operand(T.INT32)
    m.set_operand_value(act, 0)
    perm = m.add_operand(T.TENSOR_INT32, [1])
    m.set_operand_value(perm, np.array([0], np.int32))
    s = m.add_operand(T.TENSOR_FLOAT32, [n])
    s2 = m.add_operand(T.TENSOR_FLOAT32, [n])
    d = m.add_operand(T.TENSOR_FLOAT32, [n])
    o = m.add_operand(T.TENSOR_FLOAT32, [n])
    m.add_operation(Op.ADD, [a, b, act], [s])
    m.add_operation(Op.TRANSPOSE, [s, perm], [s2])
    m.add_operation(Op.SUB, [a, b, act], [d])
    m.add_operation(Op.MUL, [s2, d, act], [o])
    m.identify_inputs_and_outputs([a, b], [o])
    m.finish()
    return m


def run_threads(target, count: int) -> list[BaseException]:
    errors: list[BaseException] = []
    barrier = threading.Barrier(count)

    def wrapped(k: int) -> None:
        try:
            barrier.wait()
            target(k)
        except BaseException as e:  # noqa: BLE001 - reported by the test
            errors.append(e)

    threads = [threading.Thread(target=wrapped, args=(k,)) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    return errors


@pytest.mark.checklist(7, 141)
def test_one_compilation_many_threads_every_output_checked():
    c = compiled(squares_model())
    assert c.executable([i.info() for i in (c.model.operands[k] for k in c.model.inputs)], "test").arena_size > 0
    wrong: list[tuple[int, int]] = []
    count = [0] * THREADS

    def worker(k: int) -> None:
        rng = np.random.default_rng(k)
        burst = nnc.Burst(c)
        for i in range(RUNS):
            a = rng.standard_normal(N).astype(np.float32)
            b = rng.standard_normal(N).astype(np.float32)
            y = np.full(N, np.nan, np.float32)
            ex = nnc.Execution(c)
            ex.set_input(0, a)
            ex.set_input(1, b)
            ex.set_output(0, y)
            mode = MODES[(k + i) % len(MODES)]
            assert status(ex, mode, burst) == (RC.NO_ERROR, ""), mode
            if not np.array_equal(y, (a + b) * (a - b)):
                wrong.append((k, i))
            count[k] += 1

    errors = run_threads(worker, THREADS)
    assert not errors, errors[0]
    assert wrong == []
    assert count == [RUNS] * THREADS


@pytest.mark.checklist(7)
def test_variants_compiled_concurrently():
    """Threads needing different input-shape variants of one compilation, and
    other compilations finishing at the same time: LLVM runs one at a time,
    each variant is compiled once and every result is right."""
    c = compiled(add_model(dims=(0, 3)))
    rows = [1, 2, 3, 4]

    def worker(k: int) -> None:
        if k >= len(rows):  # meanwhile, unrelated compilations
            other = compiled(add_model(dims=(k + 5,)))
            x = np.arange(k + 5, dtype=np.float32)
            y = np.zeros(k + 5, np.float32)
            bound(other, x=x, y=x, out=y).compute()
            assert (y == 2 * x).all()
            return
        for _ in range(3):
            x = np.arange(rows[k] * 3, dtype=np.float32).reshape(rows[k], 3)
            y = np.zeros((rows[k], 3), np.float32)
            ex = nnc.Execution(c)
            ex.set_input(0, x)
            ex.set_input(1, x)
            ex.set_output(0, y)
            ex.compute()
            assert (y == 2 * x).all()

    errors = run_threads(worker, 6)
    assert not errors, errors[0]
    assert len(c._variants) == len(rows)


@pytest.mark.checklist(7, 109)
@pytest.mark.parametrize("reusable", [False, True])
def test_racing_computations_on_one_execution(reusable):
    """Unsynchronised: two threads compute one execution at once.  Non-reusable:
    exactly one succeeds and the other is BAD_STATE; reusable: at least one
    succeeds and the other succeeds or is BAD_STATE.  Never anything else."""
    c = compiled(squares_model())
    a = np.arange(N, dtype=np.float32)
    b = np.ones(N, np.float32)
    for trial in range(40):
        y = np.zeros(N, np.float32)
        ex = nnc.Execution(c)
        ex.set_reusable(reusable)
        ex.set_input(0, a)
        ex.set_input(1, b)
        ex.set_output(0, y)
        results: list[RC] = [RC.NO_ERROR] * 2
        modes = (MODES[trial % 4], MODES[(trial // 4) % 4])

        def worker(k: int) -> None:
            results[k] = status(ex, modes[k])[0]  # noqa: B023 - the threads end in this iteration

        assert not run_threads(worker, 2)
        assert set(results) <= {RC.NO_ERROR, RC.BAD_STATE} and RC.NO_ERROR in results
        if not reusable:
            assert sorted(results) == [RC.NO_ERROR, RC.BAD_STATE]
        assert np.array_equal(y, (a + b) * (a - b))
