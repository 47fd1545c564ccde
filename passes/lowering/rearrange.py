"""Lowerings of the element permutations: TRANSPOSE, REVERSE,
CHANNEL_SHUFFLE, DEPTH_TO_SPACE, SPACE_TO_DEPTH, BATCH_TO_SPACE_ND and
SPACE_TO_BATCH_ND.

TRANSPOSE reads the input through a permutation map (one generic); the others
are gathers whose input coordinates come from div/rem index arithmetic in the
body of a generic over the output.  SPACE_TO_BATCH_ND's padded positions load
a clamped (in-bounds) element and select the pad value (0.0 or the zero point)
instead.  Elements are copied unchanged, so one lowering serves every type.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import f32

from nnc.dialects.rules.rearrange import block_shape, reverse_axis, space_to_batch_paddings, transpose_perm
from nnc.enums import OperationType as Op
from nnc.passes.kernels.f32 import Case, parallel_cases
from nnc.passes.kernels.f32 import transpose as f32_transpose
from nnc.passes.kernels.vector import IndexOrInt, Vec
from nnc.passes.lowering.base import (
    Emitter,
    LoweringContext,
    Value,
    affine_map,
    identity_map,
    lowering,
    memref_elem,
)
from nnc.passes.lowering.indexing import (
    gather_copy,
    index_div,
    index_rem,
    join_nhwc,
    nchw_flag,
    split_nhwc,
    zero_value,
)


def matrix_form(shape: Sequence[int], perm: Sequence[int]) -> tuple[int, int, int] | None:
    """``(batches, rows, cols)`` when TRANSPOSE by ``perm`` of a ``shape``
    tensor transposes ``batches`` row-major ``[rows, cols]`` matrices: the
    permutation keeps some leading axes and swaps the two runs of axes
    after them (``[0, 2, 1]``; NHWC to NCHW, ``[0, 3, 1, 2]``).  None
    otherwise, and for the identity."""
    n = len(shape)
    for a in range(n):
        for b in range(a + 1, n):
            if list(perm) == [*range(a), *range(b, n), *range(a, b)]:
                return math.prod(shape[:a]), math.prod(shape[a:b]), math.prod(shape[b:])
    return None


#: rows of the input each parallel iteration of a matrix TRANSPOSE takes
TRANSPOSE_BAND = 16


def _transpose_matrices(ctx: LoweringContext, x: Value, out: Value, batches: int, rows: int, cols: int) -> None:
    """TRANSPOSE of ``batches`` float32 ``[rows, cols]`` matrices with the
    register-blocked kernel (:func:`~nnc.passes.kernels.f32.transpose`),
    bands of :data:`TRANSPOSE_BAND` input rows as the iterations of one
    parallel loop: a generic over the output reads the input a column at a
    time, element by element."""
    xf, of = ctx.flat(x), ctx.flat(out)
    full, tail = divmod(rows, TRANSPOSE_BAND)

    def band(first: int, height: int, count: int) -> Case:
        def body(e: Emitter, t: IndexOrInt) -> None:
            v = Vec(e)
            b: IndexOrInt
            k: IndexOrInt
            if count == 1:
                b, k = t, 0
            elif isinstance(t, int):
                b, k = divmod(t, count)
            else:
                b, k = e.div(t, e.index(count)), e.rem(t, e.index(count))
            r0 = v.ix(first, (k, TRANSPOSE_BAND))
            base = v.ix(0, (b, rows * cols))
            f32_transpose(ctx, e, xf, v.ix(base, (r0, cols)), of, v.ix(base, r0), height, cols, ld=rows)

        return batches * count, body

    cases = [band(0, TRANSPOSE_BAND, full)] if full else []
    if tail:
        cases.append(band(full * TRANSPOSE_BAND, tail, 1))
    parallel_cases(ctx.shared_e(), cases)


@lowering(Op.TRANSPOSE)
def transpose(ctx: LoweringContext) -> None:
    """out[i_0, ..., i_n-1] = in[j] with j[perm[k]] = i_k: one generic whose
    input map is the inverse permutation; a float32 batch of matrices
    (:func:`matrix_form`) with the vector transposition kernel."""
    x, out = ctx.input(0), ctx.output()
    oshape = ctx.shape(out)
    rank = len(oshape)
    perm = transpose_perm(ctx.call, rank)
    form = matrix_form(ctx.shape(x), perm)
    if form is not None and min(form[1:]) >= 8 and memref_elem(x) == f32 and memref_elem(out) == f32:
        _transpose_matrices(ctx, x, out, *form)
        return
    inverse = [perm.index(j) for j in range(rank)]
    in_map = affine_map(rank, lambda *d: [d[inverse[j]] for j in range(rank)])
    ctx.generic(oshape, [(x, in_map)], [(out, identity_map(rank))], lambda e, a, idx: [a[0]])


@lowering(Op.BATCH_TO_SPACE_ND)
def batch_to_space_nd(ctx: LoweringContext) -> None:
    """tflite's BatchToSpaceND (no crops) as a gather:
    out[b, y, x, c] = in[((y % bh) * bw + x % bw) * B + b, y / bh, x / bw, c]."""
    bh, bw = block_shape(ctx.call)
    nchw = nchw_flag(ctx, 2)
    x, out = ctx.input(0), ctx.output()
    oshape = ctx.shape(out)
    out_batch = oshape[0]

    def body(e: Emitter, args: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        b, oy, ox, c = split_nhwc(idx, nchw)
        bhv, bwv = e.index(bh), e.index(bw)
        spatial = e.add(e.mul(index_rem(e, oy, bhv), bwv), index_rem(e, ox, bwv))
        ib = spatial if out_batch == 1 else e.add(e.mul(spatial, e.index(out_batch)), b)
        return [e.load(x, join_nhwc(ib, index_div(e, oy, bhv), index_div(e, ox, bwv), c, nchw))]

    ctx.generic(oshape, [], [(out, identity_map(4))], body)


@lowering(Op.SPACE_TO_BATCH_ND)
def space_to_batch_nd(ctx: LoweringContext) -> None:
    """tflite's SpaceToBatchND as a gather: output batch ob reads input batch
    ob % B at block offset (sy, sx) = divmod(ob / B, bw):
    out[ob, y, x, c] = padded_in[ob % B, y*bh + sy - top, x*bw + sx - left, c],
    the pad value outside the input."""
    bh, bw = block_shape(ctx.call)
    (top, _), (left, _) = space_to_batch_paddings(ctx.call)
    nchw = nchw_flag(ctx, 3)
    x, out = ctx.input(0), ctx.output()
    ishape, oshape = ctx.shape(x), ctx.shape(out)
    in_batch, in_h, in_w, _ = split_nhwc(ishape, nchw)
    pad_value = zero_value(ctx)
    if not all(ishape):
        ctx.fill(out, pad_value)
        return
    # A dimension needs a bounds check only if its padded extent exceeds the input.
    _, out_h, out_w, _ = split_nhwc(oshape, nchw)
    check_h = top > 0 or out_h * bh > in_h
    check_w = left > 0 or out_w * bw > in_w

    def body(e: Emitter, args: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        ob, oy, ox, c = split_nhwc(idx, nchw)
        bhv, bwv, batch = e.index(bh), e.index(bw), e.index(in_batch)
        q = ob if in_batch == 1 else index_div(e, ob, batch)
        iy = e.sub(e.add(e.mul(oy, bhv), index_div(e, q, bwv)), e.index(top))
        ix = e.sub(e.add(e.mul(ox, bwv), index_rem(e, q, bwv)), e.index(left))
        inside = None
        coords = []
        for v, size, check in ((iy, in_h, check_h), (ix, in_w, check_w)):
            if check:
                ok = e.and_(e.cmp("ge", v, e.index(0)), e.cmp("lt", v, e.index(size)))
                inside = ok if inside is None else e.and_(inside, ok)
                v = e.max(e.min(v, e.index(size - 1)), e.index(0))
            coords.append(v)
        b = e.index(0) if in_batch == 1 else index_rem(e, ob, batch)
        val = e.load(x, join_nhwc(b, coords[0], coords[1], c, nchw))
        if inside is None:
            return [val]
        return [e.select(inside, val, e.like(pad_value, val))]

    ctx.generic(oshape, [], [(out, identity_map(4))], body)


@lowering(Op.DEPTH_TO_SPACE)
def depth_to_space(ctx: LoweringContext) -> None:
    """out[b, oy, ox, oc] = in[b, oy/bs, ox/bs, ((oy%bs)*bs + ox%bs)*C_out + oc]."""
    bs = ctx.scalar(1)
    nchw = nchw_flag(ctx, 2)
    x, out = ctx.input(0), ctx.output()
    oshape = ctx.shape(out)
    c_out = split_nhwc(oshape, nchw)[3]

    def body(e: Emitter, args: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        b, oy, ox, oc = split_nhwc(idx, nchw)
        bsv = e.index(bs)
        q = e.add(e.mul(e.rem(oy, bsv), bsv), e.rem(ox, bsv))
        ic = e.add(e.mul(q, e.index(c_out)), oc)
        return [e.load(x, join_nhwc(b, e.div(oy, bsv), e.div(ox, bsv), ic, nchw))]

    ctx.generic(oshape, [], [(out, identity_map(4))], body)


@lowering(Op.SPACE_TO_DEPTH)
def space_to_depth(ctx: LoweringContext) -> None:
    """out[b, oy, ox, oc] = in[b, oy*bs + q/bs, ox*bs + q%bs, oc%C_in], q = oc/C_in."""
    bs = ctx.scalar(1)
    nchw = nchw_flag(ctx, 2)
    x, out = ctx.input(0), ctx.output()
    oshape = ctx.shape(out)
    c_in = split_nhwc(ctx.shape(x), nchw)[3]

    def body(e: Emitter, args: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        b, oy, ox, oc = split_nhwc(idx, nchw)
        bsv, cv = e.index(bs), e.index(c_in)
        q = e.div(oc, cv)
        iy = e.add(e.mul(oy, bsv), e.div(q, bsv))
        ix = e.add(e.mul(ox, bsv), e.rem(q, bsv))
        return [e.load(x, join_nhwc(b, iy, ix, e.rem(oc, cv), nchw))]

    ctx.generic(oshape, [], [(out, identity_map(4))], body)




@lowering(Op.REVERSE)
def reverse(ctx: LoweringContext) -> None:
    ishape = ctx.shape(ctx.input(0))
    axis = reverse_axis(ctx.call, len(ishape))
    gather_copy(ctx, lambda e, idx: [e.sub(e.index(ishape[k] - 1), i) if k == axis else i
                                 for k, i in enumerate(idx)])  # fmt: skip


@lowering(Op.CHANNEL_SHUFFLE)
def channel_shuffle(ctx: LoweringContext) -> None:
    """Output channel ``c = k * G + g`` reads input channel ``g * (C / G) + k``."""
    ishape = ctx.shape(ctx.input(0))
    groups = ctx.scalar(1)
    axis = ctx.scalar(2) % len(ishape)
    group_size = ishape[axis] // groups

    def coords(e: Emitter, idx: Sequence[Value]) -> list[Value]:
        c = idx[axis]
        src = e.add(e.mul(index_rem(e, c, groups), e.index(group_size)), index_div(e, c, groups))
        return [src if k == axis else i for k, i in enumerate(idx)]

    gather_copy(ctx, coords)
