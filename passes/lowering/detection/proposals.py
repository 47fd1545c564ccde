"""AXIS_ALIGNED_BBOX_TRANSFORM and GENERATE_PROPOSALS (Android's
``GenerateProposals.cpp``).

Both compute in float32 like the reference: quantised operands are read as
``(float(q) - zero_point) * scale`` (``convertQuantToFloat32``) and
quantised results written as ``clamp(round(x / scale + zero_point))``
(``convertFloat32ToQuant``, ``std::round``: half away from zero); float16
operands are widened by :mod:`nnc.passes.lowering.float16`.  One builder,
:func:`bbox_transform`, is the reference's ``bboxTransformFloat32`` for one
box and one class (centre/size form, ``exp`` of the log-scale deltas, back to
corners, clipped to the image), used by both operations.

``std::max(a, b)`` / ``std::min(a, b)`` are written as the selects they are
(``a < b ? b : a``, ``b < a ? b : a``), so -0.0 and NaN behave as in C++.

GENERATE_PROPOSALS keeps a number of boxes known only at run time: its
outputs are planned for the bound its rule derives, it writes the kept boxes
first and zeros (box 0 of image 0) up to the bound, and stores the number
kept as its count (:meth:`LoweringContext.set_count`).  Its steps run in
``scf.for`` loops over scratch buffers in the reference's order, because the
result depends on the order of every step: a stable merge sort for the
pre-NMS limit (:func:`merge_sort_desc`), the size filter, and the in-place
hard NMS with its swaps (:func:`hard_nms`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import IndexType, MemRefType, f32, i32

from nnc.dialects.rules.base import T
from nnc.dialects.rules.detection.proposals import proposals_params
from nnc.enums import OperationType as Op
from nnc.operand_types import OperandInfo
from nnc.passes.lowering import quant as q
from nnc.passes.lowering.base import Emitter, IndexLike, LoweringContext, Value, lowering

_FLOATS = (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16)


def std_max(e: Emitter, a: Value, b: Value) -> Value:
    """``std::max(a, b)``: ``a < b ? b : a``."""
    return e.select(e.cmp("lt", a, b), b, a)


def std_min(e: Emitter, a: Value, b: Value) -> Value:
    """``std::min(a, b)``: ``b < a ? b : a``."""
    return e.select(e.cmp("lt", b, a), b, a)


def read_f32(e: Emitter, buf: Value, indices: Sequence[IndexLike], info: OperandInfo) -> Value:
    """Element ``indices`` of ``buf`` as the reference's float32 value."""
    v = e.load(buf, indices)
    if info.type in _FLOATS:
        return v
    real = e.to_float(q.load_q(e, v, info.type))
    if info.zero_point:
        real = e.sub(real, e.f32(float(info.zero_point)))
    return e.mul(real, e.f32(q.f32(info.scale)))


def write_f32(e: Emitter, v: Value, buf: Value, indices: Sequence[IndexLike], info: OperandInfo) -> None:
    """Store float32 ``v`` as element ``indices`` of ``buf`` (of type ``info``)."""
    if info.type in _FLOATS:
        e.store(v, buf, indices)
        return
    lo, hi = q.QRANGE[info.type]
    r = e.div(v, e.f32(q.f32(info.scale)))
    if info.zero_point:
        r = e.add(r, e.f32(float(info.zero_point)))
    r = e.op(math.RoundOp(r))
    r = std_min(e, std_max(e, r, e.f32(float(lo))), e.f32(float(hi)))
    e.store(e.op(arith.TruncIOp(e.to_int(r, i32), q.STORAGE[info.type])), buf, indices)


def bbox_transform(e: Emitter, roi: Sequence[Value], delta: Sequence[Value], height: Value,
                   width: Value) -> list[Value]:  # fmt: skip
    """The reference's ``bboxTransformFloat32`` for one box ``[x1, y1, x2,
    y2]`` and one class's ``[dx, dy, dw, dh]``: the refined corners, each
    clipped to ``[0, width]`` / ``[0, height]``, in the reference's order of
    float operations."""
    x1, y1, x2, y2 = roi
    dx, dy, dw, dh = delta
    two = e.f32(2.0)
    w, h = e.sub(x2, x1), e.sub(y2, y1)
    cx, cy = e.div(e.add(x1, x2), two), e.div(e.add(y1, y2), two)
    nw, nh = e.mul(e.exp(dw), w), e.mul(e.exp(dh), h)
    nx, ny = e.add(cx, e.mul(dx, w)), e.add(cy, e.mul(dy, h))
    hw, hh = e.div(nw, two), e.div(nh, two)
    zero = e.f32(0.0)

    def clip(v: Value, hi: Value) -> Value:
        return std_min(e, std_max(e, v, zero), hi)

    return [clip(e.sub(nx, hw), width), clip(e.sub(ny, hh), height),
            clip(e.add(nx, hw), width), clip(e.add(ny, hh), height)]  # fmt: skip


def _valid_batch(e: Emitter, b: Value, batches: int) -> tuple[Value, Value]:
    """(batch index clamped into ``[0, batches)`` as an index, whether it
    was out of range)."""
    bad = e.cmp("uge", b, e.i32(batches))
    safe = e.select(bad, e.i32(0), b)
    return e.index_cast(safe), bad


@lowering(Op.AXIS_ALIGNED_BBOX_TRANSFORM)
def axis_aligned_bbox_transform(ctx: LoweringContext) -> None:
    """One loop over the boxes, one over the classes.  A batch index outside
    ``image_info`` or a box with ``x2 < x1`` or ``y2 < y1`` is invalid data
    (the reference fails the execution): reported through the status, the
    box computed against image 0.  Zero rows (the padding of a bounded box
    list) are valid boxes of image 0, so the loop may run over a bound."""
    rois, deltas, batch, image = (ctx.input(i) for i in range(4))
    out = ctx.output()
    rinfo, dinfo, iinfo, oinfo = ctx.info(0), ctx.info(1), ctx.info(3), ctx.out_info()
    n, width = ctx.shape(out)
    batches = ctx.shape(image)[0]

    def row(e: Emitter, r: Value, _: Sequence[Value]) -> list[Value]:
        roi = [read_f32(e, rois, [r, k], rinfo) for k in range(4)]
        b, bad = _valid_batch(e, e.load(batch, [r]), batches)
        bad = e.or_(bad, e.or_(e.cmp("gt", roi[0], roi[2]), e.cmp("gt", roi[1], roi[3])))
        ctx.error_if(e, bad)
        height, image_width = read_f32(e, image, [b, 0], iinfo), read_f32(e, image, [b, 1], iinfo)

        def cls(e: Emitter, c: Value, _: Sequence[Value]) -> list[Value]:
            base = e.op(arith.MuliOp(c, e.index(4)))
            cols = [e.op(arith.AddiOp(base, e.index(k))) for k in range(4)]
            delta = [read_f32(e, deltas, [r, col], dinfo) for col in cols]
            for col, v in zip(cols, bbox_transform(e, roi, delta, height, image_width)):
                write_f32(e, v, out, [r, col], oinfo)
            return []

        e.for_(0, width // 4, cls)
        return []

    ctx.e.for_(0, n, row)


# -- GENERATE_PROPOSALS ----------------------------------------------------------------------------


#: an i32 box index -> its float32 score
Key = Callable[[Emitter, Value], Value]
#: an i32 box index -> its four float32 corners
BoxOf = Callable[[Emitter, Value], list[Value]]


def _inc(e: Emitter, v: Value) -> Value:
    return e.add(v, e.index(1))


def merge_sort_desc(e: Emitter, src: Value, tmp: Value, n: int, key: Key) -> Value:
    """Sort the ``n`` i32 indices of ``src`` by ``key`` (their float32
    score), greatest first, keeping the order of equal scores (stable):
    bottom-up merge passes of widths 1, 2, 4, ... alternating between
    ``src`` and ``tmp``.  Returns the buffer that holds the result.

    The reference sorts with ``std::sort`` (not stable): among equal scores
    its order is the C++ library's; nnc keeps the boxes' original order."""
    width = 1
    while width < n:
        _merge_pass(e, src, tmp, n, width, key)
        src, tmp = tmp, src
        width *= 2
    return src


def _merge_pass(e: Emitter, src: Value, dst: Value, n: int, width: int, key: Key) -> None:
    """Merge each pair of sorted runs ``[lo, lo + width)``, ``[lo + width,
    lo + 2 width)`` of ``src`` into ``dst``; the right run's element goes
    first only when its score is strictly greater."""
    last = e.index(n - 1)

    def runs(e: Emitter, lo: Value, _: Sequence[Value]) -> list[Value]:
        mid = e.min(e.add(lo, e.index(width)), e.index(n))
        hi = e.min(e.add(lo, e.index(2 * width)), e.index(n))

        def step(e: Emitter, k: Value, st: Sequence[Value]) -> list[Value]:
            i, j = st
            vi, vj = e.load(src, [e.min(i, last)]), e.load(src, [e.min(j, last)])
            right = e.or_(e.cmp("ge", i, mid), e.and_(e.cmp("lt", j, hi), e.cmp("gt", key(e, vj), key(e, vi))))
            e.store(e.select(right, vj, vi), dst, [k])
            return [e.select(right, i, _inc(e, i)), e.select(right, _inc(e, j), j)]

        e.for_(lo, hi, step, [lo, mid])
        return []

    e.for_(0, n, runs, step=2 * width)


def iou_axis_aligned(e: Emitter, a: Sequence[Value], b: Sequence[Value]) -> Value:
    """The reference's ``getIoUAxisAligned(a, b)`` of two ``[x1, y1, x2, y2]`` boxes."""
    area_a = e.mul(e.sub(a[2], a[0]), e.sub(a[3], a[1]))
    area_b = e.mul(e.sub(b[2], b[0]), e.sub(b[3], b[1]))
    x1, x2 = std_max(e, a[0], b[0]), std_min(e, a[2], b[2])
    y1, y2 = std_max(e, a[1], b[1]), std_min(e, a[3], b[3])
    zero = e.f32(0.0)
    inter = e.mul(std_max(e, e.sub(x2, x1), zero), std_max(e, e.sub(y2, y1), zero))
    return e.div(inter, e.sub(e.add(area_a, area_b), inter))


def hard_nms(e: Emitter, sel: Value, count: Value, max_detections: int, iou_threshold: float, key: Key,
             box: BoxOf) -> Value:  # fmt: skip
    """The reference's ``hardNmsSingleClass`` on the i32 indices
    ``sel[0:count]``, in place and in its order: repeatedly swap the first
    greatest score (``std::max_element``) to the front, then move every
    later box whose IoU with it is at least the threshold to the end (swap
    with the last candidate, re-examine the same slot).  Stops after
    ``max_detections`` picks (negative: no limit).  Returns the number
    kept, ``sel[0:kept]`` in the order picked."""
    limit = count if max_detections < 0 else e.min(count, e.index(max_detections))
    thr = e.f32(iou_threshold)

    def pick(e: Emitter, t: Value, st: Sequence[Value]) -> list[Value]:
        end, kept = st
        active = e.and_(e.cmp("lt", t, end), e.cmp("lt", t, limit))

        def run(e: Emitter) -> list[Value]:
            first = e.load(sel, [t])

            def scan(e: Emitter, j: Value, best: Sequence[Value]) -> list[Value]:
                bj, bs = best
                s = key(e, e.load(sel, [j]))
                take = e.cmp("lt", bs, s)
                return [e.select(take, j, bj), e.select(take, s, bs)]

            bj, _ = e.for_(_inc(e, t), end, scan, [t, key(e, first)])
            top = e.load(sel, [bj])
            e.store(first, sel, [bj])
            e.store(top, sel, [t])
            ref = box(e, top)

            def sweep(e: Emitter, _: Value, st: Sequence[Value]) -> list[Value]:
                i, stop = st
                v = e.load(sel, [i])
                drop = e.cmp("ge", iou_axis_aligned(e, box(e, v), ref), thr)
                back = e.sub(stop, e.index(1))
                w = e.load(sel, [back])
                e.store(e.select(drop, w, v), sel, [i])
                e.store(e.select(drop, v, w), sel, [back])
                return [e.select(drop, i, _inc(e, i)), e.select(drop, back, stop)]

            # each step either keeps slot i or drops the last candidate: end - t - 1 steps
            _, new_end = e.for_(_inc(e, t), end, sweep, [_inc(e, t), end])
            return [new_end, _inc(e, kept)]

        return e.if_(active, run, lambda e: [end, kept], result_types=[IndexType(), IndexType()])

    _, kept = e.for_(0, count, pick, [count, e.index(0)])
    return kept


def generate_proposals_kernel(ctx: LoweringContext) -> Value:
    """GENERATE_PROPOSALS as the reference's ``generateProposalsNhwcFloat32Compute``,
    image by image: every anchor shifted to every position and refined by
    its deltas (:func:`bbox_transform`, into a float32 scratch list with the
    scores), the best ``pre_nms_max`` kept (:func:`merge_sort_desc`), boxes
    not larger than ``min_size`` or centred outside the image dropped (order
    kept), then :func:`hard_nms`; the kept boxes are appended to the outputs
    in the order picked, with the image's index.  Rows from the total to the
    outputs' bound are zeros.  Returns the total (an index value).

    NCHW scores and deltas are read in place at their NCHW positions (the
    reference transposes them first: same values).  An anchor with x2 < x1
    or y2 < y1 is invalid data, as in the reference."""
    scores, deltas, anchors, image = (ctx.input(i) for i in range(4))
    out_scores, out_rois, out_batches = (ctx.output(i) for i in range(3))
    sinfo, dinfo, ainfo, iinfo = (ctx.info(i) for i in range(4))
    rinfo = ctx.out_info(1)
    p = proposals_params(ctx.call)
    sshape = ctx.shape(scores)
    batches, height, width, num_anchors = (sshape[0], sshape[2], sshape[3], sshape[1]) if p.nchw else sshape
    n = height * width * num_anchors
    bound = ctx.shape(out_scores)[0]
    boxes = ctx.alloc([max(n, 1), 4], f32)
    score = ctx.alloc([max(n, 1)], f32)
    sel = ctx.alloc([max(n, 1)], i32)
    sort = 0 < p.pre_nms_max < n
    tmp = ctx.alloc([n], i32) if sort else None

    def key(e: Emitter, v: Value) -> Value:
        return e.load(score, [e.index_cast(v)])

    def box(e: Emitter, v: Value) -> list[Value]:
        i = e.index_cast(v)
        return [e.load(boxes, [i, k]) for k in range(4)]

    def at(b: Value, h: Value, w: Value, c: IndexLike) -> list[IndexLike]:
        return [b, c, h, w] if p.nchw else [b, h, w, c]

    def image_loop(e: Emitter, b: Value, st: Sequence[Value]) -> list[Value]:
        (offset,) = st
        img_h, img_w = read_f32(e, image, [b, 0], iinfo), read_f32(e, image, [b, 1], iinfo)

        def row(e: Emitter, h: Value, _: Sequence[Value]) -> list[Value]:
            h_shift = e.mul(e.to_float(h), e.f32(p.height_stride))

            def col(e: Emitter, w: Value, _: Sequence[Value]) -> list[Value]:
                w_shift = e.mul(e.to_float(w), e.f32(p.width_stride))

                def anchor(e: Emitter, a: Value, _: Sequence[Value]) -> list[Value]:
                    i = e.add(e.mul(e.add(e.mul(h, e.index(width)), w), e.index(num_anchors)), a)
                    corner = [read_f32(e, anchors, [a, k], ainfo) for k in range(4)]
                    roi = [e.add(c, w_shift if k % 2 == 0 else h_shift) for k, c in enumerate(corner)]
                    ctx.error_if(e, e.or_(e.cmp("gt", roi[0], roi[2]), e.cmp("gt", roi[1], roi[3])))
                    four = e.mul(a, e.index(4))
                    delta = [read_f32(e, deltas, at(b, h, w, e.add(four, e.index(k))), dinfo) for k in range(4)]
                    for k, v in enumerate(bbox_transform(e, roi, delta, img_h, img_w)):
                        e.store(v, boxes, [i, k])
                    e.store(read_f32(e, scores, at(b, h, w, a), sinfo), score, [i])
                    e.store(e.index_cast(i, i32), sel, [i])
                    return []

                e.for_(0, num_anchors, anchor)
                return []

            e.for_(0, width, col)
            return []

        e.for_(0, height, row)
        ranked = merge_sort_desc(e, sel, tmp, n, key) if tmp is not None else sel
        count = p.pre_nms_max if sort else n
        kept = _filter_boxes(e, ranked, sel, count, p.min_size, img_h, img_w, box)
        kept = hard_nms(e, sel, kept, p.post_nms_max, p.iou_threshold, key, box)

        def write(e: Emitter, j: Value, _: Sequence[Value]) -> list[Value]:
            v = e.load(sel, [j])
            r = e.add(offset, j)
            for k, c in enumerate(box(e, v)):
                write_f32(e, c, out_rois, [r, k], rinfo)
            write_f32(e, key(e, v), out_scores, [r], sinfo)
            e.store(e.index_cast(b, i32), out_batches, [r])
            return []

        e.for_(0, kept, write)
        return [e.add(offset, kept)]

    (total,) = ctx.e.for_(0, batches, image_loop, [ctx.e.index(0)])

    def pad(e: Emitter, r: Value, _: Sequence[Value]) -> list[Value]:
        assert isinstance(out_rois.type, MemRefType) and isinstance(out_scores.type, MemRefType)
        for k in range(4):
            e.store(e.const(0, out_rois.type.element_type), out_rois, [r, k])
        e.store(e.const(0, out_scores.type.element_type), out_scores, [r])
        e.store(e.i32(0), out_batches, [r])
        return []

    ctx.e.for_(total, bound, pad)
    return total


def _filter_boxes(e: Emitter, src: Value, dst: Value, count: int, min_size: float, img_h: Value,
                  img_w: Value, box: BoxOf) -> Value:  # fmt: skip
    """The reference's ``filterBoxes``: of ``src[0:count]``, the boxes wider
    and taller than ``min_size`` whose centre lies inside the image, in
    order, into ``dst`` (may be ``src``: it writes behind its reads).
    Returns how many."""
    two, lo = e.f32(2.0), e.f32(min_size)

    def step(e: Emitter, j: Value, st: Sequence[Value]) -> list[Value]:
        (k,) = st
        v = e.load(src, [j])
        x1, y1, x2, y2 = box(e, v)
        w, h = e.sub(x2, x1), e.sub(y2, y1)
        cx, cy = e.add(x1, e.div(w, two)), e.add(y1, e.div(h, two))
        keep = e.and_(e.and_(e.cmp("gt", w, lo), e.cmp("gt", h, lo)),
                      e.and_(e.cmp("lt", cx, img_w), e.cmp("lt", cy, img_h)))  # fmt: skip
        e.store(v, dst, [k])
        return [e.select(keep, _inc(e, k), k)]

    (kept,) = e.for_(0, count, step, [e.index(0)])
    return kept


@lowering(Op.GENERATE_PROPOSALS)
def generate_proposals(ctx: LoweringContext) -> None:
    """:func:`generate_proposals_kernel`; the number of boxes kept is the
    operation's count (the three outputs share it)."""
    ctx.set_count(0, generate_proposals_kernel(ctx))
