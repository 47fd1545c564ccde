"""DETECTION_POSTPROCESSING (issue 15) against a Python port of Android's
``detectionPostprocessFloat32`` written here, independent of the lowering:
regular and fast NMS, with and without the background label, scores with
many ties (the reference's in-place NMS decides their order), several
batches, float16; and the TFLite import of ``TFLite_Detection_PostProcess``
in a small SSD-like head built with the flatbuffer builder.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

import numpy as np
import pytest
from flatbuffers import flexbuffers

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc.tflite import UnsupportedOperatorsError, import_tflite, translate_tflite
from test_tflite_mapping import litert
from tflite_builder import FLOAT32, INT32, UINT8, TFLiteBuilder

f32 = np.float32


@dataclass(frozen=True)
class Params:
    """DETECTION_POSTPROCESSING's scalar inputs 3..13."""

    scales: tuple[float, float, float, float] = (10.0, 10.0, 5.0, 5.0)
    regular: bool = False
    max_det: int = 5
    per_det: int = 1
    per_class: int = 3
    score_thr: float = 0.25
    iou_thr: float = 0.5
    include_bg: bool = False

    @property
    def slots(self) -> int:
        return self.max_det if self.regular else self.max_det * self.per_det


# -- the reference, after Android's DetectionPostprocessing (GenerateProposals.cpp) ------------------
def _std_max(a, b):
    return b if a < b else a


def _std_min(a, b):
    return b if b < a else a


def _iou(r1: np.ndarray, r2: np.ndarray) -> f32:
    area1 = (r1[2] - r1[0]) * (r1[3] - r1[1])
    area2 = (r2[2] - r2[0]) * (r2[3] - r2[1])
    w = _std_max(_std_min(r1[2], r2[2]) - _std_max(r1[0], r2[0]), f32(0))
    h = _std_max(_std_min(r1[3], r2[3]) - _std_max(r1[1], r2[1]), f32(0))
    inter = w * h
    with np.errstate(invalid="ignore", divide="ignore"):
        return inter / (area1 + area2 - inter)


def _hard_nms(select: list[int], score, box, iou_thr: f32, limit: int) -> list[int]:
    """hardNmsSingleClass: in place, the suppressed swapped to the end."""
    start, end = 0, len(select)
    while start < end and start < limit:
        m = start
        for i in range(start + 1, end):
            if score(select[m]) < score(select[i]):
                m = i
        select[m], select[start] = select[start], select[m]
        i = start + 1
        while i < end:
            if _iou(box(select[i]), box(select[start])) >= iou_thr:
                end -= 1
                select[i], select[end] = select[end], select[i]
            else:
                i += 1
        start += 1
    return select[:start]


def reference(scores: np.ndarray, deltas: np.ndarray, anchors: np.ndarray, p: Params):
    """(scores, boxes, classes, counts) as Android computes them; ties in the
    final orderings keep the earlier item first (what nnc promises)."""
    scores, deltas, anchors = (np.asarray(x, f32) for x in (scores, deltas, anchors))
    batches, num_anchors, num_classes = scores.shape
    out = (np.zeros((batches, p.slots), f32), np.zeros((batches, p.slots, 4), f32),
           np.zeros((batches, p.slots), np.int32), np.zeros(batches, np.int32))  # fmt: skip
    sy, sx, sh, sw = (f32(s) for s in p.scales)
    thr, iou_thr, offset = f32(p.score_thr), f32(p.iou_thr), 0 if p.include_bg else 1
    for b in range(batches):
        boxes = np.zeros((num_anchors, 4), f32)
        for a in range(num_anchors):
            ay, ax, ah, aw = anchors[a]
            dy, dx, dh, dw = deltas[b, a, :4]
            yc, xc = ay + ah * dy / sy, ax + aw * dx / sx
            hh = ah * f32(np.exp(np.float64(dh / sh))) * f32(0.5)
            wh = aw * f32(np.exp(np.float64(dw / sw))) * f32(0.5)
            boxes[a] = (yc - hh, xc - wh, yc + hh, xc + wh)
        s = scores[b]
        found: list[tuple[int, int, f32]] = []  # (anchor, class, score) in output order
        if p.regular:
            for c in range(1, num_classes):
                cand = [a for a in range(num_anchors) if s[a, c] > thr]
                kept = _hard_nms(cand, lambda a, c=c: s[a, c], lambda a: boxes[a], iou_thr, p.per_class)  # noqa: B023 - called here
                found += [(a, c, s[a, c]) for a in kept]
            found = sorted(found, key=lambda t: -t[2])[: p.max_det]
        else:
            best = [s[a, 1:][np.argmax(s[a, 1:])] for a in range(num_anchors)]  # argmax: the first maximum
            cand = [a for a in range(num_anchors) if best[a] > thr]
            for a in _hard_nms(cand, lambda a: best[a], lambda a: boxes[a], iou_thr, p.max_det):  # noqa: B023 - called here
                ranked = sorted(range(1, num_classes), key=lambda c: -s[a, c])[: min(num_classes - 1, p.per_det)]
                found += [(a, c, s[a, c]) for c in ranked]
        for j, (a, c, v) in enumerate(found):
            out[0][b, j], out[1][b, j], out[2][b, j] = v, boxes[a], c - offset
        out[3][b] = len(found)
    return out


# -- NNAPI models ------------------------------------------------------------------------------------
def nnapi_model(shape: tuple[int, int, int], box_len: int, p: Params, half: bool = False) -> nnc.Model:
    batches, num_anchors, num_classes = shape
    tt, st, ft = (T.TENSOR_FLOAT16, T.FLOAT16, np.float16) if half else (T.TENSOR_FLOAT32, T.FLOAT32, np.float32)
    m = nnc.Model()
    ins = [m.add_operand(tt, list(shape)), m.add_operand(tt, [batches, num_anchors, box_len]),
           m.add_operand(tt, [num_anchors, 4])]  # fmt: skip
    scalars = [*((st, ft(s)) for s in p.scales), (T.BOOL, p.regular), (T.INT32, p.max_det), (T.INT32, p.per_det),
               (T.INT32, p.per_class), (st, ft(p.score_thr)), (st, ft(p.iou_thr)), (T.BOOL, p.include_bg)]  # fmt: skip
    params = []
    for t, v in scalars:
        params.append(m.add_operand(t))
        m.set_operand_value(params[-1], v)
    outs = [m.add_operand(tt, [batches, p.slots]), m.add_operand(tt, [batches, p.slots, 4]),
            m.add_operand(T.TENSOR_INT32, [batches, p.slots]), m.add_operand(T.TENSOR_INT32, [batches])]  # fmt: skip
    m.add_operation(Op.DETECTION_POSTPROCESSING, ins + params, outs)
    m.identify_inputs_and_outputs(ins, outs)
    m.finish()
    return m


@cache
def compiled(shape: tuple[int, int, int], box_len: int, p: Params, half: bool = False) -> nnc.CompiledModel:
    return nnc.compile(nnapi_model(shape, box_len, p, half))


def random_inputs(rng: np.random.Generator, shape: tuple[int, int, int], box_len: int, ties: bool):
    """Anchors on a coarse grid (many overlaps), small deltas, scores in [0, 1)
    (multiples of 1/8 with ``ties``: many equal scores)."""
    batches, num_anchors, _ = shape
    scores = rng.integers(0, 8, shape) / 8 if ties else rng.random(shape)
    deltas = rng.normal(0, 1, (batches, num_anchors, box_len))
    ctr = rng.integers(0, 4, (num_anchors, 2)) * 0.5
    size = rng.choice([1.0, 1.5], (num_anchors, 2))
    anchors = np.concatenate([ctr, size], axis=1)
    return [x.astype(f32) for x in (scores, deltas, anchors)]


def assert_outputs(got, want) -> None:
    np.testing.assert_array_equal(got[3], want[3], err_msg="counts")
    np.testing.assert_array_equal(got[2], want[2], err_msg="classes")
    np.testing.assert_array_equal(got[0], want[0], err_msg="scores")
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6, atol=1e-6, err_msg="boxes")


CASES = {
    "fast": Params(),
    "fast_2_classes_background": Params(per_det=2, include_bg=True),
    "fast_more_classes_than_exist": Params(per_det=7, max_det=3),
    "fast_few_found": Params(score_thr=0.8, max_det=8),
    "regular": Params(regular=True),
    "regular_background_lenient": Params(regular=True, per_class=20, max_det=9, iou_thr=0.9, include_bg=True),
    "regular_few_found": Params(regular=True, score_thr=0.8, max_det=9, per_class=20),
    "regular_strict": Params(regular=True, per_class=1, max_det=2, iou_thr=0.0, score_thr=0.0),
}


@pytest.mark.parametrize("ties", [False, True], ids=["distinct", "ties"])
@pytest.mark.parametrize("name", CASES)
def test_matches_reference(name: str, ties: bool) -> None:
    p, shape, box_len = CASES[name], (2, 10, 4), 5
    rng = np.random.default_rng(sum(map(ord, name)) + ties)
    cm = compiled(shape, box_len, p)
    for _ in range(3):
        x = random_inputs(rng, shape, box_len, ties)
        assert_outputs(cm.run(*x), reference(*x, p))


@pytest.mark.parametrize("regular", [False, True], ids=["fast", "regular"])
def test_forty_anchors_with_ties(regular: bool) -> None:
    """Longer candidate lists: many NMS rounds, suppressions and swaps."""
    p, shape = Params(regular=regular, per_class=10, max_det=45, iou_thr=0.3, score_thr=0.1), (1, 40, 5)
    rng = np.random.default_rng(40 + regular)
    x = random_inputs(rng, shape, 4, ties=True)
    want = reference(*x, p)
    assert 0 < want[3][0] < p.slots
    assert_outputs(compiled(shape, 4, p).run(*x), want)


@pytest.mark.parametrize("regular", [False, True], ids=["fast", "regular"])
def test_one_class_besides_the_background(regular: bool) -> None:
    """Two score columns: one class (the class loops have one iteration)."""
    p, shape = Params(regular=regular, per_det=3), (2, 10, 2)
    rng = np.random.default_rng(2)
    x = random_inputs(rng, shape, 4, ties=True)
    assert_outputs(compiled(shape, 4, p).run(*x), reference(*x, p))


@pytest.mark.parametrize("regular", [False, True], ids=["fast", "regular"])
def test_float16_is_the_float32_computation_rounded(regular: bool) -> None:
    """Android converts float16 to float32, runs the float32 kernel and
    rounds the scores and boxes back."""
    p, shape = Params(regular=regular), (1, 10, 4)
    x = [v.astype(np.float16) for v in random_inputs(np.random.default_rng(3), shape, 4, ties=True)]
    got = compiled(shape, 4, p, half=True).run(*x)
    want = reference(*(v.astype(f32) for v in x), p)
    assert got[0].dtype == np.float16 and got[1].dtype == np.float16
    assert_outputs([got[0].astype(f32), got[1].astype(f32), got[2], got[3]],
                   [want[0].astype(np.float16).astype(f32), want[1].astype(np.float16).astype(f32), want[2], want[3]])


def test_threads_do_not_change_results() -> None:
    """Batches and (regular NMS) classes run in parallel, each on its own rows."""
    p, shape = CASES["regular_background_lenient"], (3, 10, 4)
    m = nnapi_model(shape, 4, p)
    comp = nnc.Compilation(m)
    comp.finish()
    x = random_inputs(np.random.default_rng(5), shape, 4, ties=True)
    results = []
    for threads in (1, 2, 3):
        ex = nnc.Execution(comp)
        ex.set_num_threads(threads)
        outs = [np.zeros(m.operands[i].dims, np.int32 if k >= 2 else f32) for k, i in enumerate(m.outputs)]
        for k, v in enumerate(x):
            ex.set_input(k, v)
        for k, v in enumerate(outs):
            ex.set_output(k, v)
        ex.compute()
        results.append(outs)
    assert_outputs(results[0], reference(*x, p))
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ["fast_2_classes_background", "regular"])
def test_nan_and_infinite_inputs_stay_in_bounds(name: str) -> None:
    """NaN scores are never candidates (``>`` the threshold is false); infinite
    deltas give infinite boxes whose IoU is NaN (nothing suppressed); NaN
    class scores of a kept anchor cannot make the class ranking read or
    write outside its rows.  The counts and classes stay in range."""
    p, shape = CASES[name], (2, 10, 4)
    x = random_inputs(np.random.default_rng(9), shape, 5, ties=False)
    x[0][0, ::3, 1:3] = np.nan
    x[0][1, :, 2] = np.nan
    x[1][:, ::4, 2] = np.inf
    scores, boxes, classes, counts = compiled(shape, 5, p).run(*x)
    assert ((0 <= counts) & (counts <= p.slots)).all()
    offset = 0 if p.include_bg else 1
    assert ((classes >= 0) & (classes <= shape[2] - 1 - offset)).all()
    if p.regular:  # no NaN reaches an ordering: the reference's result is defined
        with np.errstate(invalid="ignore"):
            assert_outputs([scores, boxes, classes, counts], reference(*x, p))


def test_invalid_parameters_are_bad_data() -> None:
    with pytest.raises(nnc.BadDataError):
        nnapi_model((1, 4, 1), 4, Params())  # one class: only the background
    with pytest.raises(nnc.BadDataError):
        nnapi_model((1, 4, 3), 4, Params(scales=(10.0, 0.0, 5.0, 5.0)))
    with pytest.raises(nnc.BadDataError):
        nnapi_model((1, 4, 3), 4, Params(regular=True, per_class=0))


# -- TFLite: an SSD-like head ending in TFLite_Detection_PostProcess ----------------------------------
GRID, PER_CELL, FEATURES, CLASSES = 3, 2, 6, 3  # 18 anchors, 3 classes + background
ANCHORS = GRID * GRID * PER_CELL


def grid_anchors() -> np.ndarray:
    """[ctr_y, ctr_x, h, w] per cell and aspect, as SSD's anchor generator lays them out."""
    rows = []
    for y in range(GRID):
        for x in range(GRID):
            for h, w in ((0.4, 0.4), (0.5, 0.3)):
                rows.append(((y + 0.5) / GRID, (x + 0.5) / GRID, h, w))
    return np.array(rows, f32)


def head_model(opts: dict, rng: np.random.Generator, background: bool = True) -> tuple[bytes, dict]:
    """features [1, 3, 3, 6] -> 1x1 CONV_2D (box encodings) and 1x1 CONV_2D ->
    LOGISTIC (class scores), each RESHAPEd to [1, anchors, ...] -> the custom
    operator with constant anchors.  Returns the file and the weights."""
    cols = CLASSES + 1 if background else CLASSES
    shapes = {"wb": (4 * PER_CELL, 1, 1, FEATURES), "bb": (4 * PER_CELL,),
              "wc": (cols * PER_CELL, 1, 1, FEATURES), "bc": (cols * PER_CELL,)}  # fmt: skip
    w = {k: rng.normal(0, 0.3 if k == "wb" else 1.0, shape).astype(f32) for k, shape in shapes.items()}
    b = TFLiteBuilder()
    x = b.tensor("features", [1, GRID, GRID, FEATURES], FLOAT32)

    def conv1x1(name: str, weights: str, bias: str) -> int:
        y = b.tensor(name, [1, GRID, GRID, w[bias].size], FLOAT32)
        ins = [x, *(b.tensor(k, w[k].shape, FLOAT32, w[k]) for k in (weights, bias))]
        b.op("CONV_2D", ins, [y], ("Conv2DOptions", {"Padding": 1, "StrideW": 1, "StrideH": 1}))
        return y

    enc4, logits4 = conv1x1("box_map", "wb", "bb"), conv1x1("class_map", "wc", "bc")
    enc = b.tensor("box_encodings", [1, ANCHORS, 4], FLOAT32)
    b.op("RESHAPE", [enc4, b.tensor("s1", [3], INT32, [1, ANCHORS, 4])], [enc])
    logits = b.tensor("class_logits", [1, ANCHORS, cols], FLOAT32)
    b.op("RESHAPE", [logits4, b.tensor("s2", [3], INT32, [1, ANCHORS, cols])], [logits])
    preds = b.tensor("class_predictions", [1, ANCHORS, cols], FLOAT32)
    b.op("LOGISTIC", [logits], [preds])
    anchors = b.tensor("anchors", [ANCHORS, 4], FLOAT32, grid_anchors())
    n = opts["max_detections"] * (1 if opts.get("use_regular_nms") else opts["max_classes_per_detection"])
    outs = [b.tensor("detection_boxes", [1, n, 4], FLOAT32), b.tensor("detection_classes", [1, n], FLOAT32),
            b.tensor("detection_scores", [1, n], FLOAT32), b.tensor("num_detections", [1], FLOAT32)]  # fmt: skip
    b.op("", [enc, preds, anchors], outs, custom="TFLite_Detection_PostProcess", custom_options=flexbuffers.Dumps(opts))
    return b.build([x], outs), w


def head_reference(x: np.ndarray, w: dict, opts: dict, background: bool = True) -> list[np.ndarray]:
    """The head in numpy, then :func:`reference` with the delegate's mapping."""
    def conv1x1(wk: str, bk: str) -> np.ndarray:
        y = np.einsum("hwc,oc->hwo", x[0].astype(np.float64), w[wk][:, 0, 0, :].astype(np.float64)) + w[bk]
        return y.reshape(1, ANCHORS, -1)

    enc = conv1x1("wb", "bb").astype(f32)
    preds = (1 / (1 + np.exp(-conv1x1("wc", "bc")))).astype(f32)
    if not background:
        preds = np.concatenate([np.zeros((1, ANCHORS, 1), f32), preds], axis=2)
    p = Params(scales=(opts["y_scale"], opts["x_scale"], opts["h_scale"], opts["w_scale"]),
               regular=opts.get("use_regular_nms", False), max_det=opts["max_detections"],
               per_det=opts["max_classes_per_detection"], per_class=opts.get("detections_per_class", 100),
               score_thr=opts["nms_score_threshold"], iou_thr=opts["nms_iou_threshold"])  # fmt: skip
    scores, boxes, classes, counts = reference(preds, enc, grid_anchors(), p)
    per_box = 1 if p.regular else min(p.per_det, CLASSES)  # TFLite counts boxes, NNAPI slots
    return [boxes, classes.astype(f32), scores, counts.astype(f32) / per_box]


SSD_OPTIONS = {"max_detections": 6, "max_classes_per_detection": 1, "nms_score_threshold": 0.3,
               "nms_iou_threshold": 0.45, "num_classes": CLASSES, "y_scale": 10.0, "x_scale": 10.0,
               "h_scale": 5.0, "w_scale": 5.0}  # fmt: skip


@pytest.mark.parametrize(
    "opts, background",
    [(SSD_OPTIONS, True),
     ({**SSD_OPTIONS, "use_regular_nms": True, "detections_per_class": 4}, True),
     ({**SSD_OPTIONS, "max_classes_per_detection": 2}, False)],
    ids=["fast", "regular", "fast_2_classes_no_background_column"],
)  # fmt: skip
def test_tflite_ssd_head_matches_numpy(opts: dict, background: bool) -> None:
    rng = np.random.default_rng(7)
    data, w = head_model(opts, rng, background)
    result = translate_tflite(data)
    mapped = ["DETECTION_POSTPROCESSING", "CAST", "CAST"] + (["DIV"] if opts["max_classes_per_detection"] > 1 else [])
    assert result.operators[-1].nnapi == (mapped if background else ["PAD", *mapped])
    model = import_tflite(data)
    assert model.output_names == ["detection_boxes", "detection_classes", "detection_scores", "num_detections"]
    cm = nnc.compile(model)
    for _ in range(3):
        x = rng.normal(0, 1, (1, GRID, GRID, FEATURES)).astype(f32)
        got, want = cm.run(x), head_reference(x, w, opts, background)
        assert all(g.dtype == np.float32 for g in got)
        np.testing.assert_array_equal(got[3], want[3])
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_allclose(got[2], want[2], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)
        assert want[3][0] > 0


@pytest.mark.parametrize("opts", [SSD_OPTIONS, {**SSD_OPTIONS, "use_regular_nms": True, "detections_per_class": 4},
                                  {**SSD_OPTIONS, "max_classes_per_detection": 2}], ids=["fast", "regular", "fast_2"])
def test_tflite_ssd_head_agrees_with_litert(opts: dict) -> None:
    """LiteRT's own kernel (decoding in double precision, scores >= the
    threshold, IoU > its threshold) agrees on data without ties or values at
    the thresholds: same detections, classes and count, boxes and scores
    within float32 rounding."""
    rng = np.random.default_rng(13)
    data, _ = head_model(opts, rng)
    cm = nnc.compile(import_tflite(data))
    x = rng.normal(0, 1, (1, GRID, GRID, FEATURES)).astype(f32)
    lite = litert(data, [x], reference=False)
    if lite is None:
        pytest.skip("LiteRT (the bench extra) is not installed")
    got = cm.run(x)
    np.testing.assert_array_equal(got[3], lite[3])
    np.testing.assert_array_equal(got[1], lite[1])
    np.testing.assert_allclose(got[2], lite[2], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got[0], lite[0], rtol=1e-6, atol=1e-6)


def test_tflite_quantised_inputs_are_dequantised() -> None:
    """uint8 box encodings and class predictions (model inputs) and uint8
    anchors (a constant, dequantised at import), as quantised SSD models have."""
    b = TFLiteBuilder()
    enc = b.tensor("enc", [1, ANCHORS, 4], UINT8, scale=0.05, zero_point=128)
    preds = b.tensor("preds", [1, ANCHORS, CLASSES + 1], UINT8, scale=1 / 256, zero_point=0)
    qa = np.round(grid_anchors() / 0.01).astype(np.uint8)
    anchors = b.tensor("anchors", [ANCHORS, 4], UINT8, qa, scale=0.01, zero_point=0)
    opts = {**SSD_OPTIONS, "use_regular_nms": True}
    outs = [b.tensor("boxes", [1, 6, 4], FLOAT32), b.tensor("classes", [1, 6], FLOAT32),
            b.tensor("scores", [1, 6], FLOAT32), b.tensor("num", [1], FLOAT32)]  # fmt: skip
    b.op("", [enc, preds, anchors], outs, custom="TFLite_Detection_PostProcess", custom_options=flexbuffers.Dumps(opts))
    cm = nnc.compile(import_tflite(b.build([enc, preds], outs)))
    rng = np.random.default_rng(11)
    qe = rng.integers(100, 156, (1, ANCHORS, 4)).astype(np.uint8)
    qp = rng.integers(0, 256, (1, ANCHORS, CLASSES + 1)).astype(np.uint8)
    got = cm.run(qe, qp)
    p = replace(Params(scales=(10.0, 10.0, 5.0, 5.0), regular=True, max_det=6, per_class=100), score_thr=0.3,
                iou_thr=0.45)  # fmt: skip
    dq = lambda q, s, z: ((q.astype(f32) - f32(z)) * f32(s)).astype(f32)
    scores, boxes, classes, counts = reference(dq(qp, 1 / 256, 0), dq(qe, 0.05, 128), dq(qa, 0.01, 0), p)
    assert counts[0] > 0
    np.testing.assert_array_equal(got[3], counts.astype(f32))
    np.testing.assert_array_equal(got[1], classes.astype(f32))
    np.testing.assert_array_equal(got[2], scores)
    np.testing.assert_allclose(got[0], boxes, rtol=1e-6, atol=1e-6)


def test_tflite_bad_options_are_reported() -> None:
    bad = {k: v for k, v in SSD_OPTIONS.items() if k != "y_scale"}
    data, _ = head_model({**bad, "max_detections": 6}, np.random.default_rng(0))
    with pytest.raises(UnsupportedOperatorsError) as info:
        import_tflite(data)
    assert "custom option y_scale missing" in info.value.problems[0][2]
