"""Float16 operations, computed by their float32 lowering.

NNAPI's TENSOR_FLOAT16 and FLOAT16 operands are *stored* as IEEE half: the
caller's ``np.float16`` arrays, the model's constants and the tensors passed
from one operation to the next.  No lowering computes in half.  An operation
with a float16 operand is lowered, once for every operation type, by the
lowering of its float32 form (:func:`lower`):

* the call is widened (:func:`~nnc.passes.lowering.base.float32_call`):
  TENSOR_FLOAT16 becomes TENSOR_FLOAT32 and FLOAT16 scalars (alpha, epsilon,
  beta, scales, pad values: compile-time values) become float32, exactly;
* a float16 input tensor is widened into a float32 temporary (``arith.extf``,
  exact), or at compile time when it is a constant whose bytes the
  compilation has, so weights stay constants the float32 lowering can lay out
  (packed GEMM panels) and read (shapes, indices);
* a float16 output is computed into a float32 temporary and rounded to half
  once (``arith.truncf``, round to nearest even) into its buffer.

That is what Android's reference kernels do for most float16 operations
(convert to float, run the float code, convert back), and it is within the
CTS's float16 tolerance for the others.  Operations where float16 appears
beside other types need nothing more: CAST and QUANTIZE from float16 read the
exact widened value, DEQUANTIZE and CAST to float16 round their float32
result, comparisons and SELECT compare or copy exact values.  IF and WHILE are
not lowered here: their bodies' operations are, one by one, and the control
flow copies half buffers as they are.  On x86 with F16C, LLVM turns the
conversions into ``vcvtph2ps``/``vcvtps2ph``.

So a new operation gets float16 by listing TENSOR_FLOAT16 in its record's
``implemented`` once its float32 lowering works (and its rule accepts the
FLOAT16 scalars that go with a TENSOR_FLOAT16 input).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import MemRefType, f16, f32
from xdsl.ir import Attribute

from nnc.passes.lowering.base import ConstantSource, Lowering, LoweringContext, Value, float32_call, has_float16


def lower(low: Lowering, ctx: LoweringContext) -> None:
    """Lower ``ctx.call`` with ``low``, through float32 if it has float16 operands."""
    if not has_float16(ctx.call):
        low(ctx)
        return
    constants = _WidenedConstants(ctx.constants)
    wide = replace(ctx, call=float32_call(ctx.call), inputs=[], outputs=[], constants=constants)
    wide.inputs = [None if b is None else _widened_input(wide, constants, b) for b in ctx.inputs]
    wide.outputs = [_wide_buffer(wide, b) if _is_half(b) else b for b in ctx.outputs]
    low(wide)
    for narrow, computed in zip(ctx.outputs, wide.outputs):
        if computed is not narrow and _size(ctx, narrow):
            ctx.elementwise(narrow, [computed], lambda e, a: e.op(arith.TruncFOp(a[0], f16)))


def _is_half(buf: Value) -> bool:
    return isinstance(buf.type, MemRefType) and buf.type.element_type == f16


def _size(ctx: LoweringContext, buf: Value) -> int:
    return int(np.prod(ctx.shape(buf), dtype=np.int64))


def _wide_buffer(ctx: LoweringContext, buf: Value) -> Value:
    """A float32 temporary of ``buf``'s shape."""
    return ctx.alloc(ctx.shape(buf), f32)


def _widened_input(ctx: LoweringContext, constants: _WidenedConstants, buf: Value) -> Value:
    """``buf`` as float32: converted at compile time when it is a known
    constant, else by a loop before the operation (nothing for an empty one)."""
    if not _is_half(buf):
        return buf
    value = ctx.constant_value(buf)
    if value is not None:
        return constants.widen(np.asarray(value, dtype=np.float32))
    wide = _wide_buffer(ctx, buf)
    if _size(ctx, buf):
        ctx.elementwise(wide, [buf], lambda e, a: e.op(arith.ExtFOp(a[0], f32)))
    return wide


@dataclass
class _WidenedConstants:
    """The compilation's constants as the float32 lowering sees them: a
    float16 constant's float32 copy (made at compile time) is a constant too."""

    base: ConstantSource | None
    values: dict[Value, np.ndarray] = field(default_factory=dict)

    def widen(self, value: np.ndarray) -> Value:
        buf = self.packed(value, f32)
        self.values[buf] = value
        return buf

    def value_of(self, buf: Value) -> Any:
        if buf in self.values:
            return self.values[buf]
        return None if self.base is None else self.base.value_of(buf)

    def packed(self, value: Any, elem: Attribute) -> Value:
        assert self.base is not None, "constants are only known when the compilation has a source of them"
        return self.base.packed(value, elem)
