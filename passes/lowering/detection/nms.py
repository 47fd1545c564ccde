"""Lowerings of the detection operations whose output size depends on the data.

BOX_WITH_NMS_LIMIT follows Android's reference (``box_with_nms_limit`` in
``BoxWithNmsLimit.cpp``) step by step, because its results depend on the
order of every step:

* boxes are grouped into batches by runs of equal ``batch_index`` values;
* per batch, per class ``c >= 1``: the boxes whose score is above
  ``score_threshold`` are listed in box order, then reduced by soft NMS *in
  place*: the first maximum of the rest is swapped to the front, every later
  box's score is multiplied by the kernel of its IoU with it (hard: 0 at IoU
  >= ``iou_threshold``; linear: ``1 - iou`` there; Gaussian:
  ``exp(-iou^2 / sigma)``), and a box whose score falls below
  ``nms_score_threshold`` is swapped with the last one and dropped, at most
  ``max_num_detections`` boxes per class (all when negative);
* the batch's boxes are sorted by score (descending), cut to
  ``max_num_detections``, and sorted again by class, then score;
* outputs: the (modified) score, the box, its class and the batch's index.

The reference's ``std::sort`` is an insertion sort on the small ranges the
corpus has (stable); both sorts here are stable (each element's rank counts
the elements before it), so equal scores keep their order.  Everything runs
in ``scf.for`` loops over scratch buffers (a float32 copy of the scores, the
list of selected indices): no Python at run time.  The number of kept boxes
is the operation's count (:meth:`LoweringContext.set_count`); the outputs
hold zeros beyond it (box 0 of batch 0).  Boxes are read through a loader,
so TENSOR_QUANT16_ASYMM coordinates (scale 0.125) are dequantised as they are
read and copied unchanged to the output, as the reference copies them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import IndexType, f32, i32

from nnc.enums import OperandType as T
from nnc.enums import OperationType as Op
from nnc.passes.lowering import quant as q
from nnc.passes.lowering.base import Emitter, LoweringContext, Value, lowering

Index = IndexType()


def _to_float(e: Emitter, v: Value, t: T, scale: float, zero_point: int) -> Value:
    """An element of type ``t`` as the reference's float: quantised values as
    ``scale * (q - zero_point)`` (float32)."""
    if e.is_float(v):
        return v
    wide = e.op(arith.ExtUIOp(v, i32) if q.is_unsigned(t) else arith.ExtSIOp(v, i32))
    return e.mul(e.to_float(e.sub(wide, e.i32(zero_point))), e.f32(q.f32(scale)))


def _from_float(e: Emitter, v: Value, t: T, scale: float, zero_point: int) -> Value:
    """The reference's ``castTo``: ``round(v / scale + zero_point)`` clamped to
    ``t``'s range (half away from zero); floats unchanged."""
    if t in (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16):
        return v
    lo, hi = q.QRANGE[t]
    r = e.op(math.RoundOp(e.add(e.div(v, e.f32(q.f32(scale))), e.f32(float(zero_point)))))
    r = e.clamp(r, float(lo), float(hi))
    return e.op(arith.TruncIOp(e.to_int(r, i32), q.STORAGE[t]))


def _iou(e: Emitter, a: Sequence[Value], b: Sequence[Value]) -> Value:
    """``getIoUAxisAligned`` of boxes (x1, y1, x2, y2), in its order of operations."""
    area1 = e.mul(e.sub(a[2], a[0]), e.sub(a[3], a[1]))
    area2 = e.mul(e.sub(b[2], b[0]), e.sub(b[3], b[1]))
    x1, x2 = e.max(a[0], b[0]), e.min(a[2], b[2])
    y1, y2 = e.max(a[1], b[1]), e.min(a[3], b[3])
    zero = e.f32(0.0)
    inter = e.mul(e.max(e.sub(x2, x1), zero), e.max(e.sub(y2, y1), zero))
    return e.div(inter, e.sub(e.add(area1, area2), inter))


def _nms_kernel(kind: int, iou_threshold: float, sigma: float) -> Callable[[Emitter, Value], Value]:
    """The factor a score is multiplied by, from its IoU with the kept box."""

    def hard(e: Emitter, iou: Value) -> Value:
        return e.select(e.cmp("lt", iou, e.f32(iou_threshold)), e.f32(1.0), e.f32(0.0))

    def linear(e: Emitter, iou: Value) -> Value:
        return e.select(e.cmp("lt", iou, e.f32(iou_threshold)), e.f32(1.0), e.sub(e.f32(1.0), iou))

    def gaussian(e: Emitter, iou: Value) -> Value:
        return e.exp(e.div(e.mul(e.mul(e.f32(-1.0), iou), iou), e.f32(sigma)))

    return {0: hard, 1: linear, 2: gaussian}[kind]


def _stable_sort(ctx: LoweringContext, e: Emitter, sel: Value, tmp: Value, n: Value,
                 before: Callable[[Emitter, Value, Value], tuple[Value, Value]]) -> None:  # fmt: skip
    """Sort ``sel[0:n)`` stably: ``before(e, a, b)`` gives (a sorts before b,
    a ties with b); each element goes to its rank, the number of elements
    sorting before it (ties: those earlier in the list)."""

    def place(e: Emitter, i: Value, _: Sequence[Value]) -> list[Value]:
        key = e.load(sel, [i])

        def count(e: Emitter, j: Value, acc: Sequence[Value]) -> list[Value]:
            lt, eq = before(e, _index(e, e.load(sel, [j])), _index(e, key))
            earlier = e.or_(lt, e.and_(eq, e.cmp("lt", j, i)))
            return [e.add(acc[0], e.select(earlier, e.index(1), e.index(0)))]

        (rank,) = e.for_(0, n, count, [e.index(0)])
        e.store(key, tmp, [rank])
        return []

    def back(e: Emitter, i: Value, _: Sequence[Value]) -> list[Value]:
        e.store(e.load(tmp, [i]), sel, [i])
        return []

    e.for_(0, n, place)
    e.for_(0, n, back)


def _index(e: Emitter, v: Value) -> Value:
    return e.index_cast(v)


@lowering(Op.BOX_WITH_NMS_LIMIT)
def box_with_nms_limit(ctx: LoweringContext) -> None:
    scores_in, rois_in, batches = ctx.input(0), ctx.input(1), ctx.input(2)
    n_bound, classes = ctx.shape(scores_in)
    outs = [ctx.output(k) for k in range(4)]
    for o in outs:
        ctx.fill(o, 0)  # padding rows beyond the count: score 0, box 0, class 0, batch 0
    sinfo, rinfo, oinfo = ctx.info(0), ctx.info(1), ctx.out_info(0)
    score_threshold, max_det, kind = ctx.scalar(3), ctx.scalar(4), ctx.scalar(5)
    iou_threshold, sigma, nms_threshold = ctx.scalar(6), ctx.scalar(7), ctx.scalar(8)
    kernel = _nms_kernel(kind, iou_threshold, sigma)
    rois = ctx.flat(rois_in)
    out_rois = ctx.flat(outs[1])
    # a float32 copy of the scores, which soft NMS modifies
    sc = ctx.alloc([n_bound * classes], f32)
    ctx.elementwise(sc, [ctx.flat(scores_in)], lambda e, a: _to_float(e, a[0], sinfo.type, sinfo.scale, sinfo.zero_point))
    size = n_bound * max(classes - 1, 1)
    # indices (box * classes + class) of the selected boxes, and a sort's scratch
    sel, tmp = ctx.alloc([size], i32), ctx.alloc([size], i32)
    e = ctx.e
    count = ctx.count(0)
    n = count if count is not None else e.index(n_bound)
    c_idx = e.index(classes)

    def box(e: Emitter, idx: Value) -> list[Value]:
        base = e.mul(idx, e.index(4))
        return [_to_float(e, e.load(rois, [e.add(base, e.index(k))]), rinfo.type, rinfo.scale, rinfo.zero_point)
                for k in range(4)]  # fmt: skip

    def score(e: Emitter, idx: Value) -> Value:
        return e.load(sc, [idx])

    def get(e: Emitter, i: Value) -> Value:
        return _index(e, e.load(sel, [i]))

    def put(e: Emitter, idx: Value, i: Value) -> None:
        e.store(e.index_cast(idx, i32), sel, [i])

    def nms_step(e: Emitter, start: Value, end: Value) -> list[Value]:
        """One kept box: the first maximum of sel[start:end) to the front, the
        rest rescored and the ones below nms_score_threshold dropped."""

        def argmax(e: Emitter, i: Value, best: Sequence[Value]) -> list[Value]:
            v = score(e, get(e, i))
            take = e.cmp("gt", v, best[1])
            return [e.select(take, i, best[0]), e.select(take, v, best[1])]

        first = score(e, get(e, start))
        m, _ = e.for_(e.add(start, e.index(1)), end, argmax, [start, first])
        top = get(e, m)
        put(e, get(e, start), m)
        put(e, top, start)
        top_box = box(e, top)

        def rescore(e: Emitter, _: Value, it: Sequence[Value]) -> list[Value]:
            i, end = it
            idx = get(e, i)
            s = e.mul(score(e, idx), kernel(e, _iou(e, box(e, idx), top_box)))
            e.store(s, sc, [idx])
            drop = e.cmp("lt", s, e.f32(nms_threshold))
            last = e.sub(end, e.index(1))
            a, b = idx, get(e, last)
            put(e, e.select(drop, b, a), i)
            put(e, e.select(drop, a, b), last)
            return [e.select(drop, i, e.add(i, e.index(1))), e.select(drop, last, end)]

        steps = e.sub(e.sub(end, start), e.index(1))
        _, end = e.for_(0, steps, rescore, [e.add(start, e.index(1)), end])
        return [e.add(start, e.index(1)), end]

    def per_class(s: Value, t: Value) -> Callable[[Emitter, Value, Sequence[Value]], list[Value]]:
        def body(e: Emitter, c: Value, acc: Sequence[Value]) -> list[Value]:
            (first,) = acc

            def candidate(e: Emitter, b: Value, r: Sequence[Value]) -> list[Value]:
                idx = e.add(e.mul(b, c_idx), c)
                keep = e.cmp("gt", score(e, idx), e.f32(score_threshold))

                def push(e: Emitter) -> list[Value]:
                    put(e, idx, r[0])
                    return [e.add(r[0], e.index(1))]

                return e.if_(keep, push, lambda e: [r[0]], [Index])

            (end,) = e.for_(s, t, candidate, [first])

            def step(e: Emitter, j: Value, it: Sequence[Value]) -> list[Value]:
                start, end = it
                active = e.cmp("lt", start, end)
                if max_det >= 0:
                    active = e.and_(active, e.cmp("lt", j, e.index(max_det)))
                return e.if_(active, lambda e: nms_step(e, start, end), lambda e: [start, end], [Index, Index])

            kept, _ = e.for_(0, e.sub(t, s), step, [first, end])
            return [kept]

        return body

    def by_score(e: Emitter, a: Value, b: Value) -> tuple[Value, Value]:
        sa, sb = score(e, a), score(e, b)
        return e.cmp("gt", sa, sb), e.cmp("eq", sa, sb)

    def by_class(e: Emitter, a: Value, b: Value) -> tuple[Value, Value]:
        ca, cb = e.rem(a, c_idx), e.rem(b, c_idx)
        sa, sb = score(e, a), score(e, b)
        same = e.cmp("eq", ca, cb)
        lt = e.or_(e.cmp("lt", ca, cb), e.and_(same, e.cmp("gt", sa, sb)))
        return lt, e.and_(same, e.cmp("eq", sa, sb))

    def group(e: Emitter, s: Value, t: Value, out_n: Value) -> list[Value]:
        """Boxes [s, t) of one batch: their kept boxes written from out_n on."""

        def check(e: Emitter, j: Value, _: Sequence[Value]) -> list[Value]:
            # the reference checks these (oddly strided) boxes of the batch: x1 <= x2, y1 <= y2
            x = box(e, e.add(e.mul(s, c_idx), j))
            ctx.error_if(e, e.or_(e.cmp("gt", x[0], x[2]), e.cmp("gt", x[1], x[3])))
            return []

        e.for_(0, e.sub(t, s), check)
        (r,) = e.for_(1, classes, per_class(s, t), [e.index(0)])
        _stable_sort(ctx, e, sel, tmp, r, by_score)
        if max_det >= 0:
            r = e.min(r, e.index(max_det))
        _stable_sort(ctx, e, sel, tmp, r, by_class)
        batch_id = e.load(batches, [s])

        def write(e: Emitter, j: Value, _: Sequence[Value]) -> list[Value]:
            idx, o = get(e, j), e.add(out_n, j)
            e.store(_from_float(e, score(e, idx), oinfo.type, oinfo.scale, oinfo.zero_point), outs[0], [o])
            for k in range(4):
                v = e.load(rois, [e.add(e.mul(idx, e.index(4)), e.index(k))])
                e.store(v, out_rois, [e.add(e.mul(o, e.index(4)), e.index(k))])
            e.store(e.index_cast(e.rem(idx, c_idx), i32), outs[2], [o])
            e.store(batch_id, outs[3], [o])
            return []

        e.for_(0, r, write)
        return [e.add(out_n, r)]

    def each_box(e: Emitter, i: Value, it: Sequence[Value]) -> list[Value]:
        start, out_n = it
        nxt = e.add(i, e.index(1))
        here = e.load(batches, [i])
        after = e.load(batches, [e.min(nxt, e.sub(n, e.index(1)))])
        ends = e.or_(e.cmp("eq", nxt, n), e.cmp("ne", after, here))
        (out_n,) = e.if_(ends, lambda e: group(e, start, nxt, out_n), lambda e: [out_n], [Index])
        return [e.select(ends, nxt, start), out_n]

    _, total = e.for_(0, n, each_box, [e.index(0), e.index(0)])
    ctx.set_count(0, total)
