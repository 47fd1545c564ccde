"""The converters: one per TFLite builtin (or group), each emitting the
NNAPI operations of one operator, and ``CONVERTERS``, the table the importer
looks operators up in (decompositions and custom operators included; a
builtin a record lists without a converter here maps one to one)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from nnc.dialects.optable import OPS
from nnc.enums import FuseCode, OperandType, OperationType, PaddingCode
from nnc.errors import BadDataError, NNError
from nnc.operand_types import dtype_of
from nnc.tflite.custom import CUSTOM_OPS
from nnc.tflite.decompositions import DECOMPOSED, _f32
from nnc.tflite.reader import _options
from nnc.tflite.state import Converter, OperatorCall, _Call, _Unsupported

T = OperandType
Op = OperationType

_FUSE = {0: FuseCode.NONE, 1: FuseCode.RELU, 2: FuseCode.RELU1, 3: FuseCode.RELU6}
_FUSE_NAMES = {4: "TANH", 5: "SIGN_BIT"}
_PADDING = {0: PaddingCode.SAME, 1: PaddingCode.VALID}


def _fuse(code: int) -> FuseCode:
    if code not in _FUSE:
        raise _Unsupported(f"fused activation {_FUSE_NAMES.get(code, code)} has no NNAPI equivalent")
    return _FUSE[code]


# -- converters: one per TFLite builtin (or group) ----------------------------------------------
CONVERTERS: dict[str, Converter] = {}


def converts(*names: str) -> Callable[[Converter], Converter]:
    def register(fn: Converter) -> Converter:
        for n in names:
            CONVERTERS[n] = fn
        return fn

    return register


#: TFLite builtin -> the NNAPI operation whose record lists it (``OpSpec.tflite``).
TFLITE_OPS: dict[str, OperationType] = {name: spec.type for spec in OPS for name in spec.tflite}


def _direct(c: _Call) -> None:
    """A builtin whose inputs and outputs map one to one onto the operation's."""
    c.emit(TFLITE_OPS[c.name], [c.input(k) for k in range(len(c.ins))])


#: Binary arithmetic with a fused activation: TFLite name -> its options class.
_ARITH_OPTIONS = {"ADD": "AddOptions", "SUB": "SubOptions", "MUL": "MulOptions", "DIV": "DivOptions"}


@converts(*_ARITH_OPTIONS)
def _arith(c: _Call) -> None:
    opts = _options(c.op, _ARITH_OPTIONS[c.name])
    act = _fuse(opts.FusedActivationFunction()) if opts is not None else FuseCode.NONE
    c.emit(TFLITE_OPS[c.name], [c.input(0), c.input(1), c.imp.int32(act)])


def _bias(c: _Call, k: int, out_channels: int, data: int = 0, weights: int = 1, per_channel: bool = False) -> int:
    """Input k as the bias, or (as the delegate does) a zero bias when absent.

    ``data``/``weights`` are the positions of the input and filter whose
    scales give a quantised bias its scale; ``per_channel``: the filter is
    made per-channel (NNAPI's bias scale is then 0) though it has one scale."""
    inp, flt = c.tensor(data), c.tensor(weights)
    if inp.tfl_type == 0:
        return c.input(k) if c.has(k) else c.imp.const(np.zeros(out_channels, np.float32), T.TENSOR_FLOAT32)
    if c.has(k) and not per_channel:
        return c.input(k, bias_of=(c.ins[data], c.ins[weights]))
    value = c.imp.constant_value(c.ins[k], "a quantised bias") if c.has(k) else np.zeros(out_channels, np.int32)
    scale = 0.0 if per_channel or flt.scales.size > 1 else float(inp.scales[0]) * float(flt.scales[0])
    idx = c.imp.model.add_operand(T.TENSOR_INT32, (out_channels,), scale, 0)
    c.imp.model.set_operand_value(idx, value.reshape(out_channels).astype(np.int32))
    return idx


def _dilation(c: _Call, opts) -> list[int]:
    dw, dh = opts.DilationWFactor(), opts.DilationHFactor()
    if (dw, dh) == (1, 1):
        return []
    return [c.imp.bool8(False), c.imp.int32(dw), c.imp.int32(dh)]


@converts("CONV_2D")
def _conv(c: _Call) -> None:
    o = c.options("Conv2DOptions")
    pad, act = _PADDING[o.Padding()], _fuse(o.FusedActivationFunction())
    ins = [c.input(0), c.input(1), _bias(c, 2, c.tensor(1).shape[0]), c.imp.int32(pad),
           c.imp.int32(o.StrideW()), c.imp.int32(o.StrideH()), c.imp.int32(act), *_dilation(c, o)]  # fmt: skip
    c.emit(Op.CONV_2D, ins)


@converts("DEPTHWISE_CONV_2D")
def _depthwise(c: _Call) -> None:
    o = c.options("DepthwiseConv2DOptions")
    pad, act = _PADDING[o.Padding()], _fuse(o.FusedActivationFunction())
    ins = [c.input(0), c.input(1), _bias(c, 2, c.tensor(1).shape[3]), c.imp.int32(pad),
           c.imp.int32(o.StrideW()), c.imp.int32(o.StrideH()), c.imp.int32(o.DepthMultiplier()),
           c.imp.int32(act), *_dilation(c, o)]  # fmt: skip
    c.emit(Op.DEPTHWISE_CONV_2D, ins)


@converts("FULLY_CONNECTED")
def _fully_connected(c: _Call) -> None:
    """NNAPI's FULLY_CONNECTED flattens its input to [batch, depth] and returns
    [batch, units]; other output shapes (keep_num_dims) get a RESHAPE after it.
    A filter with a scale per output channel, which NNAPI's FULLY_CONNECTED
    does not take, goes through a 1x1 CONV_2D (:func:`_fc_as_conv`)."""
    o = c.options("FullyConnectedOptions")
    if o.WeightsFormat() != 0:
        raise _Unsupported("shuffled weights format has no NNAPI equivalent")
    units, depth = c.tensor(1).shape
    batch = int(np.prod(c.tensor(0).shape)) // depth
    out_shape = c.imp.tensors[c.outs[0]].shape
    act = c.imp.int32(_fuse(o.FusedActivationFunction()))
    rank = max(len(c.tensor(0).shape), len(out_shape))
    if rank > 4:
        raise _Unsupported(f"rank {rank}: NNAPI's FULLY_CONNECTED and RESHAPE take rank 4 at most")
    if c.tensor(1).scales.size > 1:
        _fc_as_conv(c, batch, units, depth, act)
        return
    flat = out_shape == (batch, units)
    y = c.output(0) if flat else c.imp.temp_like(c.outs[0], (batch, units))
    c.emit(Op.FULLY_CONNECTED, [c.input(0), c.input(1), _bias(c, 2, units), act], [y])
    if not flat:
        c.emit(Op.RESHAPE, [y, c.imp.const(np.array(out_shape, np.int32))], [c.output(0)])


def _fc_as_conv(c: _Call, batch: int, units: int, depth: int, act: int) -> None:
    """Per-channel FULLY_CONNECTED = RESHAPE [batch,1,1,depth] -> 1x1 CONV_2D with
    the filter as [units,1,1,depth] (TENSOR_QUANT8_SYMM_PER_CHANNEL, scale per
    unit) -> RESHAPE to the output shape.  Both compute, per output, the int32
    sum of (x - x_zp) * w + bias requantised with that unit's multiplier
    input_scale * filter_scale[u] / output_scale: the same integers."""
    x = c.imp.reshaped(c.input(0), c.ins[0], (batch, 1, 1, depth))
    w = c.imp.constant_as(c.ins[1], (units, 1, 1, depth))
    y = c.imp.temp_like(c.outs[0], (batch, 1, 1, units))
    i = c.imp.int32
    c.emit(Op.CONV_2D, [x, w, _bias(c, 2, units), i(PaddingCode.VALID), i(1), i(1), act], [y])
    c.emit(Op.RESHAPE, [y, c.imp.const(np.array(c.imp.tensors[c.outs[0]].shape, np.int32))], [c.output(0)])


@converts("AVERAGE_POOL_2D", "MAX_POOL_2D", "L2_POOL_2D")
def _pool(c: _Call) -> None:
    o = c.options("Pool2DOptions")
    i = c.imp.int32
    c.emit(TFLITE_OPS[c.name], [c.input(0), i(_PADDING[o.Padding()]), i(o.StrideW()), i(o.StrideH()),
                                i(o.FilterWidth()), i(o.FilterHeight()), i(_fuse(o.FusedActivationFunction()))])  # fmt: skip


@converts("SOFTMAX")
def _softmax(c: _Call) -> None:
    c.emit(Op.SOFTMAX, [c.input(0), c.imp.float32(c.options("SoftmaxOptions").Beta())])


@converts("LOG_SOFTMAX")
def _log_softmax(c: _Call) -> None:
    c.emit(Op.LOG_SOFTMAX, [c.input(0), c.imp.float32(1.0), c.imp.int32(-1)])


@converts("CONCATENATION")
def _concat(c: _Call) -> None:
    o = c.options("ConcatenationOptions")
    if o.FusedActivationFunction() != 0:
        raise _Unsupported("NNAPI CONCATENATION has no fused activation")
    axis = o.Axis() % len(c.imp.tensors[c.outs[0]].shape)
    c.emit(Op.CONCATENATION, [*(c.input(k) for k in range(len(c.ins))), c.imp.int32(axis)])


@converts("RESHAPE")
def _reshape(c: _Call) -> None:
    if c.has(1):
        shape = c.input(1)
    else:
        o = _options(c.op, "ReshapeOptions")
        if o is None or o.NewShapeIsNone():
            shape = c.imp.const(np.array(c.imp.tensors[c.outs[0]].shape, np.int32))
        else:
            shape = c.imp.const(o.NewShapeAsNumpy().astype(np.int32))
    c.emit(Op.RESHAPE, [c.input(0), shape])


@converts("SQUEEZE")
def _squeeze(c: _Call) -> None:
    o = _options(c.op, "SqueezeOptions")
    dims = o.SqueezeDimsAsNumpy() if o is not None and not o.SqueezeDimsIsNone() else np.zeros(0, np.int32)
    axes = c.imp.const(dims.astype(np.int32)) if dims.size else c.imp.omitted(T.TENSOR_INT32)
    c.emit(Op.SQUEEZE, [c.input(0), axes])


@converts("MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD", "REDUCE_ANY")
def _reduce(c: _Call) -> None:
    """MEAN's keep_dims is an INT32, the REDUCE_* operations' a BOOL."""
    o = _options(c.op, "ReducerOptions")
    keep = bool(o.KeepDims()) if o is not None else False
    flag = c.imp.int32(int(keep)) if c.name == "MEAN" else c.imp.bool8(keep)
    c.emit(TFLITE_OPS[c.name], [c.input(0), c.input(1), flag])


@converts("STRIDED_SLICE")
def _strided_slice(c: _Call) -> None:
    o = c.options("StridedSliceOptions")
    if o.EllipsisMask() or o.NewAxisMask():
        raise _Unsupported("ellipsis_mask / new_axis_mask have no NNAPI equivalent")
    if o.Offset():
        raise _Unsupported("offset=true has no NNAPI equivalent")
    end, end_mask = c.input(2), o.EndMask()
    if o.ShrinkAxisMask():
        end, end_mask = _shrink_ends(c, o.ShrinkAxisMask(), end_mask)
    i = c.imp.int32
    c.emit(Op.STRIDED_SLICE, [c.input(0), c.input(1), end, c.input(3),
                              i(o.BeginMask()), i(end_mask), i(o.ShrinkAxisMask())])  # fmt: skip


def _shrink_ends(c: _Call, shrink: int, end_mask: int) -> tuple[int, int]:
    """TFLite ignores ``end`` on a shrunk axis (it keeps element ``begin``);
    NNAPI requires the slice to have size 1 there, so write end = begin + 1
    (begin = -1: "to the end", via the end mask)."""
    begin = c.imp.constant_value(c.ins[1], "begin of a shrinking STRIDED_SLICE").astype(np.int64)
    end = c.imp.constant_value(c.ins[2], "end of a shrinking STRIDED_SLICE").astype(np.int64).copy()
    for d in range(end.size):
        if shrink >> d & 1:
            end[d] = begin[d] + 1
            end_mask = end_mask | (1 << d) if end[d] == 0 else end_mask & ~(1 << d)
    return c.imp.const(end.astype(np.int32)), end_mask


@converts("GATHER")
def _gather(c: _Call) -> None:
    o = c.options("GatherOptions")
    if o.BatchDims() != 0:
        raise _Unsupported("batch_dims != 0 has no NNAPI equivalent")
    args = [c.input(0), c.imp.int32(o.Axis()), c.input(1)]
    if c.tensor(1).shape:
        c.emit(Op.GATHER, args)
        return
    # Rank-0 indices are a one-element tensor here (see _Importer.operand):
    # NNAPI's GATHER keeps that axis, so a RESHAPE drops it.
    shape = list(c.tensor(0).shape)
    shape[o.Axis() % len(shape)] = 1
    kept = c.temporary(0, shape)
    c.emit(Op.GATHER, args, [kept])
    c.emit(Op.RESHAPE, [kept, c.imp.const(np.array(c.imp.tensors[c.outs[0]].shape or (1,), np.int32))], [c.output(0)])


def _scalar_input(c: _Call, k: int, what: str) -> int:
    v = c.imp.constant_value(c.ins[k], what).reshape(-1)
    if v.size != 1:
        raise _Unsupported(f"{what} must hold one value")
    return c.imp.int32(int(v[0]))


@converts("EXPAND_DIMS")
def _expand_dims(c: _Call) -> None:
    c.emit(Op.EXPAND_DIMS, [c.input(0), _scalar_input(c, 1, "axis")])


@converts("REVERSE_V2")
def _reverse_v2(c: _Call) -> None:
    """NNAPI's REVERSE flips one axis (a TENSOR_INT32 [1]): one REVERSE per
    listed axis, in order (flips of distinct axes commute)."""
    rank = len(c.tensor(0).shape)
    axes = [int(a) for a in c.imp.constant_value(c.ins[1], "axis").reshape(-1)]
    if not axes:
        raise _Unsupported("REVERSE_V2 without an axis")
    if any(not -rank <= a < rank for a in axes) or len({a % rank for a in axes}) != len(axes):
        raise _Unsupported(f"axes {axes} must be distinct and in [-{rank}, {rank})")
    value = c.input(0)
    for k, a in enumerate(axes):
        out = c.output(0) if k == len(axes) - 1 else c.imp.new_like(c.outs[0])
        c.emit(Op.REVERSE, [value, c.imp.const(np.array([a % rank], np.int32))], [out])
        value = out


@converts("MIRROR_PAD")
def _mirror_pad(c: _Call) -> None:
    """TFLite's and NNAPI's modes share their codes (0 REFLECT, 1 SYMMETRIC)."""
    mode = c.options("MirrorPadOptions").Mode()
    c.emit(Op.MIRROR_PAD, [c.input(0), c.input(1), c.imp.int32(mode)])


@converts("ARG_MAX", "ARG_MIN")
def _arg(c: _Call) -> None:
    if c.imp.tensors[c.outs[0]].tfl_type not in (2, 4):
        raise _Unsupported("NNAPI ARGMAX/ARGMIN output only int32 (or int64, narrowed)")
    c.emit(TFLITE_OPS[c.name], [c.input(0), _scalar_input(c, 1, "axis")])


@converts("SPLIT")
def _split(c: _Call) -> None:
    n = c.options("SplitOptions").NumSplits()
    c.emit(Op.SPLIT, [c.input(1), _scalar_input(c, 0, "axis"), c.imp.int32(n)])


@converts("PADV2")
def _pad_v2(c: _Call) -> None:
    """PAD_V2 with the pad value as a scalar; PAD without one (the delegate)."""
    if not c.has(2):
        c.emit(Op.PAD, [c.input(0), c.input(1)])
        return
    v = c.imp.constant_value(c.ins[2], "constant_values").reshape(-1)
    t = c.tensor(0)
    pad = c.imp.float32(float(v[0])) if t.tfl_type == 0 else c.imp.int32(int(v[0]) + (128 if t.tfl_type == 9 and c.imp.feature_level < 4 else 0))  # fmt: skip
    c.emit(Op.PAD_V2, [c.input(0), c.input(1), pad])


@converts("SPACE_TO_DEPTH", "DEPTH_TO_SPACE")
def _block(c: _Call) -> None:
    cls = "SpaceToDepthOptions" if c.name == "SPACE_TO_DEPTH" else "DepthToSpaceOptions"
    c.emit(TFLITE_OPS[c.name], [c.input(0), c.imp.int32(c.options(cls).BlockSize())])


@converts("BATCH_TO_SPACE_ND")
def _batch_to_space(c: _Call) -> None:
    crops = c.imp.constant_value(c.ins[2], "crops")
    if np.any(crops != 0):
        raise _Unsupported("non-zero crops have no NNAPI equivalent")
    c.emit(Op.BATCH_TO_SPACE_ND, [c.input(0), c.input(1)])


@converts("SPACE_TO_BATCH_ND")
def _space_to_batch(c: _Call) -> None:
    c.emit(Op.SPACE_TO_BATCH_ND, [c.input(0), c.input(1), c.input(2)])


@converts("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR")
def _resize(c: _Call) -> None:
    bilinear = c.name == "RESIZE_BILINEAR"
    o = c.options("ResizeBilinearOptions" if bilinear else "ResizeNearestNeighborOptions")
    h, w = (int(v) for v in c.imp.constant_value(c.ins[1], "size").reshape(-1))
    i = c.imp.int32
    flags = []
    if o.AlignCorners() or o.HalfPixelCenters():
        flags = [c.imp.bool8(False), c.imp.bool8(bool(o.AlignCorners())), c.imp.bool8(bool(o.HalfPixelCenters()))]
    c.emit(TFLITE_OPS[c.name], [c.input(0), i(w), i(h), *flags])


@converts("L2_NORMALIZATION")
def _l2norm(c: _Call) -> None:
    o = _options(c.op, "L2NormOptions")
    if o is not None and o.FusedActivationFunction() != 0:
        raise _Unsupported("NNAPI L2_NORMALIZATION has no fused activation")
    c.emit(Op.L2_NORMALIZATION, [c.input(0)])


@converts("LOCAL_RESPONSE_NORMALIZATION")
def _lrn(c: _Call) -> None:
    o = c.options("LocalResponseNormalizationOptions")
    f = c.imp.float32
    c.emit(Op.LOCAL_RESPONSE_NORMALIZATION, [c.input(0), c.imp.int32(o.Radius()), f(o.Bias()), f(o.Alpha()), f(o.Beta())])


@converts("DEQUANTIZE")
def _dequantize(c: _Call) -> None:
    """DEQUANTIZE of a float16 constant (TFLite's float16 weight quantisation)
    is folded into a float32 constant here, as TFLite's delegate does on the
    host: NNAPI's DEQUANTIZE takes no float16, and converting once at import
    (exactly: every float16 is a float32) leaves the kernels float32 weights
    instead of a conversion on every run.  A non-constant float16 input is a
    CAST."""
    t = c.tensor(0)
    if t.tfl_type != 1:
        _direct(c)
    elif t.data is None or c.outs[0] in c.imp.graph_outputs:
        c.emit(Op.CAST, [c.input(0)])
    else:
        c.imp.tensors[c.outs[0]].data = t.data.astype(np.float32)
        c.note("folded: float16 constant -> float32 constant")


@converts("BATCH_MATMUL")
def _batch_matmul(c: _Call) -> None:
    """NNAPI's BATCH_MATMUL needs both operands to have the output's batch
    dimensions (TFLite broadcasts them): a constant operand is broadcast at
    import, a computed one only reshaped where the sizes allow."""
    o = _options(c.op, "BatchMatMulOptions")
    out = c.imp.tensors[c.outs[0]].shape
    if not 2 <= len(out) <= 4:
        raise _Unsupported(f"NNAPI BATCH_MATMUL takes rank 2..4, not {len(out)}")
    adj = (bool(o.AdjX()), bool(o.AdjY())) if o is not None else (False, False)
    ins = [_batched(c, k, out[:-2]) for k in (0, 1)]
    c.emit(Op.BATCH_MATMUL, [*ins, c.imp.bool8(adj[0]), c.imp.bool8(adj[1])])


def _batched(c: _Call, k: int, batch: tuple[int, ...]) -> int:
    """Input k with exactly the batch dimensions ``batch``."""
    t = c.tensor(k)
    shape = (*batch, *t.shape[-2:])
    if t.shape == shape:
        return c.input(k)
    if t.data is not None:
        return c.imp.constant_as(c.ins[k], shape)
    if int(np.prod(t.shape)) == int(np.prod(shape)):
        return c.imp.reshaped(c.input(k), c.ins[k], shape)
    raise _Unsupported(f"input {k} {list(t.shape)} would need its batch broadcast to {list(batch)} at run time")


@converts("TRANSPOSE_CONV")
def _transpose_conv(c: _Call) -> None:
    """TFLite's inputs are (output_shape, filter, input[, bias]); NNAPI's
    implicit-padding form is (input, filter, bias, output_shape, padding,
    strides, activation), the filter laid out alike ([out, h, w, in])."""
    o = c.options("TransposeConvOptions")
    i = c.imp.int32
    w = _per_channel_int8(c, 1)
    forced = c.tensor(1).tfl_type == 9 and c.tensor(1).scales.size == 1
    bias = _bias(c, 3, c.tensor(1).shape[0], data=2, weights=1, per_channel=forced)
    c.emit(Op.TRANSPOSE_CONV_2D, [c.input(2), w, bias, c.input(0), i(_PADDING[o.Padding()]),
                                  i(o.StrideW()), i(o.StrideH()), i(_fuse(o.FusedActivationFunction())),
                                  c.imp.bool8(False)])  # fmt: skip


def _per_channel_int8(c: _Call, k: int) -> int:
    """An int8 filter as TENSOR_QUANT8_SYMM_PER_CHANNEL even with one scale:
    TFLite's int8 TRANSPOSE_CONV kernel is per-channel (the delegate forces it
    too); the scale is repeated for every output channel."""
    t = c.tensor(k)
    if t.tfl_type != 9 or t.scales.size != 1 or t.data is None:
        return c.input(k)
    idx = c.imp.model.add_operand(T.TENSOR_QUANT8_SYMM_PER_CHANNEL, t.shape)
    c.imp.model.set_operand_symm_per_channel_quant_params(idx, [float(t.scales[0])] * t.shape[0], 0)
    c.imp.model.set_operand_value(idx, t.data)
    return idx


@converts("LEAKY_RELU")
def _leaky_relu(c: _Call) -> None:
    """PRELU with a one-element alpha, as the delegate maps it; quantised, the
    alpha is the integer 1 with scale alpha (zero point 0)."""
    a = float(c.options("LeakyReluOptions").Alpha())
    t = c.tensor(0)
    if t.tfl_type == 0:
        alpha = c.imp.const(np.array([a], np.float32), T.TENSOR_FLOAT32)
    elif a > 0:
        nn_t = c.imp.nn_type(t)[0]
        alpha = c.imp.model.add_operand(nn_t, (1,), a, 0)
        c.imp.model.set_operand_value(alpha, np.ones(1, dtype_of(nn_t)))
    else:
        raise _Unsupported("quantised LEAKY_RELU needs alpha > 0 (it becomes the scale of PRELU's alpha)")
    c.emit(Op.PRELU, [c.input(0), alpha])


@converts("HARD_SWISH")
def _hard_swish(c: _Call) -> None:
    """HARD_SWISH (feature level 4); below it, float32 as TFLite's kernel
    computes it: x * relu6(x + 3) / 6 (ADD with a fused RELU6, MUL, DIV)."""
    if c.imp.feature_level >= 4 or c.tensor(0).tfl_type != 0:
        c.emit(Op.HARD_SWISH, [c.input(0)])
        return
    shape = c.imp.tensors[c.outs[0]].shape
    r, xr = (c.imp.temp_like(c.outs[0], shape) for _ in range(2))
    x, i = c.input(0), c.imp.int32
    c.emit(Op.ADD, [x, _f32(c, 3.0), i(FuseCode.RELU6)], [r])
    c.emit(Op.MUL, [x, r, i(FuseCode.NONE)], [xr])
    c.emit(Op.DIV, [xr, _f32(c, 6.0), i(FuseCode.NONE)])


@converts("ELU")
def _elu(c: _Call) -> None:
    c.emit(Op.ELU, [c.input(0), c.imp.float32(1.0)])  # TFLite's ELU has alpha 1


@converts("FILL")
def _fill(c: _Call) -> None:
    """NNAPI's value is a scalar operand: the TFLite value must be constant."""
    dims = c.imp.constant_value(c.ins[0], "FILL's dims").astype(np.int64)
    if np.any(dims > np.iinfo(np.int32).max):
        raise _Unsupported("dims do not fit in int32")
    v = c.imp.constant_value(c.ins[1], "FILL's value").reshape(-1)
    value = c.imp.float32(float(v[0])) if c.tensor(1).tfl_type == 0 else c.imp.int32(int(v[0]))
    c.emit(Op.FILL, [c.imp.const(dims.astype(np.int32)), value])


@converts("PACK")
def _pack(c: _Call) -> None:
    axis = c.options("PackOptions").Axis() % len(c.imp.tensors[c.outs[0]].shape)
    c.emit(Op.PACK, [c.imp.int32(axis), *(c.input(k) for k in range(len(c.ins)))])


def _state(c: _Call, k: int, what: str) -> tuple[int, int]:
    """Input k, a variable tensor: (the state input, the final-state output)."""
    if not (c.has(k) and c.tensor(k).variable):
        raise _Unsupported(f"input {k} ({what}) must be a variable tensor")
    name = f"op{c.index}.{what}"
    return c.imp.state_input(c.ins[k], name), c.imp.state_output(c.ins[k], name)


def _no_hybrid(c: _Call, opts) -> None:
    """Float32 recurrent operators map; a hybrid one's weights were
    dequantised before (``_Importer.dequantize_hybrid``), so its
    ``asymmetric_quantize_inputs`` no longer applies."""
    if c.tensor(0).tfl_type != 0:
        raise _Unsupported("only float32 recurrent operators map (no quantised ones)")


@converts("RNN")
def _rnn(c: _Call) -> None:
    """NNAPI's RNN returns the new hidden state and the output (the same values)."""
    o = c.options("RNNOptions")
    _no_hybrid(c, o)
    state_in, state_out = _state(c, 4, "hidden_state")
    c.emit(Op.RNN, [*(c.input(k) for k in range(4)), state_in, c.imp.int32(_fuse(o.FusedActivationFunction()))],
           [state_out, c.output(0)])  # fmt: skip


@converts("UNIDIRECTIONAL_SEQUENCE_RNN")
def _sequence_rnn(c: _Call) -> None:
    o = c.options("SequenceRNNOptions")
    _no_hybrid(c, o)
    state_in, state_out = _state(c, 4, "hidden_state")
    i = c.imp.int32
    c.emit(Op.UNIDIRECTIONAL_SEQUENCE_RNN, [*(c.input(k) for k in range(4)), state_in,
                                            i(_fuse(o.FusedActivationFunction())), i(int(o.TimeMajor()))],
           [c.output(0), state_out])  # fmt: skip


@converts("SVDF")
def _svdf(c: _Call) -> None:
    o = c.options("SVDFOptions")
    _no_hybrid(c, o)
    state_in, state_out = _state(c, 4, "state")
    bias = c.input(3) if c.has(3) else c.imp.omitted()
    i = c.imp.int32
    c.emit(Op.SVDF, [c.input(0), c.input(1), c.input(2), bias, state_in, i(o.Rank()),
                     i(_fuse(o.FusedActivationFunction()))], [state_out, c.output(0)])  # fmt: skip


@converts("LSTM")
def _lstm(c: _Call) -> None:
    """The full LSTM kernel (the 5-input basic kernel is the quantised one):
    NNAPI's inputs are TFLite's in the same order, plus a scratch-buffer
    output [batch, units * (3 with CIFG, else 4)]."""
    o = c.options("LSTMOptions")
    _no_hybrid(c, o)
    if o.KernelType() != 0 or len(c.ins) not in (20, 24):
        raise _Unsupported("only the full LSTM kernel maps")
    weights = [c.input(k) if c.has(k) else c.imp.omitted() for k in range(18)]
    (h_in, h_out), (c_in, c_out) = _state(c, 18, "output_state"), _state(c, 19, "cell_state")
    scalars = [c.imp.int32(_fuse_lstm(o.FusedActivationFunction())), c.imp.float32(o.CellClip()),
               c.imp.float32(o.ProjClip())]  # fmt: skip
    norms = [c.input(k) if c.has(k) else c.imp.omitted() for k in range(20, len(c.ins))]
    batch, units = c.tensor(0).shape[0], c.tensor(19).shape[-1]
    scratch = c.imp.temp_like(c.outs[0], (batch, units * (3 if not c.has(1) else 4)))
    c.emit(Op.LSTM, [*weights, h_in, c_in, *scalars, *norms], [scratch, h_out, c_out, c.output(0)])


@converts("TOPK_V2")
def _topk(c: _Call) -> None:
    c.emit(Op.TOPK_V2, [c.input(0), _scalar_input(c, 1, "k")])


@converts("LSH_PROJECTION")
def _lsh_projection(c: _Call) -> None:
    """TFLite's SPARSE (1) is NNAPI's type 3 (the corrected sparse form, whose
    weight is omitted); DENSE (2) is 2."""
    kind = c.options("LSHProjectionOptions").Type()
    if kind not in (1, 2):
        raise _Unsupported(f"LSH projection type {kind}")
    weight = c.input(2) if c.has(2) and kind == 2 else c.imp.omitted()
    c.emit(Op.LSH_PROJECTION, [c.input(0), c.input(1), weight, c.imp.int32(3 if kind == 1 else 2)])


@converts("QUANTIZE")
def _quantize(c: _Call) -> None:
    """NNAPI quantises only from float: a requantisation (quantised input)
    becomes DEQUANTIZE -> QUANTIZE, as the delegate does."""
    t = c.tensor(0)
    x = c.input(0)
    if t.tfl_type != 0:
        f = c.imp.model.add_operand(T.TENSOR_FLOAT32, t.shape)
        c.emit(Op.DEQUANTIZE, [x], [f])
        x = f
    c.emit(Op.QUANTIZE, [x])


def _present(c: _Call, ks: range) -> list[int]:
    """Inputs ``ks``, an omitted operand where TFLite has none."""
    return [c.input(k) if c.has(k) else c.imp.omitted() for k in ks]


def _bidi_outputs(c: _Call, merge: bool, states: list[int]) -> list[int]:
    """fw output, bw output unless merged, then the final states."""
    return [c.output(0), *([] if merge else [c.output(1)]), *states]


@converts("BIDIRECTIONAL_SEQUENCE_LSTM")
def _bidi_lstm(c: _Call) -> None:
    """TFLite's 48 inputs are NNAPI's first 48 (input, fw cell, bw cell, the
    four states, aux input and aux weights); NNAPI adds the scalars and eight
    layer-norm slots (omitted: TFLite's op has no layer norm)."""
    o = c.options("BidirectionalSequenceLSTMOptions")
    _no_hybrid(c, o)
    if len(c.ins) != 48:
        raise _Unsupported(f"{len(c.ins)} inputs (48 expected)")
    names = {35: "fw_output_state", 36: "fw_cell_state", 37: "bw_output_state", 38: "bw_cell_state"}
    states = {k: _state(c, k, n) for k, n in names.items()}
    scalars = [c.imp.int32(_fuse_lstm(o.FusedActivationFunction())), c.imp.float32(o.CellClip()),
               c.imp.float32(o.ProjClip()), c.imp.bool8(bool(o.MergeOutputs())), c.imp.bool8(bool(o.TimeMajor()))]
    ins = [*_present(c, range(35)), *(states[k][0] for k in names), *_present(c, range(39, 48)), *scalars,
           *(c.imp.omitted() for _ in range(8))]  # fmt: skip
    c.emit(Op.BIDIRECTIONAL_SEQUENCE_LSTM, ins, _bidi_outputs(c, bool(o.MergeOutputs()), [states[k][1] for k in names]))


@converts("BIDIRECTIONAL_SEQUENCE_RNN")
def _bidi_rnn(c: _Call) -> None:
    """The same 12 inputs in the same order (fw and bw hidden states at 4 and
    8), then activation, time_major and merge_outputs."""
    o = c.options("BidirectionalSequenceRNNOptions")
    _no_hybrid(c, o)
    (fw_in, fw_out), (bw_in, bw_out) = _state(c, 4, "fw_hidden_state"), _state(c, 8, "bw_hidden_state")
    scalars = [c.imp.int32(_fuse(o.FusedActivationFunction())), c.imp.bool8(bool(o.TimeMajor())),
               c.imp.bool8(bool(o.MergeOutputs()))]  # fmt: skip
    ins = [*_present(c, range(4)), fw_in, *_present(c, range(5, 8)), bw_in, *_present(c, range(9, 12)), *scalars]
    c.emit(Op.BIDIRECTIONAL_SEQUENCE_RNN, ins, _bidi_outputs(c, bool(o.MergeOutputs()), [fw_out, bw_out]))


@converts("UNIDIRECTIONAL_SEQUENCE_LSTM")
def _sequence_lstm(c: _Call) -> None:
    o = c.options("UnidirectionalSequenceLSTMOptions")
    for k in (18, 19):
        if not (c.has(k) and c.tensor(k).variable):
            raise _Unsupported(f"input {k} (state) must be a variable tensor")
    weights = [c.input(k) if c.has(k) else c.imp.omitted() for k in range(18)]
    names = {18: f"op{c.index}.output_state", 19: f"op{c.index}.cell_state"}
    states = [c.imp.state_input(c.ins[k], names[k]) for k in (18, 19)]
    scalars = [c.imp.int32(_fuse_lstm(o.FusedActivationFunction())), c.imp.float32(o.CellClip()),
               c.imp.float32(o.ProjClip()), c.imp.bool8(bool(o.TimeMajor()))]  # fmt: skip
    # NNAPI's form always has the four layer-norm slots (omitted when absent).
    norms = [c.input(k) if c.has(k) else c.imp.omitted() for k in range(20, 24)]
    outs = [c.output(0), *(c.imp.state_output(c.ins[k], names[k]) for k in (18, 19))]
    c.emit(Op.UNIDIRECTIONAL_SEQUENCE_LSTM, [*weights, *states, *scalars, *norms], outs)


@converts("WHILE")
def _while(c: _Call) -> None:
    """NNAPI's WHILE with the condition and body subgraphs as referenced
    models: every TFLite loop variable is an input-output operand (read
    and written each iteration; none state-only or input-only)."""
    o = c.options("WhileOptions")
    cond = c.imp.model_operand(o.CondSubgraphIndex(), "condition")
    body = c.imp.model_operand(o.BodySubgraphIndex(), "body")
    c.emit(Op.WHILE, [cond, body, *(c.input(k) for k in range(len(c.ins)))])


@converts("IF")
def _if(c: _Call) -> None:
    """NNAPI's IF: the condition, the two branch subgraphs as referenced
    models, then the branches' inputs."""
    o = c.options("IfOptions")
    then = c.imp.model_operand(o.ThenSubgraphIndex(), "then")
    other = c.imp.model_operand(o.ElseSubgraphIndex(), "else")
    c.emit(Op.IF, [c.input(0), then, other, *(c.input(k) for k in range(1, len(c.ins)))])


def _fuse_lstm(code: int) -> int:
    # NNAPI LSTM activations are 0 none, 1 relu, 3 relu6, 4 tanh, 6 sigmoid;
    # TFLite's codes agree on those it shares (RELU_N1_TO_1 = 2 has no match).
    if code in (0, 1, 3, 4):
        return code
    raise _Unsupported(f"LSTM activation {code} has no NNAPI equivalent")


#: the decompositions and custom operators join the table
CONVERTERS.update(DECOMPOSED)
CONVERTERS.update(CUSTOM_OPS)

#: every other builtin a record lists maps one to one (the converters above
#: handle those that need options, constants or a different operand order)
CUSTOM_CONVERTERS = frozenset(CONVERTERS)
for _name in TFLITE_OPS.keys() - CUSTOM_CONVERTERS:
    CONVERTERS[_name] = _direct


def register_custom(code: str, converter: Callable[[OperatorCall], None]) -> None:
    """Import TFLite custom operator ``code`` (a model's ``CUSTOM:<code>``)
    with ``converter``, which emits the NNAPI operations it becomes from the
    operator's :data:`~nnc.tflite.state.OperatorCall` (and raises
    :class:`nnc.BadDataError`, or lets the model checks raise, for a form it
    cannot take).  For every import after the call, in this process; a code
    that already has a converter (``TFLite_Detection_PostProcess``, the
    registry's first entry, or one registered before) is refused."""
    if not isinstance(code, str) or not code or code.startswith("CUSTOM:"):
        raise BadDataError("register_custom", f"code must be a custom operator's name without 'CUSTOM:', got {code!r}")
    if not callable(converter):
        raise BadDataError("register_custom", f"converter must be callable, got {type(converter).__name__}")
    name = "CUSTOM:" + code
    if name in CONVERTERS:
        raise BadDataError("register_custom", f"custom operator {code!r} already has a converter")

    def checked(c: _Call) -> None:
        try:
            converter(c)
        except (_Unsupported, NNError):
            raise
        except Exception as e:  # noqa: BLE001 - a user's converter: its failure becomes the operator's report
            raise _Unsupported(f"the converter registered for it failed: {type(e).__name__}: {e}") from None

    CUSTOM_OPS[name] = CONVERTERS[name] = checked
