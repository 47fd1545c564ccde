"""Rules for the operations that produce values rather than move them: FILL
(a tensor of a given shape holding one value) and RANDOM_MULTINOMIAL
(samples from per-batch logits).

FILL's dims input decides the output shape, so its values must be known when
the model is compiled.
"""

from __future__ import annotations

from dataclasses import replace

from nnc.dialects.rules.base import (
    OpCall,
    OperandInfo,
    RuleError,
    T,
    expect_count,
    rule,
)
from nnc.dialects.rules.operands import (
    data_input,
    dim,
    expect_dims,
    int_param,
    int_tensor,
    int_values,
)
from nnc.enums import OperationType as Op

#: FILL: output tensor type -> value scalar type
FILL_TYPES = {T.TENSOR_FLOAT32: T.FLOAT32, T.TENSOR_FLOAT16: T.FLOAT16, T.TENSOR_INT32: T.INT32}


@rule(Op.FILL)
def fill(call: OpCall) -> list[OperandInfo]:
    """dims (1-D TENSOR_INT32, every value > 0), value (the output's scalar type)."""
    expect_count(call, (2,))
    int_tensor(call, 0, 1, "dims")
    value = call.input(1)
    out_type = {v: k for k, v in FILL_TYPES.items()}.get(value.type)
    if out_type is None:
        raise RuleError(f"input 1 must be FLOAT32, FLOAT16 or INT32, got {value.type.name}")
    if call.outputs and call.outputs[0].type != out_type:
        raise RuleError(f"output must be {out_type.name} for a {value.type.name} value")
    dims = int_values(call, 0)
    if dim(call.input(0), 0) and dim(call.input(0), 0) != len(dims):
        raise RuleError(f"dims has {len(dims)} values, its dimension says {dim(call.input(0), 0)}")
    if any(d <= 0 for d in dims):
        raise RuleError(f"dims must be > 0, got {dims}")
    return [replace(OperandInfo(out_type, tuple(dims)), omitted=False)]


@rule(Op.RANDOM_MULTINOMIAL)
def random_multinomial(call: OpCall) -> list[OperandInfo]:
    """input [batches, classes] (log-probabilities), num_samples (INT32 > 0),
    seeds (TENSOR_INT32 [2]) -> TENSOR_INT32 [batches, num_samples], as
    Android's ``Multinomial::Prepare``."""
    expect_count(call, (3,))
    x = data_input(call, max_rank=None)
    if x.rank is not None and x.rank != 2:
        raise RuleError(f"input 0 must have rank 2, got {x.rank}")
    samples = int_param(call, 1)
    if samples <= 0:
        raise RuleError(f"num_samples must be > 0, got {samples}")
    seeds = int_tensor(call, 2, 1, "seeds")
    expect_dims(seeds, 2, (2,), "seeds")
    return [OperandInfo(T.TENSOR_INT32, (dim(x, 0), samples))]
