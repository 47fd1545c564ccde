"""float32 row kernels: operations along the contiguous last axis of a
tensor, one row per kernel call, rows independent (SOFTMAX, MEAN); and
MEAN over middle axes, whose rows are summed column-wise in vectors.

A ``linalg.generic`` reduction along an axis is a serial scalar loop: the
reference's order of additions forbids LLVM to vectorise it, and
the exponentials are scalar.  A row kernel instead keeps the
row in vectors of the target's width: the maximum in vector registers, the
exponentials by :func:`~nnc.passes.kernels.vmath.exp_nonpositive` (a
polynomial, no call), their sum in vector
accumulators added up at the end of the row.  The order of the additions
is a pure function of the row's length and the target's vector width,
never of the thread count; rows are independent iterations of one
parallel loop (:func:`~nnc.passes.kernels.vector.parallel_each`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from xdsl.dialects import arith, vector
from xdsl.dialects.builtin import f32, i8, i32

from nnc.passes.kernels import vmath
from nnc.passes.kernels.vector import (
    IndexOrInt,
    IVec,
    Vec,
    kernel,
    offsets,
    parallel_each,
    tag,
    vector_width,
    widths,
)
from nnc.passes.lowering.base import Emitter, LoweringContext, Value

#: std::numeric_limits<float>::lowest(), where a running maximum starts (a
#: row of -inf then gives 0 / 0, as in the reference)
FLOAT_LOWEST = -3.4028234663852886e38

# -- SOFTMAX along the last axis -------------------------------------------------------------------


def _fold(v: Vec, x: Value, combine: Callable[[Value, Value], Value]) -> Value:
    """The lanes of ``x`` folded pairwise (halving) with ``combine``, as a scalar."""
    w = vector_width(x)
    while w > 1:
        h = w // 2
        x, w = combine(v.shuffle(x, x, range(h)), v.shuffle(x, x, range(h, w))), h
    return v.e.op(vector.ExtractOp(x, [0], f32))


def _row_pass(
    e: Emitter, nfull: Value, lanes: int, tails: Sequence[int],
    step: Callable[[Emitter, IndexOrInt, int, list[Value]], list[Value]], init: Callable[[int], list[Value]],
) -> list[list[Value]]:
    """One pass over a row: ``step(e, offset, width, carried)`` on the full
    vectors ``[0, nfull)`` (a loop carrying ``init(lanes)``), then once on
    each tail vector (carrying ``init(width)``).  Returns the carried values
    of the loop and of each tail."""
    out = [e.for_(0, nfull, lambda e2, i, c: step(e2, i, lanes, list(c)), init(lanes), lanes)]
    for o, w in zip(offsets(tails), tails):
        out.append(step(e, Vec(e).ix(nfull, o), w, init(w)))
    return out


def softmax_kernel(lanes: int, tails: tuple[int, ...], scaled: bool):
    """``out[r] = exp((x[r] - max) * beta) / sum`` over one row at ``base``:
    ``nfull`` elements in vectors of ``lanes``, then the ``tails`` widths.
    Three passes: the maximum (``maxnum``: NaN lanes are skipped, as the
    generic lowering's compare-and-select skips them), the exponentials
    stored to ``out`` and summed in vector accumulators, the division."""
    name = f"nnc_softmax_{lanes}_t{tag(tails)}{'_beta' if scaled else ''}"

    def body(e: Emitter, p: list[Value]) -> None:
        x, out, base, nfull, beta = p
        v = Vec(e)

        def mx(e: Emitter, i: IndexOrInt, w: int, c: list[Value]) -> list[Value]:
            return [e.op(arith.MaxnumfOp(c[0], Vec(e).load(x, Vec(e).ix(base, i), w)))]

        parts = _row_pass(e, nfull, lanes, tails, mx, lambda w: [v.const(FLOAT_LOWEST, w)])
        m = e.f32(FLOAT_LOWEST)
        for (acc,) in parts:
            m = e.op(arith.MaxnumfOp(m, _fold(v, acc, lambda a, b: v.e.op(arith.MaxnumfOp(a, b)))))

        def ex(e: Emitter, i: IndexOrInt, w: int, c: list[Value]) -> list[Value]:
            v = Vec(e)
            d = e.op(arith.SubfOp(v.load(x, v.ix(base, i), w), v.splat(m, w)))
            if scaled:
                d = e.op(arith.MulfOp(d, v.splat(beta, w)))
            y = vmath.exp_nonpositive(e, d)
            v.store(y, out, v.ix(base, i))
            return [e.op(arith.AddfOp(c[0], y))]

        parts = _row_pass(e, nfull, lanes, tails, ex, lambda w: [v.const(0.0, w)])
        total = e.f32(0.0)
        for (acc,) in parts:
            total = e.add(total, _fold(v, acc, lambda a, b: v.e.op(arith.AddfOp(a, b))))

        def div(e: Emitter, i: IndexOrInt, w: int, c: list[Value]) -> list[Value]:
            v = Vec(e)
            v.store(e.op(arith.DivfOp(v.load(out, v.ix(base, i), w), v.splat(total, w))), out, v.ix(base, i))
            return []

        _row_pass(e, nfull, lanes, tails, div, lambda w: [])

    return name, body


def softmax_rows(ctx: LoweringContext, x: Value, out: Value, rows: int, n: int, beta: float) -> None:
    """SOFTMAX of the ``rows`` contiguous rows of ``n`` float32 elements of
    the flat buffers ``x`` and ``out``, ``beta`` > 0 (so that ``(x - max) *
    beta <= 0``): one :func:`softmax_kernel` call per row, rows in parallel."""
    lanes = ctx.tiles.lanes
    nfull = n // lanes * lanes
    tails = tuple(widths(n - nfull, lanes))
    scaled = beta != 1.0
    name, body = softmax_kernel(lanes, tails, scaled)
    e = ctx.e
    b = e.f32(beta)
    parallel_each(e, 0, rows, 1, lambda e2, r: kernel(ctx, e2, name, [x, out, Vec(e2).ix(0, (r, n)), nfull, b], body))


# -- MEAN over the trailing axes -------------------------------------------------------------------


def mean_kernel(lanes: int, tails: tuple[int, ...]):
    """``out[r] = sum(row) / count`` of one row at ``base`` (``nfull``
    elements in vectors of ``lanes``, then the ``tails`` widths), the sum in
    vector accumulators added up pairwise at the end of the row."""
    name = f"nnc_mean_{lanes}_t{tag(tails)}"

    def body(e: Emitter, p: list[Value]) -> None:
        x, out, base, nfull, r, count = p
        v = Vec(e)

        def add(e: Emitter, i: IndexOrInt, w: int, c: list[Value]) -> list[Value]:
            return [e.op(arith.AddfOp(c[0], Vec(e).load(x, Vec(e).ix(base, i), w)))]

        total = e.f32(0.0)
        for (acc,) in _row_pass(e, nfull, lanes, tails, add, lambda w: [v.const(0.0, w)]):
            total = e.add(total, _fold(v, acc, lambda a, b: v.e.op(arith.AddfOp(a, b))))
        e.store(e.div(total, count), out, [r])

    return name, body


def mean_rows(ctx: LoweringContext, x: Value, out: Value, rows: int, n: int) -> None:
    """MEAN of the ``rows`` contiguous rows of ``n`` float32 elements of the
    flat buffer ``x`` into the flat ``out`` (one element per row): one
    :func:`mean_kernel` call per row, rows in parallel."""
    lanes = ctx.tiles.lanes
    nfull = n // lanes * lanes
    name, body = mean_kernel(lanes, tuple(widths(n - nfull, lanes)))
    e = ctx.e
    count = e.f32(float(n))
    parallel_each(e, 0, rows, 1, lambda e2, r: kernel(ctx, e2, name, [x, out, Vec(e2).ix(0, (r, n)), nfull, r, count], body))


# -- MEAN over middle axes -------------------------------------------------------------------------

#: vectors of channels one column kernel call sums side by side: as many
#: independent additions in flight as an add's latency covers
MEAN_COLUMN_VECTORS = 4

#: what a column kernel sums: float32, or the stored int8 / uint8 of a
#: quantised tensor (widened to int32)
ColumnElem = Literal["f32", "s8", "u8"]


def column_kernel(ws: tuple[int, ...], elem: ColumnElem):
    """The sums ``x[base + r * stride + c]`` over ``r < count`` for the
    channels ``c`` of one block (vectors of widths ``ws``), stored at
    ``out[obase + c]``: float32 sums divided by ``countf`` (the mean), or
    the int32 sums of 8-bit values.  Each lane adds its own channel's
    values one row after the other, starting from 0: the order of the
    serial reduction, so a float32 mean is bit-identical to it (and integer
    sums are exact in any order)."""
    name = f"nnc_mean_cols_{tag(ws)}" if elem == "f32" else f"nnc_sum_cols_{elem}_{tag(ws)}"

    def body(e: Emitter, p: list[Value]) -> None:
        x, out, base, obase, count, stride = p[:6]
        v, iv = Vec(e), IVec(e)
        offs = offsets(ws)

        def load(e: Emitter, off: IndexOrInt, w: int) -> Value:
            if elem == "f32":
                return Vec(e).load(x, off, w)
            byte = IVec(e).load(x, off, i8, w)
            return IVec(e).sext(byte, i32) if elem == "s8" else IVec(e).zext(byte, i32)

        def add(e: Emitter, r: IndexOrInt, accs: list[Value]) -> list[Value]:
            row = Vec(e).ix(base, (r, stride))
            adds = [(a, load(e, Vec(e).ix(row, o), w)) for a, o, w in zip(accs, offs, ws)]
            return [e.op(arith.AddfOp(a, b) if elem == "f32" else arith.AddiOp(a, b)) for a, b in adds]

        zeros = [v.const(0.0, w) if elem == "f32" else iv.const(0, i32, w) for w in ws]
        accs = e.for_(0, count, lambda e2, r, c: add(e2, r, list(c)), zeros)
        for a, o, w in zip(accs, offs, ws):
            total = e.op(arith.DivfOp(a, v.splat(p[6], w))) if elem == "f32" else a
            v.store(total, out, v.ix(obase, o))

    return name, body


def column_sums(ctx: LoweringContext, x: Value, out: Value, outer: int, count: int, inner: int, elem: ColumnElem) -> None:
    """The flat buffer ``x`` viewed as ``[outer, count, inner]`` reduced over
    its middle axis into the flat ``out`` (``[outer, inner]``): the float32
    mean, or the int32 sums of 8-bit values (a quantised MEAN's first step).
    The spatial mean of NHWC feature maps (squeeze-and-excitation, global
    average pooling written as MEAN).  Blocks of up to
    :data:`MEAN_COLUMN_VECTORS` vectors of channels, one
    :func:`column_kernel` call each, blocks in parallel."""
    lanes = ctx.tiles.lanes
    e = ctx.e
    extra = [e.f32(float(count))] if elem == "f32" else []
    blocks = [(o, c0, c1, ws) for o in range(outer) for c0, c1, ws in column_blocks(inner, lanes, MEAN_COLUMN_VECTORS)]
    for o, c0, c1, ws in blocks:
        name, body = column_kernel(ws, elem)

        def call(e2: Emitter, c: IndexOrInt, o: int = o, name: str = name, body=body) -> None:
            v = Vec(e2)
            kernel(ctx, e2, name, [x, out, v.ix(c, o * count * inner), v.ix(c, o * inner), count, inner, *extra], body)

        parallel_each(e, c0, c1, sum(ws), call)


def column_blocks(n: int, lanes: int, most: int) -> list[tuple[int, int, tuple[int, ...]]]:
    """``n`` channels as runs of blocks: [(first, end, widths of each block
    of the run)], whole vectors in blocks of at most ``most`` (the last
    block of a run may be smaller), then the narrower tail."""
    full = n // lanes
    out = []
    if full >= most:
        out.append((0, full // most * most * lanes, (lanes,) * most))
    if full % most:
        start = full // most * most * lanes
        out.append((start, full * lanes, (lanes,) * (full % most)))
    if n % lanes:
        out.append((full * lanes, n, tuple(widths(n % lanes, lanes))))
    return out
