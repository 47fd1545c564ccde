"""ARGMAX / ARGMIN and REDUCE_SUM / PROD / MAX / MIN / ANY / ALL.

Each is one reduction ``linalg.generic`` over the input's iteration space
whose output map drops (or pins to 0, with keep_dims) the reduced dimensions,
so elements are combined in row-major order like Android's loops.

* ARGMAX / ARGMIN (Android's ``argMinMaxImpl``): the running extreme starts
  at the element with index 0 along the axis and is replaced only by a
  strictly greater (smaller) element, so ties keep the first index.  Stored
  quantised integers are compared directly (unsigned for QUANT8_ASYMM).
* REDUCE_* (tflite's ``ReduceGeneric`` as Android runs it): the accumulator
  starts at 0 / 1 / lowest / highest / false / true and takes
  ``(in > acc) ? in : acc`` for MAX (``<`` for MIN).  TENSOR_BOOL8 is i8 0/1.
* TOPK_V2 (Android's ``topk_v2::evalGeneric``): the reference sorts the
  (value, index) pairs of a row and reverses them, so the order is value
  descending, then index descending among equal values.  That order is
  total, so output ``j`` is the greatest pair below output ``j - 1``: k scans
  of the row (no scratch memory, no sort), rows in parallel.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import IntegerType, f32, i32

from nnc.dialects.rules.reduce import keep_dims, mean_axes, reduce_axes, reduce_keep_dims
from nnc.enums import OperandType as T
from nnc.enums import OperationType as Op
from nnc.passes.kernels.rows import column_sums, mean_rows
from nnc.passes.kernels.vector import parallel_each
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
    reduction_map,
)

#: types whose stored integers compare unsigned
_UNSIGNED = {T.TENSOR_QUANT8_ASYMM, T.TENSOR_BOOL8}


def _pred(t: T, base: str) -> str:
    """``gt``/``lt`` as the comparison of ``t``'s stored elements."""
    return ("u" + base) if t in _UNSIGNED else base


@lowering(Op.ARGMAX, Op.ARGMIN)
def arg_min_max(ctx: LoweringContext) -> None:
    x, out = ctx.input(0), ctx.output()
    ishape = ctx.shape(x)
    rank = len(ishape)
    axis = ctx.scalar(1) % rank
    if not all(ishape):
        return
    t = ctx.info(0).type
    pred = _pred(t, "gt" if ctx.call.type == Op.ARGMAX else "lt")
    elem = memref_elem(x)
    acc_shape = [d for k, d in enumerate(ishape) if k != axis] or [1]
    acc = ctx.alloc(acc_shape, elem)
    flat_out = ctx.reshaped(out, acc_shape)
    reduce_map = reduction_map(rank, [axis], keep=False)
    # Seed with the element at index 0 along the axis.
    first = affine_map(len(acc_shape), lambda *d: [*d[:axis], 0, *d[axis:]] if rank > 1 else [0])
    ctx.generic(acc_shape, [(x, first)], [(acc, identity_map(len(acc_shape)))], lambda e, a, idx: [a[0]])
    ctx.fill(flat_out, 0)

    def body(e: Emitter, a: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        v, best, best_i = a
        better = e.cmp(pred, v, best)
        i = e.index_cast(idx[axis], i32)
        return [e.select(better, v, best), e.select(better, i, best_i)]

    ctx.generic(ishape, [(x, identity_map(rank))], [(acc, reduce_map), (flat_out, reduce_map)], body,
                reduction_dims=[axis])  # fmt: skip


def _init(t: T, op: Op) -> float | int:
    """The accumulator's starting value (tflite's ReduceGeneric init values)."""
    if op == Op.REDUCE_SUM:
        return 0.0
    if op == Op.REDUCE_PROD:
        return 1.0
    if op == Op.REDUCE_ANY:
        return 0
    if op == Op.REDUCE_ALL:
        return 1
    if t == T.TENSOR_FLOAT32:
        lim = float(np.finfo(np.float32).max)
    else:
        lo, hi = q.QRANGE[t]
        lim = hi if op == Op.REDUCE_MIN else lo
        # the i8 storage of a QUANT8_ASYMM value v >= 128 is v - 256
        return lim - 256 if lim > 127 else lim
    return -lim if op == Op.REDUCE_MAX else lim


def _combine(t: T, op: Op) -> Callable[[Emitter, Value, Value], Value]:
    """``acc' = f(acc, in)``."""
    if op == Op.REDUCE_SUM:
        return lambda e, acc, v: e.add(acc, v)
    if op == Op.REDUCE_PROD:
        return lambda e, acc, v: e.mul(acc, v)
    if op == Op.REDUCE_ANY:
        return lambda e, acc, v: e.select(e.cmp("ne", v, e.like(0, v)), e.like(1, v), acc)
    if op == Op.REDUCE_ALL:
        return lambda e, acc, v: e.select(e.cmp("eq", v, e.like(0, v)), e.like(0, v), acc)
    pred = _pred(t, "gt" if op == Op.REDUCE_MAX else "lt")
    return lambda e, acc, v: e.select(e.cmp(pred, v, acc), v, acc)


@lowering(Op.REDUCE_SUM, Op.REDUCE_PROD, Op.REDUCE_MAX, Op.REDUCE_MIN, Op.REDUCE_ANY, Op.REDUCE_ALL)
def reduce(ctx: LoweringContext) -> None:
    x, out = ctx.input(0), ctx.output()
    ishape = ctx.shape(x)
    rank = len(ishape)
    axes = reduce_axes(ctx.call, rank)
    keep = reduce_keep_dims(ctx.call)
    t, op = ctx.info(0).type, ctx.call.type
    ctx.fill(out, _init(t, op))
    if not all(ishape):
        return
    fn = _combine(t, op)
    ctx.generic(ishape, [(x, identity_map(rank))], [(out, reduction_map(rank, axes, keep))],
                lambda e, a, idx: [fn(e, a[1], a[0])], reduction_dims=axes)  # fmt: skip


@lowering(Op.TOPK_V2)
def topk_v2(ctx: LoweringContext) -> None:
    x, values, indices = ctx.input(0), ctx.output(0), ctx.output(1)
    shape = ctx.shape(x)
    n, k = shape[-1], ctx.shape(values)[-1]
    rows = int(np.prod(shape[:-1], dtype=np.int64))
    xf = ctx.reshaped(x, [rows, n])
    vf, jf = ctx.reshaped(values, [rows, k]), ctx.reshaped(indices, [rows, k])
    t = ctx.info(0).type
    gt = _pred(t, "gt")

    def after(e: Emitter, v: Value, i: Value, w: Value, j: Value, pred: str, ipred: str) -> Value:
        """(v, i) comes after (w, j) in (value, index) order by ``pred``/``ipred``."""
        return e.or_(e.cmp(pred, v, w), e.and_(e.cmp("eq", v, w), e.cmp(ipred, i, j)))

    def row(e: Emitter, r: Value | int) -> None:
        def output(e: Emitter, j: Value, prev: Sequence[Value]) -> list[Value]:
            pv, pi = prev

            def scan(e: Emitter, i: Value, best: Sequence[Value]) -> list[Value]:
                bv, bi = best
                v, ii = e.load(xf, [r, i]), e.index_cast(i, i32)
                none = e.i32(-1)
                below_prev = e.or_(e.cmp("eq", pi, none), after(e, pv, pi, v, ii, gt, "gt"))
                above_best = e.or_(e.cmp("eq", bi, none), after(e, v, ii, bv, bi, gt, "gt"))
                take = e.and_(below_prev, above_best)
                return [e.select(take, v, bv), e.select(take, ii, bi)]

            bv, bi = e.for_(0, n, scan, [pv, e.i32(-1)])
            e.store(bv, vf, [r, j])
            e.store(bi, jf, [r, j])
            return [bv, bi]

        e.for_(0, k, output, [e.load(xf, [r, 0]), e.i32(-1)])

    parallel_each(ctx.e, 0, rows, 1, row)


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
    # a run of middle axes (the spatial mean of NHWC): each output is a
    # column of rows ``inner`` apart, summed lane by lane in vectors (float32
    # in the serial order, so bit-identical to the loop below)
    middle = axes == list(range(axes[0], axes[-1] + 1))
    outer, inner = pymath.prod(ishape[: axes[0]]), pymath.prod(ishape[axes[-1] + 1 :])
    if info.type == T.TENSOR_FLOAT32 and middle:
        column_sums(ctx, ctx.flat(x), ctx.flat(out), outer, count, inner, "f32")
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
    if middle:
        column_sums(ctx, ctx.flat(x), ctx.flat(acc), outer, count, inner, "u8" if unsigned else "s8")
    else:
        ctx.fill(acc, 0)
        ctx.generic(ishape, [(x, in_map)], [(acc, reduce_map)],
                    lambda e, a, idx: [e.add(a[1], _widen(e, a[0], unsigned))], reduction_dims=axes)  # fmt: skip
    same = (oinfo.scale, oinfo.zero_point) == (info.scale, info.zero_point)
    lo, hi = (0, 255) if unsigned else (-128, 127)

    def finish(e: Emitter, args: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        total = args[0]
        if same:
            # rounded down: NNAPI's conformance values (uint8 truncates, int8 is
            # uint8 shifted by 128; docs/tflite.md)
            q = e.op(arith.FloorDivSIOp(total, e.i32(count)))
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
