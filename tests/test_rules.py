"""Rules of the conv, pool, shape, normalization and recurrent operations:
inferred output shapes for every signature, tolerance of unknown dimensions,
and RuleError for invalid models.  The last tests replay the
conformance corpus (shared/nnapi-cts) through the rules."""

from __future__ import annotations

import dataclasses
import functools
import glob
import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

from nnc.dialects.rules import RULES, OpCall, OperandInfo, RuleError, Unsupported, infer
from nnc.enums import OperandType as T
from nnc.enums import OperationType as Op

F32, F16 = T.TENSOR_FLOAT32, T.TENSOR_FLOAT16
Q8, Q8S = T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED
I32T, PC = T.TENSOR_INT32, T.TENSOR_QUANT8_SYMM_PER_CHANNEL
SAME, VALID = 1, 2

V1_0_OPS = {
    Op.AVERAGE_POOL_2D, Op.CONCATENATION, Op.CONV_2D, Op.DEPTHWISE_CONV_2D,
    Op.DEPTH_TO_SPACE, Op.DEQUANTIZE, Op.EMBEDDING_LOOKUP, Op.FULLY_CONNECTED,
    Op.HASHTABLE_LOOKUP, Op.L2_NORMALIZATION, Op.L2_POOL_2D,
    Op.LOCAL_RESPONSE_NORMALIZATION, Op.LSH_PROJECTION, Op.LSTM, Op.MAX_POOL_2D,
    Op.RESHAPE, Op.RESIZE_BILINEAR, Op.RNN, Op.SOFTMAX, Op.SPACE_TO_DEPTH, Op.SVDF,
}  # fmt: skip
#: All of NNAPI 1.0 (ADD..TANH): the ops above plus the element-wise ones.
ALL_V1_0 = V1_0_OPS | {Op.ADD, Op.MUL, Op.RELU, Op.RELU1, Op.RELU6, Op.LOGISTIC, Op.TANH, Op.FLOOR}


# -- operand builders ----------------------------------------------------------------


def ten(t: T, dims, scale: float = 0.0, zp: int = 0, cq=None, value=None) -> OperandInfo:
    dims = None if dims is None else tuple(dims)
    if value is not None:
        value = np.asarray(value)
    return OperandInfo(t, dims, scale, zp, cq, value)


def omit(t: T = F32, dims=(0,)) -> OperandInfo:
    return OperandInfo(t, tuple(dims), omitted=True)


def i32(v: int) -> OperandInfo:
    return OperandInfo(T.INT32, (), value=np.array(v, np.int32))


def f32(v: float) -> OperandInfo:
    return OperandInfo(T.FLOAT32, (), value=np.array(v, np.float32))


def f16(v: float) -> OperandInfo:
    return OperandInfo(T.FLOAT16, (), value=np.array(v, np.float16))


def b8(v: bool) -> OperandInfo:
    return OperandInfo(T.BOOL, (), value=np.array(v, np.bool_))


def run(op: Op, ins, outs=()) -> list[OperandInfo]:
    return infer(OpCall(op, list(ins), list(outs)))


def dims(op: Op, ins, outs=()) -> list:
    return [o.dims for o in run(op, ins, outs)]


def fails(op: Op, ins, outs=(), match: str | None = None) -> None:
    with pytest.raises(RuleError, match=match):
        run(op, ins, outs)


def test_every_v1_0_op_has_a_rule():
    assert V1_0_OPS <= set(RULES)


# -- CONV_2D -------------------------------------------------------------------------


def conv_implicit(x, w, b, scheme=VALID, stride=(1, 1), act=0, nchw=None, dilation=None):
    ins = [x, w, b, i32(scheme), i32(stride[0]), i32(stride[1]), i32(act)]
    if nchw is not None:
        ins.append(b8(nchw))
    if dilation is not None:
        ins += [i32(dilation[0]), i32(dilation[1])]
    return ins


def conv_explicit(x, w, b, pads=(0, 0, 0, 0), stride=(1, 1), act=0, nchw=None, dilation=None):
    ins = [x, w, b, *map(i32, pads), i32(stride[0]), i32(stride[1]), i32(act)]
    if nchw is not None:
        ins.append(b8(nchw))
    if dilation is not None:
        ins += [i32(dilation[0]), i32(dilation[1])]
    return ins


def fconv(x_dims, w_dims, t=F32):
    return ten(t, x_dims), ten(t, w_dims), ten(t, (w_dims[0],) if w_dims else (0,))


def test_conv_explicit_nhwc():
    x, w, b = fconv((1, 3, 3, 1), (1, 2, 2, 1))
    assert dims(Op.CONV_2D, conv_explicit(x, w, b)) == [(1, 2, 2, 1)]
    # padding 1 on every side, stride 2: (3 - 2 + 2 + 2) / 2 = 2
    assert dims(Op.CONV_2D, conv_explicit(x, w, b, (1, 1, 1, 1), (2, 2))) == [(1, 2, 2, 1)]


def test_conv_implicit_same_and_valid():
    x, w, b = fconv((1, 5, 5, 3), (4, 3, 3, 3))
    assert dims(Op.CONV_2D, conv_implicit(x, w, b, SAME, (2, 2))) == [(1, 3, 3, 4)]
    assert dims(Op.CONV_2D, conv_implicit(x, w, b, VALID, (2, 2))) == [(1, 2, 2, 4)]
    # different strides per axis: width 5 stride 1, height 5 stride 2
    assert dims(Op.CONV_2D, conv_implicit(x, w, b, SAME, (1, 2))) == [(1, 3, 5, 4)]


def test_conv_nchw_and_dilation():
    x, w, b = fconv((2, 3, 8, 6), (5, 3, 3, 3))
    assert dims(Op.CONV_2D, conv_implicit(x, w, b, VALID, nchw=True)) == [(2, 5, 6, 4)]
    # dilation 3: effective filter 7
    x, w, b = fconv((1, 9, 9, 1), (1, 3, 3, 1))
    assert dims(Op.CONV_2D, conv_implicit(x, w, b, VALID, nchw=False, dilation=(3, 3))) == [
        (1, 3, 3, 1)
    ]
    assert dims(Op.CONV_2D, conv_implicit(x, w, b, SAME, nchw=False, dilation=(3, 3))) == [
        (1, 9, 9, 1)
    ]
    assert dims(Op.CONV_2D, conv_explicit(x, w, b, (1, 1, 0, 0), nchw=False, dilation=(2, 3))) == [
        (1, 3, 7, 1)
    ]
    x, w, b = fconv((1, 1, 9, 9), (1, 3, 3, 1))
    assert dims(Op.CONV_2D, conv_explicit(x, w, b, nchw=True, dilation=(3, 1))) == [(1, 1, 7, 3)]


def test_conv_quantized_and_per_channel():
    x = ten(Q8, (1, 4, 4, 2), 0.5, 128)
    w = ten(Q8, (3, 2, 2, 2), 0.25, 120)
    b = ten(I32T, (3,), 0.125, 0)
    assert dims(Op.CONV_2D, conv_implicit(x, w, b, SAME)) == [(1, 4, 4, 3)]
    out = run(Op.CONV_2D, conv_implicit(x, w, b))[0]
    assert out.type == Q8
    pc = ten(PC, (3, 2, 2, 2), cq=((0.5, 0.25, 0.125), 0))
    xs = ten(Q8S, (1, 4, 4, 2), 0.5, -1)
    assert dims(Op.CONV_2D, conv_implicit(xs, pc, ten(I32T, (3,)))) == [(1, 3, 3, 3)]
    assert dims(
        Op.CONV_2D, conv_implicit(ten(F16, (1, 4, 4, 2)), ten(F16, (3, 2, 2, 2)), ten(F16, (3,)))
    ) == [(1, 3, 3, 3)]


def test_conv_unknown_dims():
    _, w, b = fconv((1, 5, 5, 3), (4, 3, 3, 3))
    cases = {
        (0, 0, 0, 0): (0, 0, 0, 4),
        (7, 0, 5, 3): (7, 0, 3, 4),  # batch and width still inferred
        (0, 5, 0, 0): (0, 3, 0, 4),
    }
    for xd, want in cases.items():
        assert dims(Op.CONV_2D, conv_implicit(ten(F32, xd), w, b)) == [want]
    assert dims(Op.CONV_2D, conv_implicit(ten(F32, None), w, b)) == [(0, 0, 0, 4)]
    # unknown filter: channels from the bias, spatial sizes unknown
    assert dims(Op.CONV_2D, conv_implicit(ten(F32, (1, 5, 5, 3)), ten(F32, (0, 0, 0, 0)), b)) == [
        (1, 0, 0, 4)
    ]
    assert dims(
        Op.CONV_2D, conv_explicit(ten(F32, (2, 5, 5, 3)), ten(F32, None), ten(F32, None))
    ) == [(2, 0, 0, 0)]


@pytest.mark.parametrize(
    "case",
    [
        "depth",
        "rank",
        "bias_type",
        "bias_size",
        "stride",
        "scheme",
        "fuse",
        "pad_ge_filter",
        "empty_out",
        "one_dilation",
        "count",
        "bias_scale",
        "bias_zp",
        "pc_float",
        "pc_dim",
        "layout_type",
        "neg_pad",
    ],
)
def test_conv_invalid(case):
    x, w, b = fconv((1, 5, 5, 3), (4, 3, 3, 3))
    ins = conv_implicit(x, w, b)
    if case == "depth":
        ins[1] = ten(F32, (4, 3, 3, 2))
    elif case == "rank":
        ins[0] = ten(F32, (5, 5, 3))
    elif case == "bias_type":
        ins[2] = ten(I32T, (4,))
    elif case == "bias_size":
        ins[2] = ten(F32, (5,))
    elif case == "stride":
        ins[4] = i32(0)
    elif case == "scheme":
        ins[3] = i32(3)
    elif case == "fuse":
        ins[6] = i32(4)
    elif case == "pad_ge_filter":
        ins = conv_explicit(x, w, b, (3, 0, 0, 0))
    elif case == "empty_out":
        ins[0] = ten(F32, (1, 2, 2, 3))
    elif case == "one_dilation":
        ins = conv_implicit(x, w, b, nchw=False) + [i32(2)]
    elif case == "count":
        ins = ins[:6]
    elif case == "bias_scale":
        ins = conv_implicit(
            ten(Q8, (1, 5, 5, 3), 0.5, 0), ten(Q8, (4, 3, 3, 3), 0.5, 0), ten(I32T, (4,), 0.3, 0)
        )
    elif case == "bias_zp":
        ins = conv_implicit(
            ten(Q8, (1, 5, 5, 3), 0.5, 0), ten(Q8, (4, 3, 3, 3), 0.5, 0), ten(I32T, (4,), 0.25, 3)
        )
    elif case == "pc_float":
        ins[1] = ten(PC, (4, 3, 3, 3), cq=((1.0,) * 4, 0))
    elif case == "pc_dim":
        ins = conv_implicit(
            ten(Q8, (1, 5, 5, 3), 0.5, 0),
            ten(PC, (4, 3, 3, 3), cq=((1.0,) * 3, 3)),
            ten(I32T, (4,)),
        )
    elif case == "layout_type":
        ins = conv_implicit(x, w, b) + [i32(1)]
    elif case == "neg_pad":
        ins = conv_explicit(x, w, b, (0, -1, 0, 0))
    fails(Op.CONV_2D, ins)


# -- DEPTHWISE_CONV_2D -----------------------------------------------------------------


def dw_implicit(x, w, b, scheme=VALID, stride=(1, 1), mult=1, act=0, nchw=None, dilation=None):
    ins = [x, w, b, i32(scheme), i32(stride[0]), i32(stride[1]), i32(mult), i32(act)]
    if nchw is not None:
        ins.append(b8(nchw))
    if dilation is not None:
        ins += [i32(dilation[0]), i32(dilation[1])]
    return ins


def dw_explicit(x, w, b, pads=(0, 0, 0, 0), stride=(1, 1), mult=1, act=0, nchw=None, dilation=None):
    ins = [x, w, b, *map(i32, pads), i32(stride[0]), i32(stride[1]), i32(mult), i32(act)]
    if nchw is not None:
        ins.append(b8(nchw))
    if dilation is not None:
        ins += [i32(dilation[0]), i32(dilation[1])]
    return ins


def test_depthwise_signatures():
    x, w, b = ten(F32, (1, 3, 3, 2)), ten(F32, (1, 2, 2, 4)), ten(F32, (4,))
    assert dims(Op.DEPTHWISE_CONV_2D, dw_implicit(x, w, b, mult=2)) == [(1, 2, 2, 4)]
    assert dims(Op.DEPTHWISE_CONV_2D, dw_implicit(x, w, b, SAME, mult=2, nchw=False)) == [
        (1, 3, 3, 4)
    ]
    assert dims(Op.DEPTHWISE_CONV_2D, dw_explicit(x, w, b, (1, 1, 1, 1), (2, 2), mult=2)) == [
        (1, 2, 2, 4)
    ]
    xn = ten(F32, (1, 2, 5, 5))
    assert dims(
        Op.DEPTHWISE_CONV_2D, dw_implicit(xn, w, b, mult=2, nchw=True, dilation=(2, 2))
    ) == [(1, 4, 3, 3)]
    assert dims(
        Op.DEPTHWISE_CONV_2D, dw_explicit(xn, w, b, mult=2, nchw=True, dilation=(1, 2))
    ) == [(1, 4, 3, 4)]
    q = [ten(Q8S, (1, 3, 3, 2), 0.5, 0), ten(PC, (1, 2, 2, 2), cq=((0.5, 0.5), 3)), ten(I32T, (2,))]
    assert dims(Op.DEPTHWISE_CONV_2D, dw_implicit(*q)) == [(1, 2, 2, 2)]
    # unknown input depth: output depth from the filter
    assert dims(Op.DEPTHWISE_CONV_2D, dw_implicit(ten(F32, (1, 3, 3, 0)), w, b, mult=2)) == [
        (1, 2, 2, 4)
    ]
    assert dims(
        Op.DEPTHWISE_CONV_2D,
        dw_implicit(ten(F32, (1, 3, 3, 2)), ten(F32, None), ten(F32, (0,)), mult=3),
    ) == [(1, 0, 0, 6)]


def test_depthwise_invalid():
    x, w, b = ten(F32, (1, 3, 3, 2)), ten(F32, (1, 2, 2, 4)), ten(F32, (4,))
    fails(Op.DEPTHWISE_CONV_2D, dw_implicit(x, w, b, mult=1), match="depth_multiplier")
    fails(Op.DEPTHWISE_CONV_2D, dw_implicit(x, ten(F32, (2, 2, 2, 4)), b, mult=2))
    fails(Op.DEPTHWISE_CONV_2D, dw_implicit(x, w, b, mult=0))
    fails(Op.DEPTHWISE_CONV_2D, dw_implicit(x, w, ten(F32, (3,)), mult=2))
    q = [ten(Q8, (1, 3, 3, 2), 0.5, 0), ten(PC, (1, 2, 2, 2), cq=((0.5, 0.5), 0)), ten(I32T, (2,))]
    fails(Op.DEPTHWISE_CONV_2D, dw_implicit(*q), match="dimension 3")
    fails(Op.DEPTHWISE_CONV_2D, dw_implicit(x, w, b, mult=2, nchw=False) + [i32(1)])
    fails(Op.DEPTHWISE_CONV_2D, dw_implicit(x, w, b, mult=2)[:7])


# -- FULLY_CONNECTED ---------------------------------------------------------------------


def test_fully_connected():
    w, b = ten(F32, (5, 6)), ten(F32, (5,))
    assert dims(Op.FULLY_CONNECTED, [ten(F32, (2, 3, 4)), w, b, i32(0)]) == [(4, 5)]
    assert dims(Op.FULLY_CONNECTED, [ten(F32, (3, 6)), w, b, i32(1)]) == [(3, 5)]
    assert dims(Op.FULLY_CONNECTED, [ten(F32, (0, 6)), w, b, i32(0)]) == [(0, 5)]
    assert dims(Op.FULLY_CONNECTED, [ten(F32, None), w, b, i32(0)]) == [(0, 5)]
    assert dims(
        Op.FULLY_CONNECTED, [ten(F32, (3, 6)), ten(F32, (0, 6)), ten(F32, (0,)), i32(0)]
    ) == [(3, 0)]
    q = [ten(Q8, (1, 6), 0.5, 127), ten(Q8, (5, 6), 0.5, 127), ten(I32T, (5,), 0.25), i32(3)]
    assert dims(Op.FULLY_CONNECTED, q) == [(1, 5)]
    assert dims(
        Op.FULLY_CONNECTED, [ten(F16, (1, 2, 2, 3)), ten(F16, (2, 4)), ten(F16, (2,)), i32(0)]
    ) == [(3, 2)]


def test_fully_connected_invalid():
    w, b = ten(F32, (5, 6)), ten(F32, (5,))
    fails(Op.FULLY_CONNECTED, [ten(F32, (1, 7)), w, b, i32(0)], match="multiple")
    fails(Op.FULLY_CONNECTED, [ten(F32, (1, 6)), w, ten(F32, (4,)), i32(0)])
    fails(Op.FULLY_CONNECTED, [ten(F32, (6,)), w, b, i32(0)])
    fails(Op.FULLY_CONNECTED, [ten(F32, (1, 6)), ten(F32, (5, 6, 1)), b, i32(0)])
    fails(Op.FULLY_CONNECTED, [ten(F32, (1, 6)), w, b, i32(7)])
    fails(
        Op.FULLY_CONNECTED,
        [ten(Q8, (1, 6), 0.5), ten(Q8, (5, 6), 0.5), ten(Q8, (5,), 0.25), i32(0)],
    )
    fails(Op.FULLY_CONNECTED, [ten(F32, (1, 6)), ten(F16, (5, 6)), b, i32(0)])


# -- pooling ---------------------------------------------------------------------------


def pool_explicit(x, pads=(0, 0, 0, 0), stride=(1, 1), filt=(2, 2), act=0, nchw=None):
    ins = [x, *map(i32, pads), i32(stride[0]), i32(stride[1]), i32(filt[0]), i32(filt[1]), i32(act)]
    return ins + ([b8(nchw)] if nchw is not None else [])


def pool_implicit(x, scheme=VALID, stride=(1, 1), filt=(2, 2), act=0, nchw=None):
    ins = [x, i32(scheme), i32(stride[0]), i32(stride[1]), i32(filt[0]), i32(filt[1]), i32(act)]
    return ins + ([b8(nchw)] if nchw is not None else [])


@pytest.mark.parametrize("op", [Op.AVERAGE_POOL_2D, Op.MAX_POOL_2D, Op.L2_POOL_2D])
def test_pool_signatures(op):
    x = ten(F32, (1, 4, 4, 1))
    assert dims(op, pool_explicit(x, stride=(2, 2))) == [(1, 2, 2, 1)]
    assert dims(op, pool_explicit(x, (1, 1, 0, 0), (1, 1), (3, 2), nchw=False)) == [(1, 3, 4, 1)]
    assert dims(op, pool_implicit(ten(F32, (1, 5, 5, 2)), SAME, (2, 2), (3, 3))) == [(1, 3, 3, 2)]
    assert dims(op, pool_implicit(ten(F32, (1, 2, 4, 5)), VALID, (1, 1), (2, 2), nchw=True)) == [
        (1, 2, 3, 4)
    ]
    assert dims(op, pool_explicit(ten(F16, (1, 2, 4, 5)), stride=(1, 2), nchw=True)) == [
        (1, 2, 2, 4)
    ]
    assert dims(op, pool_implicit(ten(F32, (0, 6, 0, 3)), SAME, (2, 2), (2, 2))) == [(0, 3, 0, 3)]
    assert dims(op, pool_implicit(ten(F32, None))) == [(0, 0, 0, 0)]


def test_pool_types():
    q = ten(Q8, (1, 4, 4, 1), 0.5, 0)
    assert dims(Op.MAX_POOL_2D, pool_implicit(q)) == [(1, 3, 3, 1)]
    assert dims(Op.AVERAGE_POOL_2D, pool_implicit(ten(Q8S, (1, 4, 4, 1), 0.5, 0))) == [(1, 3, 3, 1)]
    fails(Op.L2_POOL_2D, pool_implicit(q))
    fails(Op.MAX_POOL_2D, pool_implicit(ten(I32T, (1, 4, 4, 1))))


@pytest.mark.parametrize("op", [Op.AVERAGE_POOL_2D, Op.MAX_POOL_2D, Op.L2_POOL_2D])
def test_pool_invalid(op):
    x = ten(F32, (1, 4, 4, 1))
    fails(op, pool_explicit(x, (2, 0, 0, 0)), match="padding")
    fails(op, pool_explicit(x, filt=(0, 2)))
    fails(op, pool_implicit(x, stride=(1, 0)))
    fails(op, pool_implicit(x, scheme=0))
    fails(op, pool_implicit(x, filt=(5, 1)))  # empty output
    fails(op, pool_implicit(ten(F32, (4, 4, 1))))
    fails(op, pool_implicit(x)[:6])
    fails(op, pool_implicit(x) + [b8(False), b8(False)])
    fails(op, pool_implicit(x, act=-1))


# -- CONCATENATION, RESHAPE ---------------------------------------------------------------


def test_concatenation():
    a, b, c = ten(F32, (2, 1, 3)), ten(F32, (2, 2, 3)), ten(F32, (2, 3, 3))
    assert dims(Op.CONCATENATION, [a, b, c, i32(1)]) == [(2, 6, 3)]
    assert dims(Op.CONCATENATION, [a, b, c, i32(-2)]) == [(2, 6, 3)]
    assert dims(Op.CONCATENATION, [a, i32(0)]) == [(2, 1, 3)]
    assert dims(Op.CONCATENATION, [ten(F32, (2, 0, 3)), ten(F32, (0, 2, 0)), i32(1)]) == [(2, 0, 3)]
    assert dims(Op.CONCATENATION, [ten(F32, None), ten(F32, (1, 2)), i32(0)]) == [(0, 2)]
    assert dims(Op.CONCATENATION, [ten(F32, None), ten(F32, None), i32(0)]) == [None]
    q = [ten(Q8, (1, 2), 0.5, 3), ten(Q8, (1, 2), 0.25, 0), i32(0)]
    assert dims(Op.CONCATENATION, q) == [(2, 2)]


def test_concatenation_invalid():
    a = ten(F32, (2, 1, 3))
    fails(Op.CONCATENATION, [a, ten(F32, (2, 3)), i32(0)], match="rank")
    fails(Op.CONCATENATION, [a, ten(F32, (3, 1, 3)), i32(1)], match="dimension 0")
    fails(Op.CONCATENATION, [a, a, i32(3)], match="axis")
    fails(Op.CONCATENATION, [a, a, i32(-4)], match="axis")
    fails(Op.CONCATENATION, [a, ten(F16, (2, 1, 3)), i32(1)])
    fails(Op.CONCATENATION, [ten(F32, (1, 1, 1, 1, 2))] * 2 + [i32(4)], match="rank")
    fails(Op.CONCATENATION, [i32(0)])
    fails(Op.CONCATENATION, [a, a, f32(1.0)])


def shape(*v):
    return ten(I32T, (len(v),), value=np.array(v, np.int32))


def test_reshape():
    x = ten(F32, (2, 3, 4))
    assert dims(Op.RESHAPE, [x, shape(4, -1)]) == [(4, 6)]
    assert dims(Op.RESHAPE, [x, shape(24)]) == [(24,)]
    assert dims(Op.RESHAPE, [x, shape(-1)]) == [(24,)]
    assert dims(Op.RESHAPE, [x, shape(1, 2, 3, 4)]) == [(1, 2, 3, 4)]
    assert dims(Op.RESHAPE, [ten(F32, (0, 3, 4)), shape(4, -1)]) == [(4, 0)]
    assert dims(Op.RESHAPE, [ten(F32, None), shape(2, 12)]) == [(2, 12)]
    assert dims(Op.RESHAPE, [ten(Q8S, (6,), 0.5, 1), shape(3, 2)]) == [(3, 2)]


def test_reshape_invalid():
    x = ten(F32, (2, 3, 4))
    fails(Op.RESHAPE, [x, shape(-1, -1)], match="-1")
    fails(Op.RESHAPE, [x, shape(5, 5)])
    fails(Op.RESHAPE, [x, shape(5, -1)])
    fails(Op.RESHAPE, [x, shape(-2, -12)])
    fails(Op.RESHAPE, [ten(F32, (1, 1, 1, 1, 24)), shape(24)])
    fails(Op.RESHAPE, [x, ten(F32, (1,), value=np.array([24.0], np.float32))])
    with pytest.raises(Unsupported):
        run(Op.RESHAPE, [x, ten(I32T, (2,))])


# -- DEPTH_TO_SPACE, SPACE_TO_DEPTH -----------------------------------------------------


def test_depth_space():
    assert dims(Op.DEPTH_TO_SPACE, [ten(F32, (1, 2, 2, 8)), i32(2)]) == [(1, 4, 4, 2)]
    assert dims(Op.DEPTH_TO_SPACE, [ten(F32, (1, 8, 2, 3)), i32(2), b8(True)]) == [(1, 2, 4, 6)]
    assert dims(Op.DEPTH_TO_SPACE, [ten(Q8, (1, 2, 0, 9), 1.0), i32(3), b8(False)]) == [
        (1, 6, 0, 1)
    ]
    assert dims(Op.SPACE_TO_DEPTH, [ten(F32, (1, 4, 6, 2)), i32(2)]) == [(1, 2, 3, 8)]
    assert dims(Op.SPACE_TO_DEPTH, [ten(F16, (1, 2, 4, 6)), i32(2), b8(True)]) == [(1, 8, 2, 3)]
    assert dims(Op.SPACE_TO_DEPTH, [ten(F32, (1, 4, 0, 0)), i32(2)]) == [(1, 2, 0, 0)]


def test_depth_space_invalid():
    fails(Op.DEPTH_TO_SPACE, [ten(F32, (1, 2, 2, 6)), i32(2)], match="divisible")
    fails(Op.DEPTH_TO_SPACE, [ten(F32, (1, 2, 2, 4)), i32(0)])
    fails(Op.DEPTH_TO_SPACE, [ten(F32, (2, 2, 4)), i32(1)])
    fails(Op.SPACE_TO_DEPTH, [ten(F32, (1, 3, 4, 1)), i32(2)], match="height")
    fails(Op.SPACE_TO_DEPTH, [ten(F32, (1, 1, 4, 3)), i32(2), b8(True)], match="width")
    fails(Op.SPACE_TO_DEPTH, [ten(F32, (1, 4, 4, 1)), i32(2), i32(1)])
    fails(Op.SPACE_TO_DEPTH, [ten(I32T, (1, 4, 4, 1)), i32(2)])


# -- RESIZE_BILINEAR ---------------------------------------------------------------------


def test_resize_bilinear():
    x = ten(F32, (1, 2, 2, 1))
    assert dims(Op.RESIZE_BILINEAR, [x, i32(3), i32(4)]) == [(1, 4, 3, 1)]
    assert dims(Op.RESIZE_BILINEAR, [ten(F32, (1, 3, 2, 2)), i32(3), i32(4), b8(True)]) == [
        (1, 3, 4, 3)
    ]
    assert dims(Op.RESIZE_BILINEAR, [x, f32(1.5), f32(2.0)]) == [(1, 4, 3, 1)]
    assert dims(Op.RESIZE_BILINEAR, [ten(F16, (1, 3, 3, 1)), f16(1.5), f16(0.5), b8(False)]) == [
        (1, 1, 4, 1)
    ]
    q = ten(Q8, (2, 5, 4, 3), 0.5, 0)
    assert dims(Op.RESIZE_BILINEAR, [q, f32(0.5), f32(0.5), b8(False), b8(True), b8(False)]) == [
        (2, 2, 2, 3)
    ]
    assert dims(Op.RESIZE_BILINEAR, [q, i32(7), i32(8), b8(False), b8(False), b8(True)]) == [
        (2, 8, 7, 3)
    ]
    assert dims(Op.RESIZE_BILINEAR, [ten(F32, (0, 0, 4, 3)), f32(2.0), f32(2.0)]) == [(0, 0, 8, 3)]
    assert dims(Op.RESIZE_BILINEAR, [ten(F32, None), i32(5), i32(6)]) == [(0, 6, 5, 0)]


def test_resize_bilinear_invalid():
    x = ten(F32, (1, 2, 2, 1))
    fails(
        Op.RESIZE_BILINEAR,
        [x, i32(3), i32(4), b8(False), b8(True), b8(True)],
        match="align_corners",
    )
    fails(Op.RESIZE_BILINEAR, [x, i32(0), i32(4)])
    fails(Op.RESIZE_BILINEAR, [x, f16(1.5), f16(1.5)])
    fails(Op.RESIZE_BILINEAR, [ten(F16, (1, 2, 2, 1)), f32(1.5), f32(1.5)])
    fails(Op.RESIZE_BILINEAR, [x, i32(3), f32(1.5)])
    fails(Op.RESIZE_BILINEAR, [x, f32(0.0), f32(1.0)])
    fails(Op.RESIZE_BILINEAR, [x, f32(0.4), f32(1.0)])  # floor(2 * 0.4) = 0
    fails(Op.RESIZE_BILINEAR, [ten(F32, (2, 2, 1)), i32(3), i32(4)])
    fails(Op.RESIZE_BILINEAR, [x, i32(3)])
    fails(Op.RESIZE_BILINEAR, [x, i32(3), i32(3), b8(False), b8(False), b8(False), b8(False)])


# -- DEQUANTIZE ---------------------------------------------------------------------------


def test_dequantize():
    out = run(Op.DEQUANTIZE, [ten(Q8, (2, 3), 0.5, 1)])[0]
    assert (out.type, out.dims, out.scale, out.zero_point) == (F32, (2, 3), 0.0, 0)
    out = run(Op.DEQUANTIZE, [ten(Q8S, (2, 0), 0.5, 1)], [ten(F16, (0, 0))])[0]
    assert (out.type, out.dims) == (F16, (2, 0))
    out = run(Op.DEQUANTIZE, [ten(PC, (2, 3), cq=((0.5, 0.5), 0))], [ten(F32, (2, 3))])[0]
    assert (out.type, out.dims, out.channel_quant) == (F32, (2, 3), None)
    assert dims(Op.DEQUANTIZE, [ten(T.TENSOR_QUANT8_SYMM, None, 0.5)]) == [None]


def test_dequantize_invalid():
    fails(Op.DEQUANTIZE, [ten(F32, (2, 3))])
    fails(Op.DEQUANTIZE, [ten(Q8, (2, 3), 0.5)], [ten(I32T, (2, 3))])
    fails(Op.DEQUANTIZE, [ten(Q8, (1, 1, 1, 1, 1), 0.5)])
    fails(Op.DEQUANTIZE, [ten(Q8, (2, 3), 0.5), i32(0)])


# -- SOFTMAX, L2_NORMALIZATION, LOCAL_RESPONSE_NORMALIZATION --------------------------------


def test_softmax():
    assert dims(Op.SOFTMAX, [ten(F32, (2, 5)), f32(1.0)]) == [(2, 5)]
    assert dims(Op.SOFTMAX, [ten(F32, (2, 3, 5)), f32(0.5), i32(0)]) == [(2, 3, 5)]
    assert dims(Op.SOFTMAX, [ten(F16, (0, 5)), f16(1.0), i32(-1)]) == [(0, 5)]
    assert dims(Op.SOFTMAX, [ten(F32, None), f32(1.0), i32(3)]) == [None]
    q = [ten(Q8, (1, 4), 0.5, 0), f32(1.0)]
    assert dims(Op.SOFTMAX, q, [ten(Q8, (1, 4), 1 / 256, 0)]) == [(1, 4)]
    assert dims(
        Op.SOFTMAX, [ten(Q8S, (1, 4), 0.5, 0), f32(1.0)], [ten(Q8S, (1, 4), 1 / 256, -128)]
    ) == [(1, 4)]


def test_softmax_invalid():
    x = ten(F32, (2, 5))
    fails(Op.SOFTMAX, [x, f32(0.0)], match="beta")
    fails(Op.SOFTMAX, [x, f32(float("nan"))], match="beta")
    fails(Op.SOFTMAX, [x, f16(1.0)])
    fails(Op.SOFTMAX, [x, f32(1.0), i32(2)], match="axis")
    fails(Op.SOFTMAX, [ten(F32, (1, 1, 1, 1, 2)), f32(1.0)])
    fails(
        Op.SOFTMAX,
        [ten(Q8, (1, 4), 0.5, 0), f32(1.0)],
        [ten(Q8, (1, 4), 1 / 128, 0)],
        match="scale",
    )
    fails(Op.SOFTMAX, [ten(I32T, (1, 4)), f32(1.0)])
    fails(Op.SOFTMAX, [x])


def test_l2_normalization():
    assert dims(Op.L2_NORMALIZATION, [ten(F32, (1, 2, 2, 3))]) == [(1, 2, 2, 3)]
    assert dims(Op.L2_NORMALIZATION, [ten(F16, (2, 3)), i32(-2)]) == [(2, 3)]
    out = [ten(Q8, (2, 3), 1 / 128, 128)]
    assert dims(Op.L2_NORMALIZATION, [ten(Q8, (2, 3), 0.1, 3), i32(0)], out) == [(2, 3)]
    out = [ten(Q8S, (2, 3), 1 / 128, 0)]
    assert dims(Op.L2_NORMALIZATION, [ten(Q8S, (2, 3), 0.1, 3)], out) == [(2, 3)]


def test_l2_normalization_invalid():
    fails(Op.L2_NORMALIZATION, [ten(F32, (1, 2, 2, 3)), i32(4)], match="axis")
    fails(Op.L2_NORMALIZATION, [ten(F32, (1, 2, 2, 3, 1))])
    fails(Op.L2_NORMALIZATION, [ten(Q8, (2, 3), 0.1, 3)], [ten(Q8, (2, 3), 1 / 128, 0)])
    fails(Op.L2_NORMALIZATION, [ten(F32, (2, 3)), f32(0.0)])


def test_local_response_normalization():
    params = [i32(2), f32(1.0), f32(0.5), f32(0.75)]
    assert dims(Op.LOCAL_RESPONSE_NORMALIZATION, [ten(F32, (1, 2, 2, 6)), *params]) == [
        (1, 2, 2, 6)
    ]
    assert dims(Op.LOCAL_RESPONSE_NORMALIZATION, [ten(F32, (6, 3)), *params, i32(0)]) == [(6, 3)]
    p16 = [i32(0), f16(1.0), f16(0.5), f16(0.75), i32(-1)]
    assert dims(Op.LOCAL_RESPONSE_NORMALIZATION, [ten(F16, (0, 6)), *p16]) == [(0, 6)]


def test_local_response_normalization_invalid():
    x = ten(F32, (1, 2, 2, 6))
    fails(
        Op.LOCAL_RESPONSE_NORMALIZATION, [x, i32(-1), f32(1.0), f32(0.5), f32(0.75)], match="radius"
    )
    fails(Op.LOCAL_RESPONSE_NORMALIZATION, [x, i32(1), f16(1.0), f32(0.5), f32(0.75)])
    fails(
        Op.LOCAL_RESPONSE_NORMALIZATION,
        [ten(Q8, (1, 6), 0.5), i32(1), f32(1.0), f32(0.5), f32(0.75)],
    )
    fails(Op.LOCAL_RESPONSE_NORMALIZATION, [x, i32(1), f32(1.0), f32(0.5), f32(0.75), i32(-5)])
    fails(Op.LOCAL_RESPONSE_NORMALIZATION, [x, i32(1), f32(1.0), f32(0.5)])


# -- LSTM -------------------------------------------------------------------------------


def lstm_inputs(
    batch=1,
    n_in=2,
    cell=4,
    out=None,
    cifg=False,
    peephole=False,
    projection=False,
    proj_bias=False,
    layer_norm=None,
    t=F32,
    act=4,
):
    """The 23 (or 27 with layer_norm set to True/False) LSTM inputs."""
    out = out or cell
    clip = f16 if t == F16 else f32

    def maybe(present, d):
        return ten(t, d) if present else omit(t, (0,) * len(d))

    ins = [ten(t, (batch, n_in))]
    ins += [maybe(not cifg, (cell, n_in))] + [ten(t, (cell, n_in))] * 3
    ins += [maybe(not cifg, (cell, out))] + [ten(t, (cell, out))] * 3
    ins += [
        maybe(peephole and not cifg, (cell,)),
        maybe(peephole, (cell,)),
        maybe(peephole, (cell,)),
    ]
    ins += [maybe(not cifg, (cell,))] + [ten(t, (cell,))] * 3
    ins += [maybe(projection, (out, cell)), maybe(proj_bias, (out,))]
    ins += [ten(t, (batch, out)), ten(t, (batch, cell)), i32(act), clip(0.0), clip(0.0)]
    if layer_norm is not None:
        ins += [maybe(layer_norm and not cifg, (cell,))] + [maybe(layer_norm, (cell,))] * 3
    return ins


def test_lstm_signatures():
    assert dims(Op.LSTM, lstm_inputs()) == [(1, 16), (1, 4), (1, 4), (1, 4)]
    got = dims(Op.LSTM, lstm_inputs(2, 5, 4, 3, cifg=True, peephole=True, projection=True))
    assert got == [(2, 12), (2, 3), (2, 4), (2, 3)]
    got = dims(Op.LSTM, lstm_inputs(2, 5, 4, 3, projection=True, proj_bias=True, peephole=True))
    assert got == [(2, 16), (2, 3), (2, 4), (2, 3)]
    got = dims(Op.LSTM, lstm_inputs(3, 5, 4, layer_norm=True, t=F16))
    assert got == [(3, 16), (3, 4), (3, 4), (3, 4)]
    got = dims(Op.LSTM, lstm_inputs(3, 5, 4, cifg=True, layer_norm=True))
    assert got == [(3, 12), (3, 4), (3, 4), (3, 4)]
    assert len(lstm_inputs(layer_norm=False)) == 27
    assert dims(Op.LSTM, lstm_inputs(layer_norm=False)) == [(1, 16), (1, 4), (1, 4), (1, 4)]


def test_lstm_unknown_dims():
    ins = lstm_inputs(2, 5, 4, 3, projection=True)
    ins[0] = ten(F32, (0, 5))
    ins[18] = ten(F32, (0, 0))
    ins[19] = ten(F32, None)
    assert dims(Op.LSTM, ins) == [(0, 16), (0, 3), (0, 4), (0, 3)]
    ins[18] = ten(F32, (2, 3))  # batch from the output state
    assert dims(Op.LSTM, ins)[0] == (2, 16)


@pytest.mark.parametrize(
    "case",
    [
        "count20",
        "cifg_bias",
        "no_input_bias",
        "half_cifg",
        "peephole_partial",
        "proj_bias_only",
        "activation",
        "clip",
        "clip_type",
        "dims",
        "required",
        "layer_norm_partial",
        "type",
    ],
)
def test_lstm_invalid(case):
    ins = lstm_inputs(2, 5, 4, 3, projection=True)
    if case == "count20":
        ins = ins[:20]
    elif case == "cifg_bias":
        ins = lstm_inputs(cifg=True)
        ins[12] = ten(F32, (4,))
    elif case == "no_input_bias":
        ins[12] = omit()
    elif case == "half_cifg":
        ins[5] = omit(F32, (0, 0))
    elif case == "peephole_partial":
        ins[10] = ten(F32, (4,))
    elif case == "proj_bias_only":
        ins = lstm_inputs(proj_bias=True)
    elif case == "activation":
        ins[20] = i32(2)
    elif case == "clip":
        ins[21] = f32(-1.0)
    elif case == "clip_type":
        ins[22] = f16(0.0)
    elif case == "dims":
        ins[3] = ten(F32, (4, 6))
    elif case == "required":
        ins[13] = omit()
    elif case == "layer_norm_partial":
        ins = lstm_inputs(layer_norm=True)
        ins[25] = omit()
    elif case == "type":
        ins[4] = ten(F16, (4, 5))
    fails(Op.LSTM, ins)


# -- RNN, SVDF ------------------------------------------------------------------------------


def rnn_inputs(batch=2, n_in=3, units=4, act=1, t=F32):
    return [
        ten(t, (batch, n_in)),
        ten(t, (units, n_in)),
        ten(t, (units, units)),
        ten(t, (units,)),
        ten(t, (batch, units)),
        i32(act),
    ]


def test_rnn():
    assert dims(Op.RNN, rnn_inputs()) == [(2, 4), (2, 4)]
    assert dims(Op.RNN, rnn_inputs(t=F16, act=0)) == [(2, 4), (2, 4)]
    ins = rnn_inputs()
    ins[0], ins[1] = ten(F32, (0, 3)), ten(F32, None)
    assert dims(Op.RNN, ins) == [(2, 4), (2, 4)]


def test_rnn_invalid():
    ins = rnn_inputs()
    ins[2] = ten(F32, (4, 3))
    fails(Op.RNN, ins)
    fails(Op.RNN, rnn_inputs(act=9))
    fails(Op.RNN, rnn_inputs()[:5])
    ins = rnn_inputs()
    ins[4] = ten(F32, (3, 4))
    fails(Op.RNN, ins)
    fails(Op.RNN, rnn_inputs(t=Q8))


def svdf_inputs(batch=2, n_in=3, units=4, rank=1, memory=10, bias=True, t=F32):
    filters = units * rank
    return [
        ten(t, (batch, n_in)),
        ten(t, (filters, n_in)),
        ten(t, (filters, memory)),
        ten(t, (units,)) if bias else omit(t, (units,)),
        ten(t, (batch, memory * filters)),
        i32(rank),
        i32(0),
    ]


def test_svdf():
    assert dims(Op.SVDF, svdf_inputs()) == [(2, 40), (2, 4)]
    assert dims(Op.SVDF, svdf_inputs(rank=2, bias=False)) == [(2, 80), (2, 4)]
    assert dims(Op.SVDF, svdf_inputs(t=F16)) == [(2, 40), (2, 4)]
    ins = svdf_inputs(rank=2)
    ins[1] = ten(F32, (0, 3))
    assert dims(Op.SVDF, ins) == [(2, 80), (2, 4)]
    ins[2] = ten(F32, None)
    assert dims(Op.SVDF, ins) == [(2, 0), (2, 4)]


def test_svdf_invalid():
    ins = svdf_inputs(rank=2)
    ins[1] = ten(F32, (7, 3))
    fails(Op.SVDF, ins)
    ins = svdf_inputs()
    ins[4] = ten(F32, (2, 36))  # (memory - 1) * units * rank is not the layout
    fails(Op.SVDF, ins, match="state")
    ins = svdf_inputs()
    ins[5] = i32(0)
    fails(Op.SVDF, ins, match="rank")
    ins = svdf_inputs()
    ins[3] = ten(F32, (5,))
    fails(Op.SVDF, ins)
    fails(Op.SVDF, svdf_inputs()[:6])


# -- LSH_PROJECTION, HASHTABLE_LOOKUP, EMBEDDING_LOOKUP ---------------------------------------


def test_lsh_projection():
    h, x, w = ten(F32, (4, 2)), ten(I32T, (3, 2)), ten(F32, (3,))
    out = run(Op.LSH_PROJECTION, [h, x, w, i32(2)])[0]
    assert (out.type, out.dims) == (I32T, (8,))
    assert dims(Op.LSH_PROJECTION, [h, x, omit(F32, (3,)), i32(1)]) == [(4,)]
    assert dims(Op.LSH_PROJECTION, [h, ten(F32, (3,)), w, i32(3)]) == [(4,)]
    assert dims(Op.LSH_PROJECTION, [ten(F16, (4, 2)), ten(Q8, (3, 2), 1.0), omit(F16), i32(2)]) == [
        (8,)
    ]
    assert dims(Op.LSH_PROJECTION, [ten(F32, (0, 2)), x, w, i32(2)]) == [(0,)]
    assert dims(Op.LSH_PROJECTION, [ten(F32, (4, 32)), x, w, i32(2)]) == [(128,)]


def test_lsh_projection_invalid():
    h, x, w = ten(F32, (4, 2)), ten(I32T, (3, 2)), ten(F32, (3,))
    fails(Op.LSH_PROJECTION, [h, x, w, i32(4)], match="type")
    fails(Op.LSH_PROJECTION, [h, x, ten(F32, (2,)), i32(2)])
    fails(Op.LSH_PROJECTION, [ten(F32, (8,)), x, w, i32(2)])
    fails(Op.LSH_PROJECTION, [ten(F32, (4, 33)), x, w, i32(2)])
    fails(Op.LSH_PROJECTION, [ten(F32, (4, 32)), x, w, i32(3)], match="sparse")
    fails(Op.LSH_PROJECTION, [ten(I32T, (4, 2)), x, w, i32(2)])
    fails(Op.LSH_PROJECTION, [h, x, ten(F16, (3,)), i32(2)])
    fails(Op.LSH_PROJECTION, [h, x, i32(2)])


def test_hashtable_lookup():
    outs = run(Op.HASHTABLE_LOOKUP, [ten(I32T, (4,)), ten(I32T, (3,)), ten(F32, (3, 2))])
    assert [o.dims for o in outs] == [(4, 2), (4,)]
    assert (outs[1].type, outs[1].scale, outs[1].zero_point) == (Q8, 1.0, 0)
    q = [ten(I32T, (0,)), ten(I32T, (0,)), ten(Q8, (3, 2, 5), 0.5, 1)]
    assert dims(Op.HASHTABLE_LOOKUP, q) == [(0, 2, 5), (0,)]
    assert dims(Op.HASHTABLE_LOOKUP, [ten(I32T, (4,)), ten(I32T, (3,)), ten(I32T, None)]) == [
        None,
        (4,),
    ]


def test_hashtable_lookup_invalid():
    fails(Op.HASHTABLE_LOOKUP, [ten(I32T, (4,)), ten(I32T, (3,)), ten(F32, (5, 2))])
    fails(Op.HASHTABLE_LOOKUP, [ten(I32T, (4,)), ten(I32T, (3,)), ten(F32, (3,))], match="rank")
    fails(Op.HASHTABLE_LOOKUP, [ten(I32T, (4,)), ten(I32T, (3,)), ten(F16, (3, 2))])
    fails(Op.HASHTABLE_LOOKUP, [ten(F32, (4,)), ten(I32T, (3,)), ten(F32, (3, 2))])
    fails(Op.HASHTABLE_LOOKUP, [ten(I32T, (4, 1)), ten(I32T, (3,)), ten(F32, (3, 2))])


def test_embedding_lookup():
    assert dims(Op.EMBEDDING_LOOKUP, [ten(I32T, (3,)), ten(F32, (5, 2, 4))]) == [(3, 2, 4)]
    assert dims(Op.EMBEDDING_LOOKUP, [ten(I32T, (0,)), ten(Q8S, (5, 2), 0.5, 1)]) == [(0, 2)]
    assert dims(Op.EMBEDDING_LOOKUP, [ten(I32T, (3,)), ten(F16, None)]) == [None]


def test_embedding_lookup_invalid():
    fails(Op.EMBEDDING_LOOKUP, [ten(F32, (3,)), ten(F32, (5, 2))])
    fails(Op.EMBEDDING_LOOKUP, [ten(I32T, (3,)), ten(F32, (5,))], match="rank")
    fails(Op.EMBEDDING_LOOKUP, [ten(I32T, (3, 1)), ten(F32, (5, 2))])
    fails(Op.EMBEDDING_LOOKUP, [ten(I32T, (3,)), ten(T.TENSOR_BOOL8, (5, 2))])


# -- robustness ------------------------------------------------------------------------------


@pytest.mark.parametrize("op", sorted(V1_0_OPS))
def test_no_crash_on_garbage(op):
    """Wrong counts, types and values raise RuleError/Unsupported, nothing else."""
    rng = np.random.default_rng(int(op))
    pool = [
        ten(F32, (1, 4, 4, 2)),
        ten(F32, None),
        ten(Q8, (2, 3), 0.5),
        ten(I32T, (2,), value=np.array([-1, 3], np.int32)),
        ten(PC, (2, 2, 2, 2), cq=((1.0, 1.0), 0)),
        omit(),
        i32(-3),
        i32(0),
        i32(2),
        i32(2**31 - 1),
        f32(float("nan")),
        f32(float("inf")),
        f32(3e38),
        f16(-1.0),
        b8(True),
        OperandInfo(T.INT32, ()),  # a scalar that is not a constant
    ]
    for _ in range(300):
        n = int(rng.integers(0, 30))
        ins = [pool[int(k)] for k in rng.integers(0, len(pool), n)]
        try:
            run(op, ins, [ten(F32, (0,))])
        except (RuleError, Unsupported):
            pass


# -- the conformance corpus ------------------------------------------------------------------

_NUMPY = {
    T.FLOAT32: np.float32, T.INT32: np.int32, T.UINT32: np.uint32, T.BOOL: np.bool_,
    T.FLOAT16: np.float16, T.TENSOR_FLOAT32: np.float32, T.TENSOR_FLOAT16: np.float16,
    T.TENSOR_INT32: np.int32, T.TENSOR_QUANT8_ASYMM: np.uint8,
    T.TENSOR_QUANT8_ASYMM_SIGNED: np.int8, T.TENSOR_QUANT8_SYMM: np.int8,
    T.TENSOR_QUANT8_SYMM_PER_CHANNEL: np.int8, T.TENSOR_BOOL8: np.bool_,
    T.TENSOR_QUANT16_ASYMM: np.uint16, T.TENSOR_QUANT16_SYMM: np.int16,
}  # fmt: skip


def _corpus_dir() -> Path | None:
    env = os.environ.get("NNC_CTS_DIR")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parents[1].parent / "shared" / "nnapi-cts")
    return next((p for p in candidates if (p / "V1_0").is_dir()), None)


def _operand(o: dict, with_value: bool) -> OperandInfo:
    t = T[o["type"]]
    dims = (tuple(o["dimensions"]) or None) if t.is_tensor else ()
    cq = o.get("channel_quant")
    cq = (tuple(cq["scales"]), cq["channel_dim"]) if cq else None
    omitted = o["lifetime"] == "NO_VALUE" or (o["lifetime"] == "SUBGRAPH_INPUT" and not o["data"])
    value = None
    if with_value and o["data"] and t in _NUMPY:
        value = np.array(o["data"], dtype=_NUMPY[t])
        if dims:
            value = value.reshape(dims)
    return OperandInfo(t, dims, o["scale"], o["zero_point"], cq, value, omitted)


_TYPE_FIELD = re.compile(r'"type":\s*"([A-Z0-9_]+)"')


@functools.cache
def _load_corpus() -> tuple[dict, ...] | None:
    root = _corpus_dir()
    if root is None:
        return None
    wanted = {op.name for op in V1_0_OPS}
    models = []
    for path in sorted(glob.glob(str(root / "*" / "*.json"))):
        with open(path) as f:
            text = f.read()
        if not wanted & set(_TYPE_FIELD.findall(text)):
            continue  # cheap pre-filter: parsing all 95 MB takes seconds
        for model in json.loads(text)["models"]:
            types = {Op[o["type"]] for o in model["main"]["operations"]}
            # only NNAPI 1.0 operations, at least one of them from this file's set
            if not model["referenced"] and types <= ALL_V1_0 and types & V1_0_OPS:
                models.append(model)
    return tuple(models)


def _corpus_models() -> tuple[dict, ...]:
    models = _load_corpus()
    if models is None:
        pytest.skip("conformance corpus (shared/nnapi-cts) not found")
    return models


def replay(model: dict, specialise: bool = False):
    """Run the rules over ``model``'s operations in order.

    Constants carry their values; with ``specialise``, so do the model inputs
    that decide an output shape (RESHAPE's shape), as when nnc compiles a model
    specialised on the values given at execution.  Temporaries take the inferred
    info of the operation that produced them.  Returns (status, message) with
    status one of ok, mismatch, rule_error, unsupported.
    """
    main = model["main"]
    operands = main["operands"]
    infos = [
        _operand(o, o["lifetime"] in ("CONSTANT_COPY", "CONSTANT_REFERENCE")) for o in operands
    ]
    try:
        for k, op in enumerate(main["operations"]):
            ins = [infos[i] for i in op["inputs"]]
            if specialise and op["type"] == "RESHAPE":
                ins[1] = _operand(operands[op["inputs"][1]], True)
            outs = infer(OpCall(Op[op["type"]], ins, [infos[i] for i in op["outputs"]], k))
            if len(outs) != len(op["outputs"]):
                return "mismatch", f"op {k}: {len(outs)} outputs"
            for j, (i, got) in enumerate(zip(op["outputs"], outs)):
                want = tuple(operands[i]["dimensions"])
                if want and all(d > 0 for d in want) and got.dims != want:
                    return "mismatch", f"op {k} {op['type']} output {j}: {got.dims} != {want}"
                if operands[i]["lifetime"] == "TEMPORARY_VARIABLE" and got.dims is not None:
                    infos[i] = dataclasses.replace(infos[i], dims=got.dims)
    except RuleError as e:
        return "rule_error", f"op {k} {op['type']}: {e}"
    except Unsupported as e:
        return "unsupported", f"op {k} {op['type']}: {e}"
    return "ok", ""


def test_corpus_inferred_shapes_and_failures():
    """Every corpus model built only from NNAPI 1.0 ops (at least one of this
    file's set): valid ones infer exactly the listed output dims, the
    expect_failure ones raise RuleError (all such models here fail validation)."""
    counts: dict[str, int] = {}
    problems = []
    for model in _corpus_models():
        status, msg = replay(model)
        if status == "unsupported" and not model["expect_failure"]:
            # only RESHAPE with a non-constant shape; specialised it must pass
            assert "RESHAPE" in msg, (model["name"], msg)
            status, msg = replay(model, specialise=True)
            status = "specialised_" + status
        if model["expect_failure"]:
            status = "expected_failure_" + ("detected" if status == "rule_error" else "missed")
        counts[status] = counts.get(status, 0) + 1
        if status not in ("ok", "specialised_ok", "expected_failure_detected"):
            problems.append((model["name"], status, msg))
    assert not problems, problems[:20]
    assert counts.get("ok", 0) > 2800, counts
    assert counts.get("expected_failure_detected", 0) >= 5, counts


def test_corpus_unknown_dims_never_fail_valid_models():
    """Model-build-time validation: with input dims (or ranks) unknown, valid
    corpus operations raise no RuleError and what they infer agrees with the
    listed output dims."""
    checked = 0
    for model in _corpus_models():
        if model["expect_failure"]:
            continue
        operands = model["main"]["operands"]
        for op in model["main"]["operations"]:
            if Op[op["type"]] not in V1_0_OPS:
                continue
            base = [
                _operand(
                    operands[i], operands[i]["lifetime"] in ("CONSTANT_COPY", "CONSTANT_REFERENCE")
                )
                for i in op["inputs"]
            ]
            outs = [_operand(operands[i], False) for i in op["outputs"]]
            for variant in ("zeros", "no_rank", "first_zero"):
                ins = []
                for j, x in enumerate(base):
                    if x.type.is_tensor and x.dims is not None and x.value is None:
                        if variant == "zeros":
                            x = dataclasses.replace(x, dims=(0,) * len(x.dims))
                        elif variant == "no_rank":
                            x = dataclasses.replace(x, dims=None)
                        elif j == 0:
                            x = dataclasses.replace(x, dims=(0,) + x.dims[1:])
                    ins.append(x)
                try:
                    got = infer(OpCall(Op[op["type"]], ins, outs))
                except Unsupported:
                    continue
                for g, i in zip(got, op["outputs"]):
                    want = operands[i]["dimensions"]
                    if g.dims is None:
                        continue
                    assert len(g.dims) == len(want), (model["name"], variant, g.dims, want)
                    assert all(not a or not b or a == b for a, b in zip(g.dims, want)), (
                        model["name"],
                        variant,
                        g.dims,
                        want,
                    )
                checked += 1
    assert checked > 5000


def test_required_tensor_inputs_cannot_be_omitted():
    x, w, b = fconv((1, 5, 5, 3), (4, 3, 3, 3))
    fails(Op.CONV_2D, conv_implicit(x, w, omit(F32, (4,))), match="omitted")
    fails(Op.MAX_POOL_2D, pool_implicit(omit(F32, (1, 4, 4, 1))), match="omitted")
    fails(Op.CONCATENATION, [ten(F32, (1, 2)), omit(F32, (1, 2)), i32(0)], match="omitted")
    fails(Op.SOFTMAX, [omit(F32, (2, 5)), f32(1.0)], match="omitted")
    fails(Op.RESHAPE, [ten(F32, (2, 3)), omit(I32T, (1,))], match="omitted")
    ins = svdf_inputs()
    ins[2] = omit(F32, (4, 10))
    fails(Op.SVDF, ins, match="omitted")
    ins = lstm_inputs()
    ins[13] = omit()
    fails(Op.LSTM, ins, match="omitted")
    fails(Op.LSH_PROJECTION, [ten(F32, (4, 2)), omit(I32T, (3,)), omit(), i32(2)], match="omitted")
