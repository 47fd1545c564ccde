"""NNAPI 1.2+ tensor-construction and data-movement operations: SLICE, SPLIT,
TILE, EXPAND_DIMS, PAD_V2, MIRROR_PAD, REVERSE, CHANNEL_SHUFFLE, PACK, FILL.

None of them looks at element values, so one lowering serves float32, int32
and the 8-bit quantised types (bytes copied; the rules keep the output's
quantisation equal to the input's).

* SLICE and SPLIT copy static ``memref.subview`` windows of the input; PACK
  copies each input into its window of the output, PAD_V2 fills the output
  with the pad value and copies the input into a window of it.
* EXPAND_DIMS copies between 1-D views (the element order is unchanged).
* TILE, MIRROR_PAD, REVERSE and CHANNEL_SHUFFLE are gathers: a generic over
  the output computes the input coordinates from ``linalg.index`` in its body.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import MemRefType, f64, i1, i64

from nnc.dialects.rules.layout import paddings_of
from nnc.dialects.rules.tensor_ops import reverse_axis, slice_bounds
from nnc.enums import OperandType as T
from nnc.enums import OperationType as Op
from nnc.passes.lowering.base import QUANT8, Emitter, LoweringContext, Value, identity_map, lowering
from nnc.passes.lowering.control_flow import CLOCK_FUNCTION
from nnc.passes.lowering.philox import rand_double

#: element types moved as stored (float16 is rejected before lowering)
DATA_TYPES = (T.TENSOR_FLOAT32, T.TENSOR_INT32, *QUANT8)


def _window(ctx: LoweringContext, buf: Value, offsets: Sequence[int], sizes: Sequence[int]) -> Value:
    """A static unit-stride subview of ``buf``."""
    assert isinstance(buf.type, MemRefType)
    view = memref.SubviewOp.from_static_parameters(buf, buf.type, list(offsets), list(sizes), [1] * len(sizes))
    ctx.builder.insert(view)
    return view.result


def _gather(
    ctx: LoweringContext, coords: Callable[[Emitter, Sequence[Value]], Sequence[Value]]
) -> None:
    """``out[idx] = in[coords(idx)]`` over the whole output."""
    x, out = ctx.input(0), ctx.output()
    oshape = ctx.shape(out)
    if not all(ctx.shape(x)):
        return
    ctx.generic(oshape, [], [(out, identity_map(len(oshape)))], lambda e, a, idx: [e.load(x, coords(e, idx))])


# -- SLICE, SPLIT, EXPAND_DIMS, PACK -----------------------------------------------------------


@lowering(Op.SLICE)
def slice_(ctx: LoweringContext) -> None:
    x, out = ctx.input(0), ctx.output()
    bounds = slice_bounds(ctx.call, ctx.shape(x))
    ctx.copy(_window(ctx, x, [b for b, _ in bounds], [s for _, s in bounds]), out)


@lowering(Op.SPLIT)
def split(ctx: LoweringContext) -> None:
    x = ctx.input(0)
    shape = ctx.shape(x)
    axis = ctx.scalar(1) % len(shape)
    for i, out in enumerate(ctx.outputs):
        oshape = ctx.shape(out)
        if all(oshape):
            offsets = [i * oshape[axis] if k == axis else 0 for k in range(len(shape))]
            ctx.copy(_window(ctx, x, offsets, oshape), out)


@lowering(Op.EXPAND_DIMS)
def expand_dims(ctx: LoweringContext) -> None:
    ctx.copy(ctx.flat(ctx.input(0)), ctx.flat(ctx.output()))


@lowering(Op.PACK)
def pack(ctx: LoweringContext) -> None:
    """Input i (after the axis) is the output's slice i along ``axis``."""
    out = ctx.output()
    oshape = ctx.shape(out)
    axis = ctx.scalar(0) % len(oshape)
    sizes = [1 if k == axis else d for k, d in enumerate(oshape)]
    for i in range(1, len(ctx.inputs)):
        offsets = [i - 1 if k == axis else 0 for k in range(len(oshape))]
        ctx.copy(ctx.reshaped(ctx.input(i), sizes), _window(ctx, out, offsets, sizes))


# -- PAD_V2, MIRROR_PAD -------------------------------------------------------------------------


def _stored(value: int, t: T) -> int:
    """A quantised pad value as its i8 storage (QUANT8_ASYMM 128..255 wrap)."""
    return value - 256 if t == T.TENSOR_QUANT8_ASYMM and value > 127 else value


@lowering(Op.PAD_V2)
def pad_v2(ctx: LoweringContext) -> None:
    x, out = ctx.input(0), ctx.output()
    ishape = ctx.shape(x)
    pairs = paddings_of(ctx.call, 1, len(ishape), "paddings")
    t = ctx.info(0).type
    value = ctx.scalar(2)
    ctx.fill(out, _stored(value, t) if t in QUANT8 else value)
    if all(ishape):
        ctx.copy(x, _window(ctx, out, [b for b, _ in pairs], ishape))


@lowering(Op.MIRROR_PAD)
def mirror_pad(ctx: LoweringContext) -> None:
    """Input coordinate of output index o along a dimension of size d padded by
    ``before``: ``j = o - before``, reflected at both ends: REFLECT (mode 0)
    ``-j`` / ``2d - 2 - j``, SYMMETRIC (mode 1) ``-j - 1`` / ``2d - 1 - j``."""
    ishape = ctx.shape(ctx.input(0))
    pairs = paddings_of(ctx.call, 1, len(ishape), "paddings")
    edge = 1 if ctx.scalar(2) == 0 else 0

    def coords(e: Emitter, idx: Sequence[Value]) -> list[Value]:
        out = []
        for o, d, (before, _) in zip(idx, ishape, pairs):
            j = e.sub(o, e.index(before)) if before else o
            low = e.sub(e.index(-1 + edge), j)
            high = e.sub(e.index(2 * d - 1 - edge), j)
            j = e.select(e.cmp("lt", j, e.index(0)), low, j)
            out.append(e.select(e.cmp("ge", j, e.index(d)), high, j))
        return out

    _gather(ctx, coords)


# -- TILE, REVERSE, CHANNEL_SHUFFLE ---------------------------------------------------------------


def _rem(e: Emitter, a: Value, n: int) -> Value:
    return e.op(arith.RemUIOp(a, e.index(n)))


def _div(e: Emitter, a: Value, n: int) -> Value:
    return e.op(arith.DivUIOp(a, e.index(n)))


@lowering(Op.TILE)
def tile(ctx: LoweringContext) -> None:
    """``out[i] = in[i % in.shape]`` per dimension."""
    oshape, ishape = ctx.shape(ctx.output()), ctx.shape(ctx.input(0))
    _gather(ctx, lambda e, idx: [i if d == o else _rem(e, i, d) for i, d, o in zip(idx, ishape, oshape)])


@lowering(Op.REVERSE)
def reverse(ctx: LoweringContext) -> None:
    ishape = ctx.shape(ctx.input(0))
    axis = reverse_axis(ctx.call, len(ishape))
    _gather(ctx, lambda e, idx: [e.sub(e.index(ishape[k] - 1), i) if k == axis else i
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
        src = e.add(e.mul(_rem(e, c, groups), e.index(group_size)), _div(e, c, groups))
        return [src if k == axis else i for k, i in enumerate(idx)]

    _gather(ctx, coords)


# -- FILL -------------------------------------------------------------------------------------------


@lowering(Op.FILL)
def fill(ctx: LoweringContext) -> None:
    ctx.fill(ctx.output(), ctx.scalar(1))


@lowering(Op.RANK)
def rank(ctx: LoweringContext) -> None:
    """The input's rank into the INT32 scalar output (a rank-0 buffer).  Its
    readers inside the model read a constant (``nnapi-shape-inference``
    folds it), so this only writes a model output."""
    e = ctx.e
    e.store(e.i32(len(ctx.shape(ctx.input(0)))), ctx.output(), [])


@lowering(Op.RANDOM_MULTINOMIAL)
def random_multinomial(ctx: LoweringContext) -> None:
    """Android's ``Multinomial::EvalFloat32``, draw for draw: per batch row,
    the cumulative sums (double) of ``exp(x - max)`` over the finite inputs,
    then for each sample ``upper_bound(cdf, RandDouble() * total)``, the
    doubles taken in order from one ``PhiloxRandom(seed0, seed1)`` stream
    (:mod:`nnc.passes.lowering.philox`; the int32 seeds sign-extended to 64
    bits as the reference's ``Init(int64, int64)`` does).

    Seeds: every execution starts a fresh generator from the seeds input,
    so equal seeds give equal samples, in every execution and on every
    thread count.  Seeds (0, 0) ask for random seeds (the reference draws
    two ``New64()``): nnc takes the monotonic clock in nanoseconds at the
    start of the operation (``seed0``) and that times 2^64 / golden ratio
    (``seed1``): different in each execution, not cryptographic."""
    x, seeds, out = ctx.input(0), ctx.input(2), ctx.output()
    batches, classes = ctx.shape(x)
    samples = ctx.shape(out)[1]
    e = ctx.e
    s0, s1 = (e.op(arith.ExtSIOp(e.load(seeds, [k]), i64)) for k in (0, 1))
    zero = e.const(0, i64)
    random = e.and_(e.cmp("eq", s0, zero), e.cmp("eq", s1, zero))
    now = e.op(func.CallOp(CLOCK_FUNCTION, [], [i64]))
    s0 = e.select(random, now, s0)
    s1 = e.select(random, e.mul(now, e.const(0x9E3779B97F4A7C15 - (1 << 64), i64)), s1)
    cdf = ctx.alloc([classes], f64)
    lowest = float(np.finfo(np.float32).min)

    def row(e: Emitter, b: Value, _: list[Value]) -> list[Value]:
        def finite(e: Emitter, v: Value) -> Value:
            return e.cmp("lt", e.abs(v), e.f32(float("inf")))

        def biggest(e: Emitter, j: Value, acc: Sequence[Value]) -> list[Value]:
            v = e.load(x, [b, j])
            return [e.select(e.and_(finite(e, v), e.cmp("gt", v, acc[0])), v, acc[0])]

        [top] = e.for_(0, classes, biggest, [e.f32(lowest)])
        top64 = e.op(arith.ExtFOp(top, f64))

        def cumulate(e: Emitter, j: Value, acc: Sequence[Value]) -> list[Value]:
            v = e.load(x, [b, j])
            p = e.exp(e.sub(e.op(arith.ExtFOp(v, f64)), top64))
            total = e.select(finite(e, v), e.add(acc[0], p), acc[0])
            e.store(total, cdf, [j])
            return [total]

        [total] = e.for_(0, classes, cumulate, [e.const(0.0, f64)])

        def draw(e: Emitter, j: Value, _: list[Value]) -> list[Value]:
            n = e.op(arith.IndexCastOp(e.add(e.mul(b, e.index(samples)), j), i64))
            target = e.mul(rand_double(e, s0, s1, n), total)
            e.store(_upper_bound(e, cdf, classes, target), out, [b, j])
            return []

        e.for_(0, samples, draw)
        return []

    e.for_(0, batches, row)


def _upper_bound(e: Emitter, cdf: Value, n: int, target: Value) -> Value:
    """``std::upper_bound``: the first index whose value exceeds ``target``
    (``n`` if none), as an i32, by a binary search of fixed length."""
    lo, hi = e.i32(0), e.i32(n)
    for _ in range(n.bit_length()):
        active = e.cmp("lt", lo, hi)
        mid = e.op(arith.ShRUIOp(e.add(lo, hi), e.i32(1)))
        v = e.load(cdf, [e.index_cast(e.min(mid, e.i32(n - 1)))])
        right = e.cmp("le", v, target)
        lo = e.select(e.and_(active, right), e.add(mid, e.i32(1)), lo)
        hi = e.select(e.and_(active, e.op(arith.XOrIOp(right, e.const(1, i1)))), mid, hi)
    return lo
