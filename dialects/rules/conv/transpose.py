"""The rule of TRANSPOSE_CONV_2D and its window: explicit padding, or an
output-shape tensor and a SAME/VALID scheme that choose it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nnc.dialects.rules.base import (
    OpCall,
    OperandInfo,
    RuleError,
    T,
    expect_rank,
    expect_type,
    like,
    rule,
    same_dim,
)
from nnc.dialects.rules.conv.window import conv_operand_types
from nnc.dialects.rules.elementwise import check_fuse_code
from nnc.dialects.rules.operands import bool_param, dim, int_param, join_layout, split_layout
from nnc.enums import OperationType as Op
from nnc.enums import PaddingCode


@dataclass(frozen=True)
class TransposeWindow:
    """The scalar inputs of TRANSPOSE_CONV_2D with the padding made explicit.

    ``pads`` (left, right, top, bottom) is None while the implicit scheme's
    padding cannot be computed yet (filter or output-shape values unknown).
    The tail paddings may be negative (Android: they resolve the output size
    a stride above 1 leaves ambiguous)."""

    pads: tuple[int, int, int, int] | None
    stride_w: int
    stride_h: int
    activation: int
    nchw: bool

    def out_hw(self, in_h: int, in_w: int, filter_h: int, filter_w: int) -> tuple[int, int]:
        """Android's ``computeOutSizeTransposeConv``: ``in * stride + filter -
        stride - head - tail`` per dimension (0 when unknown)."""
        if self.pads is None:
            return 0, 0
        left, right, top, bottom = self.pads
        sizes = []
        for size, f, s, head, tail, what in (
            (in_h, filter_h, self.stride_h, top, bottom, "height"),
            (in_w, filter_w, self.stride_w, left, right, "width"),
        ):
            if size <= 0 or f <= 0:
                sizes.append(0)
                continue
            out = size * s + f - s - head - tail
            if out <= 0:
                raise RuleError(
                    f"output {what} would be {out} (input {size}, filter {f}, stride {s}, "
                    f"padding {head}+{tail})"
                )
            sizes.append(out)
        return sizes[0], sizes[1]


def transpose_padding(out_size: int, stride: int, filter_size: int, scheme: int) -> tuple[int, int]:
    """Android's ``calculateExplicitPaddingTransposeConv``: the implicit
    scheme's (head, tail) for the requested output size; SAME's tail is
    whatever makes the last stride fit (possibly negative)."""
    if scheme != PaddingCode.SAME:
        return 0, 0
    out = (out_size + stride - 1) // stride
    needed = (out - 1) * stride + filter_size
    head = (needed - out_size) // 2 if needed > out_size else 0
    return head, needed - out_size - head


def transpose_conv_window(call: OpCall) -> TransposeWindow:
    """Parse TRANSPOSE_CONV_2D's scalar inputs (both signatures).

    Explicit (11 inputs): ``pads x4, stride_w, stride_h, act, nchw``.
    Implicit (9): ``output_shape`` (TENSOR_INT32 [4], in the operation's
    layout; its height and width choose the padding), ``scheme, stride_w,
    stride_h, act, nchw``."""
    n = len(call.inputs)
    if n not in (9, 11):
        raise RuleError(f"expected 9 or 11 inputs, got {n}")
    explicit = n == 11
    i = 7 if explicit else 5
    stride_w, stride_h = int_param(call, i), int_param(call, i + 1)
    expect_type(call, i + 2, (T.INT32,))
    act = check_fuse_code(call, i + 2)
    nchw = bool_param(call, i + 3)
    if stride_w <= 0 or stride_h <= 0:
        raise RuleError(f"strides must be > 0, got {stride_w}x{stride_h}")
    pads: tuple[int, int, int, int] | None
    if explicit:
        pads = (int_param(call, 3), int_param(call, 4), int_param(call, 5), int_param(call, 6))
        if pads[0] < 0 or pads[2] < 0:
            raise RuleError(f"padding_left and padding_top must be >= 0, got {pads[0]} and {pads[2]}")
    else:
        expect_type(call, 3, (T.TENSOR_INT32,))
        expect_rank(call, 3, 1)
        scheme = int_param(call, 4)
        if scheme not in (PaddingCode.SAME, PaddingCode.VALID):
            raise RuleError(f"invalid implicit padding scheme {scheme}")
        shape = [int(v) for v in np.asarray(call.const(3)).reshape(-1)]
        if len(shape) != 4:
            raise RuleError(f"output shape tensor must have 4 values, got {len(shape)}")
        w = call.input(1)
        fh, fw = dim(w, 1), dim(w, 2)
        if fh and fw:
            _, oh, ow, _ = (shape[0], shape[2], shape[3], shape[1]) if nchw else shape
            left, right = transpose_padding(ow, stride_w, fw, scheme)
            top, bottom = transpose_padding(oh, stride_h, fh, scheme)
            pads = (left, right, top, bottom)
        else:
            pads = None
    return TransposeWindow(pads, stride_w, stride_h, act, nchw)


@rule(Op.TRANSPOSE_CONV_2D)
def transpose_conv_2d(call: OpCall) -> list[OperandInfo]:
    """TRANSPOSE_CONV_2D: filter [depth_out, fh, fw, depth_in], bias
    [depth_out]; the output size comes from the padding (Android's
    ``prepare``: the output-shape tensor of the implicit form only chooses
    the padding)."""
    x, w, b = conv_operand_types(call, channel_dim=0)
    win = transpose_conv_window(call)
    n, h, wd, c_in = split_layout(x, win.nchw)
    c_out = same_dim(dim(w, 0), dim(b, 0), "bias size differs from the filter's output depth")
    same_dim(c_in, dim(w, 3), "filter depth differs from the input depth")
    out_h, out_w = win.out_hw(h, wd, dim(w, 1), dim(w, 2))
    return [like(x, join_layout(n, out_h, out_w, c_out, win.nchw))]
