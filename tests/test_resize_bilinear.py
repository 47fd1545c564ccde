"""RESIZE_BILINEAR against tflite's reference arithmetic written out in
numpy float32 per element (each operation one IEEE single rounding, the
C++'s association): the source rows and columns come from tables made at
compile time (``resize.source_coords``), which must give the same bits as
computing them per element."""

from __future__ import annotations

import numpy as np
import pytest

import nnc
from nnc.enums import OperandType as T
from nnc.enums import OperationType as Op

F = np.float32


def _scale(n_in: int, n_out: int, align: bool) -> F:
    return F(n_in - 1) / F(n_out - 1) if align and n_out > 1 else F(n_in) / F(n_out)


def _coord(i: int, scale: F, half: bool, size: int) -> tuple[int, int, F]:
    v = (F(i) + F(0.5)) * scale - F(0.5) if half else F(i) * scale
    lo = min(max(int(np.floor(v)), 0), size - 1)
    hi = max(min(int(np.ceil(v)), size - 1), 0)
    return lo, hi, F(v - F(lo))


def _reference(x: np.ndarray, out_hw: tuple[int, int], align: bool, half: bool, quant: bool) -> np.ndarray:
    n, h, w, c = x.shape
    oh, ow = out_hw
    hs, ws = _scale(h, oh, align), _scale(w, ow, align)
    xf = x.astype(F)
    out = np.zeros((n, oh, ow, c), F)
    for oy in range(oh):
        y0, y1, dy = _coord(oy, hs, half, h)
        for ox in range(ow):
            x0, x1, dx = _coord(ox, ws, half, w)
            ry, rx = F(1) - dy, F(1) - dx
            acc = xf[:, y0, x0] * ry * rx
            acc = acc + xf[:, y1, x0] * dy * rx
            acc = acc + xf[:, y0, x1] * ry * dx
            acc = acc + xf[:, y1, x1] * dy * dx
            out[:, oy, ox] = acc
    if quant:
        info = np.iinfo(x.dtype)
        return np.clip(np.floor(out + F(0.5)), info.min, info.max).astype(x.dtype)
    return out


@pytest.mark.parametrize("t", [T.TENSOR_FLOAT32, T.TENSOR_QUANT8_ASYMM_SIGNED, T.TENSOR_QUANT8_ASYMM])
@pytest.mark.parametrize("shapes", [((5, 7), (12, 9)), ((9, 6), (4, 11)), ((3, 3), (3, 3))])
@pytest.mark.parametrize("align,half", [(False, False), (True, False), (False, True)])
def test_bit_identical_to_the_reference(t: T, shapes: tuple, align: bool, half: bool) -> None:
    (h, w), (oh, ow) = shapes
    quant = t != T.TENSOR_FLOAT32
    dtype = {T.TENSOR_FLOAT32: np.float32, T.TENSOR_QUANT8_ASYMM_SIGNED: np.int8, T.TENSOR_QUANT8_ASYMM: np.uint8}[t]
    rng = np.random.default_rng(h * 100 + oh)
    if quant:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max + 1, (2, h, w, 3), dtype=dtype)
    else:
        x = rng.standard_normal((2, h, w, 3)).astype(np.float32)
    m = nnc.Model()
    qargs = (0.5, 3) if quant else ()
    xi = m.add_operand(t, [2, h, w, 3], *qargs)
    ints = []
    for v in (ow, oh):
        i = m.add_operand(T.INT32)
        m.set_operand_value(i, v)
        ints.append(i)
    flags = []
    for v in (False, align, half):
        b = m.add_operand(T.BOOL)
        m.set_operand_value(b, v)
        flags.append(b)
    out = m.add_operand(t, [2, oh, ow, 3], *qargs)
    m.add_operation(Op.RESIZE_BILINEAR, [xi, *ints, *flags], [out])
    m.identify_inputs_and_outputs([xi], [out])
    m.finish()
    c = nnc.Compilation(m)
    c.finish()
    ex = nnc.Execution(c)
    y = np.zeros((2, oh, ow, 3), dtype)
    ex.set_input(0, x)
    ex.set_output(0, y)
    ex.compute()
    ref = _reference(x, (oh, ow), align, half, quant)
    assert y.tobytes() == ref.tobytes()
