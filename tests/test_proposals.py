"""AXIS_ALIGNED_BBOX_TRANSFORM and GENERATE_PROPOSALS against a numpy
transcription of Android's ``GenerateProposals.cpp`` (float32 arithmetic in
the reference's order).  The corpus covers the operand types and layouts;
these add invalid data (batch index out of range, x2 < x1), the quantised
rounding and zero padding rows of a bounded box list."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op

F = np.float32


def bbox_transform_ref(rois: np.ndarray, deltas: np.ndarray, batch: np.ndarray, image: np.ndarray) -> np.ndarray:
    """``bboxTransformFloat32``: float32 operations in the reference's order."""
    out = np.zeros(deltas.shape, F)
    two = F(2)
    for r in range(rois.shape[0]):
        x1, y1, x2, y2 = (F(v) for v in rois[r])
        h, w = F(image[batch[r], 0]), F(image[batch[r], 1])
        bw, bh, cx, cy = x2 - x1, y2 - y1, (x1 + x2) / two, (y1 + y2) / two
        for c in range(deltas.shape[1] // 4):
            dx, dy, dw, dh = (F(v) for v in deltas[r, 4 * c : 4 * c + 4])
            nw, nh = np.exp(dw) * bw, np.exp(dh) * bh
            nx, ny = cx + dx * bw, cy + dy * bh
            box = (nx - nw / two, ny - nh / two, nx + nw / two, ny + nh / two)
            lim = (w, h, w, h)
            out[r, 4 * c : 4 * c + 4] = [min(max(v, F(0)), m) for v, m in zip(box, lim)]
    return out


def _bbox_model(rt: T, dt: T, n: int, classes: int, batches: int) -> nnc.Compilation:
    m = nnc.Model()
    q16 = {"scale": 0.125, "zero_point": 0} if rt == T.TENSOR_QUANT16_ASYMM else {}
    dq = {} if dt == T.TENSOR_FLOAT32 else {"scale": 0.05, "zero_point": 128 if dt == T.TENSOR_QUANT8_ASYMM else 0}
    r = m.add_operand(rt, [n, 4], **q16)
    d = m.add_operand(dt, [n, 4 * classes], **dq)
    b = m.add_operand(T.TENSOR_INT32, [n])
    i = m.add_operand(rt, [batches, 2], **q16)
    o = m.add_operand(rt, [n, 4 * classes], **q16)
    m.add_operation(Op.AXIS_ALIGNED_BBOX_TRANSFORM, [r, d, b, i], [o])
    m.identify_inputs_and_outputs([r, d, b, i], [o])
    m.finish()
    return nnc.compile(m)


RNG = np.random.default_rng(15)


def _boxes(n: int) -> np.ndarray:
    lo = RNG.uniform(0, 100, (n, 2)).astype(F)
    return np.concatenate([lo, lo + RNG.uniform(0, 50, (n, 2)).astype(F)], axis=1)


def test_bbox_transform_float32() -> None:
    n, classes, batches = 7, 3, 2
    rois = _boxes(n)
    deltas = RNG.uniform(-1.5, 1.5, (n, 4 * classes)).astype(F)
    batch = np.array([0, 0, 0, 1, 1, 1, 1], np.int32)
    image = np.array([[80, 120], [150, 90]], F)
    [out] = _bbox_model(T.TENSOR_FLOAT32, T.TENSOR_FLOAT32, n, classes, batches).run(rois, deltas, batch, image)
    np.testing.assert_allclose(out, bbox_transform_ref(rois, deltas, batch, image), rtol=2e-6, atol=1e-5)


def test_bbox_transform_zero_rows_are_valid() -> None:
    """Rows of zeros (the padding beyond a bounded box list's count) are
    boxes of image 0 and give zero boxes, never an error."""
    n = 4
    rois = np.zeros((n, 4), F)
    rois[0] = [1, 2, 30, 40]
    deltas = np.zeros((n, 4), F)
    deltas[0] = [0.1, -0.2, 0.3, 0.0]
    batch = np.zeros(n, np.int32)
    image = np.array([[64, 64]], F)
    [out] = _bbox_model(T.TENSOR_FLOAT32, T.TENSOR_FLOAT32, n, 1, 1).run(rois, deltas, batch, image)
    np.testing.assert_allclose(out, bbox_transform_ref(rois, deltas, batch, image), rtol=2e-6)
    assert not out[1:].any()


@pytest.mark.parametrize("dt", [T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED])
def test_bbox_transform_quant(dt: T) -> None:
    """Dequantise, transform in float32, ``round(x / 0.125)`` half away from zero."""
    n, classes = 5, 2
    rois = RNG.integers(0, 400, (n, 4)).astype(np.uint16)
    rois[:, 2:] = rois[:, :2] + RNG.integers(0, 200, (n, 2)).astype(np.uint16)
    zp, storage = (128, np.uint8) if dt == T.TENSOR_QUANT8_ASYMM else (0, np.int8)
    info = np.iinfo(storage)
    qd = RNG.integers(info.min, info.max + 1, (n, 4 * classes)).astype(storage)
    batch = np.array([0, 1, 1, 2, 2], np.int32)
    image = np.array([[512, 512], [800, 300], [256, 1024]], np.uint16)
    [out] = _bbox_model(T.TENSOR_QUANT16_ASYMM, dt, n, classes, 3).run(rois, qd, batch, image)
    real = bbox_transform_ref(
        (rois.astype(F) - F(0)) * F(0.125),
        (qd.astype(F) - F(zp)) * F(0.05),
        batch,
        (image.astype(F) - F(0)) * F(0.125),
    )
    want = np.clip(np.sign(real / F(0.125)) * np.floor(np.abs(real / F(0.125)) + F(0.5)), 0, 65535).astype(np.uint16)
    # exp may differ from the C library's by an ulp: at most one quantum
    assert np.abs(out.astype(np.int32) - want.astype(np.int32)).max() <= 1
    assert (out == want).mean() > 0.95


@pytest.mark.parametrize("bad", ["batch", "negative_batch", "x2_below_x1"])
def test_bbox_transform_invalid_data_fails_the_execution(bad: str) -> None:
    """The reference fails on a batch index outside image_info and on a box
    with x2 < x1: nnc reports it after computing on a clamped index."""
    rois = np.array([[0, 0, 10, 10], [5, 5, 6, 6]], F)
    batch = np.array([0, 0], np.int32)
    if bad == "batch":
        batch[1] = 2
    elif bad == "negative_batch":
        batch[0] = -1
    else:
        rois[1] = [6, 5, 5, 6]
    comp = _bbox_model(T.TENSOR_FLOAT32, T.TENSOR_FLOAT32, 2, 1, 2)
    with pytest.raises(nnc.OpFailedError, match="AXIS_ALIGNED_BBOX_TRANSFORM"):
        comp.run(rois, np.zeros((2, 4), F), batch, np.full((2, 2), 32, F))


def test_bbox_transform_quant16_scale_is_checked() -> None:
    m = nnc.Model()
    r = m.add_operand(T.TENSOR_QUANT16_ASYMM, [2, 4], scale=0.25, zero_point=0)
    d = m.add_operand(T.TENSOR_QUANT8_ASYMM, [2, 4], scale=0.05, zero_point=128)
    b = m.add_operand(T.TENSOR_INT32, [2])
    i = m.add_operand(T.TENSOR_QUANT16_ASYMM, [1, 2], scale=0.125, zero_point=0)
    o = m.add_operand(T.TENSOR_QUANT16_ASYMM, [2, 4], scale=0.125, zero_point=0)
    with pytest.raises(nnc.BadDataError):
        m.add_operation(Op.AXIS_ALIGNED_BBOX_TRANSFORM, [r, d, b, i], [o])
        m.identify_inputs_and_outputs([r, d, b, i], [o])
        m.finish()


# -- GENERATE_PROPOSALS ---------------------------------------------------------------------------


def _iou(a, b) -> np.float32:
    """``getIoUAxisAligned``."""
    area_a = (a[2] - a[0]) * (a[3] - a[1])
    area_b = (b[2] - b[0]) * (b[3] - b[1])
    x1, x2, y1, y2 = max(a[0], b[0]), min(a[2], b[2]), max(a[1], b[1]), min(a[3], b[3])
    inter = max(x2 - x1, F(0)) * max(y2 - y1, F(0))
    with np.errstate(all="ignore"):
        return inter / (area_a + area_b - inter)


def _hard_nms(scores: list, boxes: list, thr: np.float32, max_det: int, sel: list) -> list:
    """``hardNmsSingleClass``, in place and in its order."""
    start, end = 0, len(sel)
    max_det = len(sel) if max_det < 0 else max_det
    while start < end and start < max_det:
        best = start
        for j in range(start + 1, end):
            if scores[sel[best]] < scores[sel[j]]:
                best = j
        sel[best], sel[start] = sel[start], sel[best]
        i = start + 1
        while i < end:
            if _iou(boxes[sel[i]], boxes[sel[start]]) >= thr:
                end -= 1
                sel[i], sel[end] = sel[end], sel[i]
            else:
                i += 1
        start += 1
    return sel[:start]


def generate_proposals_ref(scores, deltas, anchors, image, hs, ws, pre, post, thr, min_size, nchw=False):
    """``generateProposalsNhwcFloat32Compute`` on float32 data -> (scores,
    rois, batch indices).  The pre-NMS sort is stable (nnc's order among
    equal scores; the reference's std::sort leaves it to the C++ library)."""
    if nchw:
        scores, deltas = scores.transpose(0, 2, 3, 1), deltas.transpose(0, 2, 3, 1)
    batches, height, width, num_anchors = scores.shape
    out_s, out_r, out_b = [], [], []
    two, lo = F(2), F(min_size)
    for b in range(batches):
        rois, deltas_b, sc = [], [], []
        for h in range(height):
            for w in range(width):
                hsh, wsh = F(h) * F(hs), F(w) * F(ws)
                for a in range(num_anchors):
                    x1, y1, x2, y2 = (F(v) for v in anchors[a])
                    rois.append([x1 + wsh, y1 + hsh, x2 + wsh, y2 + hsh])
                    deltas_b.append(deltas[b, h, w, 4 * a : 4 * a + 4])
                    sc.append(F(scores[b, h, w, a]))
        n = len(sc)
        boxes = bbox_transform_ref(np.array(rois, F).reshape(n, 4), np.array(deltas_b, F).reshape(n, 4),
                                   np.zeros(n, np.int32), image[b : b + 1]).tolist()  # fmt: skip
        boxes = [[F(v) for v in box] for box in boxes]
        sel = list(range(n))
        if 0 < pre < n:
            sel = sorted(sel, key=lambda i: -sc[i])[:pre]
        keep = []
        for i in sel:
            x1, y1, x2, y2 = boxes[i]
            bw, bh = x2 - x1, y2 - y1
            if bw > lo and bh > lo and x1 + bw / two < F(image[b, 1]) and y1 + bh / two < F(image[b, 0]):
                keep.append(i)
        for i in _hard_nms(sc, boxes, F(thr), post, keep):
            out_s.append(sc[i])
            out_r.append(boxes[i])
            out_b.append(b)
    return np.array(out_s, F), np.array(out_r, F).reshape(-1, 4), np.array(out_b, np.int32)


def _proposals_model(t: T, shape: tuple[int, int, int, int], params: tuple, nchw: bool = False,
                     quant: dict | None = None) -> nnc.CompiledModel:  # fmt: skip
    """GENERATE_PROPOSALS with output sizes left open (they depend on the data)."""
    b, h, w, a = shape
    m = nnc.Model()
    quant = quant or {}
    qa, qi = ((T.TENSOR_QUANT16_SYMM, T.TENSOR_QUANT16_ASYMM) if quant else (t, t))
    box = {"scale": 0.125, "zero_point": 0} if quant else {}
    s = m.add_operand(t, [b, a, h, w] if nchw else [b, h, w, a], **quant.get("scores", {}))
    d = m.add_operand(t, [b, 4 * a, h, w] if nchw else [b, h, w, 4 * a], **quant.get("deltas", {}))
    an = m.add_operand(qa, [a, 4], **box)
    im = m.add_operand(qi, [b, 2], **box)
    ins = [s, d, an, im]
    fs = T.FLOAT16 if t == T.TENSOR_FLOAT16 else T.FLOAT32
    hs, ws, pre, post, thr, min_size = params
    for st, v in ((fs, hs), (fs, ws), (T.INT32, pre), (T.INT32, post), (fs, thr), (fs, min_size), (T.BOOL, nchw)):
        k = m.add_operand(st)
        m.set_operand_value(k, v)
        ins.append(k)
    os_ = m.add_operand(t, [0], **quant.get("scores", {}))
    orr = m.add_operand(qi, [0, 4], **box)
    ob = m.add_operand(T.TENSOR_INT32, [0])
    m.add_operation(Op.GENERATE_PROPOSALS, ins, [os_, orr, ob])
    m.identify_inputs_and_outputs([s, d, an, im], [os_, orr, ob])
    m.finish()
    return nnc.compile(m)


@functools.cache
def _float32_proposals(shape: tuple[int, ...], params: tuple) -> nnc.CompiledModel:
    """Compiled once per module for the cases that share it."""
    return _proposals_model(T.TENSOR_FLOAT32, shape, params)


def _compute(comp: nnc.CompiledModel, *inputs: np.ndarray) -> list[np.ndarray]:
    """One execution with output buffers of room for 256 boxes; the outputs
    cut to the dimensions the execution reports (0 boxes included), after
    checking nothing was written past them."""
    ex = nnc.Execution(comp.compilation)
    for k, x in enumerate(inputs):
        ex.set_input(k, x)
    dtypes = [inputs[0].dtype, np.uint16 if inputs[0].dtype in (np.uint8, np.int8) else inputs[0].dtype, np.int32]
    bufs = [np.full(256 * w, 77, dt) for w, dt in zip((1, 4, 1), dtypes)]
    for k, b in enumerate(bufs):
        ex.set_output(k, b)
    ex.compute()
    dims = [tuple(ex.get_output_operand_dimensions(k)) for k in range(3)]
    n = dims[0][0]
    assert dims == [(n,), (n, 4), (n,)]
    assert all((b[b.size // 256 * n :] == 77).all() for b in bufs)
    return [b[: b.size // 256 * n].reshape(d) for b, d in zip(bufs, dims)]


ANCHORS = np.array([[0, 6, 16, 10], [6, 0, 10, 16], [3, 5, 13, 11], [5, 3, 11, 13]], F)


def _proposal_inputs(shape=(2, 4, 4, 4), ties: bool = False):
    b, h, w, a = shape
    rng = np.random.default_rng(7)
    if ties:  # a few distinct scores: the sort's and NMS's order among equals decide
        scores = rng.integers(0, 4, shape).astype(F) / F(4)
    else:
        scores = (rng.permutation(b * h * w * a).reshape(shape) / (b * h * w * a)).astype(F)
    deltas = rng.uniform(-1, 1, (b, h, w, 4 * a)).astype(F)
    image = np.array([[64, 64], [32, 48]], F)[:b]
    return scores, deltas, ANCHORS[:a], image


PARAMS = {
    "sorted": (10.0, 10.0, 32, 16, 0.2, 1.0),
    "no_limits": (10.0, 10.0, -1, -1, 0.3, 1.0),
    "post_limit_only": (8.0, 8.0, 0, 5, 0.5, 0.5),
    "no_suppression": (10.0, 10.0, 40, 100, 1.1, 0.0),
    "post_zero_keeps_none": (10.0, 10.0, -1, 0, 0.3, 1.0),
}


@pytest.mark.parametrize("ties", [False, True], ids=["distinct", "ties"])
@pytest.mark.parametrize("params", PARAMS.values(), ids=PARAMS.keys())
def test_generate_proposals_float32(params: tuple, ties: bool) -> None:
    scores, deltas, anchors, image = _proposal_inputs(ties=ties)
    comp = _float32_proposals(scores.shape, params)
    got = _compute(comp, scores, deltas, anchors, image)
    want = generate_proposals_ref(scores, deltas, anchors, image, *params)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=2e-6, atol=1e-5)
    np.testing.assert_array_equal(got[2], want[2])


def test_generate_proposals_nchw_reads_the_same_boxes() -> None:
    scores, deltas, anchors, image = _proposal_inputs()
    params = PARAMS["sorted"]
    nhwc = _compute(_float32_proposals(scores.shape, params), scores, deltas, anchors, image)
    comp = _proposals_model(T.TENSOR_FLOAT32, scores.shape, params, nchw=True)
    nchw = _compute(comp, scores.transpose(0, 3, 1, 2).copy(), deltas.transpose(0, 3, 1, 2).copy(), anchors, image)
    for a, b in zip(nhwc, nchw):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("t", [T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED])
def test_generate_proposals_quant(t: T) -> None:
    """Quantised scores come back as stored; boxes as ``round(x / 0.125)``."""
    scores, deltas, anchors, image = _proposal_inputs()
    zp = 0 if t == T.TENSOR_QUANT8_ASYMM else -128
    storage = np.uint8 if t == T.TENSOR_QUANT8_ASYMM else np.int8
    qs = (np.round(scores / F(0.005)) + zp).astype(storage)
    qd = np.clip(np.round(deltas / F(0.01)), -128, 127).astype(np.int8)
    qd = (qd.astype(np.int32) + 128).astype(np.uint8) if t == T.TENSOR_QUANT8_ASYMM else qd
    dzp = 128 if t == T.TENSOR_QUANT8_ASYMM else 0
    quant = {"scores": {"scale": 0.005, "zero_point": zp}, "deltas": {"scale": 0.01, "zero_point": dzp}}
    qa, qi = (anchors * 8).astype(np.int16), (image * 8).astype(np.uint16)
    params = PARAMS["sorted"]
    got = _compute(_proposals_model(t, scores.shape, params, quant=quant), qs, qd, qa, qi)
    want = generate_proposals_ref((qs.astype(F) - F(zp)) * F(0.005), (qd.astype(F) - F(dzp)) * F(0.01),
                                  qa.astype(F) * F(0.125), qi.astype(F) * F(0.125), *params)  # fmt: skip
    np.testing.assert_array_equal(got[0], (np.round(want[0] / F(0.005)) + zp).astype(storage))
    wb = np.round(want[1] / F(0.125))
    assert np.abs(got[1].astype(np.int32) - wb).max() <= 1
    np.testing.assert_array_equal(got[2], want[2])


def test_generate_proposals_float16() -> None:
    scores, deltas, anchors, image = _proposal_inputs()
    params = PARAMS["sorted"]
    h = [x.astype(np.float16) for x in (scores, deltas, anchors, image)]
    got = _compute(_proposals_model(T.TENSOR_FLOAT16, scores.shape, params), *h)
    want = generate_proposals_ref(*[x.astype(F) for x in h], *[F(np.float16(v)) if isinstance(v, float) else v
                                                              for v in params])  # fmt: skip
    np.testing.assert_array_equal(got[0], want[0].astype(np.float16))
    np.testing.assert_allclose(got[1].astype(F), want[1], rtol=2e-3, atol=2e-2)
    np.testing.assert_array_equal(got[2], want[2])


def test_generate_proposals_invalid_anchor_fails_the_execution() -> None:
    scores, deltas, anchors, image = _proposal_inputs((1, 2, 2, 2))
    anchors = anchors.copy()
    anchors[1] = [10, 0, 5, 16]  # x2 < x1
    comp = _proposals_model(T.TENSOR_FLOAT32, scores.shape, PARAMS["no_limits"])
    with pytest.raises(nnc.OpFailedError, match="GENERATE_PROPOSALS"):
        _compute(comp, scores, deltas, anchors, image)


def test_proposals_flow_through_fully_connected_into_bbox_transform() -> None:
    """The kept boxes' count flows: GENERATE_PROPOSALS -> FULLY_CONNECTED
    (deltas from the boxes) -> AXIS_ALIGNED_BBOX_TRANSFORM, whose rows
    beyond the count are padding (zero boxes of image 0)."""
    scores, deltas, anchors, image = _proposal_inputs((1, 3, 3, 2))
    params = PARAMS["sorted"]
    weights = RNG.uniform(-0.05, 0.05, (8, 4)).astype(F)
    bias = RNG.uniform(-0.2, 0.2, 8).astype(F)
    m = nnc.Model()
    s = m.add_operand(T.TENSOR_FLOAT32, list(scores.shape))
    d = m.add_operand(T.TENSOR_FLOAT32, list(deltas.shape))
    an = m.add_operand(T.TENSOR_FLOAT32, list(anchors.shape))
    im = m.add_operand(T.TENSOR_FLOAT32, list(image.shape))
    ins = [s, d, an, im]
    for st, v in zip((T.FLOAT32, T.FLOAT32, T.INT32, T.INT32, T.FLOAT32, T.FLOAT32, T.BOOL), (*params, False)):
        k = m.add_operand(st)
        m.set_operand_value(k, v)
        ins.append(k)
    gs, gr, gb = m.add_operand(T.TENSOR_FLOAT32, [0]), m.add_operand(T.TENSOR_FLOAT32, [0, 4]), m.add_operand(
        T.TENSOR_INT32, [0]
    )
    m.add_operation(Op.GENERATE_PROPOSALS, ins, [gs, gr, gb])
    w, b, act = m.add_operand(T.TENSOR_FLOAT32, [8, 4]), m.add_operand(T.TENSOR_FLOAT32, [8]), m.add_operand(T.INT32)
    m.set_operand_value(w, weights)
    m.set_operand_value(b, bias)
    m.set_operand_value(act, 0)
    fc = m.add_operand(T.TENSOR_FLOAT32, [0, 8])
    m.add_operation(Op.FULLY_CONNECTED, [gr, w, b, act], [fc])
    out = m.add_operand(T.TENSOR_FLOAT32, [0, 8])
    m.add_operation(Op.AXIS_ALIGNED_BBOX_TRANSFORM, [gr, fc, gb, im], [out])
    m.identify_inputs_and_outputs([s, d, an, im], [gs, out])
    m.finish()
    got_scores, got = nnc.compile(m).run(scores, deltas, anchors, image)
    want_scores, rois, batch = generate_proposals_ref(scores, deltas, anchors, image, *params)
    assert 0 < len(want_scores) < 9 * 2  # some boxes suppressed: the bound is not the count
    np.testing.assert_array_equal(got_scores, want_scores)
    want = bbox_transform_ref(rois, rois @ weights.T + bias, batch, image)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
