"""The rule of FULLY_CONNECTED: the input is flattened to [batch, input_size]."""

from __future__ import annotations

from nnc.dialects.rules.base import (
    OpCall,
    OperandInfo,
    RuleError,
    T,
    check_present,
    expect_primary,
    expect_rank,
    expect_type,
    like,
    rule,
    same_dim,
)
from nnc.dialects.rules.conv.window import check_quant_bias
from nnc.dialects.rules.elementwise import FLOAT_TYPES, check_fuse_code
from nnc.dialects.rules.operands import dim, known_product
from nnc.enums import OperationType as Op


@rule(Op.FULLY_CONNECTED)
def fully_connected(call: OpCall) -> list[OperandInfo]:
    """Input flattened to [batch, input_size], weights [num_units, input_size]."""
    if len(call.inputs) != 4:
        raise RuleError(f"expected 4 inputs, got {len(call.inputs)}")
    check_present(call)
    x = expect_primary(call)
    w = expect_type(call, 1, (x.type,))
    if x.type in FLOAT_TYPES:
        b = expect_type(call, 2, (x.type,))
    else:
        b = expect_type(call, 2, (T.TENSOR_INT32,))
        check_quant_bias(x, w, b)
    expect_type(call, 3, (T.INT32,))
    check_fuse_code(call, 3)
    expect_rank(call, 0, (2, 3, 4))
    expect_rank(call, 1, 2)
    expect_rank(call, 2, 1)
    num_units = same_dim(dim(w, 0), dim(b, 0), "bias size differs from num_units")
    input_size = dim(w, 1)
    batch = 0
    total = known_product(x.dims)
    if total and input_size:
        if total % input_size:
            raise RuleError(
                f"input has {total} elements, not a multiple of input_size {input_size}"
            )
        batch = total // input_size
    return [like(x, (batch, num_units))]
