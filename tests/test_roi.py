"""ROI_ALIGN, ROI_POOLING and HEATMAP_MAX_KEYPOINT beyond the corpus
(which has them all, except a float HEATMAP_MAX_KEYPOINT):

* invalid run-time data (a batch index out of range, a box outside the map
  or upside down) fails the execution naming the operation, never crashes,
  and the same compiled model then runs valid data;
* zero-filled padding rows (what a data-dependent count leaves past the
  actual rois) are valid empty boxes of batch 0;
* NCHW gives the transposed NHWC result, bit for bit;
* float32 HEATMAP_MAX_KEYPOINT against a transcription of Android's
  ``heatmapMaxKeypointFloat32Nhwc``.

Compiled models are shared through a cache: each configuration compiles once.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op

Q8 = {"scale": 0.25, "zero_point": 128}
Q16 = {"scale": 0.125, "zero_point": 0}
NUM_ROIS = 3


def _layout(shape: tuple[int, ...], nchw: bool) -> list[int]:
    n, h, w, c = shape
    return [n, c, h, w] if nchw else [n, h, w, c]


@cache
def roi_model(op: Op, t: T, nchw: bool, sampling: int = 0) -> nnc.CompiledModel:
    """``op`` on a [2, 5, 6, 3] (NHWC) map with NUM_ROIS rois, 2x3 output,
    ratios 2 (height) and 1.5 (width)."""
    m = nnc.Model()
    quant = Q8 if t == T.TENSOR_QUANT8_ASYMM else {}
    x = m.add_operand(t, _layout((2, 5, 6, 3), nchw), **quant)
    rois = m.add_operand(T.TENSOR_QUANT16_ASYMM if quant else t, [NUM_ROIS, 4], **(Q16 if quant else {}))
    batch = m.add_operand(T.TENSOR_INT32, [NUM_ROIS])
    scalars = [(T.INT32, 2), (T.INT32, 3), (T.FLOAT32, 2.0), (T.FLOAT32, 1.5)]
    if op == Op.ROI_ALIGN:
        scalars += [(T.INT32, sampling), (T.INT32, sampling)]
    scalars.append((T.BOOL, nchw))
    ids = []
    for st, v in scalars:
        ids.append(m.add_operand(st))
        m.set_operand_value(ids[-1], v)
    out = m.add_operand(t, _layout((NUM_ROIS, 2, 3, 3), nchw), **quant)
    m.add_operation(op, [x, rois, batch, *ids], [out])
    m.identify_inputs_and_outputs([x, rois, batch], [out])
    m.finish()
    return nnc.compile(m)


def _map(t: T, nchw: bool) -> np.ndarray:
    x = np.random.default_rng(1).uniform(-4, 4, (2, 5, 6, 3))
    if t == T.TENSOR_QUANT8_ASYMM:
        x = np.random.default_rng(1).integers(0, 256, (2, 5, 6, 3)).astype(np.uint8)
    else:
        x = x.astype(np.float32)
    return x.transpose(0, 3, 1, 2).copy() if nchw else x


#: boxes (x1, y1, x2, y2) in image coordinates (the map is 10 high, 9 wide)
BOXES = np.array([[0.0, 0.0, 9.0, 10.0], [1.5, 2.0, 6.0, 7.5], [3.0, 1.0, 3.0, 1.0]], np.float32)
BATCH = np.array([1, 0, 1], np.int32)


def _rois(t: T, boxes: np.ndarray = BOXES) -> np.ndarray:
    return (boxes / 0.125).astype(np.uint16) if t == T.TENSOR_QUANT8_ASYMM else boxes.astype(np.float32)


def _run(op: Op, t: T, nchw: bool, boxes: np.ndarray = BOXES, batch: np.ndarray = BATCH, sampling: int = 0):
    (out,) = roi_model(op, t, nchw, sampling).run(_map(t, nchw), _rois(t, boxes), batch)
    return out.transpose(0, 2, 3, 1) if nchw else out


ROI_CASES = [
    (Op.ROI_ALIGN, T.TENSOR_FLOAT32, 0),
    (Op.ROI_ALIGN, T.TENSOR_FLOAT32, 2),
    (Op.ROI_ALIGN, T.TENSOR_QUANT8_ASYMM, 0),
    (Op.ROI_POOLING, T.TENSOR_FLOAT32, 0),
    (Op.ROI_POOLING, T.TENSOR_QUANT8_ASYMM, 0),
]
IDS = [f"{op.name}-{t.name}-s{s}" for op, t, s in ROI_CASES]


@pytest.mark.parametrize("op,t,sampling", ROI_CASES, ids=IDS)
def test_nchw_matches_nhwc(op: Op, t: T, sampling: int) -> None:
    nhwc = _run(op, t, False, sampling=sampling)
    assert np.any(nhwc != nhwc.flat[0])  # not a constant: the boxes do sample the map
    np.testing.assert_array_equal(_run(op, t, True, sampling=sampling), nhwc)


@pytest.mark.parametrize("op,t,sampling", ROI_CASES, ids=IDS)
@pytest.mark.parametrize(
    "boxes,batch",
    [
        (BOXES, np.array([1, 2, 0], np.int32)),  # batch index past the 2 batches
        (BOXES, np.array([0, -1, 0], np.int32)),  # negative batch index
        (np.array([[0, 0, 9.5, 10], *BOXES[1:]], np.float32), BATCH),  # right edge outside the map
        (np.array([[4, 0, 2, 10], *BOXES[1:]], np.float32), BATCH),  # x1 > x2
    ],
    ids=["batch-too-large", "batch-negative", "outside", "x1-after-x2"],
)
def test_invalid_run_time_data_fails_the_execution(op: Op, t: T, sampling: int, boxes, batch) -> None:
    with pytest.raises(nnc.NNError) as info:
        _run(op, t, False, boxes, batch, sampling)
    assert op.name in str(info.value)
    assert np.all(np.isfinite(_run(op, t, False, sampling=sampling).astype(np.float32)))  # still usable


@pytest.mark.parametrize("op,t,sampling", ROI_CASES, ids=IDS)
def test_zero_padding_rows_are_empty_boxes(op: Op, t: T, sampling: int) -> None:
    """Rows past a data-dependent count are zero (box 0,0,0,0, batch 0):
    valid, and computed like that box."""
    boxes = np.zeros_like(BOXES)
    boxes[0] = BOXES[1]
    batch = np.array([0, 0, 0], np.int32)
    out = _run(op, t, False, boxes, batch, sampling)
    assert np.all(np.isfinite(out.astype(np.float32)))
    np.testing.assert_array_equal(out[1], out[2])


# -- HEATMAP_MAX_KEYPOINT -------------------------------------------------------------------------


def _reference_heatmap(heatmap: np.ndarray, boxes: np.ndarray, tol: float = 1e-5) -> tuple[np.ndarray, np.ndarray]:
    """Android's ``heatmapMaxKeypointFloat32Nhwc`` with ``solveForDelta``
    (atol = rtol = ``tol``), in float32."""
    f = np.float32
    n, size, _, kp = heatmap.shape
    scores = np.zeros((n, kp), f)
    points = np.zeros((n, kp, 2), f)
    for i in range(n):
        for j in range(kp):
            flat = heatmap[i, :, :, j].reshape(-1)
            best, score = 0, f(-np.finfo(f).max)
            for k, v in enumerate(flat):
                if score < v:
                    score, best = v, k
            mw, mh = best % size, best // size
            g = np.zeros((3, 3), f)
            for dh in (-1, 0, 1):
                for dw in (-1, 0, 1):
                    h, w = mh + dh, mw + dw
                    h = 1 if h < 0 else (size - 2 if h >= size else h)
                    w = 1 if w < 0 else (size - 2 if w >= size else w)
                    g[dh + 1, dw + 1] = heatmap[i, h, w, j]
            b = [-(g[1, 2] - g[1, 0]) / f(2), -(g[2, 1] - g[0, 1]) / f(2)]
            a00 = g[1, 0] - f(2) * g[1, 1] + g[1, 2]
            a01 = (g[2, 2] - g[2, 0] - g[0, 2] + g[0, 0]) / f(4)
            a11 = g[0, 1] - f(2) * g[1, 1] + g[2, 1]
            cross1 = a00 * a11
            det = cross1 - a01 * a01
            d = [f(0), f(0)]
            fitted = score
            if not abs(det) < f(tol) + f(tol) * cross1:
                d = [(a11 * b[0] - a01 * b[1]) / det, (a00 * b[1] - a01 * b[0]) / det]
                if abs(d[0]) > 1.5 or abs(d[1]) > 1.5:
                    scale = f(1.5) / max(abs(d[0]), abs(d[1]))
                    d = [d[0] * scale, d[1] * scale]
                fitted = (g[1, 1] - b[0] * d[0] - b[1] * d[1]
                          + ((a00 * d[0] + a01 * d[1]) * d[0] + (a01 * d[0] + a11 * d[1]) * d[1]) / f(2))  # fmt: skip
            x1, y1, x2, y2 = boxes[i]
            scores[i, j] = fitted
            points[i, j, 0] = (f(mw) + d[0] + f(0.5)) / f(size) * (x2 - x1) + x1
            points[i, j, 1] = (f(mh) + d[1] + f(0.5)) / f(size) * (y2 - y1) + y1
    return scores, points


@cache
def heatmap_model(nchw: bool, t: T = T.TENSOR_FLOAT32, shape: tuple[int, int, int, int] = (3, 5, 5, 4)) -> nnc.CompiledModel:
    """HEATMAP_MAX_KEYPOINT of an NHWC ``shape`` (num, size, size, keypoints), laid out as ``nchw`` says."""
    num, kp = shape[0], shape[3]
    m = nnc.Model()
    h = m.add_operand(t, _layout(shape, nchw))
    boxes = m.add_operand(t, [num, 4])
    layout = m.add_operand(T.BOOL)
    m.set_operand_value(layout, nchw)
    scores = m.add_operand(t, [num, kp])
    points = m.add_operand(t, [num, kp, 2])
    m.add_operation(Op.HEATMAP_MAX_KEYPOINT, [h, boxes, layout], [scores, points])
    m.identify_inputs_and_outputs([h, boxes], [scores, points])
    m.finish()
    return nnc.compile(m)


HEATMAP = np.random.default_rng(3).normal(size=(3, 5, 5, 4)).astype(np.float32)
HEATMAP[0, 0, 0, 0] = 9.0  # a maximum in a corner: mirrored grid
HEATMAP[1, :, :, 1] = 1.0  # a flat heatmap: singular Hessian, first maximum
HEAT_BOXES = np.array([[0, 0, 10, 10], [2, 3, 8, 5], [1, 1, 1, 1]], np.float32)


@pytest.mark.parametrize("nchw", [False, True], ids=["nhwc", "nchw"])
def test_heatmap_max_keypoint_float32(nchw: bool) -> None:
    x = HEATMAP.transpose(0, 3, 1, 2).copy() if nchw else HEATMAP
    scores, points = heatmap_model(nchw).run(x, HEAT_BOXES)
    want_scores, want_points = _reference_heatmap(HEATMAP, HEAT_BOXES)
    np.testing.assert_allclose(scores, want_scores, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(points, want_points, rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("shape", [(1, 2, 2, 1), (1, 2, 2, 3), (2, 2, 2, 1), (1, 3, 3, 1)])
def test_heatmap_max_keypoint_edge_sizes(shape: tuple[int, int, int, int]) -> None:
    """The smallest heatmaps (2 x 2: every 3 x 3 neighbourhood is mirrored)
    and one box and keypoint: one item, so the parallel loop over items runs
    once and its body gets a Python int for an index (an internal compiler
    error once)."""
    x = np.random.default_rng(5).normal(size=shape).astype(np.float32)
    boxes = np.tile(np.array([[1, 2, 9, 6]], np.float32), (shape[0], 1))
    scores, points = heatmap_model(False, T.TENSOR_FLOAT32, shape).run(x, boxes)
    want_scores, want_points = _reference_heatmap(x, boxes)
    np.testing.assert_allclose(scores, want_scores, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(points, want_points, rtol=1e-6, atol=1e-5)


def test_heatmap_max_keypoint_float16() -> None:
    """Android's float16 path: widened to float32, computed with the
    singularity tolerances 1e-3, rounded to half once."""
    x, boxes = HEATMAP.astype(np.float16), HEAT_BOXES.astype(np.float16)
    x[1, :, :, 3] = 1.0
    x[1, 2, 2, 3], x[1, 2, 3, 3] = 1.01, 1.005  # Hessian determinant ~3e-4: singular at 1e-3, not at 1e-5
    scores, points = heatmap_model(False, T.TENSOR_FLOAT16).run(x, boxes)
    want_scores, want_points = _reference_heatmap(x.astype(np.float32), boxes.astype(np.float32), 1e-3)
    assert _reference_heatmap(x.astype(np.float32), boxes.astype(np.float32))[1][1, 3, 0] != want_points[1, 3, 0]
    np.testing.assert_allclose(scores.astype(np.float32), want_scores.astype(np.float16), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(points.astype(np.float32), want_points.astype(np.float16), rtol=1e-3, atol=1e-3)


def test_heatmap_upside_down_box_fails_the_execution() -> None:
    boxes = HEAT_BOXES.copy()
    boxes[2] = [1, 4, 1, 2]  # y1 > y2
    with pytest.raises(nnc.NNError) as info:
        heatmap_model(False).run(HEATMAP, boxes)
    assert "HEATMAP_MAX_KEYPOINT" in str(info.value)


# -- validation of the model --------------------------------------------------------------------------


def _align_model(box_quant: dict, sampling: int = 0, out_dims: tuple[int, ...] = (1, 2, 2, 1)) -> None:
    m = nnc.Model()
    x = m.add_operand(T.TENSOR_QUANT8_ASYMM, [1, 4, 4, 1], **Q8)
    rois = m.add_operand(T.TENSOR_QUANT16_ASYMM, [1, 4], **box_quant)
    batch = m.add_operand(T.TENSOR_INT32, [1])
    ids = []
    for st, v in [(T.INT32, 2), (T.INT32, 2), (T.FLOAT32, 1.0), (T.FLOAT32, 1.0), (T.INT32, sampling), (T.INT32, 0), (T.BOOL, False)]:
        ids.append(m.add_operand(st))
        m.set_operand_value(ids[-1], v)
    out = m.add_operand(T.TENSOR_QUANT8_ASYMM, list(out_dims), **Q8)
    m.add_operation(Op.ROI_ALIGN, [x, rois, batch, *ids], [out])
    m.identify_inputs_and_outputs([x, rois, batch], [out])
    m.finish()


@pytest.mark.parametrize(
    "box_quant,sampling,out_dims",
    [
        ({"scale": 0.25, "zero_point": 0}, 0, (1, 2, 2, 1)),  # boxes must have scale 0.125
        ({"scale": 0.125, "zero_point": 3}, 0, (1, 2, 2, 1)),  # ... and zero point 0
        (Q16, -1, (1, 2, 2, 1)),  # a negative sampling ratio
        (Q16, 0, (1, 3, 2, 1)),  # an output of the wrong size
    ],
    ids=["box-scale", "box-zero-point", "negative-sampling", "output-shape"],
)
def test_invalid_model_is_bad_data(box_quant: dict, sampling: int, out_dims: tuple[int, ...]) -> None:
    with pytest.raises(nnc.BadDataError):
        _align_model(box_quant, sampling, out_dims)
    _align_model(Q16)  # the valid form finishes
