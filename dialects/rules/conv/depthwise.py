"""The rule of DEPTHWISE_CONV_2D."""

from __future__ import annotations

from nnc.dialects.rules.base import (
    OpCall,
    OperandInfo,
    RuleError,
    like,
    rule,
    same_dim,
)
from nnc.dialects.rules.conv.window import conv_operand_types, conv_window
from nnc.dialects.rules.operands import dim, join_layout, split_layout
from nnc.enums import OperationType as Op


@rule(Op.DEPTHWISE_CONV_2D)
def depthwise_conv_2d(call: OpCall) -> list[OperandInfo]:
    """DEPTHWISE_CONV_2D: filter [1, fh, fw, depth_out], depth_out = depth_in * multiplier."""
    x, w, b = conv_operand_types(call, channel_dim=3)
    win = conv_window(call, depthwise=True)
    if dim(w, 0) not in (0, 1):
        raise RuleError(f"filter dimension 0 must be 1, got {dim(w, 0)}")
    n, h, wd, c_in = split_layout(x, win.nchw)
    c_out = same_dim(dim(w, 3), dim(b, 0), "bias size differs from the filter's output depth")
    c_out = same_dim(
        c_out,
        c_in * win.multiplier,
        f"filter depth must be input depth {c_in} * depth_multiplier {win.multiplier}",
    )
    out_h, out_w = win.out_hw(h, wd, dim(w, 1), dim(w, 2))
    return [like(x, join_layout(n, out_h, out_w, c_out, win.nchw))]
