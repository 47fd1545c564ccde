"""Rules for the 2-D pooling operations AVERAGE_POOL_2D, MAX_POOL_2D and
L2_POOL_2D, in their explicit-padding (10/11 inputs) and implicit-padding (7/8
inputs) signatures; the optional last input selects the NCHW layout."""

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
)
from nnc.dialects.rules.conv.window import Window
from nnc.dialects.rules.elementwise import check_fuse_code
from nnc.dialects.rules.operands import bool_param, int_param, join_layout, split_layout
from nnc.enums import OperationType as Op


def pool_window(call: OpCall) -> Window:
    """Parse the scalar inputs of a pooling op (Android: >= 10 inputs = explicit)."""
    n = len(call.inputs)
    pads: tuple[int, int, int, int] | None = None
    scheme = 0
    if n in (10, 11):
        pads = (int_param(call, 1), int_param(call, 2), int_param(call, 3), int_param(call, 4))
        i = 5
    elif n in (7, 8):
        scheme, i = int_param(call, 1), 2
    else:
        raise RuleError(f"expected 7, 8, 10 or 11 inputs, got {n}")
    stride_w, stride_h = int_param(call, i), int_param(call, i + 1)
    filter_w, filter_h = int_param(call, i + 2), int_param(call, i + 3)
    expect_type(call, i + 4, (T.INT32,))
    activation = check_fuse_code(call, i + 4)
    nchw = bool_param(call, i + 5) if n in (8, 11) else False
    if filter_w <= 0 or filter_h <= 0:
        raise RuleError(f"filter size must be > 0, got {filter_w}x{filter_h}")
    win = Window(
        explicit=pads,
        scheme=scheme,
        stride_w=stride_w,
        stride_h=stride_h,
        activation=activation,
        nchw=nchw,
        filter_w=filter_w,
        filter_h=filter_h,
    )
    win.check()
    return win


@rule(Op.AVERAGE_POOL_2D, Op.MAX_POOL_2D, Op.L2_POOL_2D)
def pool_2d(call: OpCall) -> list[OperandInfo]:
    check_present(call)
    x = expect_primary(call)
    expect_rank(call, 0, 4)
    win = pool_window(call)
    n, h, w, c = split_layout(x, win.nchw)
    out_h, out_w = win.out_hw(h, w, win.filter_h, win.filter_w)
    return [like(x, join_layout(n, out_h, out_w, c, win.nchw))]
