"""The rule of CONV_2D."""

from __future__ import annotations

from nnc.dialects.rules.base import (
    OpCall,
    OperandInfo,
    like,
    rule,
    same_dim,
)
from nnc.dialects.rules.conv.window import conv_operand_types, conv_window
from nnc.dialects.rules.operands import dim, join_layout, split_layout
from nnc.enums import OperationType as Op


@rule(Op.CONV_2D)
def conv_2d(call: OpCall) -> list[OperandInfo]:
    """CONV_2D: filter [depth_out, fh, fw, depth_in], bias [depth_out]."""
    x, w, b = conv_operand_types(call, channel_dim=0)
    win = conv_window(call, depthwise=False)
    n, h, wd, c_in = split_layout(x, win.nchw)
    c_out = same_dim(dim(w, 0), dim(b, 0), "bias size differs from the filter's output depth")
    same_dim(c_in, dim(w, 3), "filter depth differs from the input depth")
    out_h, out_w = win.out_hw(h, wd, dim(w, 1), dim(w, 2))
    return [like(x, join_layout(n, out_h, out_w, c_out, win.nchw))]
