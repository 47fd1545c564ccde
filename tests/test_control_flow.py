"""IF and WHILE compiled to native control flow, and the WHILE loop timeout.

Expected values come from the same computation written in Python.  The loop
timeout tests run a loop whose condition never becomes false (C149) in every
computation mode (C151); the C test calls a native artifact's
``nnc_run_with_loop_timeout`` directly.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc import driver
from nnc.enums import DEFAULT_LOOP_TIMEOUT_NS, MAXIMUM_LOOP_TIMEOUT_NS

I32 = np.int32
_COMPUTE = "ANeuralNetworksExecution_compute"


# -- model builders ---------------------------------------------------------------------------------


def _scalar(m: nnc.Model, t: T, value) -> int:
    i = m.add_operand(t)
    m.set_operand_value(i, value)
    return i


def _tensor(m: nnc.Model, t: T, dims: list[int], value=None) -> int:
    i = m.add_operand(t, dims)
    if value is not None:
        m.set_operand_value(i, np.asarray(value))
    return i


def _graph(ins: list[tuple[T, list[int]]], build) -> nnc.Model:
    """A finished model with inputs ``ins``; ``build(m, *inputs)`` adds the
    operations and returns the output operand indices."""
    m = nnc.Model()
    inputs = [_tensor(m, t, d) for t, d in ins]
    outputs = build(m, *inputs)
    m.identify_inputs_and_outputs(inputs, outputs)
    m.finish()
    return m


def _binary(m: nnc.Model, op: Op, a: int, b: int, t: T = T.TENSOR_INT32, dims=(1,)) -> int:
    out = _tensor(m, t, list(dims))
    m.add_operation(op, [a, b, _scalar(m, T.INT32, 0)], [out])
    return out


def _compare(m: nnc.Model, op: Op, a: int, b: int) -> int:
    out = _tensor(m, T.TENSOR_BOOL8, [1])
    m.add_operation(op, [a, b], [out])
    return out


def _ref(m: nnc.Model, sub: nnc.Model) -> int:
    i = m.add_operand(T.MODEL)
    m.set_operand_value_from_model(i, sub)
    return i


def _add_const(c: float, dims=(2,)) -> nnc.Model:
    """x -> x + c (float)."""
    return _graph([(T.TENSOR_FLOAT32, list(dims))],
                  lambda m, x: [_binary(m, Op.ADD, x, _tensor(m, T.TENSOR_FLOAT32, [1], np.float32([c])),
                                        T.TENSOR_FLOAT32, dims)])  # fmt: skip


def if_model() -> nnc.Model:
    """y = x + 10 if c else x - 10 (the branches are two models)."""
    then = _add_const(10.0)
    other = _graph([(T.TENSOR_FLOAT32, [2])],
                   lambda m, x: [_binary(m, Op.SUB, x, _tensor(m, T.TENSOR_FLOAT32, [1], np.float32([10])),
                                         T.TENSOR_FLOAT32, (2,))])  # fmt: skip
    m = nnc.Model()
    c, x, y = _tensor(m, T.TENSOR_BOOL8, [1]), _tensor(m, T.TENSOR_FLOAT32, [2]), _tensor(m, T.TENSOR_FLOAT32, [2])
    m.add_operation(Op.IF, [c, _ref(m, then), _ref(m, other), x], [y])
    m.identify_inputs_and_outputs([c, x], [y])
    m.finish()
    return m


def _while(cond: nnc.Model, body: nnc.Model, init: list, inputs: list[tuple[T, list[int]]],
           outputs: list[tuple[T, list[int]]], returned: list[int] | None = None) -> nnc.Model:  # fmt: skip
    """A model running WHILE(cond, body) on ``init`` (operands built by
    ``init`` entries: an array is a constant, an int the model input with that
    position); its outputs are the WHILE outputs listed in ``returned``."""
    m = nnc.Model()
    model_inputs = [_tensor(m, t, d) for t, d in inputs]
    args = [model_inputs[v] if isinstance(v, int) else _tensor(m, T.TENSOR_INT32 if v.dtype == I32 else
                                                                T.TENSOR_FLOAT32, list(v.shape), v)
            for v in init]  # fmt: skip
    outs = [_tensor(m, t, d) for t, d in outputs]
    m.add_operation(Op.WHILE, [_ref(m, cond), _ref(m, body), *args], outs)
    m.identify_inputs_and_outputs(model_inputs, [outs[k] for k in (returned or range(len(outs)))])
    m.finish()
    return m


_STATE3 = [(T.TENSOR_INT32, [1])] * 3


def sum_model() -> nnc.Model:
    """i, s = 0, 0; while i < n: s += i; i += 1; returns (i, s)."""
    cond = _graph(_STATE3, lambda m, i, s, n: [_compare(m, Op.LESS, i, n)])
    one = np.array([1], I32)
    body = _graph(_STATE3, lambda m, i, s, n: [_binary(m, Op.ADD, i, _tensor(m, T.TENSOR_INT32, [1], one)),
                                               _binary(m, Op.ADD, s, i)])  # fmt: skip
    zero = np.array([0], I32)
    return _while(cond, body, [zero, zero, 0], [(T.TENSOR_INT32, [1])], [(T.TENSOR_INT32, [1])] * 2)


def fibonacci_model() -> nnc.Model:
    """a, b, i = 0, 1, 0; while i < n: a, b = b + 0, a + b; i += 1; returns a.

    Every state operand is read after another is computed: the new state must
    not overwrite the old one while the body runs."""
    f = (T.TENSOR_FLOAT32, [1])
    state = [f, f, (T.TENSOR_INT32, [1]), (T.TENSOR_INT32, [1])]
    cond = _graph(state, lambda m, a, b, i, n: [_compare(m, Op.LESS, i, n)])
    one = np.array([1], I32)
    zero = np.float32([0])
    body = _graph(state, lambda m, a, b, i, n: [_binary(m, Op.ADD, b, _tensor(m, T.TENSOR_FLOAT32, [1], zero),
                                                        T.TENSOR_FLOAT32),
                                                _binary(m, Op.ADD, a, b, T.TENSOR_FLOAT32),
                                                _binary(m, Op.ADD, i, _tensor(m, T.TENSOR_INT32, [1], one))])  # fmt: skip
    init = [np.float32([0]), np.float32([1]), np.array([0], I32), 0]
    return _while(cond, body, init, [(T.TENSOR_INT32, [1])], [f, f, (T.TENSOR_INT32, [1])], returned=[0])


def nested_model() -> nnc.Model:
    """i, s = 0, 0; while i < n: s = s + i if i < h else s - i; i += 1."""
    state = [(T.TENSOR_INT32, [1])] * 4  # i, s, n, h
    cond = _graph(state, lambda m, i, s, n, h: [_compare(m, Op.LESS, i, n)])
    plus = _graph([(T.TENSOR_INT32, [1])] * 2, lambda m, s, i: [_binary(m, Op.ADD, s, i)])
    minus = _graph([(T.TENSOR_INT32, [1])] * 2, lambda m, s, i: [_binary(m, Op.SUB, s, i)])
    one = np.array([1], I32)

    def body(m, i, s, n, h):
        s2 = _tensor(m, T.TENSOR_INT32, [1])
        m.add_operation(Op.IF, [_compare(m, Op.LESS, i, h), _ref(m, plus), _ref(m, minus), s, i], [s2])
        return [_binary(m, Op.ADD, i, _tensor(m, T.TENSOR_INT32, [1], one)), s2]

    zero = np.array([0], I32)
    return _while(cond, _graph(state, body), [zero, zero, 0, 1], [(T.TENSOR_INT32, [1])] * 2,
                  [(T.TENSOR_INT32, [1])] * 2, returned=[1])  # fmt: skip


def while_in_if_model() -> nnc.Model:
    """(i, s) = sum loop on n if c else (n + n, n + 7)."""
    seven = np.array([7], I32)
    other = _graph([(T.TENSOR_INT32, [1])],
                   lambda m, n: [_binary(m, Op.ADD, n, n), _binary(m, Op.ADD, n, _tensor(m, T.TENSOR_INT32, [1], seven))])  # fmt: skip
    m = nnc.Model()
    c, n = _tensor(m, T.TENSOR_BOOL8, [1]), _tensor(m, T.TENSOR_INT32, [1])
    outs = [_tensor(m, T.TENSOR_INT32, [1]), _tensor(m, T.TENSOR_INT32, [1])]
    m.add_operation(Op.IF, [c, _ref(m, sum_model()), _ref(m, other), n], outs)
    m.identify_inputs_and_outputs([c, n], outs)
    m.finish()
    return m


def endless_model() -> nnc.Model:
    """x = 0; while x >= 0: x += 1 (float, never ends)."""
    f = (T.TENSOR_FLOAT32, [1])
    cond = _graph([f], lambda m, x: [_compare(m, Op.GREATER_EQUAL, x, _tensor(m, T.TENSOR_FLOAT32, [1], np.float32([0])))])
    body = _graph([f], lambda m, x: [_binary(m, Op.ADD, x, _tensor(m, T.TENSOR_FLOAT32, [1], np.float32([1])),
                                             T.TENSOR_FLOAT32)])  # fmt: skip
    return _while(cond, body, [0], [f], [f])


def growing_model() -> nnc.Model:
    """A body that appends to its state: the state's shape changes."""
    cond = _graph([(T.TENSOR_FLOAT32, [1])], lambda m, x: [_compare(m, Op.LESS, x, x)])

    def body(m, x):
        out = m.add_operand(T.TENSOR_FLOAT32, [0])
        m.add_operation(Op.CONCATENATION, [x, x, _scalar(m, T.INT32, 0)], [out])
        return [out]

    return _while(cond, _graph([(T.TENSOR_FLOAT32, [1])], body), [0], [(T.TENSOR_FLOAT32, [1])],
                  [(T.TENSOR_FLOAT32, [1])])  # fmt: skip


def appending_model() -> nnc.Model:
    """xs, i = [x], 1; while i < n: xs = xs + [xs[i - 1] + 1]; i += 1; returns xs.

    The loop state grows by one element per iteration (the body declares it
    without dimensions), so nnc unrolls the loop at compile time for each
    value of the input n, which it compiles in; x stays a run-time input."""
    xs, i = (T.TENSOR_FLOAT32, [0]), (T.TENSOR_INT32, [1])
    cond = _graph([xs, i, i], lambda m, xs, i, n: [_compare(m, Op.LESS, i, n)])

    def body(m, xs, i, n):
        last = m.add_operand(T.TENSOR_FLOAT32, [1])
        begin = _binary(m, Op.ADD, i, _tensor(m, T.TENSOR_INT32, [1], np.array([-1], I32)))
        m.add_operation(Op.SLICE, [xs, begin, _tensor(m, T.TENSOR_INT32, [1], np.array([1], I32))], [last])
        new = _binary(m, Op.ADD, last, _tensor(m, T.TENSOR_FLOAT32, [1], np.float32([1])), T.TENSOR_FLOAT32)
        grown = m.add_operand(T.TENSOR_FLOAT32, [0])
        m.add_operation(Op.CONCATENATION, [xs, new, _scalar(m, T.INT32, 0)], [grown])
        return [grown, _binary(m, Op.ADD, i, _tensor(m, T.TENSOR_INT32, [1], np.array([1], I32)))]

    return _while(cond, _graph([xs, i, i], body), [0, np.array([1], I32), 1],
                  [(T.TENSOR_FLOAT32, [1]), (T.TENSOR_INT32, [1])], [xs, i], returned=[0])  # fmt: skip


# -- python references ----------------------------------------------------------------------------------


def py_sum(n: int) -> tuple[int, int]:
    i = s = 0
    while i < n:
        s += i
        i += 1
    return i, s


def py_fib(n: int) -> float:
    a, b = 0.0, 1.0
    for _ in range(n):
        a, b = b, a + b
    return a


def py_nested(n: int, h: int) -> int:
    s = 0
    for i in range(n):
        s = s + i if i < h else s - i
    return s


# -- results ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cond", [True, False])
def test_if_takes_either_branch(cond):
    x = np.float32([1.5, -2.0])
    [y] = nnc.compile(if_model()).run(np.array([cond]), x)
    np.testing.assert_array_equal(y, x + 10 if cond else x - 10)


def test_if_one_variant_serves_both_conditions():
    """The same compiled model answers both conditions (one variant)."""
    compiled = nnc.compile(if_model())
    x = np.float32([3, 4])
    for cond in (True, False, True):
        np.testing.assert_array_equal(compiled.run(np.array([cond]), x)[0], x + 10 if cond else x - 10)


@pytest.mark.parametrize("n", [0, 1, 2, 7, 100])
def test_while_sum(n):
    i, s = nnc.compile(sum_model()).run(np.array([n], I32))
    assert (int(i[0]), int(s[0])) == py_sum(n)


@pytest.mark.parametrize("n", [0, 1, 2, 10, 30])
def test_while_fibonacci(n):
    [a] = nnc.compile(fibonacci_model()).run(np.array([n], I32))
    assert float(a[0]) == np.float32(py_fib(n))


@pytest.mark.parametrize("n,h", [(0, 0), (5, 2), (10, 7), (10, 20)])
def test_if_nested_in_while(n, h):
    [s] = nnc.compile(nested_model()).run(np.array([n], I32), np.array([h], I32))
    assert int(s[0]) == py_nested(n, h)


@pytest.mark.parametrize("cond", [True, False])
def test_while_nested_in_if(cond):
    n = 10
    i, s = nnc.compile(while_in_if_model()).run(np.array([cond]), np.array([n], I32))
    assert (int(i[0]), int(s[0])) == (py_sum(n) if cond else (n + n, n + 7))


def test_state_that_changes_shape_is_unsupported():
    with pytest.raises(nnc.UnsupportedOperationError) as info:
        nnc.compile(growing_model())
    assert "WHILE" in str(info.value) and "dynamic shapes" in str(info.value)


@pytest.fixture(scope="module")
def appending() -> nnc.Compilation:
    comp = nnc.Compilation(appending_model())
    comp.finish()
    return comp


def _append(comp: nnc.Compilation, x: float, n: int, loop_timeout: int | None = None) -> np.ndarray:
    ex = nnc.Execution(comp)
    ex.set_input(0, np.float32([x]))
    ex.set_input(1, np.array([n], I32))
    out = np.full(16, np.nan, np.float32)
    ex.set_output(0, out, [0])
    if loop_timeout is not None:
        ex.set_loop_timeout(loop_timeout)
    ex.compute()
    dims = ex.get_output_operand_dimensions(0)
    return out[: int(np.prod(dims))].reshape(dims)


def test_while_state_that_grows(appending):
    """One compilation, one variant per value of n (the number of iterations
    decides the output's shape); x is read at run time."""
    assert driver.loop_count_inputs(appending_model()) == {1}
    for x, n in [(2.5, 4), (-1.0, 4), (0.5, 1), (3.0, 0), (1.0, 7)]:
        np.testing.assert_array_equal(_append(appending, x, n), x + np.arange(max(n, 1), dtype=np.float32))


@pytest.mark.checklist(151)
def test_unrolled_loop_takes_the_loop_timeout(appending):
    """An unrolled loop checks the loop timeout before each iteration, as a
    loop does: with a zero timeout a loop that runs no iteration ends
    normally, one that runs an iteration misses its deadline."""
    np.testing.assert_array_equal(_append(appending, 4.0, 1, loop_timeout=0), [4.0])
    with pytest.raises(nnc.MissedDeadlineTransientError) as info:
        _append(appending, 4.0, 3, loop_timeout=0)
    assert info.value.function == _COMPUTE


# -- the loop timeout ---------------------------------------------------------------------------------


@pytest.mark.checklist(150)
def test_loop_timeout_defaults():
    assert nnc.get_default_loop_timeout() == DEFAULT_LOOP_TIMEOUT_NS == 2_000_000_000
    assert nnc.get_maximum_loop_timeout() == MAXIMUM_LOOP_TIMEOUT_NS == 15_000_000_000


def _endless_execution(comp: nnc.Compilation) -> tuple[nnc.Execution, np.ndarray]:
    ex = nnc.Execution(comp)
    out = np.zeros(1, np.float32)
    ex.set_input(0, np.float32([0]))
    ex.set_output(0, out)
    ex.set_loop_timeout(1_000_000)
    return ex, out


@pytest.fixture(scope="module")
def endless() -> nnc.Compilation:
    comp = nnc.Compilation(endless_model())
    comp.finish()
    return comp


@pytest.mark.checklist(149, 151)
def test_endless_loop_misses_the_loop_deadline(endless):
    ex, _ = _endless_execution(endless)
    start = time.monotonic()
    with pytest.raises((nnc.MissedDeadlineTransientError, nnc.MissedDeadlinePersistentError)) as info:
        ex.compute()
    assert info.value.function == _COMPUTE
    assert info.value.code in (nnc.ResultCode.MISSED_DEADLINE_TRANSIENT, nnc.ResultCode.MISSED_DEADLINE_PERSISTENT)
    assert time.monotonic() - start < 1.0  # stopped after ~1 ms, not the default 2 s


@pytest.mark.checklist(151)
def test_loop_deadline_in_every_mode(endless):
    missed = (nnc.MissedDeadlineTransientError, nnc.MissedDeadlinePersistentError)
    ex, _ = _endless_execution(endless)
    with nnc.Burst(endless) as burst, pytest.raises(missed):
        ex.burst_compute(burst)
    ex, _ = _endless_execution(endless)
    event = ex.start_compute()
    with pytest.raises(missed):
        event.wait()
    ex, _ = _endless_execution(endless)
    event = ex.start_compute_with_dependencies([], 0)
    with pytest.raises(missed):
        event.wait()


def test_loop_timeout_is_per_loop_and_long_loops_finish():
    """A loop of many iterations finishes under the default timeout; the
    timeout counts from the start of each loop, not of the computation."""
    comp = nnc.Compilation(sum_model())
    comp.finish()
    ex = nnc.Execution(comp)
    n = 60_000  # s = n(n-1)/2 stays below 2**31
    outs = [np.zeros(1, I32), np.zeros(1, I32)]
    ex.set_input(0, np.array([n], I32))
    for k, o in enumerate(outs):
        ex.set_output(k, o)
    ex.compute()
    assert (int(outs[0][0]), int(outs[1][0])) == py_sum(n)


@pytest.mark.checklist(151)
@pytest.mark.parametrize("n", [0, 5])
def test_only_a_loop_that_goes_on_past_its_timeout_fails(n):
    """With a zero loop timeout a loop whose condition is false at once ends
    normally; one that wants a second iteration misses its deadline."""
    comp = nnc.Compilation(sum_model())
    comp.finish()
    ex = nnc.Execution(comp)
    outs = [np.zeros(1, I32), np.zeros(1, I32)]
    ex.set_input(0, np.array([n], I32))
    for k, o in enumerate(outs):
        ex.set_output(k, o)
    ex.set_loop_timeout(0)
    if n == 0:
        ex.compute()
        assert (int(outs[0][0]), int(outs[1][0])) == (0, 0)
    else:
        with pytest.raises(nnc.MissedDeadlineTransientError) as info:
            ex.compute()
        assert info.value.function == _COMPUTE


def test_loop_from_the_compilation_cache(tmp_path):
    """Native code loaded from the cache takes the loop timeout too."""
    model = endless_model()
    events = []
    for _ in range(2):
        comp = nnc.Compilation(model)
        comp.set_caching(str(tmp_path), b"w" * 32)
        comp.finish()
        events.append(comp.cache_events[-1][0])
        ex, _ = _endless_execution(comp)
        with pytest.raises(nnc.MissedDeadlineTransientError):
            ex.compute()
    assert events == ["saved", "hit"]


# -- native artifact ------------------------------------------------------------------------------------

CC = shutil.which(os.environ.get("CC", "").split()[0] if os.environ.get("CC", "").strip() else "cc")

_C_CALLER = r"""
#include <stdio.h>
#include <stdlib.h>
#include "libloop.h"

int main(void) {
    if (nnc_model_abi_version() != NNC_MODEL_ABI_VERSION) return 2;
    float x[1] = {0}, y[1] = {0};
    const void *ins[1] = {x};
    void *outs[1] = {y};
    void *arena = NULL;
    if (posix_memalign(&arena, NNC_MODEL_ARENA_ALIGNMENT, NNC_MODEL_ARENA_SIZE ? NNC_MODEL_ARENA_SIZE : 64)) return 3;
    int32_t status = nnc_run_with_loop_timeout((void *const *)ins, outs, NULL, arena, 1000000u);
    printf("%d %d\n", (int)status, (int)NNC_MODEL_ERROR_LOOP_TIMEOUT);
    return status == NNC_MODEL_ERROR_LOOP_TIMEOUT ? 0 : 1;
}
"""


@pytest.mark.skipif(CC is None, reason="no C compiler (cc or $CC) on PATH")
def test_artifact_reports_the_loop_timeout(tmp_path):
    """A C caller chooses the loop timeout and gets NNC_MODEL_ERROR_LOOP_TIMEOUT."""
    from nnc.cli import main as nnc_main

    model_file = str(tmp_path / "loop.nnc")
    endless_model().save(model_file)
    lib = str(tmp_path / "libloop.so")
    assert nnc_main(["compile", model_file, "-o", lib]) == 0
    src = tmp_path / "caller.c"
    src.write_text(_C_CALLER)
    exe = str(tmp_path / "caller")
    subprocess.run([CC, "-o", exe, str(src), f"-I{tmp_path}", f"-L{tmp_path}", "-lloop", f"-Wl,-rpath,{tmp_path}"],
                   check=True, capture_output=True, text=True)  # fmt: skip
    proc = subprocess.run([exe], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.split() == ["-4", "-4"]
