"""GROUPED_CONV_2D (not in the conformance corpus) against a numpy reference.

Random shapes, strides, groups, explicit and implicit padding, both layouts,
every implemented type: float32 within float tolerance; the quantised types
(8-bit asymmetric and signed, per-tensor filters and per-channel
TENSOR_QUANT8_SYMM_PER_CHANNEL filters) bit for bit against a transcription
of Android's reference integer arithmetic (``GroupedConv2D.cpp``:
``GetQuantizedConvolutionMultiplier``, TFLite's ``QuantizeMultiplier`` and
``MultiplyByQuantizedMultiplier``), written here from those definitions.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op

F32, U8, S8, PCH = T.TENSOR_FLOAT32, T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED, T.TENSOR_QUANT8_SYMM_PER_CHANNEL
SAME, VALID = 1, 2

# -- reference ---------------------------------------------------------------------------------


def _quantize_multiplier(m: float) -> tuple[int, int]:
    """TFLite's QuantizeMultiplier: (q, shift) with m = q * 2^(shift - 31)."""
    if m == 0:
        return 0, 0
    frac, shift = math.frexp(m)
    q = round(frac * (1 << 31))  # std::round: half away from zero (frac > 0)
    if q == 1 << 31:
        q //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    return q, shift


def _mbqm(x: int, q: int, shift: int) -> int:
    """TFLite's MultiplyByQuantizedMultiplier on int32."""
    left, right = max(shift, 0), max(-shift, 0)
    a = (x * (1 << left) + 2**31) % 2**32 - 2**31  # int32 wrap of the left shift
    ab = a * q
    nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
    t = ab + nudge
    hi = t // 2**31 if t >= 0 else -((-t) // 2**31)  # C division truncates
    if a == q == -(2**31):
        hi = 2**31 - 1
    mask = (1 << right) - 1
    rem = hi & mask
    threshold = (mask >> 1) + (1 if hi < 0 else 0)
    return (hi >> right) + (1 if rem > threshold else 0)


def _f32(v: float) -> float:
    return float(np.float32(v))


def _act_range(act: int, lo: int, hi: int, scale: float, zp: int) -> tuple[int, int]:
    """CalculateActivationRange{Uint8,Int8}."""

    def qz(v: float) -> int:
        r = float(np.float32(v) / np.float32(scale))
        return zp + int(math.copysign(math.floor(abs(r) + 0.5), r))  # std::round

    if act == 1:
        return max(lo, qz(0.0)), hi
    if act == 2:
        return max(lo, qz(-1.0)), min(hi, qz(1.0))
    if act == 3:
        return max(lo, qz(0.0)), min(hi, qz(6.0))
    return lo, hi


def _padding(size: int, stride: int, filt: int, scheme: int) -> tuple[int, int]:
    """Android's calculateExplicitPadding (no dilation)."""
    if scheme != SAME:
        return 0, 0
    out = (size + stride - 1) // stride
    need = (out - 1) * stride + filt
    if need <= size:
        return 0, 0
    head = (need - size) // 2
    return head, need - size - head


def _grouped_sums(x: np.ndarray, w: np.ndarray, pads, strides, groups: int) -> np.ndarray:
    """sum over the window of x * w per output (NHWC, x and w of any numeric
    dtype, zero padding): the reference's loops, vectorised over taps."""
    n, h, wd, c = x.shape
    oc, fh, fw, cig = w.shape
    left, right, top, bottom = pads
    sw, sh = strides
    oh = (h - fh + sh + top + bottom) // sh
    ow = (wd - fw + sw + left + right) // sw
    xp = np.zeros((n, h + top + bottom + fh, wd + left + right + fw, c), x.dtype)
    xp[:, top : top + h, left : left + wd] = x
    cog = oc // groups
    out = np.zeros((n, oh, ow, oc), x.dtype)
    for g in range(groups):
        wg = w[g * cog : (g + 1) * cog]
        for i in range(fh):
            for j in range(fw):
                patch = xp[:, i : i + sh * oh : sh, j : j + sw * ow : sw, g * cig : (g + 1) * cig]
                out[..., g * cog : (g + 1) * cog] += patch @ wg[:, i, j, :].T
    return out


# -- cases ---------------------------------------------------------------------------------------


def _case(seed: int, qtype: T | None, per_channel: bool):
    """Random sizes and parameters, the padding valid for Android."""
    rng = np.random.default_rng(seed)
    groups = int(rng.integers(1, 5))
    cig, cog = int(rng.integers(1, 5)), int(rng.integers(1, 4))
    if seed in WIDE:  # whole vectors of channels and a tail
        cig, cog = int(rng.integers(5, 9)), int(rng.integers(9, 20))
    fh, fw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    n, h, wd = int(rng.integers(1, 3)), int(rng.integers(fh, 8)), int(rng.integers(fw, 8))
    explicit = bool(seed % 2)
    if explicit:
        pads = tuple(int(rng.integers(0, f)) for f in (fw, fw, fh, fh))
        scheme = 0
    else:
        scheme = SAME if rng.random() < 0.6 else VALID
        pads = (*_padding(wd, sw, fw, scheme), *_padding(h, sh, fh, scheme))
    act = int(rng.integers(0, 4))
    return rng, dict(groups=groups, cig=cig, cog=cog, fh=fh, fw=fw, sh=sh, sw=sw, n=n, h=h, w=wd,
                     explicit=explicit, pads=pads, scheme=scheme, act=act)


def _build(p: dict, x, w, b, xt: T, wt: T, xq: dict, wq: dict, bq: dict, yq: dict, nchw: bool,
           filter_as_input: bool, scales=None):
    m = nnc.Model()
    to_layout = (lambda a: a.transpose(0, 3, 1, 2)) if nchw else (lambda a: a)
    xs = to_layout(x)
    xi = m.add_operand(xt, list(xs.shape), **xq)
    wi = m.add_operand(wt, list(w.shape), **wq)
    if scales is not None:
        m.set_operand_symm_per_channel_quant_params(wi, scales, 0)
    bi = m.add_operand(xt if xt in (F32, T.TENSOR_FLOAT16) else T.TENSOR_INT32, list(b.shape), **bq)
    m.set_operand_value(bi, b)
    feeds = [xs]
    ins = [xi]
    if filter_as_input:
        ins.append(wi)
        feeds.append(w)
    else:
        m.set_operand_value(wi, w)

    def scalar(t: T, v) -> int:
        i = m.add_operand(t)
        m.set_operand_value(i, v)
        return i

    left, right, top, bottom = p["pads"]
    if p["explicit"]:
        pad_ops = [scalar(T.INT32, v) for v in (left, right, top, bottom)]
    else:
        pad_ops = [scalar(T.INT32, p["scheme"])]
    params = [*pad_ops, scalar(T.INT32, p["sw"]), scalar(T.INT32, p["sh"]), scalar(T.INT32, p["groups"]),
              scalar(T.INT32, p["act"]), scalar(T.BOOL, nchw)]
    oh = (p["h"] - p["fh"] + p["sh"] + top + bottom) // p["sh"]
    ow = (p["w"] - p["fw"] + p["sw"] + left + right) // p["sw"]
    oc = p["groups"] * p["cog"]
    dims = [p["n"], oc, oh, ow] if nchw else [p["n"], oh, ow, oc]
    y = m.add_operand(xt, dims, **yq)
    m.add_operation(Op.GROUPED_CONV_2D, [xi, wi, bi, *params], [y])
    m.identify_inputs_and_outputs(ins, [y])
    m.finish()
    [out] = nnc.compile(m).run(*feeds)
    return out.transpose(0, 2, 3, 1) if nchw else out


WIDE = (15, 16, 17)
CASES = [  # (seed, input type, per-channel filter, layout NCHW, filter a model input)
    (1, F32, False, False, False), (2, F32, False, True, False), (3, F32, False, False, True),
    (4, F32, False, True, True), (5, F32, False, False, False), (6, F32, False, False, False),
    (7, U8, False, False, False), (8, U8, False, True, False), (9, U8, True, False, True),
    (10, S8, False, False, True), (11, S8, True, True, False), (12, S8, True, False, False),
    (13, U8, True, True, False), (14, S8, False, True, False),
    (15, F32, False, False, False), (16, F32, False, False, True), (17, S8, True, False, False),
]  # fmt: skip


@pytest.mark.parametrize("seed,xt,per_channel,nchw,filter_as_input", CASES,
                         ids=[f"{c[0]}-{c[1].name}-{'pch' if c[2] else 'pt'}-{'nchw' if c[3] else 'nhwc'}"
                              f"{'-winput' if c[4] else ''}" for c in CASES])
def test_grouped_conv_2d(seed: int, xt: T, per_channel: bool, nchw: bool, filter_as_input: bool) -> None:
    rng, p = _case(seed, xt, per_channel)
    G, cig, cog = p["groups"], p["cig"], p["cog"]
    oc = G * cog
    xshape = (p["n"], p["h"], p["w"], G * cig)
    wshape = (oc, p["fh"], p["fw"], cig)
    strides = (p["sw"], p["sh"])
    if xt == F32:
        x = rng.standard_normal(xshape).astype(np.float32)
        w = rng.standard_normal(wshape).astype(np.float32)
        b = rng.standard_normal(oc).astype(np.float32)
        y = _build(p, x, w, b, F32, F32, {}, {}, {}, {}, nchw, filter_as_input)
        want = _grouped_sums(x.astype(np.float64), w.astype(np.float64), p["pads"], strides, G) + b
        lo, hi = {0: (-np.inf, np.inf), 1: (0, np.inf), 2: (-1, 1), 3: (0, 6)}[p["act"]]
        np.testing.assert_allclose(y, np.clip(want, lo, hi), rtol=1e-5, atol=1e-5)
        return
    lo, hi = (0, 255) if xt == U8 else (-128, 127)
    dtype = np.uint8 if xt == U8 else np.int8
    x = rng.integers(lo, hi + 1, xshape).astype(dtype)
    xq = dict(scale=_f32(rng.uniform(0.01, 0.1)), zero_point=int(rng.integers(lo, hi + 1)))
    yq = dict(scale=_f32(rng.uniform(0.05, 0.5)), zero_point=int(rng.integers(lo, hi + 1)))
    if per_channel:
        wt, w = PCH, rng.integers(-127, 128, wshape).astype(np.int8)
        scales = [_f32(s) for s in rng.uniform(0.005, 0.05, oc)]
        wq, w_zp = {}, 0
        bias_scales = [_f32(np.float32(xq["scale"]) * np.float32(s)) for s in scales]
        bq = {}
    else:
        wt, w = xt, rng.integers(lo, hi + 1, wshape).astype(dtype)
        scales = None
        wq = dict(scale=_f32(rng.uniform(0.005, 0.05)), zero_point=int(rng.integers(lo, hi + 1)))
        w_zp = wq["zero_point"]
        bias_scales = [_f32(np.float32(xq["scale"]) * np.float32(wq["scale"]))] * oc
        bq = dict(scale=bias_scales[0], zero_point=0)
    b = rng.integers(-2000, 2000, oc).astype(np.int32)
    y = _build(p, x, w, b, xt, wt, xq, wq, bq, yq, nchw, filter_as_input, scales)
    # The reference: int32 sums of (x - x_zp) * (w - w_zp) (padding adds
    # nothing), plus the bias, requantised per output channel, clamped.
    acc = _grouped_sums(x.astype(np.int64) - xq["zero_point"], w.astype(np.int64) - w_zp, p["pads"], strides, G) + b
    act_lo, act_hi = _act_range(p["act"], lo, hi, yq["scale"], yq["zero_point"])
    want = np.empty(acc.shape, np.int64)
    for k in range(oc):
        product = _f32(np.float32(xq["scale"]) * np.float32(scales[k] if per_channel else wq["scale"]))
        q, shift = _quantize_multiplier(product / float(np.float32(yq["scale"])))
        col = acc[..., k].reshape(-1)
        want[..., k] = np.array([_mbqm(int(v), q, shift) for v in col]).reshape(acc.shape[:-1])
    want = np.clip(want + yq["zero_point"], act_lo, act_hi)
    np.testing.assert_array_equal(y.astype(np.int64), want)


def test_grouped_conv_2d_rejects_channels_not_divisible_by_groups() -> None:
    m = nnc.Model()
    x = m.add_operand(F32, [1, 3, 3, 4])
    w = m.add_operand(F32, [3, 1, 1, 2])
    b = m.add_operand(F32, [3])
    m.set_operand_value(w, np.ones((3, 1, 1, 2), np.float32))
    m.set_operand_value(b, np.zeros(3, np.float32))
    params = []
    for t, v in ((T.INT32, VALID), (T.INT32, 1), (T.INT32, 1), (T.INT32, 2), (T.INT32, 0), (T.BOOL, False)):
        i = m.add_operand(t)
        m.set_operand_value(i, v)
        params.append(i)
    y = m.add_operand(F32, [1, 3, 3, 3])
    with pytest.raises(nnc.BadDataError):
        m.add_operation(Op.GROUPED_CONV_2D, [x, w, b, *params], [y])
        m.identify_inputs_and_outputs([x], [y])
        m.finish()
