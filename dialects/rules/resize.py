"""Rules for the resize operations: RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR.

Both take the output size either as (width, height) or as float scales, an
optional NCHW layout and the align_corners / half_pixel_centers flags of
feature level 4; the output size from a scale is ``floor(size * scale)`` in
float32, as Android computes it.  RESIZE_NEAREST_NEIGHBOR copies stored
values, so a quantised output keeps the input's quantisation.
"""

from __future__ import annotations

import math

import numpy as np

from nnc.dialects.rules.base import (
    OpCall,
    OperandInfo,
    RuleError,
    T,
    expect_count,
    expect_primary,
    expect_rank,
    like,
    rule,
)
from nnc.dialects.rules.operands import (
    bool_param,
    data_input,
    join_layout,
    same_quant_output,
    scalar_param,
    split_layout,
)
from nnc.enums import OperationType as Op


@rule(Op.RESIZE_NEAREST_NEIGHBOR)
def resize_nearest_neighbor(call: OpCall) -> list[OperandInfo]:
    """Same signature and output shape as RESIZE_BILINEAR (by size or by
    scale, layout, align_corners, half_pixel_centers); the element gather
    copies stored values, so a quantised output keeps the input's
    quantisation."""
    x = data_input(call, (4,))
    same_quant_output(call, x)
    return resize_bilinear(call)


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
