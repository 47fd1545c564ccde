"""Regenerate the bundled example models (run from the repository root).

``tiny_cnn.nnc``: a 3x3 convolution with fused ReLU, 2x2 max pooling, a
fully-connected layer and softmax over a 1x8x8x1 image: small enough to read,
large enough to exercise the whole pipeline.
"""

from __future__ import annotations

import os

import numpy as np

import nnc
from nnc import FuseCode, PaddingCode
from nnc import OperandType as T
from nnc import OperationType as Op


def scalar(m: nnc.Model, t: T, v) -> int:
    i = m.add_operand(t)
    m.set_operand_value(i, v)
    return i


def tensor(m: nnc.Model, dims, value=None) -> int:
    i = m.add_operand(T.TENSOR_FLOAT32, dims)
    if value is not None:
        m.set_operand_value(i, np.asarray(value, np.float32))
    return i


def tiny_cnn() -> nnc.Model:
    rng = np.random.default_rng(7)
    m = nnc.Model()
    image = tensor(m, [1, 8, 8, 1])
    filt = tensor(m, [4, 3, 3, 1], rng.normal(0, 0.5, (4, 3, 3, 1)))
    bias = tensor(m, [4], rng.normal(0, 0.1, 4))
    i32 = lambda v: scalar(m, T.INT32, v)
    conv = tensor(m, [1, 8, 8, 4])
    m.add_operation(Op.CONV_2D, [image, filt, bias, i32(PaddingCode.SAME), i32(1), i32(1), i32(FuseCode.RELU)], [conv])
    pool = tensor(m, [1, 4, 4, 4])
    m.add_operation(Op.MAX_POOL_2D, [conv, i32(PaddingCode.VALID), i32(2), i32(2), i32(2), i32(2), i32(FuseCode.NONE)], [pool])
    weights = tensor(m, [3, 64], rng.normal(0, 0.2, (3, 64)))
    fc_bias = tensor(m, [3], np.zeros(3))
    logits = tensor(m, [1, 3])
    m.add_operation(Op.FULLY_CONNECTED, [pool, weights, fc_bias, i32(FuseCode.NONE)], [logits])
    probs = tensor(m, [1, 3])
    m.add_operation(Op.SOFTMAX, [logits, scalar(m, T.FLOAT32, 1.0)], [probs])
    m.identify_inputs_and_outputs([image], [probs])
    m.finish()
    return m


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    tiny_cnn().save(os.path.join(here, "tiny_cnn.nnc"))
    print("wrote examples/tiny_cnn.nnc")
