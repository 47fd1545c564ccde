"""float32 row kernels: operations along the contiguous last axis of a
tensor, one row per kernel call, rows independent (SOFTMAX).

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

from xdsl.dialects import arith, vector
from xdsl.dialects.builtin import f32

from nnc.passes.kernels import vmath
from nnc.passes.kernels.vector import (
    IndexOrInt,
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
