"""What the conv family's lowerings share: the generic reduction they build
(:func:`named_generic`), its float and quantised accumulator, body and
epilogue, the limits of the quantised forms (:func:`check_limits`), and the
operands of the int8 kernels (filters known at compile time, packed; inputs
widened or offset, padded with the zero point).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import i8, i16, i32
from xdsl.ir.affine import AffineExpr, AffineMap

from nnc.dialects.rules.base import OpCall
from nnc.enums import FuseCode
from nnc.enums import OperandType as T
from nnc.passes.kernels import q8
from nnc.passes.lowering.base import (
    QUANT8,
    Emitter,
    LoweringContext,
    Value,
    activation,
    affine_map,
    identity_map,
)
from nnc.passes.lowering.conv.geometry import ConvGeometry, strided_view
from nnc.passes.lowering.conv_q8 import QuantConv, QuantConvError
from nnc.passes.lowering.quant import is_unsigned


def init_with_bias(ctx: LoweringContext, out: Value, bias: Value, channel_dim: int) -> None:
    """``out[..., c, ...] = bias[c]`` with ``c`` at ``channel_dim``."""
    shape = ctx.shape(out)
    bmap = affine_map(len(shape), lambda *d: (d[channel_dim],))
    ctx.generic(shape, [(bias, bmap)], [(out, identity_map(len(shape)))], lambda e, a, idx: [a[0]])


def apply_activation(ctx: LoweringContext, out: Value, code: int) -> None:
    """Clamp ``out`` in place for a fused activation (nothing for NONE)."""
    if code == FuseCode.NONE:
        return
    shape = ctx.shape(out)
    ctx.generic(
        shape, [], [(out, identity_map(len(shape)))], lambda e, a, idx: [activation(e, a[0], code)]
    )




#: With at least this many output rows (pixels, or FULLY_CONNECTED batches),
#: the weights are first transposed so that the innermost loop runs along the
#: output channels / units, contiguous in both the transposed weights and the
#: output, which LLVM vectorises (with strict float semantics a dot-product
#: inner loop over the input depth cannot be).  Below it the transposition
#: would cost as much as the product itself.
TRANSPOSE_MIN_ROWS = 4


def mac(e: Emitter, a: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
    """acc + x * w for generics with ins (x, w) and outs (acc)."""
    return [e.add(a[2], e.mul(a[0], a[1]))]


Loops = dict[str, AffineExpr]


def named_generic(
    ctx: LoweringContext,
    loops: Sequence[tuple[str, int]],
    reductions: Sequence[str],
    ins: Sequence[tuple[Value, Callable[[Loops], Sequence[AffineExpr | int]]]],
    outs: Sequence[tuple[Value, Callable[[Loops], Sequence[AffineExpr | int]]]],
    body,
) -> None:
    """:meth:`LoweringContext.generic` with named loops, outermost first; each
    operand's map is a function of ``{name: dim}``."""
    names = [n for n, _ in loops]
    rank = len(names)

    def amap(fn) -> AffineMap:
        return affine_map(rank, lambda *d: fn(dict(zip(names, d))))

    ctx.generic(
        [size for _, size in loops],
        [(b, amap(fn)) for b, fn in ins],
        [(b, amap(fn)) for b, fn in outs],
        body,
        reduction_dims=[names.index(r) for r in reductions],
    )


def quant_of(ctx: LoweringContext, channel_dim: int | None, activation: int) -> QuantConv | None:
    if ctx.info(0).type not in QUANT8:
        return None
    return QuantConv.of(ctx.call, channel_dim, activation)


def check_limits(call: OpCall, channel_dim: int | None, activation: Callable[[OpCall], int]) -> str | None:
    """The ``check`` hook: which filter/bias types (and quantisation
    parameters) of a supported input type are implemented."""
    x, w, b = call.inputs[0], call.inputs[1], call.inputs[2]
    if x.type == T.TENSOR_FLOAT32:
        if w.type != T.TENSOR_FLOAT32 or b.type != T.TENSOR_FLOAT32:
            return (
                f"filter {w.type.name} / bias {b.type.name} with a TENSOR_FLOAT32 input not implemented"
            )
        return None
    try:
        QuantConv.of(call, channel_dim, activation(call))
    except QuantConvError as e:
        return f"quantised {call.type.name}: {e}"
    return None






def accumulator(ctx: LoweringContext, qc, out: Value, bias: Value, channel_dim: int) -> Value:
    """The buffer the reduction accumulates into, initialised with the bias:
    the output itself for float, an int32 temporary when quantised."""
    acc = out if qc is None else ctx.alloc(ctx.shape(out), i32)
    init_with_bias(ctx, acc, bias, channel_dim)
    return acc


def epilogue(ctx: LoweringContext, qc, acc: Value, out: Value, activation: int, channel_dim: int) -> None:
    """Fused activation in place (float) or requantisation into ``out``."""
    if qc is None:
        apply_activation(ctx, out, activation)
    else:
        qc.requantize(ctx, acc, out, channel_dim)


def filter_value(ctx: LoweringContext) -> Any:
    """The filter's values when they are known at compile time (then the
    GEMM's weight panel is packed with numpy), else None (a filter given at
    run time keeps the generic path): inline constants and, when the
    compilation has the model's constant pool, constants stored there."""
    return ctx.constant_value(ctx.input(1))


def q8_widened(ctx: LoweringContext, qc: QuantConv, x: Value, shape: Sequence[int], padded: list[int], head: tuple[int, int]) -> Value:
    """The flat int16 buffer (two elements of slack) of ``x - input_zp``
    (``shape``) inside zeros of ``padded`` shape, at ``head`` (rank 4),
    copied over the whole buffer, or over rows of width x channels inside
    the padding: by the shared widening kernel
    (:func:`~nnc.passes.kernels.q8.widen`) when the runs are long (inline,
    LLVM vectorised and unrolled each layer's copy in the graph function),
    else by a linalg.generic (a few elements: less code than the kernel)."""
    n = int(np.prod(padded))
    flat = ctx.alloc([n + 2], i16)
    if list(shape) != padded:
        ctx.fill(flat, 0)
        batch, h, w, c = shape
        row = padded[2] * c
        runs, run, dst_rows, dst_off = (batch, h), w * c, (padded[1] * row, row), head[0] * row + head[1] * c
    else:
        for k in (n, n + 1):
            ctx.e.store(ctx.e.const(0, i16), flat, [k])
        # Runs of rows (NHWC) or batch rows: pieces for the thread pool.
        runs = (shape[0], shape[1]) if len(shape) == 4 else (1, shape[0])
        run = n // (runs[0] * runs[1])
        dst_rows, dst_off = (n // runs[0], run), 0
    if q8.widen_worth(ctx.tiles, run):
        q8.widen(ctx, ctx.flat(x), flat, is_unsigned(qc.in_type), qc.in_zp, runs, run, dst_rows, dst_off)
        return flat
    if list(shape) != padded:
        rows = ctx.reinterpreted(flat, i16, [padded[0], padded[1], padded[2] * shape[3]])
        dst = strided_view(ctx, rows, [0, head[0], head[1] * shape[3]], [shape[0], shape[1], run], [1] * 3)
        copy_shape = [shape[0], shape[1], run]
    else:
        dst, copy_shape = ctx.reinterpreted(flat, i16, [n]), [n]
    rank = len(copy_shape)
    src = ctx.reshaped(x, copy_shape)
    ctx.generic(copy_shape, [(src, identity_map(rank))], [(dst, identity_map(rank))], lambda e, a, idx: [qc.widen(e, a[0])])
    return flat


def q8_bytes(ctx: LoweringContext, qc: QuantConv, x: Value, shape: Sequence[int],
             pad: tuple[tuple[int, int], tuple[int, int]] | None, off: int) -> Value:  # fmt: skip
    """A quad form's input copy (:func:`~nnc.passes.kernels.q8.gemm`, step
    4): the stored 8-bit ``x`` minus ``off`` (a flip of the top bit,
    :func:`~nnc.passes.kernels.q8.quad_input_offset`) inside the padding
    ``pad`` (``x`` at rows/columns ``head`` of a spatial ``size``), filled
    with the zero point (so that ``x - zx`` is 0 there, like the
    reference's skipped taps), as a flat buffer with three elements of
    slack (partners of zero weights)."""
    shape = list(shape)
    padded, head = shape, (0, 0)
    if pad is not None:
        head, size = pad
        padded = [shape[0], *size, shape[3]]
    n = int(np.prod(padded))
    flat = ctx.alloc([n + 3], i8)
    dst = ctx.reinterpreted(flat, i8, padded)
    if padded != shape:
        ctx.fill(flat, (qc.in_zp - off + 128) % 256 - 128)  # the moved zero point's byte
        dst = strided_view(ctx, dst, [0, head[0], head[1], 0], shape, [1] * 4)
    else:
        for k in range(n, n + 3):  # the slack: any value (times zero weights), but defined
            ctx.e.store(ctx.e.const(0, i8), flat, [k])
    rank = len(shape)

    def body(e: Emitter, a: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        return [e.op(arith.XOrIOp(a[0], e.const(-128, i8)))] if off else [a[0]]

    ctx.generic(shape, [(ctx.reshaped(x, shape), identity_map(rank))], [(dst, identity_map(rank))], body)
    return flat


@dataclass(frozen=True)
class GemmOperands:
    """What :func:`~nnc.passes.kernels.q8.gemm` reads for one operation: the
    input buffer, the weight panel, the bias and the form (``flip``: the
    kernel flips the input bytes it reads; ``narrow``: the pair form's
    panel is int8; see :func:`q8_gemm_operands`)."""

    x: Value
    panel: Value
    bias: Value
    form: q8.GemmForm
    flip: bool = False
    narrow: bool = False


def q8_gemm_operands(
    ctx: LoweringContext, qc: QuantConv, x: Value, shape: Sequence[int], g: ConvGeometry | None, w: np.ndarray,
    blocks: Sequence[tuple[int, int, tuple[int, ...]]], b: Value,
) -> GemmOperands:  # fmt: skip
    """The int8 GEMM's operands for the filter ``w`` (``[cols, outer, run]``,
    :meth:`QuantConv.filter_int16`; panel ``blocks``): the target's quad
    form (:attr:`LoweringContext.gemm_form`) when the weights fit int8 and
    the bias is a compile-time constant, else the int16 pair form (its
    panel narrowed to int8 when the weights fit: half the bytes to read,
    which the fully connected layers are bound by, and no cost to the
    others, the kernel widening each weight vector as it loads it).  A quad
    form reads the operation's input buffer itself when there is no padding
    and the reduction runs are whole quads (no read past the buffer's end),
    flipping the bytes in the kernel where its signedness differs; else a
    copy (:func:`q8_bytes`)."""
    bias = ctx.constant_value(b)
    form = ctx.gemm_form
    if form is not q8.GemmForm.PAIR and bias is not None and q8.quads_fit(w):
        off = q8.quad_input_offset(is_unsigned(qc.in_type), form)
        corrected = ctx.packed_constant(q8.quad_bias(np.asarray(bias, np.int32), w, qc.in_zp - off), i32)
        panel = packed_weights(ctx, q8.pack_panel(w, blocks, 4))
        if (g is None or not g.needs_padding) and w.shape[2] % 4 == 0:
            return GemmOperands(ctx.flat(x), panel, corrected, form, flip=off != 0)
        pad = ((g.pad_top, g.pad_left), g.padded_hw) if g is not None and g.needs_padding else None
        return GemmOperands(q8_bytes(ctx, qc, x, shape, pad, off), panel, corrected, form)
    xq = q8_input(ctx, qc, x, shape, g)
    narrow = q8.quads_fit(w)
    panel = packed_weights(ctx, q8.pack_panel(w, blocks, narrow=narrow))
    return GemmOperands(xq, panel, b, q8.GemmForm.PAIR, narrow=narrow)


def q8_residual_add(ctx: LoweringContext) -> q8.ResidualAdd | None:
    """The quantised ADD fused into this operation (``nnc-fuse-epilogues``),
    taken for the int8 GEMM to compute in its epilogue; None when there is
    none."""
    ep = ctx.epilogue
    if ep is None or ep.quant is None or ep.residual is None:
        return None
    ctx.take_epilogue()
    table = ctx.packed_constant(q8.add_table(ep.quant.params), i32)
    return q8.ResidualAdd(ctx.flat(ep.residual), table, q8.AddForm.of(ep.quant.params, is_unsigned(ep.quant.type)))


def q8_input(ctx: LoweringContext, qc: QuantConv, x: Value, shape: Sequence[int], g: ConvGeometry | None = None) -> Value:
    """The int16 input the quantised kernels read: ``x - input_zp``, inside
    the zero padding ``g`` asks for (0 contributes nothing, like the
    reference's skipped taps), as a flat buffer with two elements of slack
    at its end (the partner of a last odd reduction step, times a zero
    weight).  ``shape``: ``x``'s shape (NHWC, or [batch, size])."""
    if g is not None and g.needs_padding:
        return q8_input_padded(ctx, qc, x, (g.pad_top, g.pad_left), g.padded_hw)
    return q8_widened(ctx, qc, x, shape, list(shape), (0, 0))


def q8_input_padded(ctx: LoweringContext, qc: QuantConv, x: Value, head: tuple[int, int], size: tuple[int, int]) -> Value:
    """:func:`q8_input` of an NHWC ``x`` at rows/columns ``head`` of a zero
    buffer of spatial ``size``."""
    shape = list(ctx.shape(x))
    return q8_widened(ctx, qc, x, shape, [shape[0], *size, shape[3]], head)


def packed_weights(ctx: LoweringContext, panel: np.ndarray) -> Value:
    """The buffer holding a packed weight panel (int16 pairs, or int8 pairs
    and quads): appended to the model's constant pool
    (``ctx.packed_constant``; the original filter, read only here, is then
    left out of the pool)."""
    return ctx.packed_constant(panel, i8 if panel.dtype == np.int8 else i16)
