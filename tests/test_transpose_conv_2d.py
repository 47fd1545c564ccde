"""TRANSPOSE_CONV_2D cases the conformance corpus does not reach: strides
above the filter size (outputs no tap reaches), negative tail padding,
several images, wide channel counts and strides of 3, for the sub-pixel
phase decomposition nnc computes it with.  Float32 against numpy within
float tolerance, quantised bit for bit against Android's reference
arithmetic (the scatter loop of ``TransposeConv2D.cpp``, then
``MultiplyByQuantizedMultiplier``; helpers shared with
``test_grouped_conv_2d.py``).
"""

from __future__ import annotations

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from test_grouped_conv_2d import PCH, S8, U8, _act_range, _f32, _mbqm, _quantize_multiplier

F32 = T.TENSOR_FLOAT32


def _scatter(x: np.ndarray, w: np.ndarray, pads, strides, out_hw) -> np.ndarray:
    """The reference's loops (NHWC): every input pixel times every filter
    tap, added to the output pixel it lands on when that is inside."""
    n, h, wd, _ = x.shape
    k, fh, fw, _ = w.shape
    left, _, top, _ = pads
    sw, sh = strides
    oh, ow = out_hw
    out = np.zeros((n, oh, ow, k), x.dtype)
    for y in range(h):
        for xx in range(wd):
            for i in range(fh):
                for j in range(fw):
                    oy, ox = y * sh - top + i, xx * sw - left + j
                    if 0 <= oy < oh and 0 <= ox < ow:
                        out[:, oy, ox] += x[:, y, xx] @ w[:, i, j].T
    return out


CASES = [  # (seed, type, per-channel, nchw, filter a model input, (stride_w, stride_h), (filter_h, filter_w),
    #   (left, right, top, bottom), (channels in, out))
    (1, F32, False, False, False, (2, 2), (3, 3), (1, 0, 1, -1), (3, 5)),
    (2, F32, False, False, True, (3, 2), (2, 3), (0, 1, 0, 0), (20, 19)),
    (3, F32, False, False, False, (1, 3), (3, 4), (2, 2, 0, -2), (9, 17)),
    (4, F32, False, True, False, (2, 3), (4, 2), (1, 1, 2, 0), (2, 3)),
    (5, U8, False, False, False, (2, 2), (3, 3), (1, 1, 1, 0), (4, 3)),
    (6, S8, True, False, True, (3, 3), (2, 4), (0, -1, 1, 0), (3, 20)),
    (7, S8, True, True, False, (2, 1), (3, 2), (0, 0, 1, 1), (5, 2)),
    (8, F32, False, False, False, (2, 3), (2, 2), (0, 0, 0, 1), (3, 4)),  # rows no tap reaches
    (9, S8, True, False, False, (2, 2), (3, 3), (1, 0, 0, -1), (5, 20)),
    (10, U8, False, False, False, (1, 2), (3, 1), (0, 0, 1, 1), (3, 2)),
]  # fmt: skip


@pytest.mark.parametrize("seed,xt,per_channel,nchw,filter_as_input,strides,fsize,pads,chans", CASES,
                         ids=[str(c[0]) for c in CASES])
def test_transpose_conv_2d(seed, xt, per_channel, nchw, filter_as_input, strides, fsize, pads, chans) -> None:
    rng = np.random.default_rng(seed)
    n, h, wd = 2, int(rng.integers(2, 5)), int(rng.integers(2, 5))
    sw, sh = strides
    fh, fw = fsize
    left, right, top, bottom = pads
    cin, cout = chans
    oh, ow = h * sh + fh - sh - top - bottom, wd * sw + fw - sw - left - right
    act = int(rng.integers(0, 4))
    xshape, wshape = (n, h, wd, cin), (cout, fh, fw, cin)
    lo, hi = (0, 255) if xt == U8 else (-128, 127)
    scales = None
    if xt == F32:
        x, w = rng.standard_normal(xshape).astype(np.float32), rng.standard_normal(wshape).astype(np.float32)
        b = rng.standard_normal(cout).astype(np.float32)
        xq = wq = bq = yq = {}
        wt = F32
    else:
        dtype = np.uint8 if xt == U8 else np.int8
        x = rng.integers(lo, hi + 1, xshape).astype(dtype)
        xq = dict(scale=_f32(rng.uniform(0.01, 0.1)), zero_point=int(rng.integers(lo, hi + 1)))
        yq = dict(scale=_f32(rng.uniform(0.05, 0.5)), zero_point=int(rng.integers(lo, hi + 1)))
        if per_channel:
            wt, w = PCH, rng.integers(-127, 128, wshape).astype(np.int8)
            scales = [_f32(s) for s in rng.uniform(0.005, 0.05, cout)]
            wq, bq = {}, {}
        else:
            wt, w = xt, rng.integers(lo, hi + 1, wshape).astype(dtype)
            wq = dict(scale=_f32(rng.uniform(0.005, 0.05)), zero_point=int(rng.integers(lo, hi + 1)))
            bq = dict(scale=_f32(np.float32(xq["scale"]) * np.float32(wq["scale"])), zero_point=0)
        b = rng.integers(-2000, 2000, cout).astype(np.int32)

    m = nnc.Model()
    xs = x.transpose(0, 3, 1, 2) if nchw else x
    xi = m.add_operand(xt, list(xs.shape), **xq)
    wi = m.add_operand(wt, list(wshape), **wq)
    if scales is not None:
        m.set_operand_symm_per_channel_quant_params(wi, scales, 0)
    bi = m.add_operand(F32 if xt == F32 else T.TENSOR_INT32, [cout], **bq)
    m.set_operand_value(bi, b)
    ins, feeds = [xi], [xs]
    if filter_as_input:
        ins.append(wi)
        feeds.append(w)
    else:
        m.set_operand_value(wi, w)
    params = []
    for t, v in [(T.INT32, p) for p in pads] + [(T.INT32, sw), (T.INT32, sh), (T.INT32, act), (T.BOOL, nchw)]:
        i = m.add_operand(t)
        m.set_operand_value(i, v)
        params.append(i)
    y = m.add_operand(xt, [n, cout, oh, ow] if nchw else [n, oh, ow, cout], **yq)
    m.add_operation(Op.TRANSPOSE_CONV_2D, [xi, wi, bi, *params], [y])
    m.identify_inputs_and_outputs(ins, [y])
    m.finish()
    [got] = nnc.compile(m).run(*feeds)
    if nchw:
        got = got.transpose(0, 2, 3, 1)

    if xt == F32:
        want = _scatter(x.astype(np.float64), w.astype(np.float64), pads, strides, (oh, ow)) + b
        lo_f, hi_f = {0: (-np.inf, np.inf), 1: (0, np.inf), 2: (-1, 1), 3: (0, 6)}[act]
        np.testing.assert_allclose(got, np.clip(want, lo_f, hi_f), rtol=1e-5, atol=1e-5)
        return
    w_zp = 0 if per_channel else wq["zero_point"]
    acc = _scatter(x.astype(np.int64) - xq["zero_point"], w.astype(np.int64) - w_zp, pads, strides, (oh, ow)) + b
    want = np.empty(acc.shape, np.int64)
    for k in range(cout):
        product = _f32(np.float32(xq["scale"]) * np.float32(scales[k] if per_channel else wq["scale"]))
        q, shift = _quantize_multiplier(product / float(np.float32(yq["scale"])))
        want[..., k] = np.array([_mbqm(int(v), q, shift) for v in acc[..., k].reshape(-1)]).reshape(acc.shape[:-1])
    act_lo, act_hi = _act_range(act, lo, hi, yq["scale"], yq["zero_point"])
    np.testing.assert_array_equal(got.astype(np.int64), np.clip(want + yq["zero_point"], act_lo, act_hi))
