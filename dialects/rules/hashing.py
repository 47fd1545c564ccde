"""Rules for LSH_PROJECTION (Android's ``LSHProjection.cpp``): the hashing
family, whose lowering (farmhash fingerprints) is ``passes/lowering/hashing.py``.

The weight (input 2) is optional (``OperandInfo.omitted``).
"""

from __future__ import annotations

import math

from nnc.dialects.rules.base import (
    OpCall,
    OperandInfo,
    RuleError,
    T,
    expect_count,
    expect_primary,
    expect_rank,
    expect_type,
    rule,
    same_dim,
)
from nnc.dialects.rules.elementwise import FLOAT_TYPES
from nnc.dialects.rules.operands import dim, int_param
from nnc.enums import OperationType as Op

#: LSH_PROJECTION's type input (LSHProjectionType)
LSH_SPARSE_DEPRECATED, LSH_DENSE, LSH_SPARSE = 1, 2, 3


@rule(Op.LSH_PROJECTION)
def lsh_projection(call: OpCall) -> list[OperandInfo]:
    """Inputs: hash [num_hash, num_bits], input, weight (optional), type."""
    expect_count(call, (4,), optional=(2,))
    h = expect_type(call, 0, FLOAT_TYPES)
    x = expect_primary(call)
    kind = int_param(call, 3)
    if kind not in (LSH_SPARSE_DEPRECATED, LSH_DENSE, LSH_SPARSE):
        raise RuleError(f"invalid projection type {kind}")
    expect_rank(call, 0, 2)
    if x.rank == 0:
        raise RuleError("input must have rank >= 1")
    num_hash, num_bits = dim(h, 0), dim(h, 1)
    if num_bits > 32:
        raise RuleError(f"at most 32 bits per hash function, got {num_bits}")
    if kind != LSH_DENSE and num_hash and num_bits:
        if num_bits + math.ceil(math.log2(num_hash)) > 32:
            raise RuleError(
                f"sparse projection needs num_bits + ceil(log2(num_hash)) <= 32 "
                f"({num_bits} + ceil(log2({num_hash})))"
            )
    if call.has_input(2):
        expect_type(call, 2, (h.type,))
        expect_rank(call, 2, 1)
        same_dim(dim(call.input(2), 0), dim(x, 0), "weight size differs from input dimension 0")
    size = num_hash if kind != LSH_DENSE else num_hash * num_bits
    return [OperandInfo(T.TENSOR_INT32, (size,))]
