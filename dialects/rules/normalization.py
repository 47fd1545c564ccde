"""Rules for SOFTMAX, L2_NORMALIZATION and LOCAL_RESPONSE_NORMALIZATION: the
output has the input's shape; the optional axis (feature level 3) must lie in
[-rank, rank)."""

from __future__ import annotations

import math

from nnc.dialects.rules.base import (
    OpCall,
    OperandInfo,
    RuleError,
    T,
    check_output_quant,
    expect_count,
    expect_primary,
    like,
    rule,
)
from nnc.dialects.rules.operands import bool_param, int_param, normalize_axis, scalar_param
from nnc.enums import OperationType as Op


def _float_scalar_type(tensor_type: T) -> T:
    """FLOAT16 parameters go with TENSOR_FLOAT16 inputs, FLOAT32 otherwise."""
    return T.FLOAT16 if tensor_type == T.TENSOR_FLOAT16 else T.FLOAT32


def _check_rank_and_axis(call: OpCall, x: OperandInfo, axis_input: int | None) -> None:
    axis = -1 if axis_input is None else int_param(call, axis_input, -1)
    if x.rank is None:
        return
    if x.rank > 4:
        raise RuleError(f"input has rank {x.rank} > 4")
    if x.rank == 0:
        raise RuleError("input must have rank >= 1")
    normalize_axis(axis, x.rank)


@rule(Op.SOFTMAX)
def softmax(call: OpCall) -> list[OperandInfo]:
    """Inputs: tensor, beta (> 0), optional axis."""
    n = expect_count(call, (2, 3))
    x = expect_primary(call)
    beta = scalar_param(call, 1, (_float_scalar_type(x.type),))
    if not beta > 0 or not math.isfinite(beta):
        raise RuleError(f"beta must be > 0, got {beta}")
    _check_rank_and_axis(call, x, 2 if n == 3 else None)
    check_output_quant(
        call,
        {T.TENSOR_QUANT8_ASYMM: (1 / 256, 0), T.TENSOR_QUANT8_ASYMM_SIGNED: (1 / 256, -128)},
    )
    return [like(x, x.dims)]


@rule(Op.L2_NORMALIZATION)
def l2_normalization(call: OpCall) -> list[OperandInfo]:
    """Inputs: tensor, optional axis."""
    n = expect_count(call, (1, 2))
    x = expect_primary(call)
    _check_rank_and_axis(call, x, 1 if n == 2 else None)
    check_output_quant(
        call,
        {T.TENSOR_QUANT8_ASYMM: (1 / 128, 128), T.TENSOR_QUANT8_ASYMM_SIGNED: (1 / 128, 0)},
    )
    return [like(x, x.dims)]


@rule(Op.LOCAL_RESPONSE_NORMALIZATION)
def local_response_normalization(call: OpCall) -> list[OperandInfo]:
    """Inputs: tensor, radius (>= 0), bias, alpha, beta, optional axis."""
    n = expect_count(call, (5, 6))
    x = expect_primary(call)
    radius = int_param(call, 1)
    if radius < 0:
        raise RuleError(f"radius must be >= 0, got {radius}")
    ftype = _float_scalar_type(x.type)
    for i in (2, 3, 4):
        scalar_param(call, i, (ftype,))
    _check_rank_and_axis(call, x, 5 if n == 6 else None)
    return [like(x, x.dims)]


@rule(Op.LOG_SOFTMAX)
def log_softmax(call: OpCall) -> list[OperandInfo]:
    """Inputs: float tensor, beta (the tensor's float scalar type), axis."""
    expect_count(call, (3,))
    x = expect_primary(call)
    scalar_param(call, 1, (_float_scalar_type(x.type),))
    axis = int_param(call, 2)
    if x.rank is not None:  # any rank >= 1 (no upper bound, unlike SOFTMAX)
        if x.rank == 0:
            raise RuleError("input must have rank >= 1")
        normalize_axis(axis, x.rank)
    return [like(x, x.dims)]


@rule(Op.INSTANCE_NORMALIZATION)
def instance_normalization(call: OpCall) -> list[OperandInfo]:
    """Inputs: 4-D float tensor, gamma, beta, epsilon (float scalars), layout (BOOL)."""
    expect_count(call, (5,))
    x = expect_primary(call)
    if x.rank is not None and x.rank != 4:
        raise RuleError(f"input must have rank 4, got {x.rank}")
    for i in (1, 2, 3):
        scalar_param(call, i, (_float_scalar_type(x.type),))
    bool_param(call, 4)
    return [like(x, x.dims)]
