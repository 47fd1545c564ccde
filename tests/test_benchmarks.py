"""The benchmark scripts' own logic (no timing here: benchmarks time, tests check)."""

from __future__ import annotations

import json
import os
import sys

import llvmlite.binding as llvm
import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))

import fma_peak
import model_bench
from nnc.runtime.jit import Target
from nnc.tflite import UnsupportedOperatorsError


@pytest.mark.parametrize(
    "cpu, features, lanes, isa, fma, register",
    [
        ("skylake-avx512", "+avx512f,+avx2,+avx,+fma", 16, "AVX-512", True, "zmm"),
        ("haswell", "+avx2,+avx,+fma", 8, "AVX2", True, "ymm"),
        ("x86-64", "+sse2,-avx", 4, "SSE", False, "xmm"),
    ],
)
def test_fma_loop_is_one_vector_op_per_accumulator_with_no_spill(cpu, features, lanes, isa, fma, register):
    assert fma_peak.vector_isa(features) == (lanes, isa, fma)
    target = Target.for_cpu(cpu)
    mod = llvm.parse_assembly(fma_peak.fma_loop_ir(lanes, fma))
    mod.verify()
    asm = target.machine().emit_assembly(mod)
    loop = asm[asm.index(".LBB0_1:") : asm.index("jb\t.LBB0_1")]
    ops = [line for line in loop.splitlines() if ("vfmadd" in line if fma else "mulps" in line)]
    assert len(ops) == fma_peak.ACCUMULATORS and all(register in op for op in ops)
    assert "rsp" not in loop  # every accumulator stays in a register


def test_quantised_outputs_within_twice_litert_own_spread():
    """Mean difference <= 1.5 units and the argmax over the last axis the
    same at >= 98.5% of positions; one far element alone is no mismatch
    (LiteRT's own reference kernels miss its XNNPACK output by 58 units on
    one element of the int8 MobileNetV2)."""
    ref = np.array([[-3, 7, 100, 2]], np.int8)
    assert model_bench.check(ref + np.array([[1, -1, 0, 1]], np.int8), ref) == 1
    assert model_bench.check(ref + np.array([[0, 0, 0, 5]], np.int8), ref) == 5
    with pytest.raises(model_bench.Mismatch, match="mean difference 2.25"):
        model_bench.check(ref + np.array([[3, -3, 0, 3]], np.int8), ref)
    with pytest.raises(model_bench.Mismatch, match="argmax"):  # close, but another class wins
        model_bench.check(np.array([[-3, 101, 100, 2]], np.int8), np.array([[-3, 100, 101, 2]], np.int8))
    rows = np.tile(ref, (200, 1))
    one_off, two_off = rows.copy(), rows.copy()
    one_off[:2, 1] = 120  # 2 of 200 positions choose another class: 99% agree
    two_off[:4, 1] = 120  # 4 of 200: 98%
    assert model_bench.check(one_off, rows) == 113
    with pytest.raises(model_bench.Mismatch, match="98.00%"):
        model_bench.check(two_off, rows)


def test_float_outputs_keep_the_relative_tolerance():
    ref = np.array([0.25, 0.5, 0.25], np.float32)
    assert model_bench.check(ref + 1e-6, ref) < 1e-5
    with pytest.raises(model_bench.Mismatch):
        model_bench.check(ref + np.float32(1e-3), ref)


def test_unsupported_models_are_a_table_line_and_stay_out_of_the_means():
    error = UnsupportedOperatorsError([(0, "DEQUANTIZE", "input 0 must be quantised, got TENSOR_FLOAT16")] * 3)
    reason = model_bench.not_supported(error)
    assert reason == "DEQUANTIZE x3 (e.g. input 0 must be quantised, got TENSOR_FLOAT16)"
    rows = [
        {"model": "fp16", "not_supported": reason},
        {"model": "m", "macs": 2e6, "import_s": 0.1, "compile_cold_s": 1.0, "prepare_hit_ms": 5.0, "max_diff": 1.0,
         **{f"{side}_t1_{k}": 1.0 for side in ("nnc", "litert") for k in ("median_ms", "p90_ms", "gflops", "peak_pct")},
         "ratio_t1": 1.0},
    ]  # fmt: skip
    lines = model_bench.markdown_table(rows, [1], True).splitlines()
    assert len(lines) == 4 and len({line.count("|") for line in lines}) == 1
    assert "not supported: DEQUANTIZE x3" in lines[2]


def test_memory_bench_runs_every_step_of_a_tiny_model(tmp_path, capsys):
    """Each step in its own process, one row per step with the weight bytes
    the import reported (3 constants of 64 float32, 3 INT32 activation codes),
    after the small model every run measures first (8 such operations)."""
    import memory_bench

    out = tmp_path / "rows.json"
    assert memory_bench.main(["--models", "deep", "--deep", "3", "--repeats", "1", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [(r["model"], r["step"]) for r in rows] == [(m, s) for m in (memory_bench.SMALL, "deep3") for s in memory_bench.STEPS]
    assert all(r["weights"] == 3 * 64 * 4 + 3 * 4 for r in rows if r["model"] == "deep3")
    assert all(r["peak"] > 0 and r["seconds"] > 0 for r in rows)
    assert "| deep3 | 0.00 MiB | hit |" in capsys.readouterr().out


def test_kernel_bench_runs_every_depthwise_form_the_host_has() -> None:
    """``kernel_bench --q8 --forms`` forces each depthwise form the host
    runs (VNNI's pairs and quads only where it has VNNI) and compares
    their outputs: a small case gives the same bits in each, and a form
    the lowering does not take stops the benchmark instead of timing
    another one."""
    import kernel_bench
    from nnc import OperationType as Op

    forms = kernel_bench.host_dw_forms()
    assert forms[:2] == ["widen", "pair"]
    m, x, _ = kernel_bench._q8_case(Op.DEPTHWISE_CONV_2D, (1, 9, 9, 24), (1, 3, 3, 24), (1, 1, 1, 1, 3))
    outs = [kernel_bench.forced_runner(m, form, depthwise=True)(x).copy() for form in forms]
    assert all(np.array_equal(outs[0], o) for o in outs[1:])
    with pytest.raises(SystemExit, match="the quad form was not taken"):
        kernel_bench.forced_runner(m, "quad")  # a GEMM form, and the model has no GEMM
