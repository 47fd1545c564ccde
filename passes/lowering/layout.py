"""The NNAPI 1.1 layout operations and MEAN.

The data-movement operations (BATCH_TO_SPACE_ND, SPACE_TO_BATCH_ND, PAD,
SQUEEZE, STRIDED_SLICE, TRANSPOSE) move elements without looking at them, so
one lowering serves TENSOR_FLOAT32 and both 8-bit quantised types (whose bytes
are copied unchanged: the rules require the output's scale and zero point to be
the input's).  Padding writes 0 for floats and the zero point (the quantised
0.0) for quantised tensors, as Android does since feature level 3.

* TRANSPOSE reads the input through a permutation map: one generic.
* STRIDED_SLICE gathers ``begin + stride * i`` per dimension (a constant for
  a shrunk axis) in the body of a generic over the output.
* PAD fills the output with the pad value and copies the input into a static
  ``memref.subview`` of it; SQUEEZE copies between 1-D views.
* BATCH_TO_SPACE_ND and SPACE_TO_BATCH_ND gather with div/rem index arithmetic
  in the body, like DEPTH_TO_SPACE; SPACE_TO_BATCH_ND's padded positions load
  a clamped (in-bounds) element and select the pad value instead.

RESIZE_NEAREST_NEIGHBOR (float32 and quantised bytes) gathers the element
tflite's ``GetNearestNeighbor`` picks, computed in float32 in the body.

MEAN follows Android's ``meanGeneric`` (tflite ``reference_ops::Mean``): the
input is summed in row-major order into one accumulator per output element
(float, or int32 for quantised data), then divided by the number of reduced
elements.  For quantised data with the input's scale and zero point on the
output (what Android requires of a model output) that is the integer mean of
the stored values, truncated toward zero exactly like the C++; an output with
its own quantisation gets the real-valued mean requantised to it
(round half away from zero, saturated).
"""

from __future__ import annotations

import math as pymath
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith, math, memref
from xdsl.dialects.builtin import IntegerType, MemRefType, f32, i32

from nnc.dialects.rules.layout import (
    block_shape,
    keep_dims,
    mean_axes,
    pad_paddings,
    space_to_batch_paddings,
    strided_slice_axes,
    transpose_perm,
)
from nnc.enums import OperandType as T
from nnc.enums import OperationType as Op
from nnc.passes.kernels.rows import mean_rows
from nnc.passes.lowering.base import (
    QUANT8,
    Emitter,
    LoweringContext,
    Value,
    affine_map,
    identity_map,
    lowering,
    reduction_map,
)

#: Element types whose bytes the data-movement ops copy (float16 is rejected before lowering).
DATA_TYPES = (T.TENSOR_FLOAT32, T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED)


def _zero(ctx: LoweringContext, i: int = 0) -> int | float:
    """The stored value of 0.0 in input ``i``: its zero point if quantised."""
    info = ctx.info(i)
    return info.zero_point if info.type in QUANT8 else 0.0


def _layout(ctx: LoweringContext, i: int) -> bool:
    return bool(ctx.scalar(i, False))


def _split_idx(idx: Sequence, nchw: bool) -> tuple:
    """(batch, y, x, channel) from the indices of a 4-D NHWC/NCHW tensor."""
    b, d1, d2, d3 = idx
    return (b, d2, d3, d1) if nchw else (b, d1, d2, d3)


def _join(b, y, x, c, nchw: bool) -> list:
    return [b, c, y, x] if nchw else [b, y, x, c]


def _div(e: Emitter, a: Value, b: Value) -> Value:
    """Quotient of non-negative indices (one unsigned division, no guards)."""
    return e.op(arith.DivUIOp(a, b))


def _rem(e: Emitter, a: Value, b: Value) -> Value:
    """Remainder of non-negative indices."""
    return e.op(arith.RemUIOp(a, b))


# -- TRANSPOSE, STRIDED_SLICE, SQUEEZE -------------------------------------------------------


@lowering(Op.TRANSPOSE)
def transpose(ctx: LoweringContext) -> None:
    """out[i_0, ..., i_n-1] = in[j] with j[perm[k]] = i_k: one generic whose
    input map is the inverse permutation."""
    x, out = ctx.input(0), ctx.output()
    oshape = ctx.shape(out)
    rank = len(oshape)
    perm = transpose_perm(ctx.call, rank)
    inverse = [perm.index(j) for j in range(rank)]
    in_map = affine_map(rank, lambda *d: [d[inverse[j]] for j in range(rank)])
    ctx.generic(oshape, [(x, in_map)], [(out, identity_map(rank))], lambda e, a, idx: [a[0]])


@lowering(Op.STRIDED_SLICE)
def strided_slice(ctx: LoweringContext) -> None:
    """out[..., i_k, ...] = in[..., begin_d + stride_d * i_k, ...], a gather
    over the output; a shrunk input dimension d is read at the constant
    begin_d.  (Not an input affine map: a loop must take its bound from the
    first operand indexing it, and the input's dimensions are larger.)"""
    x, out = ctx.input(0), ctx.output()
    ishape, oshape = ctx.shape(x), ctx.shape(out)
    axes = strided_slice_axes(ctx.call, ishape)
    rank = len(oshape)

    def body(e: Emitter, args: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        coords: list = []
        k = 0
        for a in axes:
            if a.shrink:
                coords.append(a.begin)
                continue
            c = idx[k]
            if a.stride != 1:
                c = e.mul(c, e.index(a.stride))
            if a.begin:
                c = e.add(c, e.index(a.begin))
            coords.append(c)
            k += 1
        return [e.load(x, coords)]

    ctx.generic(oshape, [], [(out, identity_map(rank))], body)


@lowering(Op.SQUEEZE)
def squeeze(ctx: LoweringContext) -> None:
    """Same elements in the same order: a copy between 1-D views."""
    x, out = ctx.input(0), ctx.output()
    ctx.copy(ctx.flat(x), ctx.flat(out))


# -- PAD -----------------------------------------------------------------------------------------


@lowering(Op.PAD)
def pad(ctx: LoweringContext) -> None:
    """Fill the output with 0 (the zero point if quantised), then copy the
    input into the subview at offsets ``before``."""
    x, out = ctx.input(0), ctx.output()
    ishape = ctx.shape(x)
    rank = len(ishape)
    pairs = pad_paddings(ctx.call, rank)
    if not any(b or a for b, a in pairs):
        ctx.copy(x, out)
        return
    ctx.fill(out, _zero(ctx))
    if not all(ishape):
        return
    assert isinstance(out.type, MemRefType)
    view = memref.SubviewOp.from_static_parameters(
        out, out.type, [b for b, _ in pairs], list(ishape), [1] * rank
    )
    ctx.builder.insert(view)
    ctx.copy(x, view.result)


# -- BATCH_TO_SPACE_ND, SPACE_TO_BATCH_ND ------------------------------------------------------


@lowering(Op.BATCH_TO_SPACE_ND)
def batch_to_space_nd(ctx: LoweringContext) -> None:
    """tflite's BatchToSpaceND (no crops) as a gather:
    out[b, y, x, c] = in[((y % bh) * bw + x % bw) * B + b, y / bh, x / bw, c]."""
    bh, bw = block_shape(ctx.call)
    nchw = _layout(ctx, 2)
    x, out = ctx.input(0), ctx.output()
    oshape = ctx.shape(out)
    out_batch = oshape[0]

    def body(e: Emitter, args: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        b, oy, ox, c = _split_idx(idx, nchw)
        bhv, bwv = e.index(bh), e.index(bw)
        spatial = e.add(e.mul(_rem(e, oy, bhv), bwv), _rem(e, ox, bwv))
        ib = spatial if out_batch == 1 else e.add(e.mul(spatial, e.index(out_batch)), b)
        return [e.load(x, _join(ib, _div(e, oy, bhv), _div(e, ox, bwv), c, nchw))]

    ctx.generic(oshape, [], [(out, identity_map(4))], body)


@lowering(Op.SPACE_TO_BATCH_ND)
def space_to_batch_nd(ctx: LoweringContext) -> None:
    """tflite's SpaceToBatchND as a gather: output batch ob reads input batch
    ob % B at block offset (sy, sx) = divmod(ob / B, bw):
    out[ob, y, x, c] = padded_in[ob % B, y*bh + sy - top, x*bw + sx - left, c],
    the pad value outside the input."""
    bh, bw = block_shape(ctx.call)
    (top, _), (left, _) = space_to_batch_paddings(ctx.call)
    nchw = _layout(ctx, 3)
    x, out = ctx.input(0), ctx.output()
    ishape, oshape = ctx.shape(x), ctx.shape(out)
    in_batch, in_h, in_w, _ = _split_idx(ishape, nchw)
    pad_value = _zero(ctx)
    if not all(ishape):
        ctx.fill(out, pad_value)
        return
    # A dimension needs a bounds check only if its padded extent exceeds the input.
    _, out_h, out_w, _ = _split_idx(oshape, nchw)
    check_h = top > 0 or out_h * bh > in_h
    check_w = left > 0 or out_w * bw > in_w

    def body(e: Emitter, args: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        ob, oy, ox, c = _split_idx(idx, nchw)
        bhv, bwv, batch = e.index(bh), e.index(bw), e.index(in_batch)
        q = ob if in_batch == 1 else _div(e, ob, batch)
        iy = e.sub(e.add(e.mul(oy, bhv), _div(e, q, bwv)), e.index(top))
        ix = e.sub(e.add(e.mul(ox, bwv), _rem(e, q, bwv)), e.index(left))
        inside = None
        coords = []
        for v, size, check in ((iy, in_h, check_h), (ix, in_w, check_w)):
            if check:
                ok = e.and_(e.cmp("ge", v, e.index(0)), e.cmp("lt", v, e.index(size)))
                inside = ok if inside is None else e.and_(inside, ok)
                v = e.max(e.min(v, e.index(size - 1)), e.index(0))
            coords.append(v)
        b = e.index(0) if in_batch == 1 else _rem(e, ob, batch)
        val = e.load(x, _join(b, coords[0], coords[1], c, nchw))
        if inside is None:
            return [val]
        return [e.select(inside, val, e.like(pad_value, val))]

    ctx.generic(oshape, [], [(out, identity_map(4))], body)


# -- MEAN ------------------------------------------------------------------------------------------


def _widen(e: Emitter, v: Value, unsigned: bool) -> Value:
    """A stored 8-bit element as i32 (zero-extended for QUANT8_ASYMM)."""
    return e.op(arith.ExtUIOp(v, i32) if unsigned else arith.ExtSIOp(v, i32))


@lowering(Op.MEAN)
def mean(ctx: LoweringContext) -> None:
    x, out = ctx.input(0), ctx.output()
    ishape, oshape = ctx.shape(x), ctx.shape(out)
    rank = len(ishape)
    axes = mean_axes(ctx.call, rank)
    keep = keep_dims(ctx.call)
    count = pymath.prod(ishape[a] for a in axes)
    if count == 0:
        ctx.fill(out, 0)  # Android leaves T() when no element is reduced
        return

    reduce_map = reduction_map(rank, axes, keep)
    in_map = identity_map(rank)
    info, oinfo = ctx.info(0), ctx.out_info()
    if info.type == T.TENSOR_FLOAT32 and sorted(axes) == list(range(rank - len(axes), rank)):
        # the reduced elements of an output are one contiguous row: the
        # vector row kernel (the sum in vector accumulators; within the
        # float32 tolerance of the serial sum below, not bit-identical)
        mean_rows(ctx, ctx.flat(x), ctx.flat(out), pymath.prod(ishape) // count, count)
        return
    if info.type not in QUANT8:
        ctx.fill(out, 0.0)
        ctx.generic(ishape, [(x, in_map)], [(out, reduce_map)],
                    lambda e, a, idx: [e.add(a[1], a[0])], reduction_dims=axes)  # fmt: skip
        if count != 1:
            ctx.elementwise(out, [out], lambda e, a: e.div(a[0], e.f32(float(count))))
        return

    unsigned = info.type == T.TENSOR_QUANT8_ASYMM
    acc = ctx.alloc(oshape, i32)
    ctx.fill(acc, 0)
    ctx.generic(ishape, [(x, in_map)], [(acc, reduce_map)],
                lambda e, a, idx: [e.add(a[1], _widen(e, a[0], unsigned))], reduction_dims=axes)  # fmt: skip
    same = (oinfo.scale, oinfo.zero_point) == (info.scale, info.zero_point)
    lo, hi = (0, 255) if unsigned else (-128, 127)

    def finish(e: Emitter, args: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        total = args[0]
        if same:
            q = e.op(arith.DivSIOp(total, e.i32(count)))  # C++ int division: toward zero
        else:
            centred = e.sub(total, e.i32(count * info.zero_point))
            real = e.mul(e.to_float(centred, f32), e.f32(info.scale / (count * oinfo.scale)))
            q = e.add(e.op(math.RoundOp(real)), e.f32(oinfo.zero_point))
            q = e.to_int(e.clamp(q, float(lo), float(hi)), i32)  # saturate before converting
        storage = args[1].type
        assert isinstance(storage, IntegerType)
        return [e.op(arith.TruncIOp(q, storage))]

    rank_out = len(oshape)
    ctx.generic(oshape, [(acc, identity_map(rank_out))], [(out, identity_map(rank_out))], finish)


# -- RESIZE_NEAREST_NEIGHBOR --------------------------------------------------------------------


def _nearest(e: Emitter, i: Value, in_size: int, out_size: int, align: bool, half: bool) -> Value:
    """tflite's ``GetNearestNeighbor`` in float32: ``min(round_or_floor((i +
    offset) * scale), in_size - 1)`` (then ``max(0, .)`` with half-pixel
    centres), where ``scale = (in - 1) / (out - 1)`` with align_corners and
    ``in / out`` otherwise."""
    f = np.float32
    if align and out_size > 1:
        scale = f(in_size - 1) / f(out_size - 1)
    else:
        scale = f(in_size) / f(out_size)
    v = e.to_float(i, f32)
    if half:
        v = e.add(v, e.f32(0.5))
    v = e.mul(v, e.f32(float(scale)))
    v = e.op(math.RoundOp(v)) if align else e.floor(v)
    r = e.min(e.to_int(v, i32), e.i32(in_size - 1))
    if half:
        r = e.max(r, e.i32(0))
    return e.index_cast(r)


@lowering(Op.RESIZE_NEAREST_NEIGHBOR)
def resize_nearest_neighbor(ctx: LoweringContext) -> None:
    x, out = ctx.input(0), ctx.output()
    ishape, oshape = ctx.shape(x), ctx.shape(out)
    if not all(ishape):
        return
    n = len(ctx.call.inputs)
    nchw = _layout(ctx, 3) if n > 3 else False
    align = bool(ctx.scalar(4, False)) if n > 4 else False
    half = bool(ctx.scalar(5, False)) if n > 5 else False
    _, in_h, in_w, _ = _split_idx(ishape, nchw)
    _, out_h, out_w, _ = _split_idx(oshape, nchw)

    def body(e: Emitter, args: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        b, oy, ox, c = _split_idx(idx, nchw)
        iy = _nearest(e, oy, in_h, out_h, align, half)
        ix = _nearest(e, ox, in_w, out_w, align, half)
        return [e.load(x, _join(b, iy, ix, c, nchw))]

    ctx.generic(oshape, [], [(out, identity_map(4))], body)
