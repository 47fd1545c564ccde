"""DETECTION_POSTPROCESSING: SSD box decoding and non-maximum suppression,
as Android's ``detectionPostprocessFloat32`` computes them.

Per batch (batches in parallel, each with its own scratch rows; for regular
NMS the classes of a batch in parallel too, each on its own candidate row):

1. **Decode** every anchor ``[ctr_y, ctr_x, h, w]`` with its deltas
   ``[dy, dx, dh, dw]`` into a box ``[y1, x1, y2, x2]``, in the reference's
   float32 operation order (``yc = ay + ah * dy / sy``, ``hh = ah *
   exp(dh / sh) * 0.5``, ``y1 = yc - hh``, ...; no contraction).
2. **Regular NMS** (``hardNmsMultiClass``): for each class c >= 1 the anchors
   whose score is ``> score_threshold``, in anchor order, go through hard NMS
   limited to max_detections_per_class; the survivors of every class, in
   class order, are then ordered by score, descending, and the first
   max_num_detections reported.
   **Fast NMS**: each anchor's best score over classes >= 1
   (``std::max_element``: the first maximum), the anchors above the
   threshold through one hard NMS limited to max_num_detections; each kept
   anchor reports its min(classes - 1, max_classes_per_detection) best
   classes, descending, in consecutive slots.
3. Unused slots are 0 (the reference's ``memset``); classes are reported
   from 0 without the background (``include_background`` false) or from 1.

**Hard NMS** (``hardNmsSingleClass``) works in place on a list of candidate
anchors ``[start, end)``, exactly as the reference permutes its index
array, so that equal scores are broken the same way: the first maximum of
``[start, end)`` is swapped to ``start``; then each later candidate whose
IoU with it is ``>= iou_threshold`` is swapped with the last one, ``end``
shrinks and the candidate now at that position is examined next.  Each of
those loops is an ``scf.for`` with a trip count computed at run time (the
suppression loop runs exactly ``end - start - 1`` steps: each step either
keeps a candidate or drops one); no Python runs per element.  IoU is
``getIoUAxisAligned``: ``std::max``/``std::min`` as compare-and-select,
``inter / (area1 + area2 - inter)``, so an empty union (NaN) suppresses
nothing.

**Ordering.** The reference orders with ``std::sort`` (not stable) on
scores alone: which of two *equal* scores comes first is left to the C++
library.  nnc keeps the earlier one first (the order of the survivors list,
class by class; for fast NMS's classes, the lower class): a stable sort, as
an insertion sort (libc++'s method for short ranges) leaves them, and the
order TFLite's own kernel promises.  The NMS itself breaks ties exactly as
the reference does (above).  The first ``count`` of that total order are
found with one scan per output (output j is the greatest pair below output
j - 1), as TOPK_V2 does.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import IndexType, f32, i32

from nnc.dialects.rules.detection.ssd import (
    ANCHORS,
    DELTAS,
    INCLUDE_BACKGROUND,
    IOU_THRESHOLD,
    MAX_CLASSES_PER_DETECTION,
    MAX_DETECTIONS,
    MAX_DETECTIONS_PER_CLASS,
    SCALE_H,
    SCALE_W,
    SCALE_X,
    SCALE_Y,
    SCORE_THRESHOLD,
    SCORES,
    USE_REGULAR_NMS,
)
from nnc.enums import OperationType as Op
from nnc.passes.kernels.vector import parallel_each
from nnc.passes.lowering.base import Emitter, IndexLike, LoweringContext, Value, lowering

#: the score of candidate anchor ``a`` (an index) in the current NMS
ScoreOf = Callable[[Emitter, Value], Value]


def _std_max(e: Emitter, a: Value, b: Value) -> Value:
    """``std::max(a, b)``: ``a < b ? b : a`` (not maxnum: NaN order matters)."""
    return e.select(e.cmp("lt", a, b), b, a)


def _std_min(e: Emitter, a: Value, b: Value) -> Value:
    """``std::min(a, b)``: ``b < a ? b : a``."""
    return e.select(e.cmp("lt", b, a), b, a)


class _Batch:
    """The code of one batch: its scratch rows and the operation's parameters."""

    def __init__(self, ctx: LoweringContext, e: Emitter, b: IndexLike, scratch: dict[str, Value]):
        self.ctx, self.e, self.b = ctx, e, b
        self.scores, self.deltas, self.anchors = (ctx.input(i) for i in (SCORES, DELTAS, ANCHORS))
        self.out_scores, self.out_boxes, self.out_classes, self.out_counts = ctx.outputs
        _, self.num_anchors, self.num_classes = ctx.shape(self.scores)
        self.boxes, self.cand = scratch["boxes"], scratch["cand"]
        self.scratch = scratch
        self.iou_threshold = ctx.scalar(IOU_THRESHOLD)
        self.score_threshold = ctx.scalar(SCORE_THRESHOLD)
        self.class_offset = 0 if ctx.scalar(INCLUDE_BACKGROUND) else 1

    # -- 1. boxes -------------------------------------------------------------------------------
    def decode(self) -> None:
        """``boxes[b, a] = [yc - hh, xc - wh, yc + hh, xc + wh]`` in the reference's order."""
        ctx, b = self.ctx, self.b
        sy, sx, sh, sw = (ctx.scalar(i) for i in (SCALE_Y, SCALE_X, SCALE_H, SCALE_W))

        def anchor(e: Emitter, a: Value, _: object) -> list[Value]:
            ay, ax, ah, aw = (e.load(self.anchors, [a, k]) for k in range(4))
            dy, dx, dh, dw = (e.load(self.deltas, [b, a, k]) for k in range(4))
            yc = e.add(ay, e.div(e.mul(ah, dy), e.f32(sy)))
            xc = e.add(ax, e.div(e.mul(aw, dx), e.f32(sx)))
            half = e.f32(0.5)
            hh = e.mul(e.mul(ah, e.exp(e.div(dh, e.f32(sh)))), half)
            wh = e.mul(e.mul(aw, e.exp(e.div(dw, e.f32(sw)))), half)
            for k, v in enumerate((e.sub(yc, hh), e.sub(xc, wh), e.add(yc, hh), e.add(xc, wh))):
                e.store(v, self.boxes, [b, a, k])
            return []

        self.e.for_(0, self.num_anchors, anchor)

    def box(self, e: Emitter, a: Value) -> tuple[list[Value], Value]:
        """Anchor ``a``'s decoded box and its area, as ``getIoUAxisAligned`` computes it."""
        r = [e.load(self.boxes, [self.b, a, k]) for k in range(4)]
        return r, e.mul(e.sub(r[2], r[0]), e.sub(r[3], r[1]))

    @staticmethod
    def iou(e: Emitter, box1: tuple[list[Value], Value], box2: tuple[list[Value], Value]) -> Value:
        """``getIoUAxisAligned(box1, box2)`` (its x/y names swapped: the
        formula is symmetric in the two axes)."""
        (r1, area1), (r2, area2) = box1, box2
        x1, x2 = _std_max(e, r1[0], r2[0]), _std_min(e, r1[2], r2[2])
        y1, y2 = _std_max(e, r1[1], r2[1]), _std_min(e, r1[3], r2[3])
        zero = e.f32(0.0)
        inter = e.mul(_std_max(e, e.sub(x2, x1), zero), _std_max(e, e.sub(y2, y1), zero))
        return e.div(inter, e.sub(e.add(area1, area2), inter))

    # -- 2. NMS ---------------------------------------------------------------------------------
    def candidates(self, e: Emitter, row: IndexLike, score_of: ScoreOf) -> Value:
        """``cand[b, row, 0:n]`` = the anchors whose score is ``> score_threshold``,
        in anchor order; returns n (an index).  Branch-free: anchor a is
        written at slot n <= a and counted when it passes."""
        thr = e.f32(self.score_threshold)

        def anchor(e: Emitter, a: Value, n: list[Value]) -> list[Value]:
            e.store(e.index_cast(a, i32), self.cand, [self.b, row, n[0]])
            passes = e.cmp("gt", score_of(e, a), thr)
            return [e.select(passes, e.add(n[0], e.index(1)), n[0])]

        return e.for_(0, self.num_anchors, anchor, [e.index(0)])[0]

    def cand_at(self, e: Emitter, row: IndexLike, p: Value) -> Value:
        """The anchor (an index) in candidate slot ``p`` of ``row``."""
        return e.index_cast(e.load(self.cand, [self.b, row, p]))

    def hard_nms(self, e: Emitter, row: IndexLike, n: Value, limit: int, score_of: ScoreOf) -> Value:
        """``hardNmsSingleClass`` on ``cand[b, row, 0:n]`` in place: returns how
        many were kept (the first slots, in selection order)."""
        index = IndexType()
        thr = e.f32(self.iou_threshold)

        def select_one(e: Emitter, t: Value, carry: list[Value]) -> list[Value]:
            end, kept = carry

            def run(e: Emitter) -> list[Value]:
                def scan(e: Emitter, i: Value, best: list[Value]) -> list[Value]:
                    s = score_of(e, self.cand_at(e, row, i))
                    better = e.cmp("lt", best[1], s)  # max_element: *largest < *i
                    return [e.select(better, i, best[0]), e.select(better, s, best[1])]

                first = e.add(t, e.index(1))
                m = e.for_(first, end, scan, [t, score_of(e, self.cand_at(e, row, t))])[0]
                chosen = e.load(self.cand, [self.b, row, m])
                e.store(e.load(self.cand, [self.b, row, t]), self.cand, [self.b, row, m])
                e.store(chosen, self.cand, [self.b, row, t])
                sel = self.box(e, e.index_cast(chosen))  # loaded once per round

                def suppress(e: Emitter, _: Value, c: list[Value]) -> list[Value]:
                    i, en = c
                    cur = e.load(self.cand, [self.b, row, i])
                    drop = e.cmp("ge", self.iou(e, self.box(e, e.index_cast(cur)), sel), thr)

                    def dropped(e: Emitter) -> list[Value]:
                        last = e.sub(en, e.index(1))  # std::swap(*i--, *(--selectEnd))
                        e.store(e.load(self.cand, [self.b, row, last]), self.cand, [self.b, row, i])
                        e.store(cur, self.cand, [self.b, row, last])
                        return [i, last]

                    return e.if_(drop, dropped, lambda e: [e.add(i, e.index(1)), en], [index, index])

                steps = e.sub(end, first)
                new_end = e.for_(0, steps, suppress, [first, end])[1]
                return [new_end, e.add(kept, e.index(1))]

            return e.if_(e.cmp("lt", t, end), run, lambda e: [end, kept], [index, index])

        bound = e.min(n, e.index(limit))
        return e.for_(0, bound, select_one, [n, e.index(0)])[1]

    def write(self, e: Emitter, slot: Value, anchor: Value, score: Value, cls: Value) -> None:
        """Output slot ``slot`` of this batch: score, the anchor's box, class."""
        b = self.b
        e.store(score, self.out_scores, [b, slot])
        for k in range(4):
            e.store(e.load(self.boxes, [b, anchor, k]), self.out_boxes, [b, slot, k])
        e.store(e.index_cast(e.sub(cls, e.index(self.class_offset)), i32), self.out_classes, [b, slot])

    def regular(self) -> None:
        """Regular NMS: hard NMS per class (classes in parallel, each on its
        own candidate row), the survivors gathered in class order, then the
        best max_num_detections."""
        ctx, e, b = self.ctx, self.e, self.b
        nc = self.num_classes
        per_class = ctx.scalar(MAX_DETECTIONS_PER_CLASS)
        kept_list, class_counts = self.scratch["kept"], self.scratch["class_counts"]

        def one_class(e: Emitter, c: IndexLike) -> None:
            def score_of(e: Emitter, a: Value) -> Value:
                return e.load(self.scores, [b, a, c])

            kept = self.hard_nms(e, c, self.candidates(e, c, score_of), per_class, score_of)
            e.store(e.index_cast(kept, i32), class_counts, [b, c])

        parallel_each(e, 1, nc, 1, one_class)

        def gather(e: Emitter, c: Value, total: list[Value]) -> list[Value]:
            kept = e.index_cast(e.load(class_counts, [b, c]))

            def append(e: Emitter, p: Value, _: object) -> list[Value]:
                flat = e.add(e.mul(self.cand_at(e, c, p), e.index(nc)), c)  # the reference's b * numClasses + c
                e.store(e.index_cast(flat, i32), kept_list, [b, e.add(total[0], p)])
                return []

            e.for_(0, kept, append)
            return [e.add(total[0], kept)]

        total = e.for_(1, nc, gather, [e.index(0)])[0]
        count = e.min(total, e.index(ctx.scalar(MAX_DETECTIONS)))

        def flat_at(e: Emitter, p: Value) -> Value:
            return e.index_cast(e.load(kept_list, [b, p]))

        def score_at(e: Emitter, p: Value) -> Value:
            flat = flat_at(e, p)
            return e.load(self.scores, [b, e.div(flat, e.index(nc)), e.rem(flat, e.index(nc))])

        def emit(e: Emitter, j: Value, p: Value, score: Value) -> None:
            flat = flat_at(e, p)
            self.write(e, j, e.div(flat, e.index(nc)), score, e.rem(flat, e.index(nc)))

        _stable_top(e, count, total, score_at, emit)
        e.store(e.index_cast(count, i32), self.out_counts, [b])

    def fast(self) -> None:
        """Fast NMS: one hard NMS on each anchor's best class score."""
        ctx, e, b = self.ctx, self.e, self.b
        nc = self.num_classes
        maxs = self.scratch["max_scores"]
        per_anchor = min(nc - 1, ctx.scalar(MAX_CLASSES_PER_DETECTION))

        def best_class(e: Emitter, a: Value, _: object) -> list[Value]:
            def cls(e: Emitter, c: Value, m: list[Value]) -> list[Value]:
                return [_std_max(e, m[0], e.load(self.scores, [b, a, c]))]  # max_element keeps the first

            m = e.for_(2, nc, cls, [e.load(self.scores, [b, a, 1])])[0]
            e.store(m, maxs, [b, a])
            return []

        e.for_(0, self.num_anchors, best_class)

        def score_of(e: Emitter, a: Value) -> Value:
            return e.load(maxs, [b, a])

        kept = self.hard_nms(e, 0, self.candidates(e, 0, score_of), ctx.scalar(MAX_DETECTIONS), score_of)

        def anchor(e: Emitter, p: Value, _: object) -> list[Value]:
            a = self.cand_at(e, 0, p)

            def class_score(e: Emitter, k: Value) -> Value:
                return e.load(self.scores, [b, a, e.add(k, e.index(1))])

            def emit(e: Emitter, j: Value, k: Value, score: Value) -> None:
                slot = e.add(e.mul(p, e.index(per_anchor)), j)
                self.write(e, slot, a, score, e.add(k, e.index(1)))

            _stable_top(e, e.index(per_anchor), e.index(nc - 1), class_score, emit)
            return []

        e.for_(0, kept, anchor)
        e.store(e.index_cast(e.mul(kept, e.index(per_anchor)), i32), self.out_counts, [b])


def _stable_top(
    e: Emitter,
    count: Value,
    n: Value,
    value_of: Callable[[Emitter, Value], Value],
    emit: Callable[[Emitter, Value, Value, Value], None],
) -> None:
    """``emit(e, j, p, value)`` for the first ``count`` of items ``0..n`` in
    (value descending, position ascending) order: output j is found by one
    scan as the greatest item below output j - 1.  Items with a NaN value
    are never chosen; should a scan find nothing, position 0 is emitted."""
    none = e.i32(-1)

    def output(e: Emitter, j: Value, prev: list[Value]) -> list[Value]:
        pv, pp = prev

        def scan(e: Emitter, p: Value, best: list[Value]) -> list[Value]:
            bv, bp = best
            v, pi = value_of(e, p), e.index_cast(p, i32)
            after_prev = e.or_(e.cmp("lt", v, pv), e.and_(e.cmp("eq", v, pv), e.cmp("gt", pi, pp)))
            below_prev = e.or_(e.cmp("eq", pp, none), after_prev)
            above_best = e.or_(e.cmp("eq", bp, none), e.cmp("gt", v, bv))  # positions rise: ties keep the first
            take = e.and_(below_prev, above_best)
            return [e.select(take, v, bv), e.select(take, pi, bp)]

        bv, bp = e.for_(0, n, scan, [pv, none])
        emit(e, j, e.index_cast(e.max(bp, e.i32(0))), bv)
        return [bv, bp]

    e.for_(0, count, output, [e.f32(0.0), none])


@lowering(Op.DETECTION_POSTPROCESSING)
def detection_postprocessing(ctx: LoweringContext) -> None:
    batches, num_anchors, num_classes = ctx.shape(ctx.input(SCORES))
    for out in ctx.outputs[:3]:
        ctx.fill(out, 0)
    regular = bool(ctx.scalar(USE_REGULAR_NMS))
    # candidate rows: one per class for regular NMS (classes run in parallel), one for fast NMS
    rows = num_classes if regular else 1
    scratch = {"boxes": ctx.alloc([batches, num_anchors, 4], f32), "cand": ctx.alloc([batches, rows, num_anchors], i32)}
    if regular:
        # every class keeps at most min(anchors, max_detections_per_class)
        per_class = min(num_anchors, ctx.scalar(MAX_DETECTIONS_PER_CLASS))
        scratch["kept"] = ctx.alloc([batches, max(1, (num_classes - 1) * per_class)], i32)
        scratch["class_counts"] = ctx.alloc([batches, num_classes], i32)
    else:
        scratch["max_scores"] = ctx.alloc([batches, num_anchors], f32)

    def batch(e: Emitter, b: IndexLike) -> None:
        code = _Batch(ctx, e, b, scratch)
        code.decode()
        code.regular() if regular else code.fast()

    parallel_each(ctx.e, 0, batches, 1, batch)
