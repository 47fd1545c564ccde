"""DEQUANTIZE -> QUANTIZE pairs folded by ``nnc-fold-quantize-pairs``.

Every stored value of both 8-bit types goes through pairs of one scale
(a range of scales from the smallest normal float32 to the largest the
pass accepts), directly and through a RESHAPE, to the same and to other
zero points and types: the outputs are bit-identical to the same model
compiled without the pass (the float round trip) and to the closed form
``clamp(q - zp_in + zp_out)``.  The folded pairs lower to no float
arithmetic, and every operation keeps its index.
"""

from __future__ import annotations

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc import driver
from nnc.passes import pipeline as passes_pipeline
from nnc.passes.fold_quantize_pairs import ELIDED_ATTR, REQUANTIZE_ATTR, exact_scale
from test_row_kernels import compile_without
from test_tflite import execute

#: scales of the pairs: ordinary ones, ones whose products round, and the extremes
SCALES = [0.5, 0.1, 1 / 3, 0.0078125, 3.0e-7, 7.1e30, float(np.finfo(np.float32).tiny), float(np.finfo(np.float32).max) / 256]
RANGE = {T.TENSOR_QUANT8_ASYMM: (0, 255), T.TENSOR_QUANT8_ASYMM_SIGNED: (-128, 127)}
DTYPE = {T.TENSOR_QUANT8_ASYMM: np.uint8, T.TENSOR_QUANT8_ASYMM_SIGNED: np.int8}


def _pairs_model(t_in: T, zp_in: int, scale: float, targets: list[tuple[T, int]]) -> nnc.Model:
    """An input of every value of ``t_in`` ([1, 16, 16]), DEQUANTIZE'd once
    per target and QUANTIZE'd to it (even targets directly, odd ones
    through a RESHAPE to [16, 16]): one output per target."""
    m = nnc.Model()
    x = m.add_operand(t_in, [1, 16, 16], scale, zp_in)
    shape = m.add_operand(T.TENSOR_INT32, [2])
    m.set_operand_value(shape, np.int32([16, 16]))
    outs = []
    for k, (t_out, zp_out) in enumerate(targets):
        d = m.add_operand(T.TENSOR_FLOAT32, [1, 16, 16])
        m.add_operation(Op.DEQUANTIZE, [x], [d])
        if k % 2:
            v = m.add_operand(T.TENSOR_FLOAT32, [16, 16])
            m.add_operation(Op.RESHAPE, [d, shape], [v])
            d = v
        y = m.add_operand(t_out, [16, 16] if k % 2 else [1, 16, 16], scale, zp_out)
        m.add_operation(Op.QUANTIZE, [d], [y])
        outs.append(y)
    m.identify_inputs_and_outputs([x], outs)
    m.finish()
    return m


def _every_value(t: T) -> np.ndarray:
    lo, hi = RANGE[t]
    return np.arange(lo, hi + 1).astype(DTYPE[t]).reshape(1, 16, 16)


def _targets(t_in: T, zp_in: int) -> list[tuple[T, int]]:
    """The identity (twice), another zero point of the type, the other type
    (the same real values: the zero point shifted by 128, and another)."""
    other = T.TENSOR_QUANT8_ASYMM_SIGNED if t_in == T.TENSOR_QUANT8_ASYMM else T.TENSOR_QUANT8_ASYMM
    same = zp_in - RANGE[t_in][0] + RANGE[other][0]
    return [(t_in, zp_in), (t_in, RANGE[t_in][0] + 3), (other, RANGE[other][1] - 7), (other, same), (t_in, zp_in)]


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize(("t_in", "zp_in"), [(T.TENSOR_QUANT8_ASYMM, 128), (T.TENSOR_QUANT8_ASYMM_SIGNED, -5)])
def test_folded_pairs_are_bit_identical(scale: float, t_in: T, zp_in: int) -> None:
    assert exact_scale(scale)
    targets = _targets(t_in, zp_in)
    m = _pairs_model(t_in, zp_in, scale, targets)
    x = _every_value(t_in)
    folded = execute(m, compile_without(m), [x])
    unfolded = execute(m, compile_without(m, "nnc-fold-quantize-pairs"), [x])
    for (t_out, zp_out), y, z in zip(targets, folded, unfolded, strict=True):
        assert y.tobytes() == z.tobytes()
        lo, hi = RANGE[t_out]
        want = np.clip(x.astype(np.int32) - zp_in + zp_out, lo, hi).astype(DTYPE[t_out])
        assert y.tobytes() == want.tobytes()


def test_pairs_are_gone_from_the_ir() -> None:
    """Every pair is folded (identities elided, the others requantised), and
    the lowered function has no float arithmetic left; the operations are
    all still there, so none is renumbered."""
    targets = _targets(T.TENSOR_QUANT8_ASYMM, 128)
    m = _pairs_model(T.TENSOR_QUANT8_ASYMM, 128, 0.1, targets)
    module, _ = driver.shaped_module(m, driver.static_input_infos(m))
    before = str(module).count('"nnapi.')
    passes_pipeline.run_passes(module, ["nnc-fold-quantize-pairs"])
    text = str(module)
    # 5 DEQUANTIZE elided, 2 identity QUANTIZE elided, 3 QUANTIZE shift
    assert text.count(f"{{{ELIDED_ATTR}}}") == 7 and text.count(f"{{{REQUANTIZE_ATTR}}}") == 3
    assert text.count('"nnapi.') - text.count('"nnapi.no_value"') == before
    passes_pipeline.run_passes(module, ["convert-nnapi-to-linalg"])
    lowered = str(module)
    assert "f32" not in lowered and "math.round" not in lowered
    calls, fused_into = driver.operation_calls(m, driver.static_input_infos(m))
    assert [c.type for c in calls] == [op.type for op in m.operations] and not fused_into


def test_quantize_then_dequantize_is_kept() -> None:
    """QUANTIZE -> DEQUANTIZE rounds the float values: never folded."""
    m = nnc.Model()
    f = m.add_operand(T.TENSOR_FLOAT32, [8])
    q = m.add_operand(T.TENSOR_QUANT8_ASYMM, [8], 0.5, 128)
    g = m.add_operand(T.TENSOR_FLOAT32, [8])
    m.add_operation(Op.QUANTIZE, [f], [q])
    m.add_operation(Op.DEQUANTIZE, [q], [g])
    m.identify_inputs_and_outputs([f], [g])
    m.finish()
    module, _ = driver.shaped_module(m, driver.static_input_infos(m))
    passes_pipeline.run_passes(module, ["nnc-fold-quantize-pairs"])
    assert ELIDED_ATTR not in str(module) and REQUANTIZE_ATTR not in str(module)
    x = np.float32([0.1, 0.26, -0.74, 3.3, 70.0, -70.0, 0.25, -0.25])
    [y] = execute(m, compile_without(m), [x])
    assert y.tolist() == [0.0, 0.5, -0.5, 3.5, 63.5, -64.0, 0.5, -0.5]


@pytest.mark.parametrize("scale", [1.0e-40, float(np.finfo(np.float32).max) / 100])
def test_scales_outside_the_proof_are_not_folded(scale: float) -> None:
    assert not exact_scale(scale)
    m = _pairs_model(T.TENSOR_QUANT8_ASYMM, 128, scale, [(T.TENSOR_QUANT8_ASYMM, 128)])
    module, _ = driver.shaped_module(m, driver.static_input_infos(m))
    passes_pipeline.run_passes(module, ["nnc-fold-quantize-pairs"])
    assert ELIDED_ATTR not in str(module)
