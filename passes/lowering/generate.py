"""Lowerings of FILL and RANDOM_MULTINOMIAL.

FILL writes one value over its output.  RANDOM_MULTINOMIAL draws from the
Philox stream (:mod:`nnc.passes.lowering.philox`) and inverts each batch's
cumulative distribution by binary search, as Android's reference kernel.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import f64, i1, i64

from nnc.enums import OperationType as Op
from nnc.passes.lowering.base import Emitter, LoweringContext, Value, lowering
from nnc.passes.lowering.control_flow import CLOCK_FUNCTION
from nnc.passes.lowering.philox import rand_double


@lowering(Op.FILL)
def fill(ctx: LoweringContext) -> None:
    ctx.fill(ctx.output(), ctx.scalar(1))


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
