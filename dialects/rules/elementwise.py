"""Rules for element-wise operations: binary arithmetic with broadcasting and
fused activation, unary activations/math that keep their input's shape, and
QUANTIZE (float -> quantised, same shape); from NNAPI 1.2/1.3 the unary math
and logic ops (ABS ... LOGICAL_NOT, ELU, HARD_SWISH), the broadcasting binary
ops without activation (MAXIMUM, MINIMUM, POW, PRELU, LOGICAL_AND/OR), the
comparisons (TENSOR_BOOL8 output), SELECT and CAST."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from nnc.dialects.rules.base import (
    OpCall,
    OperandInfo,
    RuleError,
    T,
    broadcast_dims,
    check_output_quant,
    expect_count,
    expect_primary,
    expect_type,
    like,
    rule,
    same_dim,
)
from nnc.enums import FuseCode
from nnc.enums import OperationType as Op
from nnc.operand_types import QUANT8_ASYMM_TYPES as QUANT8

FLOAT_TYPES = (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16)


def check_fuse_code(call: OpCall, i: int) -> int:
    code = call.scalar(i)
    if code not in tuple(FuseCode):
        raise RuleError(f"input {i}: invalid fused activation code {code}")
    return code


@rule(Op.ADD, Op.MUL, Op.SUB, Op.DIV)
def binary_arith(call: OpCall) -> list[OperandInfo]:
    """Broadcasting binary arithmetic with a fused activation (input 2).

    DIV has no quantised form; a TENSOR_QUANT8_ASYMM MUL needs an output scale
    above the product of the input scales (Android's validation)."""
    a = expect_primary(call)
    b = call.input(1)
    if b.type != a.type:
        raise RuleError(f"input types differ: {a.type.name} vs {b.type.name}")
    if call.type == Op.MUL and a.type == T.TENSOR_QUANT8_ASYMM and call.outputs:
        out = call.outputs[0]
        product = np.float32(a.scale) * np.float32(b.scale)
        if out.scale and not np.float32(out.scale) > product:
            raise RuleError(
                f"output scale {out.scale} must be greater than the product of the input scales {product}"
            )
    expect_type(call, 2, (T.INT32,))
    check_fuse_code(call, 2)
    for i, info in enumerate((a, b)):
        if info.dims is not None and len(info.dims) > 4:
            raise RuleError(f"input {i} has rank {len(info.dims)} > 4")
    return [like(a, broadcast_dims(a.dims, b.dims))]


@rule(Op.RELU, Op.RELU1, Op.RELU6, Op.LOGISTIC, Op.TANH, Op.FLOOR)
def unary_same_shape(call: OpCall) -> list[OperandInfo]:
    """Unary ops whose output has the input's shape (rank <= 4).  FLOOR is
    float-only; quantised LOGISTIC and TANH have a fixed output quantisation."""
    x = expect_primary(call)
    if x.dims is not None and len(x.dims) > 4:
        raise RuleError(f"input 0 has rank {len(x.dims)} > 4")
    if call.type in (Op.LOGISTIC, Op.TANH):
        check_output_quant(call, LOGISTIC_OUTPUT if call.type == Op.LOGISTIC else TANH_OUTPUT)
    return [like(x, x.dims)]


#: output (scale, zeroPoint) of quantised LOGISTIC and TANH (also read by the
#: quantised lowering in passes/lowering/quant.py)
LOGISTIC_OUTPUT = {T.TENSOR_QUANT8_ASYMM: (1 / 256, 0), T.TENSOR_QUANT8_ASYMM_SIGNED: (1 / 256, -128)}
TANH_OUTPUT = {T.TENSOR_QUANT8_ASYMM: (1 / 128, 128), T.TENSOR_QUANT8_ASYMM_SIGNED: (1 / 128, 0)}


@rule(Op.QUANTIZE)
def quantize(call: OpCall) -> list[OperandInfo]:
    """Float tensor -> TENSOR_QUANT8_ASYMM(_SIGNED) of the same shape; the
    output type and quantisation are the declared ones."""
    if len(call.inputs) != 1:
        raise RuleError(f"expected 1 input, got {len(call.inputs)}")
    x = expect_primary(call)
    out = call.outputs[0] if call.outputs else OperandInfo(T.TENSOR_QUANT8_ASYMM)
    if out.type not in QUANT8:
        raise RuleError(
            f"output must be TENSOR_QUANT8_ASYMM or TENSOR_QUANT8_ASYMM_SIGNED, got {out.type.name}"
        )
    info = replace(x.with_dims(x.dims), type=out.type, scale=out.scale, zero_point=out.zero_point)
    return [replace(info, channel_quant=None, omitted=False)]


@rule(Op.DEQUANTIZE)
def dequantize(call: OpCall) -> list[OperandInfo]:
    """Same shape; the float output type (FLOAT32/FLOAT16) is the declared one."""
    expect_count(call, (1,))
    x = expect_primary(call)
    if x.rank is not None and x.rank > 4:
        raise RuleError(f"input has rank {x.rank} > 4")
    out_type = call.outputs[0].type if call.outputs else T.TENSOR_FLOAT32
    if out_type not in FLOAT_TYPES:
        raise RuleError(f"output must be TENSOR_FLOAT32 or TENSOR_FLOAT16, got {out_type.name}")
    out = replace(
        x.with_dims(x.dims),
        type=out_type,
        scale=0.0,
        zero_point=0,
        channel_quant=None,
        omitted=False,
    )
    return [out]


# -- unary and binary operations without parameters or activation ------------------------------

#: same-shape unary ops without parameters (their operand types: the records)
PLAIN_UNARY = (Op.ABS, Op.NEG, Op.EXP, Op.LOG, Op.RSQRT, Op.SIN, Op.SQRT, Op.LOGICAL_NOT, Op.HARD_SWISH)


@rule(*PLAIN_UNARY)
def plain_unary(call: OpCall) -> list[OperandInfo]:
    """One tensor in, one of the same type and shape out (HARD_SWISH's
    quantised output may declare its own scale and zero point)."""
    if len(call.inputs) != 1:
        raise RuleError(f"expected 1 input, got {len(call.inputs)}")
    x = expect_primary(call)
    return [like(x, x.dims)]


@rule(Op.ELU)
def elu(call: OpCall) -> list[OperandInfo]:
    """Input 1 is alpha: FLOAT16 for a TENSOR_FLOAT16 input, FLOAT32 otherwise."""
    x = expect_type(call, 0, (*FLOAT_TYPES, *QUANT8))
    expect_type(call, 1, (T.FLOAT16,) if x.type == T.TENSOR_FLOAT16 else (T.FLOAT32,))
    call.scalar(1)
    return [like(x, x.dims)]


#: broadcasting binary ops without an activation (their operand types: the records)
PLAIN_BINARY = (Op.MAXIMUM, Op.MINIMUM, Op.POW, Op.PRELU, Op.LOGICAL_AND, Op.LOGICAL_OR)
#: comparisons: broadcasting, TENSOR_BOOL8 output
COMPARISONS = (Op.EQUAL, Op.NOT_EQUAL, Op.GREATER, Op.GREATER_EQUAL, Op.LESS, Op.LESS_EQUAL)


def _two_inputs(call: OpCall) -> tuple[OperandInfo, OperandInfo]:
    """Input 0 of one of the record's types, input 1 of the same type."""
    if len(call.inputs) != 2:
        raise RuleError(f"expected 2 inputs, got {len(call.inputs)}")
    a = expect_primary(call)
    b = expect_type(call, 1, (a.type,))
    return a, b


@rule(*PLAIN_BINARY)
def plain_binary(call: OpCall) -> list[OperandInfo]:
    """Two tensors of one type, broadcast; the output has their type (a
    quantised output keeps its declared scale and zero point)."""
    a, b = _two_inputs(call)
    return [like(a, broadcast_dims(a.dims, b.dims))]


@rule(*COMPARISONS)
def comparison(call: OpCall) -> list[OperandInfo]:
    """Two tensors of one type, broadcast, compared into a TENSOR_BOOL8."""
    a, b = _two_inputs(call)
    out = like(a, broadcast_dims(a.dims, b.dims), T.TENSOR_BOOL8)
    return [replace(out, scale=0.0, zero_point=0, channel_quant=None)]


@rule(Op.SELECT)
def select(call: OpCall) -> list[OperandInfo]:
    """condition (TENSOR_BOOL8), input_true, input_false: three tensors of one shape."""
    if len(call.inputs) != 3:
        raise RuleError(f"expected 3 inputs, got {len(call.inputs)}")
    c = expect_type(call, 0, (T.TENSOR_BOOL8,))
    x = expect_primary(call)
    y = expect_type(call, 2, (x.type,))
    dims = c.dims
    for info in (x, y):
        if dims is None:
            dims = info.dims
        elif info.dims is not None:
            if len(info.dims) != len(dims):
                raise RuleError("condition and inputs must have the same shape")
            dims = tuple(same_dim(p, q, "condition and inputs must have the same shape")
                         for p, q in zip(dims, info.dims))  # fmt: skip
    return [like(x, dims)]


#: CAST's convertible types (feature level 3); the other types its record
#: declares (level 4) may only be cast to themselves
CAST_TYPES = (*FLOAT_TYPES, T.TENSOR_INT32, T.TENSOR_QUANT8_ASYMM)


@rule(Op.CAST)
def cast(call: OpCall) -> list[OperandInfo]:
    """Same shape, the declared output type: any pair of CAST_TYPES, or an
    identity cast of another type (same type, scale and zero point)."""
    if len(call.inputs) != 1:
        raise RuleError(f"expected 1 input, got {len(call.inputs)}")
    x = expect_primary(call)
    out = call.outputs[0] if call.outputs else x
    if x.type in CAST_TYPES:
        if out.type not in CAST_TYPES:
            raise RuleError(f"cannot cast {x.type.name} to {out.type.name}")
    elif out.type != x.type or (out.scale, out.zero_point) != (x.scale, x.zero_point):
        raise RuleError(f"{x.type.name} can only be cast to itself (same scale and zero point)")
    if out.dims is not None and x.dims is not None and len(out.dims) != len(x.dims):
        raise RuleError(f"output rank {len(out.dims)} differs from the input's {len(x.dims)}")
    info = replace(x.with_dims(x.dims), type=out.type, scale=out.scale, zero_point=out.zero_point)
    return [replace(info, channel_quant=None, omitted=False)]
