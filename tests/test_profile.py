"""Per-operation profiles (issue 18): code compiled with ``set_profiling``
records the monotonic clock around each operation; code compiled without it
has no timing code.  Structure and clock identities only, never timings."""

from __future__ import annotations

import json
import os
import statistics
import time

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc import driver
from nnc.cli import main
from nnc.dialects.rules import OpCall
from nnc.operand_types import OperandInfo
from nnc.profile import OperationProfile, macs_of, summarize
from nnc.runtime import cache
from nnc.runtime.abi import PROFILE_SYMBOL
from nnc.runtime.jit import Target

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "tiny_cnn.nnc")


def three_op_model() -> nnc.Model:
    """ADD [2, 4] -> RESHAPE to [1, 8] (a view: no code) -> FULLY_CONNECTED to [1, 3]."""
    m = nnc.Model()
    a = m.add_operand(T.TENSOR_FLOAT32, [2, 4])
    b = m.add_operand(T.TENSOR_FLOAT32, [2, 4])
    none = m.add_operand(T.INT32)
    m.set_operand_value(none, nnc.FuseCode.NONE)
    s = m.add_operand(T.TENSOR_FLOAT32, [2, 4])
    m.add_operation(Op.ADD, [a, b, none], [s])
    shape = m.add_operand(T.TENSOR_INT32, [2])
    m.set_operand_value(shape, np.array([1, 8], np.int32))
    flat = m.add_operand(T.TENSOR_FLOAT32, [1, 8])
    m.add_operation(Op.RESHAPE, [s, shape], [flat])
    w = m.add_operand(T.TENSOR_FLOAT32, [3, 8])
    m.set_operand_value(w, np.arange(24, dtype=np.float32).reshape(3, 8) / 10)
    bias = m.add_operand(T.TENSOR_FLOAT32, [3])
    m.set_operand_value(bias, np.array([1, -1, 0.5], np.float32))
    out = m.add_operand(T.TENSOR_FLOAT32, [1, 3])
    m.add_operation(Op.FULLY_CONNECTED, [flat, w, bias, none], [out])
    m.identify_inputs_and_outputs([a, b], [out])
    m.finish()
    return m


@pytest.fixture(scope="module")
def model() -> nnc.Model:
    return three_op_model()


@pytest.fixture(scope="module")
def profiled(model) -> nnc.api.CompiledModel:
    return nnc.compile(model, profile=True)


INPUTS = [np.arange(8, dtype=np.float32).reshape(2, 4), np.ones((2, 4), np.float32)]


def test_one_entry_per_operation_from_the_callers_clock(profiled, model):
    ex, (out,) = profiled.reusable_execution(INPUTS, 1)
    for _ in range(3):
        before = time.monotonic_ns()
        ex.compute()
        after = time.monotonic_ns()
        prof = ex.get_operation_profile()
        assert [p.index for p in prof] == [0, 1, 2]
        assert [p.type for p in prof] == [Op(op.type) for op in model.operations] == [Op.ADD, Op.RESHAPE,
                                                                                     Op.FULLY_CONNECTED]
        assert [p.output_shapes for p in prof] == [((2, 4),), ((1, 8),), ((1, 3),)]
        assert [p.macs for p in prof] == [None, None, 3 * 8]
        assert all(p.duration_ns >= 0 for p in prof)
        # One clock, read back to back: each operation starts where the last
        # one ended, and all of them lie inside the caller's compute() call
        # (time.monotonic_ns reads the same CLOCK_MONOTONIC).
        for p, q in zip(prof, prof[1:]):
            assert q.start_ns == p.start_ns + p.duration_ns
        end = prof[-1].start_ns + prof[-1].duration_ns
        assert before <= prof[0].start_ns <= end <= after
        assert sum(p.duration_ns for p in prof) == end - prof[0].start_ns <= after - before
    expected = nnc.compile(model).run(*INPUTS)[0]
    assert np.array_equal(out, expected)  # profiling changes no result


def test_profile_with_measured_timing_fits_in_on_hardware(model):
    cpu = nnc.get_device(0)
    c = nnc.Compilation.for_devices(model, [cpu])
    c.set_profiling(True)
    c.finish()
    ex = nnc.Execution(c)
    ex.set_measure_timing(True)
    out = np.zeros((1, 3), np.float32)
    ex.set_input(0, INPUTS[0])
    ex.set_input(1, INPUTS[1])
    ex.set_output(0, out)
    ex.compute()
    prof = ex.get_operation_profile()
    assert len(prof) == 3
    # the stamps are taken inside the native call ON_HARDWARE measures
    assert sum(p.duration_ns for p in prof) <= ex.get_duration(nnc.DurationCode.ON_HARDWARE)


def test_plain_code_has_no_timer(model):
    infos = [model.operands[i].info() for i in model.inputs]
    module, weights = driver.shaped_module(model, infos)
    plain = driver.lower_shaped(module, weights, infos).llvm_ir
    module, weights = driver.shaped_module(model, infos)
    timed = driver.lower_shaped(module, weights, infos, profile=True).llvm_ir
    for symbol in (PROFILE_SYMBOL, "nnc_monotonic_ns", "clock_gettime"):
        assert symbol not in plain
        assert symbol in timed
    assert timed.count('call ccc i64 @"nnc_monotonic_ns"()') == 4  # 3 operations + the end


def test_plain_execution_has_no_profile(model):
    compiled = nnc.compile(model)
    ex, _ = compiled.reusable_execution(INPUTS, 1)
    ex.compute()
    assert compiled.compilation.executable(
        [model.operands[i].info() for i in model.inputs], "test"
    ).profile_layout is None
    with pytest.raises(nnc.BadStateError) as info:
        ex.get_operation_profile()
    assert info.value.function == "ANeuralNetworksExecution_getOperationProfile"


def test_profile_needs_a_completed_computation(profiled):
    ex = nnc.Execution(profiled.compilation)
    with pytest.raises(nnc.BadStateError):
        ex.get_operation_profile()


def test_set_profiling_checks_state_and_type(model):
    c = nnc.Compilation(model)
    with pytest.raises(nnc.BadDataError):
        c.set_profiling(1)
    c.set_profiling(True)
    c.finish()
    with pytest.raises(nnc.BadStateError) as info:
        c.set_profiling(False)
    assert info.value.function == "ANeuralNetworksCompilation_setProfiling"


def test_profiled_and_plain_code_have_their_own_cache_entries(model, tmp_path):
    infos = [model.operands[i].info() for i in model.inputs]
    token = bytes(32)
    keys = {
        cache.cache_key(token, model, infos, preference=1, priority=100, target=Target.host(), profile=p)
        for p in (False, True)
    }
    assert len(keys) == 2
    plain = nnc.compile(model, tmp_path)
    assert [e[0] for e in plain.compilation.cache_events] == ["miss", "saved"]
    first = nnc.compile(model, tmp_path, profile=True)
    assert [e[0] for e in first.compilation.cache_events] == ["miss", "saved"]
    again = nnc.compile(model, tmp_path, profile=True)
    assert [e[0] for e in again.compilation.cache_events] == ["hit"]
    ex, _ = again.reusable_execution(INPUTS, 1)
    ex.compute()
    assert len(ex.get_operation_profile()) == 3  # the layout comes with the cached object


def _call(kind: Op, inputs: list[tuple[T, tuple[int, ...]]], out: tuple[int, ...], scalars=()) -> OpCall:
    infos = [OperandInfo(t, d) for t, d in inputs]
    infos += [OperandInfo(T.BOOL, (), value=np.array(v)) for v in scalars]
    return OpCall(kind, infos, [OperandInfo(T.TENSOR_FLOAT32, out)])


def test_macs_per_operation_type():
    f = T.TENSOR_FLOAT32
    conv = _call(Op.CONV_2D, [(f, (1, 8, 8, 3)), (f, (16, 3, 3, 3)), (f, (16,))], (1, 6, 6, 16))
    assert macs_of(conv) == 6 * 6 * 16 * 3 * 3 * 3
    grouped = _call(Op.GROUPED_CONV_2D, [(f, (1, 8, 8, 4)), (f, (6, 3, 3, 2)), (f, (6,))], (1, 6, 6, 6))
    assert macs_of(grouped) == 6 * 6 * 6 * 3 * 3 * 2
    depthwise = _call(Op.DEPTHWISE_CONV_2D, [(f, (1, 8, 8, 4)), (f, (1, 3, 3, 8)), (f, (8,))], (1, 6, 6, 8))
    assert macs_of(depthwise) == 6 * 6 * 8 * 3 * 3
    tconv = _call(Op.TRANSPOSE_CONV_2D, [(f, (1, 4, 4, 3)), (f, (5, 2, 2, 3)), (f, (5,))], (1, 8, 8, 5))
    assert macs_of(tconv) == 4 * 4 * 3 * 5 * 2 * 2
    fc = _call(Op.FULLY_CONNECTED, [(f, (2, 10)), (f, (7, 10)), (f, (7,))], (2, 7))
    assert macs_of(fc) == 2 * 7 * 10
    bmm = _call(Op.BATCH_MATMUL, [(f, (2, 3, 5)), (f, (2, 5, 4))], (2, 3, 4))
    assert macs_of(bmm) == 2 * 3 * 4 * 5
    bmm_adj = _call(Op.BATCH_MATMUL, [(f, (2, 5, 3)), (f, (2, 5, 4))], (2, 3, 4), scalars=(True, False))
    assert macs_of(bmm_adj) == 2 * 3 * 4 * 5
    assert macs_of(_call(Op.RELU, [(f, (4,))], (4,))) is None


def test_summarize_medians_shares_and_sums():
    def run(*ns: int) -> list[OperationProfile]:
        return [OperationProfile(k, Op.ADD, ((1,),), 1000 if k == 1 else None, 0, d) for k, d in enumerate(ns)]

    runs = [run(100, 1000, 10), run(300, 2000, 10), run(200, 3000, 40)]
    latencies = [1.2e-3, 2.4e-3, 3.3e-3]
    s = summarize(runs, latencies)
    assert [o.index for o in s.operations] == [1, 0, 2]  # longest median first
    assert [o.median_ms for o in s.operations] == [2000e-6, 200e-6, 10e-6]
    assert s.sum_median_ms == pytest.approx(2210e-6)
    assert s.sum_mean_ms == pytest.approx(sum(sum(p.duration_ns for p in r) for r in runs) / 3 / 1e6)
    assert s.mean_latency_ms == pytest.approx(statistics.fmean(latencies))
    assert sum(o.share for o in s.operations) == pytest.approx(1.0)
    assert s.operations[0].gflops == pytest.approx(2 * 1000 / 2000)
    assert s.covered == pytest.approx(statistics.median([1110 / 1200, 2310 / 2400, 3240 / 3300]))
    with pytest.raises(ValueError):
        summarize(runs, latencies[:2])


def test_bench_profile_json_and_text(capsys, tmp_path):
    # (through a cache: the second command loads what the first compiled)
    args = ["bench", EXAMPLE, "--runs", "3", "--warmup", "1", "--threads", "1", "--profile", "--cache", str(tmp_path)]
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    prof = data["profile"]
    ops = prof["operations"]
    assert sorted(o["index"] for o in ops) == [0, 1, 2, 3]
    assert [o["type"] for o in sorted(ops, key=lambda o: o["index"])] == ["CONV_2D", "MAX_POOL_2D",
                                                                         "FULLY_CONNECTED", "SOFTMAX"]
    assert [o["median_ms"] for o in ops] == sorted((o["median_ms"] for o in ops), reverse=True)
    assert all(o["median_ms"] >= 0 and o["mean_ms"] >= 0 for o in ops)
    assert {o["type"]: o["macs"] is not None for o in ops} == {"CONV_2D": True, "MAX_POOL_2D": False,
                                                              "FULLY_CONNECTED": True, "SOFTMAX": False}
    assert prof["sum_median_ms"] == pytest.approx(sum(o["median_ms"] for o in ops))
    assert prof["sum_mean_ms"] <= prof["mean_latency_ms"]  # the stamps lie inside each compute()
    assert 0 < prof["covered"] <= 1
    assert main([*args, "--top", "2"]) == 0
    text = capsys.readouterr().out
    assert "median us" in text and "(2 more)" in text and "sum of the operations' means" in text
    assert "(cache: hit)" in text


def test_bench_top_needs_profile(capsys):
    assert main(["bench", EXAMPLE, "--top", "3"]) == 2
    assert "--top" in capsys.readouterr().err


def test_while_is_one_entry_and_keeps_its_loop_clock():
    """A WHILE's bodies are lowered inside it and not stamped: one entry.
    The loop timeout reads the same clock function; both work together."""
    from test_control_flow import py_sum, sum_model

    compiled = nnc.compile(sum_model(), profile=True)
    ex, (i, s) = compiled.reusable_execution([np.array([7], np.int32)], 1)
    ex.compute()
    assert (int(i[0]), int(s[0])) == py_sum(7)
    [entry] = ex.get_operation_profile()
    assert entry.type == Op.WHILE and entry.index == 0 and entry.duration_ns >= 0


def test_concurrent_computations_keep_their_own_stamps(profiled):
    """The stamps live in each computation's arena: two executions computing
    at once in two threads each read stamps from inside their own call."""
    import threading

    windows: dict[int, tuple[int, int, list[OperationProfile]]] = {}

    def work(k: int) -> None:
        ex, _ = profiled.reusable_execution(INPUTS, 1)
        for _ in range(20):
            before = time.monotonic_ns()
            ex.compute()
            after = time.monotonic_ns()
            prof = ex.get_operation_profile()
            assert before <= prof[0].start_ns and prof[-1].start_ns + prof[-1].duration_ns <= after
        windows[k] = (before, after, prof)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(windows) == [0, 1]


def test_profile_of_a_burst_and_an_asynchronous_computation(profiled):
    """Both run on other arenas (the burst's, a worker thread's call): the
    stamps are read from the arena the call used."""
    c = profiled.compilation
    with nnc.Burst(c) as burst:
        ex = nnc.Execution(c)
        out = np.zeros((1, 3), np.float32)
        ex.set_input(0, INPUTS[0])
        ex.set_input(1, INPUTS[1])
        ex.set_output(0, out)
        before = time.monotonic_ns()
        ex.burst_compute(burst)
        prof = ex.get_operation_profile()
        assert len(prof) == 3 and before <= prof[0].start_ns <= time.monotonic_ns()
    ex = nnc.Execution(c)
    ex.set_input(0, INPUTS[0])
    ex.set_input(1, INPUTS[1])
    ex.set_output(0, out)
    before = time.monotonic_ns()
    ex.start_compute().wait()
    prof = ex.get_operation_profile()
    assert len(prof) == 3 and before <= prof[0].start_ns <= prof[-1].start_ns <= time.monotonic_ns()


def swish_model() -> nnc.Model:
    """LOGISTIC -> MUL (swish, one fused element-wise group), then TANH alone
    behind a FULLY_CONNECTED whose RELU its epilogue computes."""
    m = nnc.Model()
    x = m.add_operand(T.TENSOR_FLOAT32, [2, 8])
    none = m.add_operand(T.INT32)
    m.set_operand_value(none, nnc.FuseCode.NONE)
    s = m.add_operand(T.TENSOR_FLOAT32, [2, 8])
    m.add_operation(Op.LOGISTIC, [x], [s])
    sw = m.add_operand(T.TENSOR_FLOAT32, [2, 8])
    m.add_operation(Op.MUL, [x, s, none], [sw])
    w = m.add_operand(T.TENSOR_FLOAT32, [3, 8])
    m.set_operand_value(w, np.arange(24, dtype=np.float32).reshape(3, 8) / 10)
    bias = m.add_operand(T.TENSOR_FLOAT32, [3])
    m.set_operand_value(bias, np.zeros(3, np.float32))
    fc = m.add_operand(T.TENSOR_FLOAT32, [2, 3])
    m.add_operation(Op.FULLY_CONNECTED, [sw, w, bias, none], [fc])
    r = m.add_operand(T.TENSOR_FLOAT32, [2, 3])
    m.add_operation(Op.RELU, [fc], [r])
    t = m.add_operand(T.TENSOR_FLOAT32, [2, 3])
    m.add_operation(Op.TANH, [r], [t])
    m.identify_inputs_and_outputs([x], [t])
    m.finish()
    return m


def test_fused_operations_are_one_entry_naming_them():
    """A fused element-wise group and a fused epilogue each count as one
    entry of the table, at the operation whose code computes them, named
    after every operation they cover; their members read ~0 on their own."""
    compiled = nnc.compile(swish_model(), profile=True)
    x = np.linspace(-3, 3, 16, dtype=np.float32).reshape(2, 8)
    ex, _ = compiled.reusable_execution([x], 1)
    runs, latencies = [], []
    for _ in range(3):
        t0 = time.perf_counter()
        ex.compute()
        latencies.append((time.perf_counter() - t0) * 1e3)
        runs.append(ex.get_operation_profile())
    assert [p.fused_into for p in runs[0]] == [1, None, None, 2, None]
    summary = summarize(runs, latencies)
    entries = {o.index: (o.type, o.covers, o.label) for o in summary.operations}
    assert entries == {
        1: ("MUL", ["LOGISTIC", "MUL"], "LOGISTIC+MUL"),
        2: ("FULLY_CONNECTED", ["FULLY_CONNECTED", "RELU"], "FULLY_CONNECTED+RELU"),
        4: ("TANH", ["TANH"], "TANH"),
    }
    assert abs(sum(o.median_ms for o in summary.operations) - summary.sum_median_ms) < 1e-9
    assert "LOGISTIC+MUL" in summary.report()
