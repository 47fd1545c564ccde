"""A one-row FULLY_CONNECTED whose constant weights are all float16 values
(a TFLite model with float16 weights) reads them as float16 and widens
them as loaded (``nnc.passes.kernels.f32.half_weights``): the same
products as from float32 weights, so the same bits, with half the bytes
to read."""

from __future__ import annotations

import re

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc.driver import lower, static_input_infos, target_description
from nnc.passes.kernels import f32
from nnc.runtime.executable import Executable, generate_code
from nnc.runtime.jit import Target
from targets import x86_target

HOST = Target.host()
UNITS, SIZE = 300, 260  # 78,000 weights: 312 KB as float32, above the threshold


def _model(w: np.ndarray, b: np.ndarray) -> nnc.Model:
    m = nnc.Model()
    x = m.add_operand(T.TENSOR_FLOAT32, [1, SIZE])
    wi = m.add_operand(T.TENSOR_FLOAT32, list(w.shape))
    m.set_operand_value(wi, w)
    bi = m.add_operand(T.TENSOR_FLOAT32, [UNITS])
    m.set_operand_value(bi, b)
    act = m.add_operand(T.INT32, [])
    m.set_operand_value(act, np.int32(0))
    out = m.add_operand(T.TENSOR_FLOAT32, [1, UNITS])
    m.add_operation(Op.FULLY_CONNECTED, [x, wi, bi, act], [out])
    m.identify_inputs_and_outputs([x], [out])
    m.finish()
    return m


def _weights(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Weights that are float16 values (stored as float32), and a bias."""
    w = rng.standard_normal((UNITS, SIZE)).astype(np.float16).astype(np.float32)
    return w, rng.standard_normal(UNITS).astype(np.float32)


def _run(m: nnc.Model, x: np.ndarray) -> tuple[np.ndarray, str]:
    """``m`` lowered for the host and run on ``x`` (no compilation cache:
    each call compiles what the lowering decides now): (output, LLVM IR)."""
    ir = lower(m, static_input_infos(m))
    y = np.zeros((1, UNITS), np.float32)
    assert Executable(generate_code(ir, HOST)).run([x], [y]) == 0
    return y, ir.llvm_ir


@pytest.mark.skipif(not target_description(HOST).half_conversions, reason="the host has no float16 conversions")
def test_float16_weights_give_the_same_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(11)
    w, b = _weights(rng)
    x = rng.standard_normal((1, SIZE)).astype(np.float32)
    m = _model(w, b)
    half, half_ir = _run(m, x)
    assert re.search(r"nnc_dot_\w+_h\b", half_ir)
    monkeypatch.setattr(f32, "HALF_WEIGHTS_MIN_BYTES", 1 << 40)
    full, full_ir = _run(m, x)
    assert not re.search(r"nnc_dot_\w+_h\b", full_ir)
    assert np.array_equal(half.view(np.uint32), full.view(np.uint32))
    want = b.astype(np.float64) + w.astype(np.float64) @ x[0].astype(np.float64)
    np.testing.assert_allclose(half[0], want, rtol=1e-4, atol=1e-4)


def test_weights_that_are_not_float16_values_stay_float32() -> None:
    w, b = _weights(np.random.default_rng(12))
    w[7, 3] += 2.0**-20  # no longer a float16 value
    assert "_h" not in " ".join(re.findall(r"nnc_dot_\w+", lower(_model(w, b), static_input_infos(_model(w, b))).llvm_ir))


def test_small_weights_stay_float32(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(f32, "HALF_WEIGHTS_MIN_BYTES", UNITS * SIZE * 4 + 4)
    m = _model(*_weights(np.random.default_rng(13)))
    assert not re.search(r"nnc_dot_\w+_h\b", lower(m, static_input_infos(m), target=x86_target("haswell")).llvm_ir)


@pytest.mark.parametrize("cpu,half", [("haswell", True), ("x86-64", False)])
def test_only_targets_that_convert_halves(cpu: str, half: bool) -> None:
    """x86-64 without F16C would call a library routine per conversion:
    the weights stay float32 there."""
    m = _model(*_weights(np.random.default_rng(14)))
    ir = lower(m, static_input_infos(m), target=x86_target(cpu)).llvm_ir
    assert bool(re.search(r"nnc_dot_\w+_h\b", ir)) == half


def test_aarch64_widens_halves_under_qemu(tmp_path) -> None:
    """AArch64 converts halves in one instruction (``fcvtl``) as well: the
    library cross-compiled for it, run under qemu, reads float16 weights
    and computes the host's outputs (within the float tolerance of the
    AArch64 tests: its vectors are narrower, so its lanes add up in
    another order)."""
    from test_aarch64 import TRIPLE, Emulated, _assert_matches_host, _require_tools

    _require_tools()
    rng = np.random.default_rng(15)
    w, b = _weights(rng)
    x = rng.standard_normal((1, SIZE)).astype(np.float32)
    m = _model(w, b)
    ir = lower(m, static_input_infos(m), target=Target(TRIPLE, "generic", "")).llvm_ir
    assert re.search(r"nnc_dot_\w+_h\b", ir) and "fpext <4 x half>" in ir
    got = Emulated("fc_half", m, str(tmp_path)).run([x], threads=2)
    _assert_matches_host("fc_half", got, [_run(m, x)[0]])
