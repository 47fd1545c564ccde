"""BATCH_MATMUL: ``out[..., i, j] = sum_k x[..., i, k] * y[..., k, j]``, each
matrix optionally transposed first (``adj_x``, ``adj_y``), batch dimensions
broadcast (see :mod:`nnc.dialects.rules.matmul`).

* TENSOR_FLOAT32: the GEMM kernel of :mod:`nnc.passes.kernels.f32`
  (:func:`~nnc.passes.kernels.f32.batch_gemm`), which reads ``x`` in place
  whether transposed or not (a row stride and a step along k) and ``y`` as
  ``[K, N]`` rows; an adjointed ``y`` is transposed first (at compile time
  when it is a constant).  Each output element is the sum over k in
  order, like the reference.
* TENSOR_INT32: a ``linalg.generic`` reduction with wrapping int32
  arithmetic, as the reference's C++ computes (the order does not matter).
* TENSOR_QUANT8_ASYMM_SIGNED, as Android's ``batchMatMulQuantized`` and the
  TFLite kernel it calls: ``acc = sum_k (x - x_zp) * (y - y_zp)`` in int32,
  then ``MultiplyByQuantizedMultiplier(acc, m, shift) + out_zp`` clamped to
  [-128, 127], with ``(m, shift) = QuantizeMultiplier(float(x_scale *
  y_scale) / out_scale)`` (``GetQuantizedConvolutionMultiplier`` multiplies
  the two scales as C floats).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import f32, i32
from xdsl.ir.affine import AffineExpr, AffineMap

from nnc.dialects.rules.base import OpCall
from nnc.enums import OperandType as T
from nnc.enums import OperationType as Op
from nnc.passes.kernels.f32 import batch_gemm
from nnc.passes.kernels.vector import IndexOrInt, Vec
from nnc.passes.lowering import quant as q
from nnc.passes.lowering.base import (
    QUANT8,
    Emitter,
    LoweringContext,
    Value,
    affine_map,
    identity_map,
    lowering,
)
from nnc.passes.lowering.conv.geometry import permuted


def requant_params(call: OpCall) -> tuple[int, int]:
    """``(multiplier, shift)`` of a quantised call, as the reference derives
    them (raises :class:`~nnc.passes.lowering.quant.QuantError`)."""
    x, y, out = call.inputs[0], call.inputs[1], call.outputs[0]
    product = q.f32(q.f32(x.scale) * q.f32(y.scale))
    if not product >= 0 or not q.f32(out.scale) > 0:
        raise q.QuantError(f"scales {x.scale} * {y.scale} / {out.scale} are invalid")
    m, shift = q.quantize_multiplier(product / q.f32(out.scale))
    if shift > 31:
        raise q.QuantError(f"multiplier {product / q.f32(out.scale)} is too large")
    return m, shift


def _check(call: OpCall) -> str | None:
    if call.inputs[0].type not in QUANT8:
        return None
    try:
        requant_params(call)
    except (q.QuantError, OverflowError) as e:
        return f"quantised BATCH_MATMUL: {e}"
    return None


def _adjoints(ctx: LoweringContext) -> tuple[bool, bool]:
    return bool(ctx.scalar(2, False)), bool(ctx.scalar(3, False))


def _batch_expr(out_batch: Sequence[int], dims: Sequence[int], d: Sequence[AffineExpr]) -> list:
    """An operand's batch indices in the output's iteration space: a
    broadcast dimension (size 1 under a larger one) is always 0."""
    return [0 if n == 1 and o != 1 else d[k] for k, (n, o) in enumerate(zip(dims, out_batch))]


@lowering(Op.BATCH_MATMUL, check=_check)
def batch_matmul(ctx: LoweringContext) -> None:
    x, y, out = ctx.input(0), ctx.input(1), ctx.output()
    adj_x, adj_y = _adjoints(ctx)
    if ctx.info(0).type == T.TENSOR_FLOAT32:
        _batch_matmul_f32(ctx, x, y, out, adj_x, adj_y)
        return
    xs, ys, os_ = ctx.shape(x), ctx.shape(y), ctx.shape(out)
    nb = len(os_) - 2
    rank = nb + 3  # batch..., i, j, k

    def operand_map(shape: Sequence[int], adj: bool, row: int, col: int) -> AffineMap:
        def fn(*d: AffineExpr) -> list:
            r, c = (d[col], d[row]) if adj else (d[row], d[col])
            return [*_batch_expr(os_[:nb], shape[:nb], d), r, c]

        return affine_map(rank, fn)

    xmap = operand_map(xs, adj_x, nb, nb + 2)  # x[..., i, k]
    ymap = operand_map(ys, adj_y, nb + 2, nb + 1)  # y[..., k, j]
    omap = affine_map(rank, lambda *d: d[: nb + 2])
    quantised = ctx.info(0).type in QUANT8
    acc = ctx.alloc(os_, i32) if quantised else out
    ctx.fill(acc, 0)
    k = xs[-2] if adj_x else xs[-1]
    domain = [*os_, k]
    if quantised:
        xt, yt = ctx.info(0), ctx.info(1)

        def mac(e: Emitter, a: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
            xv = q.load_q(e, a[0], xt.type)
            yv = q.load_q(e, a[1], yt.type)
            xv = e.sub(xv, e.i32(xt.zero_point)) if xt.zero_point else xv
            yv = e.sub(yv, e.i32(yt.zero_point)) if yt.zero_point else yv
            return [e.add(a[2], e.mul(xv, yv))]

        ctx.generic(domain, [(x, xmap), (y, ymap)], [(acc, omap)], mac, reduction_dims=[rank - 1])
        _requantize(ctx, acc, out)
        return
    ctx.generic(
        domain, [(x, xmap), (y, ymap)], [(acc, omap)],
        lambda e, a, idx: [e.add(a[2], e.mul(a[0], a[1]))], reduction_dims=[rank - 1],
    )  # fmt: skip


def _requantize(ctx: LoweringContext, acc: Value, out: Value) -> None:
    """``out = clamp(MultiplyByQuantizedMultiplier(acc) + out_zp, -128, 127)``."""
    m, shift = requant_params(ctx.call)
    o = ctx.out_info()
    shape = ctx.shape(out)
    ident = identity_map(len(shape))

    def finish(e: Emitter, a: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        v = q.ssa(q.emit_mbqm(e, a[0], m, shift))
        v = e.add(v, e.i32(o.zero_point)) if o.zero_point else v
        return [q.store_q(e, v, o.type, -128, 127)]

    ctx.generic(shape, [(acc, ident)], [(out, ident)], finish)


def _batch_matmul_f32(ctx: LoweringContext, x: Value, y: Value, out: Value, adj_x: bool, adj_y: bool) -> None:
    """The GEMM kernel over every matrix of the batch (see the module doc)."""
    xs, ys, os_ = ctx.shape(x), ctx.shape(y), ctx.shape(out)
    nb = len(os_) - 2
    m, n = os_[-2:]
    k = xs[-2] if adj_x else xs[-1]
    if adj_y:
        perm = (*range(nb), nb + 1, nb)
        value = ctx.constant_value(y)
        if value is not None:
            y = ctx.packed_constant(np.ascontiguousarray(np.asarray(value).transpose(perm)), f32)
        else:
            y = permuted(ctx, y, perm)
    batches = int(np.prod(os_[:nb], dtype=np.int64))

    def batch_at(e: Emitter, t: IndexOrInt) -> tuple[IndexOrInt, IndexOrInt]:
        return (_offset(e, t, os_[:nb], xs[:nb], m * k), _offset(e, t, os_[:nb], ys[:nb], k * n))

    # x[i, k] at i * k_count + k, or (adj_x, stored [k, m]) at k * m + i
    a_row, a_step = (1, m) if adj_x else (k, 1)
    batch_gemm(ctx, ctx.flat(x), ctx.flat(y), ctx.flat(out), batches, batch_at, m, k, n, a_row, a_step)


def _offset(e: Emitter, t: IndexOrInt, out_batch: Sequence[int], dims: Sequence[int], size: int) -> IndexOrInt:
    """Where the matrix of output batch ``t`` (row-major over ``out_batch``)
    starts in an operand with batch dimensions ``dims`` (broadcast where 1)
    and matrices of ``size`` elements."""
    v = Vec(e)
    if tuple(dims) == tuple(out_batch):
        return v.ix(0, (t, size))
    off: IndexOrInt = 0
    stride = size
    rest: IndexOrInt = t
    idx: IndexOrInt
    for d in reversed(range(len(out_batch))):
        o = out_batch[d]
        if isinstance(rest, int):
            rest, idx = divmod(rest, o)
        elif d == 0:
            rest, idx = 0, rest
        else:
            idx, rest = e.rem(rest, e.index(o)), e.div(rest, e.index(o))
        if dims[d] != 1:
            off = v.ix(off, (idx, stride))
        stride *= dims[d]
    return off
