"""Data-movement and lookup operations: CONCATENATION, RESHAPE, DEPTH_TO_SPACE,
SPACE_TO_DEPTH, RESIZE_BILINEAR, EMBEDDING_LOOKUP, HASHTABLE_LOOKUP and GATHER.

Index arithmetic (block rearrangements, resize coordinates, lookups) is
computed in the generic body from ``linalg.index`` and read with
``memref.load`` (a gather), so the only affine maps used are identities and
projections; CONCATENATION writes each input through a static
``memref.subview`` of the output.

Lookups never read out of bounds: EMBEDDING_LOOKUP clamps every index before
the load and records an invalid one in the operation's status (the runtime
then raises an error naming the operation); constant lookups are checked at
compile time.  HASHTABLE_LOOKUP binary-searches the (ascending) keys with a
clamped probe, like Android's ``bsearch``, and writes a zero row and hit 0 for
a miss.

Quantised tensors (TENSOR_QUANT8_ASYMM and _SIGNED, stored as i8): RESHAPE,
DEPTH_TO_SPACE and SPACE_TO_DEPTH move bytes; CONCATENATION copies an input
whose scale and zero point equal the output's and otherwise requantises it
like tflite's ConcatenationWithScaling (float32, std::round); RESIZE_BILINEAR
interpolates the stored integers in float32 and truncates, as tflite's
reference ResizeBilinear template that Android runs for uint8 and int8.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import math, memref
from xdsl.dialects.builtin import MemRefType, f32, i1, i8, i32
from xdsl.utils.exceptions import PassFailedException

from nnc.enums import OperandType as T
from nnc.enums import OperationType as Op
from nnc.passes.lowering import quant as q
from nnc.passes.lowering.base import (
    QUANT8,
    Emitter,
    LoweringContext,
    Value,
    affine_map,
    identity_map,
    lowering,
    memref_elem,
)

# -- CONCATENATION, RESHAPE -------------------------------------------------------------------


def _concat_scaling(t: T, x, out) -> tuple[float, float, int] | None:
    """tflite's ConcatenationWithScaling parameters for one quantised input:
    ``(scale, bias, output zero point)`` in float32 with the zero points of
    the uint8 domain, or None when the input is copied verbatim (same scale
    and zero point as the output).  Android runs int8 through the uint8
    kernel with every zero point shifted by 128."""
    shift = 0 if t == T.TENSOR_QUANT8_ASYMM else 128
    in_zp, out_zp = x.zero_point + shift, out.zero_point + shift
    in_scale, out_scale = np.float32(x.scale), np.float32(out.scale)
    if in_zp == out_zp and in_scale == out_scale:
        return None
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        scale = in_scale * (np.float32(1.0) / out_scale)  # input_scale * (1.f / output_scale)
        bias = np.float32(-in_zp) * scale  # -input_zeropoint * scale
    return float(scale), float(bias), out_zp


def _rescale_copy(
    ctx: LoweringContext, x: Value, dst: Value, t: T, scaling: tuple[float, float, int]
) -> None:
    """``dst = clamp(round(u * scale + bias) + zp_out, 0, 255)`` on the uint8
    value ``u`` of each element (float32 arithmetic, std::round)."""
    scale, bias, out_zp = scaling
    shift = 0 if t == T.TENSOR_QUANT8_ASYMM else 128

    def body(e: Emitter, a: Sequence[Value]) -> Value:
        u = q.load_q(e, a[0], t)
        if shift:
            u = e.add(u, e.i32(shift))
        v = e.add(e.mul(e.to_float(u, f32), e.f32(scale)), e.f32(bias))
        v = e.op(math.RoundOp(v))
        # Keep the conversion defined (the result saturates to 0 or 255 anyway).
        v = e.min(e.max(v, e.f32(-1.0e9)), e.f32(1.0e9))
        r = e.add(e.to_int(v, i32), e.i32(out_zp))
        r = e.clamp(r, 0, 255)
        if shift:
            r = e.sub(r, e.i32(shift))
        return q.store_q(e, r, t, saturate=False)

    ctx.elementwise(dst, [x], body)


@lowering(Op.CONCATENATION)
def concatenation(ctx: LoweringContext) -> None:
    """One copy per input into its slice of the output along ``axis`` (a static
    ``memref.subview`` of the output, so every generic keeps identity maps).

    A quantised input whose scale or zero point differs from the output's is
    requantised like Android (tflite's ConcatenationWithScaling): float32
    ``round(q * s_in / s_out - zp_in * s_in / s_out) + zp_out``, clamped."""
    n = len(ctx.call.inputs) - 1
    out = ctx.output()
    oshape = ctx.shape(out)
    rank = len(oshape)
    axis = ctx.scalar(n)
    if not -rank <= axis < rank:
        raise PassFailedException(f"CONCATENATION: axis {axis} out of range for rank {rank}")
    axis %= rank
    t = ctx.info(0).type
    dyn = ctx.out_info(0).dynamic
    final = out
    if dyn is not None and dyn.axis == axis:  # a data-dependent size along the axis: compacted below
        out = ctx.alloc(oshape, memref_elem(out))
    offset = 0
    for i in range(n):
        x = ctx.input(i)
        shape = ctx.shape(x)
        if all(shape):
            offsets = [offset if d == axis else 0 for d in range(rank)]
            assert isinstance(out.type, MemRefType)
            view = memref.SubviewOp.from_static_parameters(out, out.type, offsets, shape, [1] * rank)
            ctx.builder.insert(view)
            scaling = _concat_scaling(t, ctx.info(i), ctx.out_info(0)) if t in QUANT8 else None
            if scaling is None:
                ctx.copy(x, view.result)
            else:
                _rescale_copy(ctx, x, view.result, t, scaling)
        offset += shape[axis]
    if out is not final:
        _compact_rows(ctx, out, final, axis, n)


def _compact_rows(ctx: LoweringContext, staged: Value, out: Value, axis: int, n: int) -> None:
    """CONCATENATION along a data-dependent axis (every dimension before it
    is 1): ``staged`` holds each input's bound of rows at its static offset;
    ``out`` gets each input's actual rows right after the previous one's,
    zeros after the last, and its count is their total."""
    shape = ctx.shape(out)
    inner = int(np.prod(shape[axis + 1 :], dtype=np.int64))
    rows_out = ctx.reshaped(out, [shape[axis], inner])
    rows_in = ctx.reshaped(staged, [shape[axis], inner])
    ctx.fill(rows_out, 0)
    e = ctx.e
    pos: Value = e.index(0)
    start = 0
    for i in range(n):
        bound = ctx.shape(ctx.input(i))[axis]
        count = ctx.count(i)
        rows = count if count is not None else e.index(bound)

        def row(e: Emitter, r: Value, _: Sequence[Value], start: int = start, pos: Value = pos) -> list[Value]:
            def element(e: Emitter, c: Value, _: Sequence[Value]) -> list[Value]:
                e.store(e.load(rows_in, [e.add(r, e.index(start)), c]), rows_out, [e.add(pos, r), c])
                return []

            e.for_(0, inner, element)
            return []

        e.for_(0, rows, row)
        pos = e.add(pos, rows)
        start += bound
    ctx.set_count(0, pos)


@lowering(Op.RESHAPE)
def reshape(ctx: LoweringContext) -> None:
    """A copy between 1-D views of the (contiguous) input and output."""
    ctx.copy(ctx.flat(ctx.input(0)), ctx.flat(ctx.output()))


# -- DEPTH_TO_SPACE, SPACE_TO_DEPTH -----------------------------------------------------------


def _layout(ctx: LoweringContext, layout_input: int) -> bool:
    return bool(ctx.scalar(layout_input, False))


def _nhwc(shape: Sequence[int], nchw: bool) -> tuple[int, int, int, int]:
    n, a, b, c = shape
    return (n, b, c, a) if nchw else (n, a, b, c)


def _split_idx(idx: Sequence[Value], nchw: bool) -> tuple[Value, Value, Value, Value]:
    """(batch, y, x, channel) from the loop indices of a 4-D layout."""
    b, d1, d2, d3 = idx
    return (b, d2, d3, d1) if nchw else (b, d1, d2, d3)


def _join(b, y, x, c, nchw: bool) -> list:
    return [b, c, y, x] if nchw else [b, y, x, c]


@lowering(Op.DEPTH_TO_SPACE)
def depth_to_space(ctx: LoweringContext) -> None:
    """out[b, oy, ox, oc] = in[b, oy/bs, ox/bs, ((oy%bs)*bs + ox%bs)*C_out + oc]."""
    bs = ctx.scalar(1)
    nchw = _layout(ctx, 2)
    x, out = ctx.input(0), ctx.output()
    oshape = ctx.shape(out)
    c_out = _nhwc(oshape, nchw)[3]

    def body(e: Emitter, args: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        b, oy, ox, oc = _split_idx(idx, nchw)
        bsv = e.index(bs)
        q = e.add(e.mul(e.rem(oy, bsv), bsv), e.rem(ox, bsv))
        ic = e.add(e.mul(q, e.index(c_out)), oc)
        return [e.load(x, _join(b, e.div(oy, bsv), e.div(ox, bsv), ic, nchw))]

    ctx.generic(oshape, [], [(out, identity_map(4))], body)


@lowering(Op.SPACE_TO_DEPTH)
def space_to_depth(ctx: LoweringContext) -> None:
    """out[b, oy, ox, oc] = in[b, oy*bs + q/bs, ox*bs + q%bs, oc%C_in], q = oc/C_in."""
    bs = ctx.scalar(1)
    nchw = _layout(ctx, 2)
    x, out = ctx.input(0), ctx.output()
    oshape = ctx.shape(out)
    c_in = _nhwc(ctx.shape(x), nchw)[3]

    def body(e: Emitter, args: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        b, oy, ox, oc = _split_idx(idx, nchw)
        bsv, cv = e.index(bs), e.index(c_in)
        q = e.div(oc, cv)
        iy = e.add(e.mul(oy, bsv), e.div(q, bsv))
        ix = e.add(e.mul(ox, bsv), e.rem(q, bsv))
        return [e.load(x, _join(b, iy, ix, e.rem(oc, cv), nchw))]

    ctx.generic(oshape, [], [(out, identity_map(4))], body)


# -- RESIZE_BILINEAR ---------------------------------------------------------------------------


def _resize_scale(in_size: int, out_size: int, align_corners: bool) -> float:
    """tflite's scale, in float32: (in-1)/(out-1) with aligned corners, else in/out."""
    if align_corners and out_size > 1:
        return float(np.float32(in_size - 1) / np.float32(out_size - 1))
    return float(np.float32(in_size) / np.float32(out_size))


def _source_coord(e: Emitter, i: Value, scale: float, half_pixel: bool, size: int):
    """Android's (tflite's) ComputeInterpolationValues for output index ``i``:
    the float source coordinate, its clamped floor and ceil (as indices) and the
    fraction ``coord - floor``."""
    v = e.to_float(i, f32)
    if half_pixel:
        v = e.sub(e.mul(e.add(v, e.f32(0.5)), e.f32(scale)), e.f32(0.5))
    else:
        v = e.mul(v, e.f32(scale))
    lo = e.max(e.to_int(e.floor(v), i32), e.i32(0))
    lo = e.min(lo, e.i32(size - 1))  # never taken for valid shapes; keeps the load in bounds
    hi = e.min(e.to_int(e.op(math.CeilOp(v)), i32), e.i32(size - 1))
    hi = e.max(hi, e.i32(0))
    frac = e.sub(v, e.to_float(lo, f32))
    return e.index_cast(lo), e.index_cast(hi), frac


@lowering(Op.RESIZE_BILINEAR)
def resize_bilinear(ctx: LoweringContext) -> None:
    """Bilinear interpolation exactly as tflite's reference ResizeBilinear, which
    Android's ResizeImageOps runs (the output size comes from shape inference,
    whichever of the size and scale signatures the model used).

    Quantised tensors use the same template on the stored integers: the value
    is interpolated in float32 and ``static_cast`` back, i.e. truncated toward
    zero (the output keeps the input's quantisation)."""
    nchw = _layout(ctx, 3)
    align_corners = bool(ctx.scalar(4, False))
    half_pixel = bool(ctx.scalar(5, False))
    x, out = ctx.input(0), ctx.output()
    _, in_h, in_w, _ = _nhwc(ctx.shape(x), nchw)
    oshape = ctx.shape(out)
    _, out_h, out_w, _ = _nhwc(oshape, nchw)
    h_scale = _resize_scale(in_h, out_h, align_corners)
    w_scale = _resize_scale(in_w, out_w, align_corners)
    t = ctx.info(0).type
    quantised = t in QUANT8

    def body(e: Emitter, args: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        b, oy, ox, c = _split_idx(idx, nchw)
        y0, y1, dy = _source_coord(e, oy, h_scale, half_pixel, in_h)
        x0, x1, dx = _source_coord(e, ox, w_scale, half_pixel, in_w)
        one = e.f32(1.0)
        ry, rx = e.sub(one, dy), e.sub(one, dx)

        def at(yy: Value, xx: Value) -> Value:
            v = e.load(x, _join(b, yy, xx, c, nchw))
            return e.to_float(q.load_q(e, v, t), f32) if quantised else v

        # Same association as the C++: ((v00*(1-dy))*(1-dx) + (v10*dy)*(1-dx)) + ...
        acc = e.mul(e.mul(at(y0, x0), ry), rx)
        acc = e.add(acc, e.mul(e.mul(at(y1, x0), dy), rx))
        acc = e.add(acc, e.mul(e.mul(at(y0, x1), ry), dx))
        acc = e.add(acc, e.mul(e.mul(at(y1, x1), dy), dx))
        if quantised:
            # static_cast<T>(float): truncation (the weights are convex up to
            # float rounding; the clamp only guards the narrowing)
            return [q.store_q(e, e.to_int(acc, i32), t)]
        return [acc]

    ctx.generic(oshape, [], [(out, identity_map(4))], body)


# -- EMBEDDING_LOOKUP ---------------------------------------------------------------------------

def _row_map(rank: int):
    """(d0, ..., dr-1) -> (d0): the lookup of output row d0."""
    return affine_map(rank, lambda *d: (d[0],))


@lowering(Op.EMBEDDING_LOOKUP, on_empty=True)
def embedding_lookup(ctx: LoweringContext) -> None:
    """out[i, ...] = values[lookups[i], ...].

    An index outside [0, n) is an error of the operation: constant lookups are
    rejected at compile time; at run time the index is replaced by 0 for the
    load (never out of bounds), the row is zeroed and the operation's status
    is set, so the execution fails naming this operation."""
    lookups, values, out = ctx.input(0), ctx.input(1), ctx.output()
    k = ctx.shape(lookups)[0]
    n = ctx.shape(values)[0]
    oshape = ctx.shape(out)
    rank = len(oshape)
    known = ctx.info(0).value
    if known is not None:
        bad = [(i, int(v)) for i, v in enumerate(np.asarray(known).reshape(-1)) if not 0 <= int(v) < n]
        if bad:
            i, v = bad[0]
            raise PassFailedException(
                f"EMBEDDING_LOOKUP: lookup {i} is {v}, "
                f"outside the {n} rows of the values"
            )
    if k == 0:
        return
    if n == 0:
        # Every lookup is out of range and there is no row to read at all.
        e = ctx.e
        ctx.error_if(e, e.const(1, i1))
        if all(oshape):
            ctx.fill(out, 0)
        return

    # Record an invalid index once per lookup (not once per element).
    def check(e: Emitter, i: Value, carried: Sequence[Value]) -> list[Value]:
        v = e.load(lookups, [i])
        ctx.error_if(e, _out_of_range(e, v, n))
        return []

    ctx.e.for_(0, k, check)
    if not all(oshape):
        return

    def body(e: Emitter, args: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        v = args[0]
        bad = _out_of_range(e, v, n)
        safe = e.index_cast(e.select(bad, e.i32(0), v))
        row = e.load(values, [safe, *idx[1:]])
        return [e.select(bad, e.like(0, row), row)]

    ctx.generic(oshape, [(lookups, _row_map(rank))], [(out, identity_map(rank))], body)


def _out_of_range(e: Emitter, v: Value, n: int) -> Value:
    """i1: ``v`` (i32) is not in [0, n): one unsigned comparison."""
    return e.cmp("uge", v, e.i32(n))


# -- HASHTABLE_LOOKUP ----------------------------------------------------------------------------


@lowering(Op.HASHTABLE_LOOKUP)
def hashtable_lookup(ctx: LoweringContext) -> None:
    """Binary search of each lookup in the ascending keys (as Android's bsearch);
    a hit copies the value row and sets hits[i] = 1, a miss writes a zero row
    and hits[i] = 0."""
    lookups, keys, values = ctx.input(0), ctx.input(1), ctx.input(2)
    out, hits = ctx.output(0), ctx.output(1)
    k = ctx.shape(lookups)[0]
    n = ctx.shape(keys)[0]
    oshape = ctx.shape(out)
    rank = len(oshape)
    if k == 0:
        return
    if n == 0:
        ctx.fill(hits, 0)
        if all(oshape):
            ctx.fill(out, 0)
        return

    # pos[i]: the matching row (0 for a miss, so the gather stays in bounds).
    pos = ctx.alloc([k], i32)
    steps = n.bit_length()  # each step at least halves the interval [lo, hi)

    def search(e: Emitter, args: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        x = args[0]
        lo, hi = e.i32(0), e.i32(n)
        last = e.i32(n - 1)
        one, two = e.i32(1), e.i32(2)
        for _ in range(steps):
            active = e.cmp("lt", lo, hi)
            mid = e.add(lo, e.div(e.sub(hi, lo), two))
            probe = e.load(keys, [e.index_cast(e.min(mid, last))])
            less = e.cmp("lt", probe, x)
            lo = e.select(e.and_(active, less), e.add(mid, one), lo)
            hi = e.select(e.and_(active, e.cmp("ge", probe, x)), mid, hi)
        at = e.min(lo, last)
        found = e.and_(e.cmp("lt", lo, e.i32(n)), e.cmp("eq", e.load(keys, [e.index_cast(at)]), x))
        hit = e.select(found, e.const(1, i8), e.const(0, i8))
        return [hit, e.select(found, at, e.i32(0))]

    ctx.generic([k], [(lookups, identity_map(1))], [(hits, identity_map(1)), (pos, identity_map(1))], search)
    if not all(oshape):
        return

    def gather(e: Emitter, args: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        row = e.load(values, [e.index_cast(args[0]), *idx[1:]])
        miss = e.cmp("eq", args[1], e.const(0, i8))
        return [e.select(miss, e.like(0, row), row)]

    row_map = _row_map(rank)
    ctx.generic(oshape, [(pos, row_map), (hits, row_map)], [(out, identity_map(rank))], gather)


# -- GATHER ---------------------------------------------------------------------------------------


@lowering(Op.GATHER, on_empty=True)
def gather(ctx: LoweringContext) -> None:
    """out[a..., i..., b...] = input[a..., indices[i...], b...] along ``axis``.

    Elements are copied verbatim (a quantised output has the input's scale and
    zero point).  Like EMBEDDING_LOOKUP, an index outside [0, n) of the
    gathered dimension is an error of the operation (Android's Gather fails
    the execution): constant indices are rejected by the rule; at run time the
    load uses index 0 instead (never out of bounds), the element is zeroed and
    the operation's status is set."""
    x, indices, out = ctx.input(0), ctx.input(2), ctx.output()
    in_shape = ctx.shape(x)
    axis = ctx.scalar(1) % len(in_shape)
    n = in_shape[axis]
    k = len(ctx.shape(indices))
    count = int(np.prod(ctx.shape(indices), dtype=np.int64))
    oshape = ctx.shape(out)
    rank = len(oshape)
    if count == 0:
        return
    flat = ctx.flat(indices)

    def check(e: Emitter, i: Value, carried: Sequence[Value]) -> list[Value]:
        ctx.error_if(e, _out_of_range(e, e.load(flat, [i]), n))
        return []

    # Record an invalid index once per index (not once per element).
    ctx.e.for_(0, count, check)
    if n == 0 or not all(oshape):
        if all(oshape):
            ctx.fill(out, 0)
        return

    def body(e: Emitter, args: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        v = args[0]
        bad = _out_of_range(e, v, n)
        safe = e.index_cast(e.select(bad, e.i32(0), v))
        elem = e.load(x, [*idx[:axis], safe, *idx[axis + k :]])
        return [e.select(bad, e.like(0, elem), elem)]

    if rank == 0:
        # A scalar gathered from a vector: no loop for linalg to bound.
        e = ctx.e
        e.store(body(e, [e.load(indices, [])], [])[0], out, [])
        return
    index_map = affine_map(rank, lambda *d: d[axis : axis + k])
    ctx.generic(oshape, [(indices, index_map)], [(out, identity_map(rank))], body)
