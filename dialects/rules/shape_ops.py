"""Rules for the NNAPI 1.0 data-movement operations: CONCATENATION, RESHAPE,
DEPTH_TO_SPACE, SPACE_TO_DEPTH, RESIZE_BILINEAR, the lookups EMBEDDING_LOOKUP and HASHTABLE_LOOKUP, and the
NNAPI 1.2 GATHER."""

from __future__ import annotations

import math

import numpy as np

from nnc.dialects.rules.base import (
    OpCall,
    OperandInfo,
    RuleError,
    T,
    check_present,
    expect_count,
    expect_primary,
    expect_rank,
    expect_type,
    like,
    rule,
    same_dim,
)
from nnc.dialects.rules.conv import (
    bool_param,
    dim,
    int_param,
    join_layout,
    known_product,
    scalar_param,
    split_layout,
)
from nnc.enums import OperationType as Op


def normalize_axis(axis: int, rank: int) -> int:
    """An axis in [-rank, rank) as a non-negative index (RuleError otherwise)."""
    if not -rank <= axis < rank:
        raise RuleError(f"axis {axis} out of range for rank {rank}")
    return axis % rank


@rule(Op.CONCATENATION)
def concatenation(call: OpCall) -> list[OperandInfo]:
    """Inputs 0..n-2 are tensors of one type and rank; input n-1 is the axis."""
    n = len(call.inputs)
    if n < 2:
        raise RuleError(f"expected at least 2 inputs, got {n}")
    check_present(call)
    x0 = expect_primary(call)
    tensors = [expect_type(call, i, (x0.type,)) for i in range(n - 1)]
    axis = int_param(call, n - 1)
    ranks = {t.rank for t in tensors if t.rank is not None}
    if len(ranks) > 1:
        raise RuleError(f"inputs have different ranks {sorted(ranks)}")
    if not ranks:
        return [like(x0, None)]
    rank = ranks.pop()
    if rank > 4:
        raise RuleError(f"inputs have rank {rank} > 4")
    if rank == 0:
        raise RuleError("inputs must have rank >= 1")
    axis = normalize_axis(axis, rank)
    out = [0] * rank
    total = 0
    for d in range(rank):
        if d == axis:
            sizes = [dim(t, d) for t in tensors]
            total = sum(sizes) if all(sizes) and all(t.dims is not None for t in tensors) else 0
            out[d] = total
        else:
            for i, t in enumerate(tensors):
                out[d] = same_dim(out[d], dim(t, d), f"input {i} differs in dimension {d}")
    return [like(x0, out)]


@rule(Op.RESHAPE)
def reshape(call: OpCall) -> list[OperandInfo]:
    """Output shape from the (constant) 1-D shape tensor; one -1 is inferred."""
    expect_count(call, (2,))
    x = expect_primary(call)
    if x.rank is not None and x.rank > 4:
        raise RuleError(f"input has rank {x.rank} > 4")
    expect_type(call, 1, (T.TENSOR_INT32,))
    expect_rank(call, 1, 1)
    target = [int(v) for v in np.asarray(call.const(1)).reshape(-1)]
    if dim(call.input(1), 0) and dim(call.input(1), 0) != len(target):
        raise RuleError(
            f"shape tensor has {len(target)} values, dimension says {dim(call.input(1), 0)}"
        )
    stretch = [i for i, v in enumerate(target) if v == -1]
    if len(stretch) > 1:
        raise RuleError("at most one component of the shape may be -1")
    bad = [v for v in target if v < -1]
    if bad:
        raise RuleError(f"invalid shape component {bad[0]}")
    n_in = known_product(x.dims)
    known = 1
    for v in target:
        if v != -1:
            known *= v
    out = list(target)
    if stretch:
        if n_in and known == 0:
            raise RuleError(f"cannot infer -1: the other components multiply to 0 ({target})")
        if n_in:
            if n_in % known:
                raise RuleError(f"input has {n_in} elements, not divisible into shape {target}")
            out[stretch[0]] = n_in // known
        else:
            out[stretch[0]] = 0
    elif n_in and known != n_in:
        raise RuleError(f"shape {target} has {known} elements, the input has {n_in}")
    return [like(x, out)]


def _block_op(call: OpCall) -> tuple[OperandInfo, int, bool]:
    n = expect_count(call, (2, 3))
    x = expect_primary(call)
    expect_rank(call, 0, 4)
    block = int_param(call, 1)
    if block < 1:
        raise RuleError(f"block_size must be >= 1, got {block}")
    nchw = bool_param(call, 2) if n == 3 else False
    return x, block, nchw


@rule(Op.DEPTH_TO_SPACE)
def depth_to_space(call: OpCall) -> list[OperandInfo]:
    x, block, nchw = _block_op(call)
    n, h, w, c = split_layout(x, nchw)
    if c and c % (block * block):
        raise RuleError(f"depth {c} is not divisible by block_size^2 = {block * block}")
    return [like(x, join_layout(n, h * block, w * block, c // (block * block), nchw))]


@rule(Op.SPACE_TO_DEPTH)
def space_to_depth(call: OpCall) -> list[OperandInfo]:
    x, block, nchw = _block_op(call)
    n, h, w, c = split_layout(x, nchw)
    for size, what in ((h, "height"), (w, "width")):
        if size and size % block:
            raise RuleError(f"input {what} {size} is not divisible by block_size {block}")
    return [like(x, join_layout(n, h // block, w // block, c * block * block, nchw))]


def _scaled_size(in_size: int, scale: float) -> int:
    """floor(in_size * scale) computed in float32 like Android."""
    with np.errstate(over="ignore"):
        v = float(np.float32(in_size) * np.float32(scale))
    if not math.isfinite(v):
        raise RuleError(f"output size {in_size} * {scale} overflows")
    return int(math.floor(v))


@rule(Op.RESIZE_BILINEAR)
def resize_bilinear(call: OpCall) -> list[OperandInfo]:
    """Resize by output size (INT32 width, height) or by scale (float scalars)."""
    n = expect_count(call, (3, 4, 5, 6))
    x = expect_primary(call)
    expect_rank(call, 0, 4)
    kind = call.input(1).type
    if kind == T.INT32:
        allowed = (T.INT32,)
    elif x.type == T.TENSOR_FLOAT16:
        allowed = (T.FLOAT16,)
    else:
        allowed = (T.FLOAT32,)
    if kind not in allowed:
        raise RuleError(
            f"input 1 must be INT32 or {allowed[0].name} for {x.type.name}, got {kind.name}"
        )
    width_param = scalar_param(call, 1, allowed)
    height_param = scalar_param(call, 2, allowed)
    if call.input(2).type != kind:
        raise RuleError("the output width and height scalars must have the same type")
    nchw = bool_param(call, 3) if n >= 4 else False
    align_corners = bool_param(call, 4) if n >= 5 else False
    half_pixel = bool_param(call, 5) if n >= 6 else False
    if align_corners and half_pixel:
        raise RuleError("align_corners and half_pixel_centers cannot both be true")
    batches, h, w, c = split_layout(x, nchw)
    if kind == T.INT32:
        out_h, out_w = int(height_param), int(width_param)
        for v, what in ((out_h, "height"), (out_w, "width")):
            if v <= 0:
                raise RuleError(f"output {what} must be > 0, got {v}")
    else:
        out_h = out_w = 0
        for size, scale, what in ((h, height_param, "height"), (w, width_param, "width")):
            if not math.isfinite(scale) or scale <= 0:
                raise RuleError(f"{what} scale must be a positive number, got {scale}")
            if size:
                v = _scaled_size(size, scale)
                if v <= 0:
                    raise RuleError(f"output {what} floor({size} * {scale}) must be > 0")
                if what == "height":
                    out_h = v
                else:
                    out_w = v
    return [like(x, join_layout(batches, out_h, out_w, c, nchw))]


#: DEQUANTIZE input types (QUANT8_SYMM and per-channel since feature level 3,
#: QUANT8_ASYMM_SIGNED since feature level 4).
# -- EMBEDDING_LOOKUP, HASHTABLE_LOOKUP ------------------------------------------------------------


@rule(Op.HASHTABLE_LOOKUP)
def hashtable_lookup(call: OpCall) -> list[OperandInfo]:
    """Inputs: lookups [k], keys [n], values [n, ...]; outputs: output [k, ...], hits [k]."""
    expect_count(call, (3,))
    expect_type(call, 0, (T.TENSOR_INT32,))
    expect_type(call, 1, (T.TENSOR_INT32,))
    values = expect_primary(call)
    expect_rank(call, 0, 1)
    expect_rank(call, 1, 1)
    if values.rank is not None and values.rank < 2:
        raise RuleError(f"values must have rank >= 2, got {values.rank}")
    same_dim(dim(call.input(1), 0), dim(values, 0), "keys and values differ in size")
    k = dim(call.input(0), 0)
    out = None if values.dims is None else (k, *values.dims[1:])
    hits = OperandInfo(T.TENSOR_QUANT8_ASYMM, (k,), scale=1.0, zero_point=0)
    return [like(values, out), hits]


@rule(Op.EMBEDDING_LOOKUP)
def embedding_lookup(call: OpCall) -> list[OperandInfo]:
    """Inputs: lookups [k] (TENSOR_INT32), values [n, ...]; output [k, ...]."""
    expect_count(call, (2,))
    expect_type(call, 0, (T.TENSOR_INT32,))
    values = expect_primary(call)
    expect_rank(call, 0, 1)
    if values.rank is not None and values.rank < 2:
        raise RuleError(f"values must have rank >= 2, got {values.rank}")
    lookups = call.input(0).value
    rows = values.dims[0] if values.dims else 0
    if lookups is not None and rows:
        bad = [int(v) for v in lookups.reshape(-1) if not 0 <= int(v) < rows]
        if bad:
            raise RuleError(f"lookup value {bad[0]} is outside the {rows} rows of values")
    k = dim(call.input(0), 0)
    out = None if values.dims is None else (k, *values.dims[1:])
    return [like(values, out)]


# -- GATHER ---------------------------------------------------------------------------------



@rule(Op.GATHER)
def gather(call: OpCall) -> list[OperandInfo]:
    """Inputs: input [n-D, n >= 1], axis (INT32 in [-n, n)), indices (TENSOR_INT32
    of any rank); output input.dims[:axis] + indices.dims + input.dims[axis+1:]
    with the input's type and quantisation.

    Constant indices outside the gathered dimension are rejected here, as for
    EMBEDDING_LOOKUP; indices known only at execution are checked by the
    generated code, which reports them through the operation's status."""
    expect_count(call, (3,))
    x = expect_primary(call)
    axis = int_param(call, 1)
    indices = expect_type(call, 2, (T.TENSOR_INT32,))
    if x.rank == 0:
        raise RuleError("input must have rank >= 1")
    if x.dims is None:
        return [like(x, None)]
    axis = normalize_axis(axis, len(x.dims))
    size = dim(x, axis)
    if indices.value is not None and size:
        bad = [int(v) for v in indices.value.reshape(-1) if not 0 <= int(v) < size]
        if bad:
            raise RuleError(f"index {bad[0]} is outside dimension {axis} (size {size}) of the input")
    if indices.dims is None:
        return [like(x, None)]
    return [like(x, (*x.dims[:axis], *indices.dims, *x.dims[axis + 1 :]))]
