"""The float32 row kernels (passes/kernels/rows.py), epilogue fusion
(nnc-fuse-epilogues) and padding fused into CONV_2D.

* SOFTMAX along the last axis and MEAN over trailing axes: within the
  float32 tolerance of float64 numpy (the CTS's: 1e-5 absolute plus about 5
  ulp relative), including vector tails, -inf (exactly 0), a NaN row (NaN
  everywhere, as the reference) and beta != 1; bit-identical at 1, 2 and 4
  threads with enough rows to reach the thread pool.
* MEAN over a run of middle axes (the column kernel): bit-identical to the
  serial float32 sum in row-major order divided by the count, full blocks,
  short blocks and tails, with a batch, and at every thread count.
* A FULLY_CONNECTED / CONV_2D whose ADD of a residual or RELU is computed in
  the GEMM's epilogue: bit-identical to the same model compiled without
  ``nnc-fuse-epilogues`` (and across thread counts).
* A padded float32 NHWC CONV_2D read through clipped windows (no padded
  copy): within tolerance of float64 numpy, bit-identical at 1 and 2 threads.

One model per kind, compiled once per module (the suite must stay fast).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc import driver
from nnc.passes import pipeline as passes_pipeline
from nnc.passes.fuse_epilogues import CONSUMER_ATTR, PRODUCER_ATTR
from test_tflite import execute

RNG = np.random.default_rng(11)
#: (shape, beta): rows with full vectors and tails, a row of one, many rows
SOFTMAX_CASES = [((3, 20), 0.5), ((2, 1), 1.0), ((1, 4, 37), 1.7), ((300, 64), 1.0), ((2, 5, 4), 40.0)]
#: (shape, axes): each reduces trailing axes
MEAN_CASES = [((4, 96), [1]), ((2, 3, 5), [2, 1]), ((5,), [0]), ((300, 70), [-1])]
#: (shape, axes): each reduces a run of axes followed by kept ones
MEAN_MIDDLE_CASES = [((1, 5, 7, 40), [1, 2]), ((2, 6, 3), [1]), ((3, 4, 5, 2), [0, -3]), ((1, 30, 30, 72), [2, 1])]


def _scalar(m: nnc.Model, t: T, v) -> int:
    k = m.add_operand(t)
    m.set_operand_value(k, v)
    return k


def _const(m: nnc.Model, arr: np.ndarray) -> int:
    k = m.add_operand(T.TENSOR_FLOAT32, arr.shape)
    m.set_operand_value(k, arr.astype(np.float32))
    return k


def compile_without(m: nnc.Model, *dropped: str) -> nnc.Compilation:
    """``m`` compiled with the default pipeline less the passes ``dropped``
    (none: as the driver compiles it), the in-process cache cleared around."""
    saved = passes_pipeline.DEFAULT_PIPELINE
    passes_pipeline.DEFAULT_PIPELINE = tuple(p for p in saved if p not in dropped)
    try:
        driver._CACHE.clear()
        comp = nnc.Compilation(m)
        comp.finish()
    finally:
        passes_pipeline.DEFAULT_PIPELINE = saved
        driver._CACHE.clear()
    return comp


def _compile(m: nnc.Model, fuse: bool = True) -> nnc.Compilation:
    return compile_without(m) if fuse else compile_without(m, "nnc-fuse-epilogues")


def _close(got: np.ndarray, ref: np.ndarray) -> None:
    ok = np.isnan(ref) & np.isnan(got) | (np.abs(got - ref) <= 1e-5 + 5 * 2.0**-23 * np.abs(ref))
    assert ok.all(), f"max difference {np.nanmax(np.abs(got - ref))}"


# -- SOFTMAX and MEAN ------------------------------------------------------------------------------


def _softmax_ref(x: np.ndarray, beta: float) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp((x - x.max(axis=-1, keepdims=True)) * beta)
    return e / e.sum(axis=-1, keepdims=True)


@pytest.fixture(scope="module")
def rows_model() -> Iterator[tuple[nnc.Model, nnc.Compilation, list[np.ndarray]]]:
    m = nnc.Model()
    ins, outs, values = [], [], []
    for shape, beta in SOFTMAX_CASES:
        x = m.add_operand(T.TENSOR_FLOAT32, shape)
        y = m.add_operand(T.TENSOR_FLOAT32, shape)
        m.add_operation(Op.SOFTMAX, [x, _scalar(m, T.FLOAT32, np.float32(beta)), _scalar(m, T.INT32, np.int32(-1))], [y])
        v = (RNG.standard_normal(shape) * 10).astype(np.float32)
        if shape[-1] > 1:
            v.flat[0] = -np.inf
        if shape[0] == 2 and len(shape) == 3:
            v[1, 2, 1] = np.nan  # one NaN row
        ins.append(x), outs.append(y), values.append(v)
    for shape, axes in MEAN_CASES + MEAN_MIDDLE_CASES:
        x = m.add_operand(T.TENSOR_FLOAT32, shape)
        ax = sorted({a % len(shape) for a in axes})
        y = m.add_operand(T.TENSOR_FLOAT32, [d for k, d in enumerate(shape) if k not in ax] or [1])
        a = m.add_operand(T.TENSOR_INT32, [len(axes)])
        m.set_operand_value(a, np.array(axes, np.int32))
        m.add_operation(Op.MEAN, [x, a, _scalar(m, T.INT32, np.int32(0))], [y])
        ins.append(x), outs.append(y), values.append(RNG.standard_normal(shape).astype(np.float32))
    m.identify_inputs_and_outputs(ins, outs)
    m.finish()
    yield m, _compile(m), values


def test_softmax_and_mean_match_float64(rows_model) -> None:
    m, comp, values = rows_model
    got = execute(m, comp, values, 1)
    for k, (shape, beta) in enumerate(SOFTMAX_CASES):
        with np.errstate(invalid="ignore"):
            _close(got[k], _softmax_ref(values[k], beta))
        assert got[k].flat[0] == (0.0 if shape[-1] > 1 else 1.0)  # exp(-inf) is exactly 0
    assert np.isnan(got[4][1, 2]).all() and not np.isnan(got[4][0]).any()
    for j, (shape, axes) in enumerate(MEAN_CASES):
        k = len(SOFTMAX_CASES) + j
        ref = values[k].astype(np.float64).mean(axis=tuple(sorted({a % len(shape) for a in axes})))
        _close(got[k], ref.reshape(got[k].shape))


def _serial_mean(x: np.ndarray, axes: list[int]) -> np.ndarray:
    """The reference's float32 MEAN over a run of axes: each output the sum
    of its elements in row-major order from 0, then divided by the count."""
    ax = sorted({a % x.ndim for a in axes})
    outer, count = int(np.prod(x.shape[: ax[0]])), int(np.prod([x.shape[a] for a in ax]))
    rows = x.reshape(outer, count, -1)
    acc = np.zeros((outer, rows.shape[2]), np.float32)
    for r in range(count):
        acc += rows[:, r]
    return acc / np.float32(count)


def test_mean_over_middle_axes_is_the_serial_sum(rows_model) -> None:
    m, comp, values = rows_model
    got = execute(m, comp, values, 1)
    first = len(SOFTMAX_CASES) + len(MEAN_CASES)
    for j, (shape, axes) in enumerate(MEAN_MIDDLE_CASES):
        k = first + j
        assert got[k].tobytes() == _serial_mean(values[k], axes).tobytes(), (shape, axes)


def test_row_kernels_bit_identical_across_thread_counts(rows_model) -> None:
    m, comp, values = rows_model
    one = [y.tobytes() for y in execute(m, comp, values, 1)]
    for threads in (2, 4):
        assert [y.tobytes() for y in execute(m, comp, values, threads)] == one


# -- epilogue fusion -------------------------------------------------------------------------------


def _fc_add_model() -> nnc.Model:
    """FULLY_CONNECTED -> RESHAPE -> ADD(residual, ., RELU6), and a 3x3
    CONV_2D (RELU) -> ADD(., residual), a 1x1 CONV_2D -> RELU1, a 1x1 CONV_2D
    -> swish (LOGISTIC, MUL), a FULLY_CONNECTED of batch 2 (dot products: the
    epilogue runs after them) -> ADD."""
    m = nnc.Model()
    i32 = lambda v: _scalar(m, T.INT32, np.int32(v))
    x = m.add_operand(T.TENSOR_FLOAT32, (40, 24))
    r = m.add_operand(T.TENSOR_FLOAT32, (1, 40, 20))
    y = m.add_operand(T.TENSOR_FLOAT32, (40, 20))
    m.add_operation(Op.FULLY_CONNECTED, [x, _const(m, RNG.standard_normal((20, 24))), _const(m, RNG.standard_normal(20)), i32(0)], [y])
    shape = m.add_operand(T.TENSOR_INT32, (3,))
    m.set_operand_value(shape, np.array([1, 40, 20], np.int32))
    yv = m.add_operand(T.TENSOR_FLOAT32, (1, 40, 20))
    m.add_operation(Op.RESHAPE, [y, shape], [yv])
    z1 = m.add_operand(T.TENSOR_FLOAT32, (1, 40, 20))
    m.add_operation(Op.ADD, [r, yv, i32(3)], [z1])

    img = m.add_operand(T.TENSOR_FLOAT32, (1, 9, 7, 5))
    res = m.add_operand(T.TENSOR_FLOAT32, (1, 9, 7, 13))
    c = m.add_operand(T.TENSOR_FLOAT32, (1, 9, 7, 13))
    # implicit SAME padding, strides 1, RELU
    m.add_operation(Op.CONV_2D, [img, _const(m, RNG.standard_normal((13, 3, 3, 5))), _const(m, RNG.standard_normal(13)),
                                 i32(1), i32(1), i32(1), i32(1)], [c])  # fmt: skip
    z2 = m.add_operand(T.TENSOR_FLOAT32, (1, 9, 7, 13))
    m.add_operation(Op.ADD, [c, res, i32(0)], [z2])
    c1 = m.add_operand(T.TENSOR_FLOAT32, (1, 9, 7, 8))
    m.add_operation(Op.CONV_2D, [img, _const(m, RNG.standard_normal((8, 1, 1, 5))), _const(m, RNG.standard_normal(8)),
                                 i32(1), i32(1), i32(1), i32(0)], [c1])  # fmt: skip
    z3 = m.add_operand(T.TENSOR_FLOAT32, (1, 9, 7, 8))
    m.add_operation(Op.RELU1, [c1], [z3])
    # swish: a 1x1 CONV_2D (no activation) -> LOGISTIC -> MUL(conv, logistic)
    c2 = m.add_operand(T.TENSOR_FLOAT32, (1, 9, 7, 8))
    m.add_operation(Op.CONV_2D, [img, _const(m, 4 * RNG.standard_normal((8, 1, 1, 5))), _const(m, RNG.standard_normal(8)),
                                 i32(1), i32(1), i32(1), i32(0)], [c2])  # fmt: skip
    sig = m.add_operand(T.TENSOR_FLOAT32, (1, 9, 7, 8))
    m.add_operation(Op.LOGISTIC, [c2], [sig])
    z5 = m.add_operand(T.TENSOR_FLOAT32, (1, 9, 7, 8))
    m.add_operation(Op.MUL, [sig, c2, i32(0)], [z5])

    xs = m.add_operand(T.TENSOR_FLOAT32, (2, 24))
    rs = m.add_operand(T.TENSOR_FLOAT32, (2, 20))
    ys = m.add_operand(T.TENSOR_FLOAT32, (2, 20))
    m.add_operation(Op.FULLY_CONNECTED, [xs, _const(m, RNG.standard_normal((20, 24))), _const(m, RNG.standard_normal(20)), i32(0)], [ys])
    z4 = m.add_operand(T.TENSOR_FLOAT32, (2, 20))
    m.add_operation(Op.ADD, [ys, rs, i32(0)], [z4])
    m.identify_inputs_and_outputs([x, r, img, res, xs, rs], [z1, z2, z3, z4, z5])
    m.finish()
    return m


def test_fused_epilogues_bit_identical_to_unfused() -> None:
    m = _fc_add_model()
    inputs = [RNG.standard_normal(m.operands[i].dims).astype(np.float32) for i in m.inputs]
    fused, unfused = _compile(m), _compile(m, fuse=False)
    want = [y.tobytes() for y in execute(m, unfused, inputs, 1)]
    for threads in (1, 2):
        assert [y.tobytes() for y in execute(m, fused, inputs, threads)] == want
    z1 = execute(m, fused, inputs, 1)[0]
    assert z1.max() <= 6.0 and z1.min() >= 0.0  # the ADD's RELU6


def test_every_producer_of_the_model_is_fused() -> None:
    """The five producers and their consumers (swish: the LOGISTIC and the
    MUL) are marked (so the test above compares fused code), and the GEMM
    kernels carry the epilogues."""
    m = _fc_add_model()
    module, _ = driver.shaped_module(m, driver.static_input_infos(m))
    passes_pipeline.run_passes(module, ["nnc-fuse-epilogues"])
    text = str(module)
    assert text.count(f"{{{PRODUCER_ATTR}}}") == 5 and text.count(f"{{{CONSUMER_ATTR}}}") == 6
    passes_pipeline.run_passes(module, ["convert-nnapi-to-linalg"])
    kernels = set(re.findall(r'nnc.kernel = "(nnc_gemm_[^"]*)"', str(module)))
    assert any(k.endswith("_add_relu6") for k in kernels) and any(k.endswith("_then_relu1") for k in kernels)
    assert any(k.endswith("_swish_then_none") for k in kernels)


# -- padding fused into CONV_2D --------------------------------------------------------------------


def _conv_ref(x: np.ndarray, w: np.ndarray, b: np.ndarray, pads: tuple[int, int, int, int], stride: int, dil: int) -> np.ndarray:
    """NHWC conv in float64 with explicit (left, right, top, bottom) zero padding."""
    left, right, top, bottom = pads
    xp = np.pad(x.astype(np.float64), ((0, 0), (top, bottom), (left, right), (0, 0)))
    oc, fh, fw, _ = w.shape
    oh = (xp.shape[1] - (fh - 1) * dil - 1) // stride + 1
    ow = (xp.shape[2] - (fw - 1) * dil - 1) // stride + 1
    out = np.broadcast_to(b.astype(np.float64), (x.shape[0], oh, ow, oc)).copy()
    for kh in range(fh):
        for kw in range(fw):
            win = xp[:, kh * dil : kh * dil + (oh - 1) * stride + 1 : stride, kw * dil : kw * dil + (ow - 1) * stride + 1 : stride]
            out += win @ w[:, kh, kw, :].astype(np.float64).T
    return out


#: (input NHWC, filter (out, h, w), explicit pads (l, r, t, b), stride, dilation): every
#: one has a padded border and at least half its pixels interior (the clipped-window path)
PADDED_CONVS = [((2, 10, 9, 3), (5, 3, 3), (1, 1, 1, 1), 1, 1), ((1, 12, 11, 4), (6, 5, 3), (1, 1, 2, 2), 1, 1),
                ((1, 16, 16, 2), (3, 3, 3), (2, 2, 2, 2), 1, 2), ((1, 16, 15, 3), (4, 3, 3), (0, 1, 0, 1), 2, 1)]  # fmt: skip


def test_padding_fused_conv_matches_float64() -> None:
    m = nnc.Model()
    i32 = lambda v: _scalar(m, T.INT32, np.int32(v))
    ins, outs, refs, values = [], [], [], []
    for shape, (oc, fh, fw), pads, stride, dil in PADDED_CONVS:
        w = RNG.standard_normal((oc, fh, fw, shape[3])).astype(np.float32)
        b = RNG.standard_normal(oc).astype(np.float32)
        xv = RNG.standard_normal(shape).astype(np.float32)
        ref = _conv_ref(xv, w, b, pads, stride, dil)
        x = m.add_operand(T.TENSOR_FLOAT32, shape)
        y = m.add_operand(T.TENSOR_FLOAT32, ref.shape)
        layout = _scalar(m, T.BOOL, False)
        m.add_operation(Op.CONV_2D, [x, _const(m, w), _const(m, b), *map(i32, pads), i32(stride), i32(stride), i32(0),
                                     layout, i32(dil), i32(dil)], [y])  # fmt: skip
        ins.append(x), outs.append(y), refs.append(ref), values.append(xv)
    m.identify_inputs_and_outputs(ins, outs)
    m.finish()
    module, _ = driver.shaped_module(m, driver.static_input_infos(m))
    passes_pipeline.run_passes(module, ["nnc-fuse-epilogues", "convert-nnapi-to-linalg"])
    assert "memref.subview" not in str(module)  # no padded copy
    comp = _compile(m)
    got = execute(m, comp, values, 1)
    for g, ref in zip(got, refs):
        assert np.abs(g - ref).max() <= 1e-5 + 1e-5 * np.abs(ref).max()
    assert [y.tobytes() for y in execute(m, comp, values, 2)] == [y.tobytes() for y in got]
