"""Quantised arithmetic of the conv family: the integer parameters of one
quantised CONV_2D, DEPTHWISE_CONV_2D or FULLY_CONNECTED (:class:`QuantConv`),
its multiply-accumulate and its requantisation epilogue.

A helper of :mod:`nnc.passes.lowering.conv` (it registers no lowering): the
conv lowerings build the same linalg reduction for float and quantised
inputs and take the accumulator, the body and the epilogue from here when
the input is quantised; the int8 vector kernels
(:mod:`nnc.passes.kernels.q8`) take the filter minus its zero point
(:meth:`QuantConv.filter_int16`), the int16 input minus its zero point
(:meth:`QuantConv.widen`) and the requantisation table
(:meth:`QuantConv.table`) from here, and compute the same numbers.

Quantised inputs (TENSOR_QUANT8_ASYMM and TENSOR_QUANT8_ASYMM_SIGNED, with a
filter of the input's type or, for the convolutions, a
TENSOR_QUANT8_SYMM_PER_CHANNEL filter) follow Android's reference CPU path
(``Conv2D.cpp``, ``DepthwiseConv2D.cpp``, ``FullyConnected.cpp`` and the TFLite
kernels they call):

* the padding holds the input zero point, so a tap outside the input adds
  nothing (like the reference's skipped taps and im2col's zero-point fill);
* the accumulator is an int32 temporary initialised with the int32 bias,
  accumulating ``(x - input_zp) * (w - filter_zp)`` (:meth:`QuantConv.mac`;
  8-bit values zero-extended for TENSOR_QUANT8_ASYMM, sign-extended
  otherwise);
* the epilogue writes
  ``clamp(MultiplyByQuantizedMultiplier(acc, m, shift) + output_zp)`` to the
  output (:meth:`QuantConv.requantize`), ``(m, shift) =
  QuantizeMultiplier(input_scale * filter_scale / output_scale)`` (per
  output channel for a per-channel filter, read from small tables), the
  clamp the fused activation's quantised range.

Android runs the signed per-tensor variants on uint8 copies with every zero
point shifted by 128, which computes exactly the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import i16, i32, i64

from nnc.dialects.rules.base import OpCall
from nnc.enums import OperandType as T
from nnc.passes.kernels.q8 import requant_table
from nnc.passes.lowering import quant as q
from nnc.passes.lowering.base import QUANT8, Emitter, LoweringContext, Value, affine_map, identity_map


class QuantConvError(q.QuantError):
    """A quantised call nnc does not implement (or the reference rejects)."""


@lru_cache(maxsize=1 << 16)
def _conv_multiplier(input_scale: float, filter_scale: float, output_scale: float) -> tuple[int, int]:
    """Android's ``GetQuantizedConvolutionMultipler`` then ``QuantizeMultiplier``:
    ``(multiplier, shift)`` for ``MultiplyByQuantizedMultiplier`` (shift > 0 is a
    left shift).  ``input_scale * filter_scale`` is a C float product, the
    division is in double.  Memoised: a per-channel filter has one per
    channel, and the checks and the lowering of one operation ask for all
    of them several times."""
    input_product_scale = q.f32(q.f32(input_scale) * q.f32(filter_scale))
    out = q.f32(output_scale)
    if not input_product_scale >= 0 or not out > 0:
        raise QuantConvError(f"scales {input_scale} * {filter_scale} / {output_scale} are invalid")
    try:
        m, shift = q.quantize_multiplier(input_product_scale / out)
    except (ValueError, OverflowError) as e:  # QuantError is a ValueError
        raise QuantConvError(str(e)) from e
    if shift > 31:
        # x * (1 << shift) in MultiplyByQuantizedMultiplier: undefined in C.
        raise QuantConvError(
            f"multiplier {input_product_scale / out} (scales {input_scale} * {filter_scale} / "
            f"{output_scale}) is too large"
        )
    return m, shift


@dataclass(frozen=True)
class QuantConv:
    """The integer parameters of one quantised CONV_2D / DEPTHWISE_CONV_2D /
    FULLY_CONNECTED call."""

    in_type: T
    in_zp: int
    filter_type: T
    filter_zp: int
    out_type: T
    out_zp: int
    act_min: int
    act_max: int
    #: (multiplier, shift) of every output channel; one entry when per tensor
    multipliers: tuple[tuple[int, int], ...]

    @staticmethod
    def of(call: OpCall, channel_dim: int | None, activation: int) -> QuantConv:
        """``channel_dim``: the filter dimension a per-channel filter may be
        quantised along (None when per-channel filters are not allowed)."""
        x, w, b, out = call.inputs[0], call.inputs[1], call.inputs[2], call.outputs[0]
        if x.type not in QUANT8:
            raise QuantConvError(f"input type {x.type.name} is not quantised")
        if out.type != x.type:
            raise QuantConvError(f"output type {out.type.name} differs from the input's {x.type.name}")
        if b.type != T.TENSOR_INT32:
            raise QuantConvError(f"bias type {b.type.name} is not TENSOR_INT32")
        if w.type == x.type:
            multipliers: tuple[tuple[int, int], ...] = (_conv_multiplier(x.scale, w.scale, out.scale),)
        elif w.type == T.TENSOR_QUANT8_SYMM_PER_CHANNEL and channel_dim is not None:
            if w.channel_quant is None:
                raise QuantConvError("per-channel filter without channel quantisation parameters")
            scales, dim = w.channel_quant
            if dim != channel_dim:
                raise QuantConvError(
                    f"per-channel filter quantised along dimension {dim}, not {channel_dim}"
                )
            channels = w.dims[dim] if w.dims is not None and len(w.dims) > dim else 0
            if channels > 0 and len(scales) != channels:
                raise QuantConvError(f"{len(scales)} per-channel scales for {channels} channels")
            multipliers = tuple(_conv_multiplier(x.scale, s, out.scale) for s in scales)
        else:
            raise QuantConvError(
                f"filter type {w.type.name} with input type {x.type.name} not implemented"
            )
        try:
            lo, hi = q.calculate_activation_range(out.type, activation, out.scale, out.zero_point)
        except q.QuantError as e:
            raise QuantConvError(str(e)) from e
        filter_zp = 0 if w.type == T.TENSOR_QUANT8_SYMM_PER_CHANNEL else int(w.zero_point)
        return QuantConv(
            x.type, int(x.zero_point), w.type, filter_zp,
            out.type, int(out.zero_point), lo, hi, multipliers,
        )  # fmt: skip

    @property
    def per_channel(self) -> bool:
        """Whether the output channels need different multipliers."""
        return len(set(self.multipliers)) > 1

    @property
    def full_range(self) -> tuple[int, int] | None:
        """The output type's range when the activation clamps to all of it
        (no activation, or a RELU6 whose quantisation spans exactly [0, 6],
        as TFLite's int8 models have it), for the kernels' saturating
        narrow (:func:`~nnc.passes.kernels.q8.requant_params`); else None."""
        whole = q.QRANGE[self.out_type]
        return whole if (self.act_min, self.act_max) == whole else None

    def filter_int16(self, value: Any) -> np.ndarray:
        """A constant filter's stored values with the filter zero point
        subtracted (what :meth:`mac` multiplies by), as int16: they lie in
        [-255, 255], and this one copy of the layer's filter is the largest
        array its lowering makes (int32, and a temporary for the
        subtraction, took 8 bytes per weight: 19 MB for a 3x3x512x512
        layer).  Sums over it are taken in int64 by its readers."""
        raw = np.asarray(value)
        if raw.dtype.itemsize == 1:
            raw = raw.view(np.uint8 if q.is_unsigned(self.filter_type) else np.int8)
        centred = raw.astype(np.int16)
        if self.filter_zp:
            centred -= np.int16(self.filter_zp)
        return centred

    def table(self, ctx: LoweringContext, cols: int) -> Value:
        """The requantisation parameters of ``cols`` output channels as the
        vector kernels read them (:func:`~nnc.passes.kernels.q8.requant_table`),
        in the constant pool: an LLVM global of a few thousand entries per
        layer cost more to translate and compile than the layer's code."""
        arr = requant_table(self.multipliers, cols, self.out_zp, self.act_min, self.act_max)
        return ctx.packed_constant(arr, i32)

    def widen(self, e: Emitter, x: Value, t: T | None = None, zp: int | None = None) -> Value:
        """A stored 8-bit element as int16 minus its zero point (the input's
        by default): in [-255, 255], what the vector kernels multiply."""
        v = q.load_q(e, x, self.in_type if t is None else t)
        zp = self.in_zp if zp is None else zp
        if zp:
            v = e.sub(v, e.i32(zp))
        return e.op(arith.TruncIOp(v, i16))

    def mac(self, e: Emitter, a: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        """acc + (x - input_zp) * (w - filter_zp) for generics with ins (x, w) and
        outs (acc: i32); x and w are the 8-bit stored values."""
        xv = q.load_q(e, a[0], self.in_type)
        if self.in_zp:
            xv = e.sub(xv, e.i32(self.in_zp))
        wv = q.load_q(e, a[1], self.filter_type)
        if self.filter_zp:
            wv = e.sub(wv, e.i32(self.filter_zp))
        return [e.add(a[2], e.mul(xv, wv))]

    def requantize(self, ctx: LoweringContext, acc: Value, out: Value, channel_dim: int) -> None:
        """``out = clamp(MultiplyByQuantizedMultiplier(acc) + output_zp)`` with the
        multiplier of the channel at ``channel_dim`` of ``out``."""
        shape = ctx.shape(out)
        rank = len(shape)
        ident = identity_map(rank)

        def finish(e: Emitter, v: Value) -> Value:
            v = e.add(v, e.i32(self.out_zp)) if self.out_zp else v
            v = e.max(e.min(v, e.i32(self.act_max)), e.i32(self.act_min))
            return q.store_q(e, v, self.out_type, saturate=False)

        if not self.per_channel:
            m, shift = self.multipliers[0]
            ctx.generic(
                shape,
                [(acc, ident)],
                [(out, ident)],
                lambda e, a, idx: [finish(e, q.ssa(q.emit_mbqm(e, a[0], m, shift)))],
            )
            return
        # One multiplier, left shift and right shift per output channel, read
        # from small tables indexed by the channel coordinate.
        # (in the constant pool: not 3 stores per channel to compile)
        mult, left, right = (
            ctx.packed_constant(np.array(column, np.int32), i32)
            for column in (
                [m for m, _ in self.multipliers],
                [max(shift, 0) for _, shift in self.multipliers],
                [max(-shift, 0) for _, shift in self.multipliers],
            )
        )
        cmap = affine_map(rank, lambda *d: (d[channel_dim],))
        ctx.generic(
            shape,
            [(acc, ident), (mult, cmap), (left, cmap), (right, cmap)],
            [(out, ident)],
            lambda e, a, idx: [finish(e, _mbqm_dynamic(e, a[0], a[1], a[2], a[3]))],
        )


def _mbqm_dynamic(e: Emitter, x: Value, multiplier: Value, left: Value, right: Value) -> Value:
    """TFLite's ``MultiplyByQuantizedMultiplier`` with the multiplier (in
    [0, 2^31)) and the shifts (in [0, 31]) known only at run time:
    ``RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x << left, m), right)``.

    (:mod:`quant`'s emitters take compile-time shifts.)  A non-negative
    multiplier is never INT32_MIN, so the high multiply cannot saturate; it is
    ``(x * m + 2^30) >> 31``, which rounds like gemmlowp's sign-dependent nudge
    followed by a truncating division."""
    x = e.op(arith.ShLIOp(x, left))
    ab = e.op(arith.MuliOp(e.op(arith.ExtSIOp(x, i64)), e.op(arith.ExtSIOp(multiplier, i64))))
    hi = e.op(arith.ShRSIOp(e.op(arith.AddiOp(ab, e.const(1 << 30, i64))), e.const(31, i64)))
    v = e.op(arith.TruncIOp(hi, i32))
    # RoundingDivideByPOT(v, right): round half away from zero.
    one = e.i32(1)
    mask = e.sub(e.op(arith.ShLIOp(one, right)), one)
    remainder = e.and_(v, mask)
    threshold = e.op(arith.ShRSIOp(mask, one))
    threshold = e.add(threshold, e.op(arith.ExtUIOp(e.cmp("lt", v, e.i32(0)), i32)))
    up = e.op(arith.ExtUIOp(e.cmp("gt", remainder, threshold), i32))
    return e.add(e.op(arith.ShRSIOp(v, right)), up)
