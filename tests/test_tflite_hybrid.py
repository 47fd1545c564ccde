"""Dynamic-range ("hybrid") TFLite models: int8 weights, float32
activations.  The importer dequantises the weights once, so nnc computes
the float32 network the quantised weights stand for; checked against numpy
on generated models and, where LiteRT is installed, against LiteRT's
reference kernels running the float twin of the shared model."""

from __future__ import annotations

import os

import numpy as np
import pytest

import nnc
from nnc import OperationType as Op
from nnc.tflite import import_tflite, translate_tflite
from test_tflite import MODELS_DIR
from test_tflite_mapping import litert
from tflite_builder import FLOAT32, INT8, TFLiteBuilder, dequantized_copy

DYNRANGE = os.path.join(MODELS_DIR, "import-next", "mobilenet_v1_0.5_128_dynrange")


def _hybrid_model(rng) -> tuple[bytes, dict[str, np.ndarray]]:
    """x [2, 1, 1, 6] -> CONV_2D 1x1 (per-channel int8 filter, float bias)
    -> RESHAPE [2, 5] -> FULLY_CONNECTED (per-tensor int8 weights, relu)."""
    b = TFLiteBuilder()
    w1 = rng.integers(-127, 128, (5, 1, 1, 6)).astype(np.int8)
    s1 = rng.uniform(0.001, 0.01, 5)
    w2 = rng.integers(-127, 128, (3, 5)).astype(np.int8)
    bias1, bias2 = rng.normal(size=5).astype(np.float32), rng.normal(size=3).astype(np.float32)
    x = b.tensor("x", [2, 1, 1, 6], FLOAT32)
    f1 = b.tensor("w1", w1.shape, INT8, w1, scale=s1, zero_point=np.zeros(5, int), qdim=0)
    c1 = b.tensor("b1", [5], FLOAT32, bias1)
    h = b.tensor("h", [2, 1, 1, 5], FLOAT32)
    b.op("CONV_2D", [x, f1, c1], [h], ("Conv2DOptions", {"Padding": 1, "StrideW": 1, "StrideH": 1}))
    shape = b.tensor("shape", [2], 2, np.array([2, 5], np.int32))
    flat = b.tensor("flat", [2, 5], FLOAT32)
    b.op("RESHAPE", [h, shape], [flat])
    f2 = b.tensor("w2", w2.shape, INT8, w2, scale=0.02, zero_point=0)
    c2 = b.tensor("b2", [3], FLOAT32, bias2)
    y = b.tensor("y", [2, 3], FLOAT32)
    b.op("FULLY_CONNECTED", [flat, f2, c2], [y], ("FullyConnectedOptions", {"FusedActivationFunction": 1}))
    weights = {"w1": w1.astype(np.float64) * s1.reshape(5, 1, 1, 1), "b1": bias1, "w2": w2 * 0.02, "b2": bias2}
    return b.build([x], [y]), weights


def test_hybrid_operators_compute_with_dequantised_weights():
    rng = np.random.default_rng(8)
    data, w = _hybrid_model(rng)
    result = translate_tflite(data)
    assert not result.problems
    assert [o.note.split(":")[0] for o in result.operators] == ["hybrid", "", "hybrid"]
    m = result.model
    assert [Op(o.type).name for o in m.operations] == ["CONV_2D", "RESHAPE", "FULLY_CONNECTED"]
    assert all(op.type == nnc.OperandType.TENSOR_FLOAT32 for op in m.operands if op.dims and len(op.dims) > 1)
    x = rng.normal(size=(2, 1, 1, 6)).astype(np.float32)
    got = nnc.compile(m).run(x)[0]
    h = x.reshape(2, 6).astype(np.float64) @ w["w1"].reshape(5, 6).T + w["b1"]
    want = np.maximum(h @ w["w2"].T + w["b2"], 0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_shared_dynamic_range_model_is_its_float_twin():
    """The shared MobileNet: nnc on the dynamic-range file equals nnc on its
    float twin bit for bit, is within 1e-5 of the largest output of LiteRT's
    reference kernels running that twin, and keeps the stored top-1 class."""
    pytest.importorskip("ai_edge_litert")
    data = open(DYNRANGE + ".tflite", "rb").read()
    twin = dequantized_copy(data)
    io = np.load(DYNRANGE + ".io.npz")
    x = io["input_0"]
    got = nnc.compile(import_tflite(data)).run(x)[0]
    np.testing.assert_array_equal(got, nnc.compile(import_tflite(twin)).run(x)[0])
    lite = litert(twin, [x])
    assert lite is not None
    assert np.abs(got - lite[0]).max() <= 1e-5 * np.abs(lite[0]).max()
    assert got.argmax() == io["output_0"].argmax()
