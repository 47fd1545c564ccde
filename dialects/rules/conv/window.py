"""The window arithmetic of the convolutions, shared with the pooling rules:
layout, implicit padding and output sizes (:class:`Window`,
:func:`conv_window`), and the operand types and quantised bias of a
convolution.

Output spatial sizes follow Android's ``nn/common/OperationsUtils``:
``calculateExplicitPadding`` turns an implicit SAME/VALID scheme into explicit
head/tail padding and ``computeOutSize`` gives
``(in - effective_filter + stride + head + tail) / stride`` with
``effective_filter = (filter - 1) * dilation + 1``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nnc.dialects.rules.base import (
    OpCall,
    OperandInfo,
    RuleError,
    T,
    check_present,
    expect_primary,
    expect_rank,
    expect_type,
)
from nnc.dialects.rules.elementwise import FLOAT_TYPES, check_fuse_code
from nnc.dialects.rules.operands import bool_param, int_param
from nnc.enums import PaddingCode


def _c_div(a: int, b: int) -> int:
    """C integer division (truncation toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def implicit_padding(in_size: int, stride: int, dilation: int, filter_size: int, scheme: int):
    """Android's ``calculateExplicitPadding``: (head, tail), or None if unknown."""
    if scheme == PaddingCode.VALID:
        return 0, 0
    if in_size <= 0 or filter_size <= 0:
        return None
    effective = (filter_size - 1) * dilation + 1
    out = (in_size + stride - 1) // stride
    needed = (out - 1) * stride + effective
    if needed > in_size:
        head = (needed - in_size) // 2
        return head, needed - in_size - head
    return 0, 0


def window_out_size(
    in_size: int, filter_size: int, stride: int, dilation: int, pad, what: str
) -> int:
    """Android's ``computeOutSize``; 0 when unknown, RuleError when not positive."""
    if in_size <= 0 or filter_size <= 0 or pad is None:
        return 0
    effective = (filter_size - 1) * dilation + 1
    out = _c_div(in_size - effective + stride + pad[0] + pad[1], stride)
    if out <= 0:
        raise RuleError(
            f"output {what} would be {out} (input {in_size}, filter {filter_size}, "
            f"stride {stride}, dilation {dilation}, padding {pad[0]}+{pad[1]})"
        )
    return out


@dataclass
class Window:
    """The scalar parameters of a windowed op (conv, depthwise conv, pooling)."""

    explicit: tuple[int, int, int, int] | None  # left, right, top, bottom
    scheme: int  # PaddingCode when implicit
    stride_w: int
    stride_h: int
    activation: int
    nchw: bool = False
    dilation_w: int = 1
    dilation_h: int = 1
    multiplier: int = 1
    filter_w: int = 0  # pooling only
    filter_h: int = 0

    def check(self) -> None:
        if self.explicit is not None:
            for name, p in zip(("left", "right", "top", "bottom"), self.explicit):
                if p < 0:
                    raise RuleError(f"padding_{name} must be >= 0, got {p}")
        elif self.scheme not in (PaddingCode.SAME, PaddingCode.VALID):
            raise RuleError(f"invalid implicit padding scheme {self.scheme}")
        if self.stride_w <= 0 or self.stride_h <= 0:
            raise RuleError(f"strides must be > 0, got {self.stride_w}x{self.stride_h}")
        if self.dilation_w <= 0 or self.dilation_h <= 0:
            raise RuleError(
                f"dilation factors must be > 0, got {self.dilation_w}x{self.dilation_h}"
            )

    def out_hw(self, in_h: int, in_w: int, filter_h: int, filter_w: int) -> tuple[int, int]:
        """Output (height, width); each 0 when not inferable yet."""
        if self.explicit is not None:
            pad_w: tuple[int, int] | None = (self.explicit[0], self.explicit[1])
            pad_h: tuple[int, int] | None = (self.explicit[2], self.explicit[3])
        else:
            pad_w = implicit_padding(in_w, self.stride_w, self.dilation_w, filter_w, self.scheme)
            pad_h = implicit_padding(in_h, self.stride_h, self.dilation_h, filter_h, self.scheme)
        # Android: padding must be smaller than the (effective) filter.
        for size, dil, pad, what in (
            (filter_w, self.dilation_w, pad_w, "width"),
            (filter_h, self.dilation_h, pad_h, "height"),
        ):
            if size > 0 and pad is not None:
                effective = (size - 1) * dil + 1
                if max(pad) >= effective:
                    raise RuleError(
                        f"{what} padding {pad[0]}+{pad[1]} must be smaller than the "
                        f"effective filter size {effective}"
                    )
        out_h = window_out_size(in_h, filter_h, self.stride_h, self.dilation_h, pad_h, "height")
        out_w = window_out_size(in_w, filter_w, self.stride_w, self.dilation_w, pad_w, "width")
        return out_h, out_w


def conv_window(call: OpCall, depthwise: bool) -> Window:
    """Parse the scalar inputs of CONV_2D / DEPTHWISE_CONV_2D (all signatures):
    the one parser of them, used by the rules and by the lowering
    (:class:`nnc.passes.lowering.conv.geometry.ConvGeometry`).

    Implicit padding: ``scheme, stride_w, stride_h, [multiplier], act[, nchw[,
    dil_w, dil_h]]`` from input 3; explicit padding has four padding inputs
    instead of the scheme.  Input ``base`` (7 or 8) is a BOOL in the implicit
    form with a layout flag and an INT32 in the explicit form (Android's rule).
    """
    base = 8 if depthwise else 7  # input count of the shortest (implicit) form
    n = len(call.inputs)
    if n == base or (n > base and call.inputs[base].type == T.BOOL):
        explicit = False
    elif n >= base + 3 and call.inputs[base].type == T.INT32:
        explicit = True
    else:
        raise RuleError(f"{n} inputs match no signature")
    first = base + (3 if explicit else 0)  # index of the layout flag
    extra = n - first
    if extra not in (0, 1, 3):
        raise RuleError(
            f"{n} inputs match no signature (dilation needs both factors and the layout flag)"
        )
    pads: tuple[int, int, int, int] | None = None
    scheme = 0
    if explicit:
        pads = (int_param(call, 3), int_param(call, 4), int_param(call, 5), int_param(call, 6))
        i = 7
    else:
        scheme = int_param(call, 3)
        i = 4
    stride_w, stride_h = int_param(call, i), int_param(call, i + 1)
    i += 2
    multiplier = 1
    if depthwise:
        multiplier = int_param(call, i)
        if multiplier <= 0:
            raise RuleError(f"depth_multiplier must be > 0, got {multiplier}")
        i += 1
    expect_type(call, i, (T.INT32,))
    activation = check_fuse_code(call, i)
    nchw = bool_param(call, first) if extra >= 1 else False
    dil_w = dil_h = 1
    if extra == 3:
        dil_w, dil_h = int_param(call, first + 1), int_param(call, first + 2)
    win = Window(
        explicit=pads,
        scheme=scheme,
        stride_w=stride_w,
        stride_h=stride_h,
        activation=activation,
        nchw=nchw,
        dilation_w=dil_w,
        dilation_h=dil_h,
        multiplier=multiplier,
    )
    win.check()
    return win


def conv_operand_types(
    call: OpCall, channel_dim: int
) -> tuple[OperandInfo, OperandInfo, OperandInfo]:
    check_present(call)
    x = expect_primary(call)
    if x.type in FLOAT_TYPES:
        w = expect_type(call, 1, (x.type,))
        b = expect_type(call, 2, (x.type,))
    else:
        w = expect_type(call, 1, (x.type, T.TENSOR_QUANT8_SYMM_PER_CHANNEL))
        b = expect_type(call, 2, (T.TENSOR_INT32,))
        if w.type == T.TENSOR_QUANT8_SYMM_PER_CHANNEL and w.channel_quant is not None:
            if w.channel_quant[1] != channel_dim:
                raise RuleError(
                    f"per-channel filter must be quantized along dimension {channel_dim}, "
                    f"got {w.channel_quant[1]}"
                )
        check_quant_bias(x, w, b)
    expect_rank(call, 0, 4)
    expect_rank(call, 1, 4)
    expect_rank(call, 2, 1)
    return x, w, b


def _float32_product(a: float, b: float) -> float:
    return float(np.float32(a) * np.float32(b))

def check_quant_bias(inp: OperandInfo, weights: OperandInfo, bias: OperandInfo) -> None:
    """An INT32 bias of a quantized op: zeroPoint 0 and scale = in * weights."""
    if bias.zero_point != 0:
        raise RuleError(f"bias zeroPoint must be 0, got {bias.zero_point}")
    if weights.type == T.TENSOR_QUANT8_SYMM_PER_CHANNEL:
        return  # per-channel: the bias scale is implied per channel
    if inp.scale > 0 and weights.scale > 0 and bias.scale > 0:
        expected = _float32_product(inp.scale, weights.scale)
        if abs(expected - bias.scale) > 1e-6 * min(expected, bias.scale):
            raise RuleError(
                f"bias scale {bias.scale} must equal input scale * filter scale ({expected})"
            )
