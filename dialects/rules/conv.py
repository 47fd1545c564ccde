"""Rules for convolutions and FULLY_CONNECTED, plus the window arithmetic
(layout, implicit padding, output sizes) shared with the pooling rules.

Output spatial sizes follow Android's ``nn/common/OperationsUtils``:
``calculateExplicitPadding`` turns an implicit SAME/VALID scheme into explicit
head/tail padding and ``computeOutSize`` gives
``(in - effective_filter + stride + head + tail) / stride`` with
``effective_filter = (filter - 1) * dilation + 1``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
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
    like,
    rule,
    same_dim,
)
from nnc.dialects.rules.elementwise import FLOAT_TYPES, check_fuse_code
from nnc.enums import OperandType, PaddingCode
from nnc.enums import OperationType as Op

# -- small helpers shared by the v1.0 rule families --------------------------------


def scalar_param(call: OpCall, i: int, types: Iterable[OperandType], default=None):
    """The value of scalar input ``i`` after checking its operand type.

    With a ``default``, an absent or omitted input yields the default.
    """
    if default is not None and not call.has_input(i):
        return default
    expect_type(call, i, types)
    return call.scalar(i, default)


def int_param(call: OpCall, i: int, default: int | None = None) -> int:
    return scalar_param(call, i, (T.INT32,), default)


def bool_param(call: OpCall, i: int, default: bool = False) -> bool:
    return bool(scalar_param(call, i, (T.BOOL,), default))


def dim(info: OperandInfo, k: int) -> int:
    """Dimension ``k`` of ``info`` (0 when the rank or the size is unknown)."""
    if info.dims is None or not -len(info.dims) <= k < len(info.dims):
        return 0
    return max(int(info.dims[k]), 0)


def known_product(dims: Sequence[int] | None) -> int:
    """The number of elements, or 0 if any dimension (or the rank) is unknown."""
    if dims is None:
        return 0
    n = 1
    for d in dims:
        if d <= 0:
            return 0
        n *= int(d)
    return n


def split_layout(info: OperandInfo, nchw: bool) -> tuple[int, int, int, int]:
    """(batches, height, width, channels) of a rank-4 operand; 0 = unknown."""
    if nchw:
        return dim(info, 0), dim(info, 2), dim(info, 3), dim(info, 1)
    return dim(info, 0), dim(info, 1), dim(info, 2), dim(info, 3)


def join_layout(n: int, h: int, w: int, c: int, nchw: bool) -> tuple[int, int, int, int]:
    return (n, c, h, w) if nchw else (n, h, w, c)


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
    (:class:`nnc.passes.lowering.conv.ConvGeometry`).

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


def _conv_operand_types(
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


@rule(Op.CONV_2D)
def conv_2d(call: OpCall) -> list[OperandInfo]:
    """CONV_2D: filter [depth_out, fh, fw, depth_in], bias [depth_out]."""
    x, w, b = _conv_operand_types(call, channel_dim=0)
    win = conv_window(call, depthwise=False)
    n, h, wd, c_in = split_layout(x, win.nchw)
    c_out = same_dim(dim(w, 0), dim(b, 0), "bias size differs from the filter's output depth")
    same_dim(c_in, dim(w, 3), "filter depth differs from the input depth")
    out_h, out_w = win.out_hw(h, wd, dim(w, 1), dim(w, 2))
    return [like(x, join_layout(n, out_h, out_w, c_out, win.nchw))]


@rule(Op.DEPTHWISE_CONV_2D)
def depthwise_conv_2d(call: OpCall) -> list[OperandInfo]:
    """DEPTHWISE_CONV_2D: filter [1, fh, fw, depth_out], depth_out = depth_in * multiplier."""
    x, w, b = _conv_operand_types(call, channel_dim=3)
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


# -- GROUPED_CONV_2D ---------------------------------------------------------------------


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
    x, w, b = _conv_operand_types(call, channel_dim=0)
    win, groups = grouped_conv_window(call)
    n, h, wd, c_in = split_layout(x, win.nchw)
    c_out = same_dim(dim(w, 0), dim(b, 0), "bias size differs from the filter's output depth")
    if dim(w, 3):
        same_dim(c_in, dim(w, 3) * groups, f"input depth must be filter depth {dim(w, 3)} * num_groups {groups}")
    if c_out and c_out % groups:
        raise RuleError(f"output depth {c_out} is not a multiple of num_groups {groups}")
    out_h, out_w = win.out_hw(h, wd, dim(w, 1), dim(w, 2))
    return [like(x, join_layout(n, out_h, out_w, c_out, win.nchw))]


# -- TRANSPOSE_CONV_2D -------------------------------------------------------------------


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
    x, w, b = _conv_operand_types(call, channel_dim=0)
    win = transpose_conv_window(call)
    n, h, wd, c_in = split_layout(x, win.nchw)
    c_out = same_dim(dim(w, 0), dim(b, 0), "bias size differs from the filter's output depth")
    same_dim(c_in, dim(w, 3), "filter depth differs from the input depth")
    out_h, out_w = win.out_hw(h, wd, dim(w, 1), dim(w, 2))
    return [like(x, join_layout(n, out_h, out_w, c_out, win.nchw))]
