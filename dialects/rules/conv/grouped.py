"""The rule of GROUPED_CONV_2D and its scalar inputs (padding, strides,
number of groups, activation, layout).
"""

from __future__ import annotations

from nnc.dialects.rules.base import (
    OpCall,
    OperandInfo,
    RuleError,
    T,
    expect_type,
    like,
    rule,
    same_dim,
)
from nnc.dialects.rules.conv.window import Window, conv_operand_types
from nnc.dialects.rules.elementwise import check_fuse_code
from nnc.dialects.rules.operands import bool_param, dim, int_param, join_layout, split_layout
from nnc.enums import OperationType as Op


def grouped_conv_window(call: OpCall) -> tuple[Window, int]:
    """The scalar inputs of GROUPED_CONV_2D: (window, number of groups).

    Explicit padding (12 inputs): ``pads x4, stride_w, stride_h, groups, act,
    nchw``; implicit (9): ``scheme, stride_w, stride_h, groups, act, nchw``.
    The layout flag is required and there is no dilation."""
    n = len(call.inputs)
    if n not in (9, 12):
        raise RuleError(f"expected 9 or 12 inputs, got {n}")
    explicit = n == 12
    pads: tuple[int, int, int, int] | None = None
    scheme = 0
    if explicit:
        pads = (int_param(call, 3), int_param(call, 4), int_param(call, 5), int_param(call, 6))
    else:
        scheme = int_param(call, 3)
    i = 7 if explicit else 4
    groups = int_param(call, i + 2)
    if groups <= 0:
        raise RuleError(f"num_groups must be > 0, got {groups}")
    expect_type(call, i + 3, (T.INT32,))
    win = Window(
        explicit=pads,
        scheme=scheme,
        stride_w=int_param(call, i),
        stride_h=int_param(call, i + 1),
        activation=check_fuse_code(call, i + 3),
        nchw=bool_param(call, i + 4),
    )
    win.check()
    return win, groups


@rule(Op.GROUPED_CONV_2D)
def grouped_conv_2d(call: OpCall) -> list[OperandInfo]:
    """GROUPED_CONV_2D: filter [depth_out, fh, fw, depth_in / groups], bias
    [depth_out]; output channel ``o`` of group ``o // (depth_out / groups)``
    reads that group's input channels only (Android's ``groupedConvPrepare``)."""
    x, w, b = conv_operand_types(call, channel_dim=0)
    win, groups = grouped_conv_window(call)
    n, h, wd, c_in = split_layout(x, win.nchw)
    c_out = same_dim(dim(w, 0), dim(b, 0), "bias size differs from the filter's output depth")
    if dim(w, 3):
        same_dim(c_in, dim(w, 3) * groups, f"input depth must be filter depth {dim(w, 3)} * num_groups {groups}")
    if c_out and c_out % groups:
        raise RuleError(f"output depth {c_out} is not a multiple of num_groups {groups}")
    out_h, out_w = win.out_hw(h, wd, dim(w, 1), dim(w, 2))
    return [like(x, join_layout(n, out_h, out_w, c_out, win.nchw))]
