"""TFLite import (issue 13): the mappings real models need, on one-operator
flatbuffers: per-channel int8 FULLY_CONNECTED as a 1x1 CONV_2D (against
LiteRT's reference integer kernels), FULLY_CONNECTED keep_num_dims at any
rank, float16 constants folded, rank-0 constants, the transformer's
element-wise builtins, BATCH_MATMUL and TRANSPOSE_CONV (the NNAPI graph they
become), feature levels, and ``nnc info``.

LiteRT (``ai_edge_litert``, the optional ``bench`` extra) is the reference
where installed; every test also has a numpy reference or checks the graph.
"""

from __future__ import annotations

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc.cli import main as nnc_main
from nnc.dialects.optable import SPECS
from nnc.tflite import UnsupportedOperatorsError, import_tflite, translate_tflite
from tflite_builder import FLOAT16, FLOAT32, INT8, INT32, INT64, Sparsity, TFLiteBuilder, single_operator_model


def litert(data: bytes, inputs: list[np.ndarray], reference: bool = True) -> list[np.ndarray] | None:
    """LiteRT's outputs for a flatbuffer (its reference kernels unless
    ``reference`` is False), or None when LiteRT is not installed."""
    try:
        from ai_edge_litert import interpreter
    except ImportError:
        return None
    kind = interpreter.OpResolverType.BUILTIN_REF if reference else interpreter.OpResolverType.AUTO
    it = interpreter.Interpreter(model_content=data, experimental_op_resolver_type=kind, num_threads=1)
    it.allocate_tensors()
    for d, x in zip(it.get_input_details(), inputs):
        it.set_tensor(d["index"], x)
    it.invoke()
    return [it.get_tensor(d["index"]) for d in it.get_output_details()]


def op_names(m: nnc.Model) -> list[str]:
    return [Op(o.type).name for o in m.operations]


# -- per-channel int8 FULLY_CONNECTED --------------------------------------------------------------
def per_channel_fc(in_shape, units, keep: bool, bias: bool, act: int, seed: int = 3):
    """An int8 FULLY_CONNECTED with a scale per output unit (what the current
    converter writes), and the pieces of its integer arithmetic."""
    rng = np.random.default_rng(seed)
    depth = in_shape[-1]
    batch = int(np.prod(in_shape)) // depth
    b = TFLiteBuilder()
    x = b.tensor("x", in_shape, INT8, scale=0.03, zero_point=-4)
    wq = rng.integers(-127, 128, (units, depth))
    scales = rng.uniform(0.002, 0.02, units)
    w = b.tensor("w", [units, depth], INT8, wq, scale=scales, zero_point=[0] * units, qdim=0)
    bq = rng.integers(-2000, 2000, units) if bias else np.zeros(units, np.int64)
    ins = [x, w]
    if bias:
        ins.append(b.tensor("b", [units], INT32, bq, scale=0.03 * scales, zero_point=[0] * units))
    out_shape = [*in_shape[:-1], units] if keep else [batch, units]
    y = b.tensor("y", out_shape, INT8, scale=0.05, zero_point=3)
    b.op("FULLY_CONNECTED", ins, [y], ("FullyConnectedOptions", {"KeepNumDims": keep, "FusedActivationFunction": act}))
    xq = rng.integers(-128, 128, in_shape).astype(np.int8)
    acc = (xq.reshape(batch, depth).astype(np.int64) + 4) @ wq.T + bq
    real = acc * 0.03 * scales
    lo = -3 if act == 0 else 3  # RELU clamps at the zero point
    want = np.clip(np.round(real / 0.05) + 3, lo if act else -128, 127).reshape(out_shape)
    return b.build([x], [y]), xq, want


FC_CASES = [((1, 40), 10, False, True, 0), ((2, 3, 20), 7, True, True, 1), ((2, 3, 20), 7, False, False, 0),
            ((1, 2, 2, 8), 5, True, True, 0)]  # fmt: skip


@pytest.mark.parametrize("in_shape,units,keep,bias,act", FC_CASES)
def test_per_channel_fc_is_a_1x1_conv_matching_litert(in_shape, units, keep, bias, act):
    data, xq, want = per_channel_fc(in_shape, units, keep, bias, act)
    m = import_tflite(data)
    assert op_names(m) == ["RESHAPE", "CONV_2D", "RESHAPE"]
    conv = m.operations[1]
    w, bop = m.operands[conv.inputs[1]], m.operands[conv.inputs[2]]
    depth = in_shape[-1]
    assert w.type == T.TENSOR_QUANT8_SYMM_PER_CHANNEL and w.dims == (units, 1, 1, depth)
    assert w.channel_quant is not None and w.channel_quant[1] == 0 and len(w.channel_quant[0]) == units
    assert bop.type == T.TENSOR_INT32 and bop.scale == 0.0
    assert [int(m.operands[i].value) for i in conv.inputs[3:]] == [2, 1, 1, act]  # VALID, strides 1, fuse
    got = nnc.compile(m).run(xq)[0]
    assert got.shape == want.shape and got.dtype == np.int8
    assert np.abs(got.astype(np.int32) - want).max() <= 1  # the real-number result, within one unit
    ref = litert(data, [xq])
    if ref is not None:
        assert np.abs(got.astype(np.int32) - ref[0]).max() <= 1  # LiteRT's reference integer kernel
        assert np.mean(got == ref[0]) > 0.9  # and mostly the very same integers


def test_per_channel_fc_below_feature_level_4_is_shifted():
    """Below level 4 int8 is TENSOR_QUANT8_ASYMM + 128: the same integers shifted."""
    data, xq, want = per_channel_fc((2, 16), 6, False, True, 0)
    m = import_tflite(data, feature_level=3)
    assert m.operands[m.inputs[0]].type == T.TENSOR_QUANT8_ASYMM
    got = nnc.compile(m).run((xq.astype(np.int16) + 128).astype(np.uint8))[0].astype(np.int32) - 128
    assert np.abs(got - want).max() <= 1


def test_per_channel_fc_large_against_litert_optimized_kernels():
    """A classifier-sized FC against LiteRT's default (optimised) kernels too."""
    data, xq, _ = per_channel_fc((1, 1280), 100, False, True, 0, seed=5)
    got = nnc.compile(import_tflite(data)).run(xq)[0].astype(np.int32)
    for reference in (True, False):
        ref = litert(data, [xq], reference)
        if ref is None:
            pytest.skip("ai_edge_litert (the 'bench' extra) is not installed")
        assert np.abs(got - ref[0]).max() <= 1


# -- FULLY_CONNECTED keep_num_dims (float) -------------------------------------------------------------
@pytest.mark.parametrize("in_shape,keep,ops", [((2, 3, 6), True, ["FULLY_CONNECTED", "RESHAPE"]),
                                               ((2, 3, 6), False, ["FULLY_CONNECTED"]),
                                               ((1, 2, 2, 6), True, ["FULLY_CONNECTED", "RESHAPE"]),
                                               ((4, 6), True, ["FULLY_CONNECTED"])])  # fmt: skip
def test_fc_keep_num_dims_any_rank(in_shape, keep, ops):
    rng = np.random.default_rng(1)
    wv = rng.uniform(-1, 1, (5, 6)).astype(np.float32)
    bv = rng.uniform(-1, 1, 5).astype(np.float32)
    b = TFLiteBuilder()
    x = b.tensor("x", in_shape, FLOAT32)
    w = b.tensor("w", [5, 6], FLOAT32, wv)
    bias = b.tensor("b", [5], FLOAT32, bv)
    batch = int(np.prod(in_shape)) // 6
    out_shape = [*in_shape[:-1], 5] if keep else [batch, 5]
    y = b.tensor("y", out_shape, FLOAT32)
    b.op("FULLY_CONNECTED", [x, w, bias], [y], ("FullyConnectedOptions", {"KeepNumDims": keep}))
    data = b.build([x], [y])
    m = import_tflite(data)
    assert op_names(m) == ops
    xv = rng.uniform(-1, 1, in_shape).astype(np.float32)
    got = nnc.compile(m).run(xv)[0]
    want = (xv.reshape(batch, 6).astype(np.float64) @ wv.T + bv).reshape(out_shape)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    ref = litert(data, [xv])
    if ref is not None:
        np.testing.assert_allclose(got, ref[0], rtol=1e-5, atol=1e-6)


def test_fc_of_rank_5_is_reported():
    """NNAPI tensors have rank 4 at most (RESHAPE, FULLY_CONNECTED)."""
    data = per_channel_fc((1, 2, 2, 3, 8), 5, True, True, 0)[0]
    with pytest.raises(UnsupportedOperatorsError) as info:
        import_tflite(data)
    assert "rank 5" in info.value.problems[0][2]


# -- float16 constants -------------------------------------------------------------------------------
def test_float16_constant_dequantize_is_folded():
    """float16 weight quantisation: DEQUANTIZE(float16 constant) becomes a
    float32 constant holding exactly the float16 values; no operation."""
    rng = np.random.default_rng(4)
    wv = rng.uniform(-1, 1, (3, 8)).astype(np.float16)
    b = TFLiteBuilder()
    x = b.tensor("x", [2, 8], FLOAT32)
    w16 = b.tensor("w16", [3, 8], FLOAT16, wv)
    w = b.tensor("w", [3, 8], FLOAT32)
    y = b.tensor("y", [2, 3], FLOAT32)
    b.op("DEQUANTIZE", [w16], [w])
    b.op("FULLY_CONNECTED", [x, w], [y], ("FullyConnectedOptions", {}))
    data = b.build([x], [y])
    result = translate_tflite(data)
    assert [(o.name, o.nnapi) for o in result.operators] == [("DEQUANTIZE", []), ("FULLY_CONNECTED", ["FULLY_CONNECTED"])]
    assert "folded" in result.operators[0].note and not result.problems
    m = result.model
    wop = m.operands[m.operations[0].inputs[1]]
    assert wop.type == T.TENSOR_FLOAT32 and np.array_equal(wop.value, wv.astype(np.float32))
    xv = rng.uniform(-1, 1, (2, 8)).astype(np.float32)
    got = nnc.compile(m).run(xv)[0]
    np.testing.assert_allclose(got, xv.astype(np.float64) @ wv.astype(np.float64).T, rtol=1e-5, atol=1e-6)
    ref = litert(data, [xv])
    if ref is not None:
        np.testing.assert_allclose(got, ref[0], rtol=1e-5, atol=1e-6)


# -- the transformer's and the U-Net's element-wise builtins ---------------------------------------------


def _resize_half_pixel(x, oh, ow):
    """TFLite's bilinear resize with half_pixel_centers (align_corners off)."""
    n, h, w, c = x.shape

    def taps(o, i):
        src = np.maximum((np.arange(o) + 0.5) * (i / o) - 0.5, 0)
        lo = np.floor(src).astype(int)
        return lo, np.minimum(lo + 1, i - 1), src - lo

    y0, y1, fy = taps(oh, h)
    x0, x1, fx = taps(ow, w)
    top = x[:, y0][:, :, x0] * (1 - fx)[None, None, :, None] + x[:, y0][:, :, x1] * fx[None, None, :, None]
    bot = x[:, y1][:, :, x0] * (1 - fx)[None, None, :, None] + x[:, y1][:, :, x1] * fx[None, None, :, None]
    return top * (1 - fy)[None, :, None, None] + bot * fy[None, :, None, None]


_I32 = np.int32
ONE_OPS = {
    "squared_difference": (lambda: single_operator_model("SQUARED_DIFFERENCE", [[2, 3, 4], [2, 3, 1]], [2, 3, 4]),
                           lambda a, b: (a - b) ** 2, ["SUB", "MUL"]),
    "neg": (lambda: single_operator_model("NEG", [[2, 5]], [2, 5]), lambda x: -x, ["NEG"]),
    "rsqrt": (lambda: single_operator_model("RSQRT", [[2, 5]], [2, 5]), lambda x: 1 / np.sqrt(np.abs(x) + 0.5), ["RSQRT"]),
    "mean_keep_last": (lambda: single_operator_model("MEAN", [[1, 4, 6]], [1, 4, 1], ("ReducerOptions", {"KeepDims": True}),
                                    [np.array([-1], _I32)]), lambda x: x.mean(-1, keepdims=True), ["MEAN"]),
    "mean_rank0_axis": (lambda: single_operator_model("MEAN", [[1, 4, 6]], [1, 6], ("ReducerOptions", {"KeepDims": False}),
                                     [np.array(1, _I32)]), lambda x: x.mean(1), ["MEAN"]),
    "mul_rank0_constant": (lambda: single_operator_model("MUL", [[1, 2, 3, 3]], [1, 2, 3, 3], ("MulOptions", {}),
                                        [np.array(0.25, np.float32)]), lambda x: x * 0.25, ["MUL"]),
    "resize_half_pixel": (lambda: single_operator_model("RESIZE_BILINEAR", [[1, 3, 4, 2]], [1, 6, 8, 2], ("ResizeBilinearOptions", {
                              "HalfPixelCenters": True}), [np.array([6, 8], _I32)]),
                          lambda x: _resize_half_pixel(x, 6, 8), ["RESIZE_BILINEAR"]),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(ONE_OPS))
def test_one_operator_against_numpy_and_litert(case):
    build, ref, ops = ONE_OPS[case]
    data = build()
    m = import_tflite(data)
    assert op_names(m) == ops
    rng = np.random.default_rng(11)
    xs = [rng.uniform(-2, 2, m.operands[i].dims).astype(np.float32) for i in m.inputs]
    if case == "rsqrt":
        xs = [np.abs(x) + np.float32(0.5) for x in xs]
        ref = lambda x: 1 / np.sqrt(x)
    got = nnc.compile(m).run(*xs)[0]
    np.testing.assert_allclose(got, ref(*[x.astype(np.float64) for x in xs]), rtol=1e-5, atol=1e-6)
    want = litert(data, xs)
    if want is not None:
        np.testing.assert_allclose(got, want[0], rtol=1e-5, atol=1e-6)


# -- BATCH_MATMUL and TRANSPOSE_CONV: the NNAPI graph ------------------------------------------------
def _implemented(op: Op) -> bool:
    return T.TENSOR_FLOAT32 in SPECS[op].implemented


def batch_matmul_model(a_shape, b_shape, out_shape, adj_x=False, adj_y=False, b_value=None) -> bytes:
    b = TFLiteBuilder()
    x = b.tensor("a", a_shape, FLOAT32)
    w = b.tensor("b", b_shape, FLOAT32, b_value)
    y = b.tensor("y", out_shape, FLOAT32)
    b.op("BATCH_MATMUL", [x, w], [y], ("BatchMatMulOptions", {"AdjX": adj_x, "AdjY": adj_y}))
    return b.build([x] if b_value is not None else [x, w], [y])


@pytest.mark.parametrize("adj_x,adj_y", [(False, False), (True, False), (False, True)])
def test_batch_matmul_maps_to_nnapi_batch_matmul(adj_x, adj_y):
    a_shape = (1, 3, 5, 4) if adj_x else (1, 3, 4, 5)
    b_shape = (1, 3, 6, 5) if adj_y else (1, 3, 5, 6)
    data = batch_matmul_model(a_shape, b_shape, (1, 3, 4, 6), adj_x, adj_y)
    result = translate_tflite(data)
    m = result.model
    assert op_names(m) == ["BATCH_MATMUL"]
    call = m.operations[0]
    assert [m.operands[i].dims for i in call.inputs[:2]] == [a_shape, b_shape]
    assert [bool(m.operands[i].value) for i in call.inputs[2:]] == [adj_x, adj_y]
    assert [m.operands[i].type for i in call.inputs[2:]] == [T.BOOL, T.BOOL]
    assert m.operands[call.outputs[0]].dims == (1, 3, 4, 6)
    _check_runs_or_is_reported(data, Op.BATCH_MATMUL, lambda a, b: (a.swapaxes(-1, -2) if adj_x else a)
                               @ (b.swapaxes(-1, -2) if adj_y else b))  # fmt: skip


def test_batch_matmul_broadcasts_a_constant_operand():
    """TFLite broadcasts the batch; NNAPI does not: a constant is repeated at import."""
    wv = np.random.default_rng(2).uniform(-1, 1, (5, 6)).astype(np.float32)
    m = translate_tflite(batch_matmul_model((2, 4, 5), (5, 6), (2, 4, 6), b_value=wv)).model
    w = m.operands[m.operations[0].inputs[1]]
    assert w.dims == (2, 5, 6) and np.array_equal(w.value, np.broadcast_to(wv, (2, 5, 6)))


def test_batch_matmul_runtime_broadcast_is_reported():
    r = translate_tflite(batch_matmul_model((2, 4, 5), (1, 5, 6), (2, 4, 6)))
    assert r.model is None and "broadcast" in r.problems[0][2]


def test_batch_matmul_needs_feature_level_6():
    with pytest.raises(UnsupportedOperatorsError) as info:
        import_tflite(batch_matmul_model((1, 4, 5), (1, 5, 6), (1, 4, 6)), feature_level=5)
    assert "needs feature level 6" in info.value.problems[0][2]


def transpose_conv_model(bias: bool, padding: int, act: int = 0) -> bytes:
    """3x3 filter, stride 2, input 4x4: output 8x8 (SAME) or 9x9 (VALID)."""
    rng = np.random.default_rng(6)
    b = TFLiteBuilder()
    size = 8 if padding == 0 else 9
    shape = b.tensor("shape", [4], INT32, np.array([1, size, size, 3]))
    w = b.tensor("w", [3, 3, 3, 2], FLOAT32, rng.uniform(-1, 1, (3, 3, 3, 2)))
    x = b.tensor("x", [1, 4, 4, 2], FLOAT32)
    ins = [shape, w, x]
    if bias:
        ins.append(b.tensor("bias", [3], FLOAT32, np.array([0.5, -1, 2])))
    y = b.tensor("y", [1, size, size, 3], FLOAT32)
    b.op("TRANSPOSE_CONV", ins, [y], ("TransposeConvOptions", {"Padding": padding, "StrideW": 2, "StrideH": 2,
                                                               "FusedActivationFunction": act}))  # fmt: skip
    return b.build([x], [y])


@pytest.mark.parametrize("bias,padding,act", [(True, 0, 0), (False, 1, 1)])
def test_transpose_conv_maps_to_transpose_conv_2d(bias, padding, act):
    data = transpose_conv_model(bias, padding, act)
    m = translate_tflite(data).model
    assert op_names(m) == ["TRANSPOSE_CONV_2D"]
    ins = [m.operands[i] for i in m.operations[0].inputs]
    assert len(ins) == 9  # the implicit-padding form, with the output-shape tensor
    assert ins[0].dims == (1, 4, 4, 2) and ins[0].value is None
    assert ins[1].dims == (3, 3, 3, 2) and ins[1].type == T.TENSOR_FLOAT32
    assert ins[2].dims == (3,) and np.array_equal(ins[2].value, [0.5, -1, 2] if bias else [0, 0, 0])
    size = 8 if padding == 0 else 9
    assert ins[3].type == T.TENSOR_INT32 and list(ins[3].value) == [1, size, size, 3]
    assert [int(o.value) for o in ins[4:8]] == [1 if padding == 0 else 2, 2, 2, act]  # SAME=1/VALID=2
    assert ins[8].type == T.BOOL and not ins[8].value  # NHWC
    assert m.operands[m.operations[0].outputs[0]].dims == (1, size, size, 3)
    w = np.random.default_rng(6).uniform(-1, 1, (3, 3, 3, 2)).astype(np.float32).astype(np.float64)
    b = np.array([0.5, -1, 2]) if bias else np.zeros(3)

    def ref(x: np.ndarray) -> np.ndarray:
        return transpose_conv_ref(x, w, b, size, relu=act == 1)

    want = litert(data, [np.random.default_rng(8).uniform(-1, 1, (1, 4, 4, 2)).astype(np.float32)])
    _check_runs_or_is_reported(data, Op.TRANSPOSE_CONV_2D, ref, want)


def transpose_conv_ref(x: np.ndarray, w: np.ndarray, bias: np.ndarray, size: int, relu: bool) -> np.ndarray:
    """TFLite's TRANSPOSE_CONV at stride 2 (NHWC input, OHWI filter): every
    input pixel scatters its filter-weighted copy into the full output, which
    is then cropped to ``size`` with the padding TFLite puts in front
    (half the excess, rounded down)."""
    n, h, wd, _ = x.shape
    o, kh, kw, _ = w.shape
    full = np.zeros((n, (h - 1) * 2 + kh, (wd - 1) * 2 + kw, o))
    for i in range(h):
        for j in range(wd):
            full[:, 2 * i:2 * i + kh, 2 * j:2 * j + kw, :] += np.einsum("nc,oyxc->nyxo", x[:, i, j, :], w)
    top, left = (full.shape[1] - size) // 2, (full.shape[2] - size) // 2
    out = full[:, top:top + size, left:left + size, :] + bias
    return np.maximum(out, 0) if relu else out


def test_int8_transpose_conv_bias_scale():
    """A per-channel int8 filter keeps its scales; the int32 bias gets scale 0."""
    b = TFLiteBuilder()
    shape = b.tensor("shape", [4], INT32, np.array([1, 4, 4, 2]))
    w = b.tensor("w", [2, 2, 2, 3], INT8, np.ones((2, 2, 2, 3)), scale=[0.1, 0.2], zero_point=[0, 0], qdim=0)
    x = b.tensor("x", [1, 2, 2, 3], INT8, scale=0.5, zero_point=1)
    bias = b.tensor("bias", [2], INT32, np.array([3, 4]), scale=[0.05, 0.1], zero_point=[0, 0])
    y = b.tensor("y", [1, 4, 4, 2], INT8, scale=0.25, zero_point=0)
    b.op("TRANSPOSE_CONV", [shape, w, x, bias], [y], ("TransposeConvOptions", {"Padding": 1, "StrideW": 2,
                                                                              "StrideH": 2}))  # fmt: skip
    m = translate_tflite(b.build([x], [y])).model
    ins = [m.operands[i] for i in m.operations[0].inputs]
    assert ins[0].type == T.TENSOR_QUANT8_ASYMM_SIGNED and ins[1].type == T.TENSOR_QUANT8_SYMM_PER_CHANNEL
    assert ins[1].channel_quant[1] == 0 and ins[2].type == T.TENSOR_INT32 and ins[2].scale == 0.0


def _check_runs_or_is_reported(data: bytes, op: Op, ref, want=None) -> None:
    """Until nnc implements ``op`` the import reports it as mapped but not
    compiled; once it does, the model must compute numpy's / LiteRT's result."""
    if not _implemented(op):
        with pytest.raises(UnsupportedOperatorsError) as info:
            import_tflite(data)
        assert f"mapped to NNAPI {op.name}, which nnc cannot compile yet" in info.value.problems[0][2]
        return
    m = import_tflite(data)
    rng = np.random.default_rng(8)
    xs = [rng.uniform(-1, 1, m.operands[i].dims).astype(np.float32) for i in m.inputs]
    got = nnc.compile(m).run(*xs)[0]
    expect = want[0] if want is not None else ref(*[x.astype(np.float64) for x in xs])
    if expect is not None:
        np.testing.assert_allclose(got, expect, rtol=1e-5, atol=1e-5)


# -- nnc info ---------------------------------------------------------------------------------------
def test_info_lists_each_operator_and_every_problem(tmp_path, capsys):
    b = TFLiteBuilder()
    x = b.tensor("x", [1, 3, 4], FLOAT32)
    c16 = b.tensor("c16", [1, 3, 4], FLOAT16, np.ones((1, 3, 4)))
    c = b.tensor("c", [1, 3, 4], FLOAT32)
    y = b.tensor("y", [1, 3, 4], FLOAT32)
    z = b.tensor("z", [1, 3, 4], FLOAT32)
    v = b.tensor("v", [1, 3, 4], FLOAT32)
    b.op("DEQUANTIZE", [c16], [c])
    b.op("SQUARED_DIFFERENCE", [x, c], [y])
    b.op("", [y], [z], custom="MyOp")
    b.op("ADD", [z, z], [v], ("AddOptions", {"FusedActivationFunction": 4}))
    path = tmp_path / "m.tflite"
    path.write_bytes(b.build([x], [v]))
    assert nnc_main(["info", str(path)]) == 1
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0] == "operator 0: DEQUANTIZE -> (folded: float16 constant -> float32 constant)"
    assert lines[1] == "operator 1: SQUARED_DIFFERENCE -> SUB, MUL"
    assert lines[2].startswith("operator 2: CUSTOM:MyOp -> -  [cannot import: custom operator")
    assert lines[3].startswith("operator 3: ADD -> -  [cannot import:") and "TANH" in lines[3]
    assert "2 operator(s) cannot be imported" in err and "operator 2 (CUSTOM:MyOp)" in err
    assert "operator 3 (ADD)" in err


def test_info_of_an_importable_model(tmp_path, capsys):
    path = tmp_path / "m.tflite"
    path.write_bytes(per_channel_fc((1, 8), 4, False, True, 0)[0])
    assert nnc_main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "operator 0: FULLY_CONNECTED -> RESHAPE, CONV_2D, RESHAPE"
    assert "op 1: CONV_2D" in out


# -- decompositions of builtins the delegate rejects, and older-level expansions -------------------------
def _float_model(name: str, n_in: int, shape, options=None) -> bytes:
    b = TFLiteBuilder()
    ins = [b.tensor(f"x{k}", shape, FLOAT32) for k in range(n_in)]
    y = b.tensor("y", shape, FLOAT32)
    b.op(name, ins, [y], options)
    return b.build(ins, [y])


def _erf(v: np.ndarray) -> np.ndarray:
    import math

    return np.vectorize(math.erf)(v)


DECOMPOSED = {
    "gelu": (lambda: _float_model("GELU", 1, [3, 40], ("GeluOptions", {"Approximate": False})), 8,
             lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2)))),
    "gelu_tanh": (lambda: _float_model("GELU", 1, [3, 40], ("GeluOptions", {"Approximate": True})), 8,
                  lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))),
    "add_n": (lambda: _float_model("ADD_N", 3, [2, 5]), 8, lambda a, b, c: a + b + c),
    "hard_swish_level_3": (lambda: _float_model("HARD_SWISH", 1, [3, 40]), 3,
                           lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "squared_difference": (lambda: _float_model("SQUARED_DIFFERENCE", 2, [2, 5]), 8, lambda a, b: (a - b) ** 2),
    "cos": (lambda: _float_model("COS", 1, [4, 50]), 8, np.cos, 10.0),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(DECOMPOSED))
def test_decomposition_against_numpy_and_litert(case):
    build, level, ref, *span = DECOMPOSED[case]  # span: inputs in [-span, span] (default 5)
    data = build()
    m = import_tflite(data, feature_level=level)
    assert len(m.operations) > 1  # a graph, not one operation
    rng = np.random.default_rng(12)
    r = span[0] if span else 5.0
    xs = [rng.uniform(-r, r, m.operands[i].dims).astype(np.float32) for i in m.inputs]
    got = nnc.compile(m).run(*xs)[0]
    want = ref(*[x.astype(np.float64) for x in xs])
    tol = 1e-4 * np.abs(want).max()  # the model zoo's criterion
    assert np.abs(got - want).max() <= tol
    lite = litert(data, xs)
    if lite is not None:
        assert np.abs(got - lite[0]).max() <= tol


def test_gelu_within_its_stated_error() -> None:
    """The exact GELU's decomposition (a rational erf) within the bound its
    docstring states: 2.8e-7 of max(|x|, 1), over a dense grid through
    the clamp, the origin and the saturation on both sides."""
    x = np.concatenate([np.linspace(-12, 12, 120_001), np.linspace(-1e-3, 1e-3, 1_001), [0.0, -0.0]]).astype(np.float32)
    b = TFLiteBuilder()
    t = b.tensor("x", [x.size], FLOAT32)
    y = b.tensor("y", [x.size], FLOAT32)
    b.op("GELU", [t], [y], ("GeluOptions", {"Approximate": False}))
    got = nnc.compile(import_tflite(b.build([t], [y]))).run(x)[0].astype(np.float64)
    xd = x.astype(np.float64)
    want = 0.5 * xd * (1 + _erf(xd / np.sqrt(2)))
    assert (np.abs(got - want) / np.maximum(np.abs(xd), 1.0)).max() <= 2.8e-7
    assert np.all(got[x > 6] == x[x > 6]) and np.all(got[x < -6] == 0.0)


def gather_nd_model(params_shape, params_type: int, indices: np.ndarray, constant: bool, index_type: int = INT32):
    """A GATHER_ND of a params input by ``indices`` (a constant, or an input
    of their shape); int8 params at scale 0.1, zero point 3."""
    b = TFLiteBuilder()
    q = {"scale": 0.1, "zero_point": 3} if params_type == INT8 else {}
    x = b.tensor("params", params_shape, params_type, **q)
    i = b.tensor("indices", indices.shape, index_type, indices if constant else None)
    out_shape = [*indices.shape[:-1], *params_shape[indices.shape[-1] :]]
    y = b.tensor("y", out_shape, params_type, **q)
    b.op("GATHER_ND", [x, i], [y])
    return b.build([x] if constant else [x, i], [y])


_IDX = np.array
GATHER_ND_CASES = {
    "float_const_pairs": ([3, 4, 5], FLOAT32, _IDX([[2, 1], [0, 3], [2, 1]]), True, INT32, ["RESHAPE", "GATHER"]),
    "float_runtime_pairs": ([4, 3], FLOAT32, _IDX([[[3, 2], [0, 0], [1, 2]], [[2, 1], [3, 0], [0, 2]]]), False, INT32,
                            ["RESHAPE", "SLICE", "MUL", "SLICE", "ADD", "RESHAPE", "GATHER"]),
    "int32_const_int64_rows": ([5, 6], INT32, _IDX([[4], [1], [4]]), True, INT64, ["GATHER"]),
    "int32_runtime_rows": ([5, 2, 3], INT32, _IDX([[1], [4]]), False, INT32, ["RESHAPE", "GATHER"]),
    "int8_runtime_triples": ([2, 3, 4], INT8, _IDX([[1, 2, 3], [0, 0, 1], [1, 1, 0], [0, 2, 2]]), False, INT32,
                             ["RESHAPE", "SLICE", "MUL", "SLICE", "MUL", "ADD", "SLICE", "ADD", "RESHAPE", "GATHER"]),
    "one_tuple": ([3, 4], FLOAT32, _IDX([2]), True, INT32, ["GATHER", "RESHAPE"]),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(GATHER_ND_CASES))
def test_gather_nd_against_numpy_and_litert(case):
    """GATHER_ND is GATHER of row numbers: constant indices (int64 too)
    linearised at import, int32 tensors by SLICE, MUL, ADD; exact for
    float32, int32 and int8."""
    shape, ptype, idx, constant, itype, ops = GATHER_ND_CASES[case]
    data = gather_nd_model(shape, ptype, idx, constant, itype)
    m = import_tflite(data)
    assert op_names(m) == ops
    rng = np.random.default_rng(14)
    dtype = {FLOAT32: np.float32, INT32: np.int32, INT8: np.int8}[ptype]
    params = (rng.uniform(-5, 5, shape) if ptype == FLOAT32 else rng.integers(-100, 100, shape)).astype(dtype)
    xs = [params] if constant else [params, idx.astype(np.int32)]
    got = nnc.compile(m).run(*xs)[0]
    want = params[tuple(np.moveaxis(idx, -1, 0))]
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)
    lite = litert(data, xs)
    if lite is not None:
        np.testing.assert_array_equal(got, lite[0])


def test_gather_nd_refusals():
    """Constant indices out of range, and int64 indices computed at run time
    (NNAPI has no int64 tensor), are reported."""
    for idx, constant, itype, why in ((_IDX([[3, 0]]), True, INT32, "out of range"),
                                      (_IDX([[1, 0]]), False, INT64, "must be int32")):  # fmt: skip
        with pytest.raises(UnsupportedOperatorsError) as info:
            import_tflite(gather_nd_model([3, 4], FLOAT32, idx, constant, itype))
        assert why in info.value.problems[0][2]


def cumsum_model(shape, tfl_type: int, axis: int, exclusive: bool, reverse: bool) -> bytes:
    b = TFLiteBuilder()
    x = b.tensor("x", shape, tfl_type)
    a = b.tensor("axis", [], INT32, np.array(axis))
    y = b.tensor("y", shape, tfl_type)
    b.op("CUMSUM", [x, a], [y], ("CumsumOptions", {"Exclusive": exclusive, "Reverse": reverse}))
    return b.build([x], [y])


def _cumsum(x: np.ndarray, axis: int, exclusive: bool, reverse: bool) -> np.ndarray:
    v = np.flip(x, axis) if reverse else x
    s = np.cumsum(v, axis, dtype=np.float64 if x.dtype.kind == "f" else np.int64)
    s = s - v if exclusive else s
    return np.flip(s, axis) if reverse else s


CUMSUM_CASES = {
    **{f"float_last_{e:d}{r:d}": ([3, 7], FLOAT32, 1, e, r, ["BATCH_MATMUL"])
       for e in (False, True) for r in (False, True)},
    "float_first_reverse": ([6, 4], FLOAT32, 0, False, True, ["BATCH_MATMUL"]),
    "float_middle_exclusive": ([2, 5, 3], FLOAT32, 1, True, False, ["BATCH_MATMUL"]),
    "float_rank4_axis2": ([1, 2, 9, 3], FLOAT32, -2, False, False, ["RESHAPE", "BATCH_MATMUL", "RESHAPE"]),
    "int32_last_reverse_exclusive": ([2, 3, 10], INT32, -1, True, True, ["RESHAPE", "BATCH_MATMUL", "RESHAPE"]),
    "int32_rank1": ([9], INT32, 0, False, False, ["RESHAPE", "BATCH_MATMUL", "RESHAPE"]),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CUMSUM_CASES))
def test_cumsum_against_numpy_and_litert(case):
    """CUMSUM is a product by a constant triangular 0/1 matrix: int32
    exactly (values whose float32 sums would round), float32 within the
    model zoo's criterion; exclusive and reverse."""
    shape, tfl_type, axis, exclusive, reverse, ops = CUMSUM_CASES[case]
    data = cumsum_model(shape, tfl_type, axis, exclusive, reverse)
    m = import_tflite(data)
    assert op_names(m) == ops
    rng = np.random.default_rng(15)
    if tfl_type == INT32:
        x = rng.integers(-(10**8), 10**8, shape).astype(np.int32)
    else:
        x = rng.uniform(-5, 5, shape).astype(np.float32)
    got = nnc.compile(m).run(x)[0]
    want = _cumsum(x, axis, exclusive, reverse)
    lite = litert(data, [x])
    if tfl_type == INT32:
        np.testing.assert_array_equal(got, want)
        if lite is not None:
            np.testing.assert_array_equal(got, lite[0])
        return
    tol = 1e-4 * np.abs(want).max()
    assert np.abs(got - want).max() <= tol
    if lite is not None:
        assert np.abs(got - lite[0]).max() <= tol


def test_cumsum_refusals():
    """A CUMSUM whose repeated matrix would be too large, and one of a
    quantised tensor, are reported."""
    with pytest.raises(UnsupportedOperatorsError) as info:
        import_tflite(cumsum_model([300, 200, 2], FLOAT32, 1, False, False))
    assert "the matrix would hold" in info.value.problems[0][2]
    b = TFLiteBuilder()
    x = b.tensor("x", [2, 3], INT8, scale=0.1, zero_point=0)
    a = b.tensor("axis", [], INT32, np.array(1))
    y = b.tensor("y", [2, 3], INT8, scale=0.1, zero_point=0)
    b.op("CUMSUM", [x, a], [y], ("CumsumOptions", {}))
    with pytest.raises(UnsupportedOperatorsError) as info:
        import_tflite(b.build([x], [y]))
    assert "float32 or int32 only" in info.value.problems[0][2]


def _csr(dense: np.ndarray, column_major: bool = False) -> tuple[np.ndarray, Sparsity]:
    """A 2-D array in TFLite's sparse format: a DENSE dimension, then a
    SPARSE_CSR one (rows then columns, or the other way round)."""
    d = dense.T if column_major else dense
    outer, inner = np.nonzero(d)
    segments = np.concatenate([[0], np.cumsum(np.count_nonzero(d, axis=1))])
    order = [1, 0] if column_major else [0, 1]
    return d[outer, inner], Sparsity(order, [], [d.shape[0], (segments.tolist(), inner.tolist())])


def _block_csr(dense: np.ndarray, width: int) -> tuple[np.ndarray, Sparsity]:
    """1 x ``width`` blocks (the layout of TFLite's sparse FULLY_CONNECTED
    kernels): DENSE rows, SPARSE_CSR blocks of a row, DENSE inside a block;
    uint8 index vectors."""
    units, depth = dense.shape
    blocks = dense.reshape(units, depth // width, width)
    rows, cols = np.nonzero(np.abs(blocks).sum(-1))
    segments = np.concatenate([[0], np.cumsum(np.count_nonzero(np.abs(blocks).sum(-1), axis=1))])
    return blocks[rows, cols].reshape(-1), Sparsity([0, 1, 2], [1], [units, (segments.tolist(), cols.tolist()), width], 3)


def sparse_fc_model(wv: np.ndarray, encode, tfl_type: int = FLOAT32) -> bytes:
    """FULLY_CONNECTED of an input [2, depth] by the DENSIFY of ``wv``
    stored sparse (``encode`` of it); int8 at scales 0.05 (input), 0.02
    (weights), 0.2 (output)."""
    units, depth = wv.shape
    values, sparsity = encode(wv)
    q = (lambda s: {"scale": s, "zero_point": 0}) if tfl_type == INT8 else (lambda s: {})
    b = TFLiteBuilder()
    x = b.tensor("x", [2, depth], tfl_type, **q(0.05))
    ws = b.tensor("w_sparse", [units, depth], tfl_type, values, sparsity=sparsity, **q(0.02))
    w = b.tensor("w", [units, depth], tfl_type, **q(0.02))
    bias_q = {"scale": 0.05 * 0.02, "zero_point": 0} if tfl_type == INT8 else {}
    bias_type = INT32 if tfl_type == INT8 else FLOAT32
    bias = b.tensor("b", [units], bias_type, np.arange(units) - 2, **bias_q)
    y = b.tensor("y", [2, units], tfl_type, **q(0.2))
    b.op("DENSIFY", [ws], [w])
    b.op("FULLY_CONNECTED", [x, w, bias], [y], ("FullyConnectedOptions", {}))
    return b.build([x], [y])


def _sparse_weights(units: int, depth: int, tfl_type: int, width: int = 1) -> np.ndarray:
    """Weights with about two thirds of their (1 x ``width``) blocks zero."""
    rng = np.random.default_rng(16)
    keep = np.repeat(rng.uniform(size=(units, depth // width)) < 0.35, width, axis=1)
    if tfl_type == INT8:
        return (rng.integers(-127, 128, (units, depth)) * keep).astype(np.int8)
    return (rng.uniform(-1, 1, (units, depth)) * keep).astype(np.float32)


DENSIFY_CASES = {
    "csr": (lambda wv: _csr(wv), FLOAT32, 1),
    "csr_column_major": (lambda wv: _csr(wv, column_major=True), FLOAT32, 1),
    "block_1x4_uint8_indices": (lambda wv: _block_csr(wv, 4), FLOAT32, 4),
    "int8_csr": (lambda wv: _csr(wv), INT8, 1),
}


@pytest.mark.parametrize("case", sorted(DENSIFY_CASES))
def test_densify_of_sparse_weights_is_folded(case):
    """DENSIFY of a sparse constant (CSR, CSR in column order, 1x4 blocks,
    int8) becomes the dense constant at import: the FULLY_CONNECTED alone
    is left, with exactly the dense weights; against numpy and LiteRT."""
    encode, tfl_type, width = DENSIFY_CASES[case]
    wv = _sparse_weights(6, 16, tfl_type, width)
    data = sparse_fc_model(wv, encode, tfl_type)
    result = translate_tflite(data)
    assert [o.nnapi for o in result.operators] == [[], ["FULLY_CONNECTED"]] and not result.problems
    assert "folded" in result.operators[0].note
    m = result.model
    assert np.array_equal(m.operands[m.operations[0].inputs[1]].value, wv)
    rng = np.random.default_rng(17)
    if tfl_type == INT8:
        x = rng.integers(-128, 128, (2, 16)).astype(np.int8)
        got = nnc.compile(m).run(x)[0].astype(np.int32)
        acc = x.astype(np.int64) @ wv.T.astype(np.int64) + (np.arange(6) - 2)
        want = np.clip(np.round(acc * 0.05 * 0.02 / 0.2), -128, 127)
        assert np.abs(got - want).max() <= 1
        lite = litert(data, [x])
        if lite is not None:
            assert np.abs(got - lite[0]).max() <= 1
        return
    x = rng.uniform(-1, 1, (2, 16)).astype(np.float32)
    got = nnc.compile(m).run(x)[0]
    np.testing.assert_allclose(got, x.astype(np.float64) @ wv.T + (np.arange(6) - 2), rtol=1e-5, atol=1e-5)
    lite = litert(data, [x])
    if lite is not None:
        np.testing.assert_allclose(got, lite[0], rtol=1e-5, atol=1e-5)


def test_densify_refusals():
    """A DENSIFY that is a model output is reported (a model output cannot be
    a constant); sparse values that do not fill the stored positions are a
    malformed file."""
    wv = _sparse_weights(3, 4, FLOAT32)
    values, sparsity = _csr(wv)
    b = TFLiteBuilder()
    ws = b.tensor("w_sparse", [3, 4], FLOAT32, values, sparsity=sparsity)
    w = b.tensor("w", [3, 4], FLOAT32)
    b.op("DENSIFY", [ws], [w])
    with pytest.raises(UnsupportedOperatorsError) as info:
        import_tflite(b.build([], [w]))
    assert "DENSIFY as a model output" in info.value.problems[0][2]
    b.tensors[ws].buffer = len(b.buffers)
    b.buffers.append(np.ones(values.size + 1, np.float32).tobytes())
    with pytest.raises(nnc.BadDataError, match="sparse values for"):
        import_tflite(b.build([], [w]))


def test_hard_swish_is_one_operation_from_level_4():
    assert op_names(import_tflite(_float_model("HARD_SWISH", 1, [2, 3]))) == ["HARD_SWISH"]


@pytest.mark.parametrize("level", [8, 3])
def test_int8_leaky_relu_is_prelu_with_quantised_alpha(level):
    """As the delegate maps it: PRELU whose alpha is the integer 1 at scale alpha."""
    b = TFLiteBuilder()
    x = b.tensor("x", [2, 50], INT8, scale=0.05, zero_point=-10)
    y = b.tensor("y", [2, 50], INT8, scale=0.04, zero_point=20)
    b.op("LEAKY_RELU", [x], [y], ("LeakyReluOptions", {"Alpha": 0.2}))
    data = b.build([x], [y])
    m = import_tflite(data, feature_level=level)
    assert op_names(m) == ["PRELU"]
    alpha = m.operands[m.operations[0].inputs[1]]
    assert alpha.scale == pytest.approx(0.2) and alpha.zero_point == 0 and int(alpha.value[0]) == 1
    xq = np.arange(-128, 128, 256 / 100).astype(np.int8).reshape(2, 50)
    feed = xq if level >= 4 else (xq.astype(np.int16) + 128).astype(np.uint8)
    got = nnc.compile(m).run(feed)[0].astype(np.int32) - (0 if level >= 4 else 128)
    real = (xq.astype(np.float64) + 10) * 0.05
    want = np.clip(np.round(np.where(real > 0, real, 0.2 * real) / 0.04) + 20, -128, 127)
    assert np.abs(got - want).max() <= 1
    lite = litert(data, [xq])
    if lite is not None:
        assert np.abs(got - lite[0]).max() <= 1


# -- more of the delegate's table: ELU, FILL, PACK and the stateful recurrent builtins -------------------
def _recurrent_model(name: str, options, batch=2, size=3, units=4, steps=5, memory=3, rank=1) -> bytes:
    """A float recurrent builtin with random weights and a variable state."""
    rng = np.random.default_rng(9)
    b = TFLiteBuilder()

    def const(label, shape):
        return b.tensor(label, shape, FLOAT32, rng.uniform(-0.5, 0.5, shape))

    if name == "RNN":
        x, out = b.tensor("x", [batch, size], FLOAT32), [batch, units]
        ins = [x, const("w", [units, size]), const("r", [units, units]), const("b", [units]),
               b.tensor("h", [batch, units], FLOAT32, variable=True)]
    elif name == "UNIDIRECTIONAL_SEQUENCE_RNN":
        x, out = b.tensor("x", [batch, steps, size], FLOAT32), [batch, steps, units]
        ins = [x, const("w", [units, size]), const("r", [units, units]), const("b", [units]),
               b.tensor("h", [batch, units], FLOAT32, variable=True)]
    elif name == "SVDF":
        filters = units * rank
        x, out = b.tensor("x", [batch, size], FLOAT32), [batch, units]
        ins = [x, const("wf", [filters, size]), const("wt", [filters, memory]), const("b", [units]),
               b.tensor("s", [batch, memory * filters], FLOAT32, variable=True)]
    elif name == "BIDIRECTIONAL_SEQUENCE_RNN":
        x, out = b.tensor("x", [batch, steps, size], FLOAT32), [batch, steps, units]
        cell = [[const(f"{d}w", [units, size]), const(f"{d}r", [units, units]), const(f"{d}b", [units]),
                 b.tensor(f"{d}h", [batch, units], FLOAT32, variable=True)] for d in "fb"]  # fmt: skip
        ins = [x, *cell[0], *cell[1], -1, -1, -1]
    elif name == "BIDIRECTIONAL_SEQUENCE_LSTM":
        x, out = b.tensor("x", [batch, steps, size], FLOAT32), [batch, steps, units]
        cells = [[*(const(f"{d}i{k}", [units, size]) for k in range(4)), *(const(f"{d}r{k}", [units, units])
                  for k in range(4)), -1, -1, -1, *(const(f"{d}b{k}", [units]) for k in range(4)), -1, -1]
                 for d in "fb"]  # fmt: skip
        states = [b.tensor(f"s{k}", [batch, units], FLOAT32, variable=True) for k in range(4)]
        ins = [x, *cells[0], *cells[1], *states, *([-1] * 9)]
    else:  # LSTM, no peepholes, no projection
        x, out = b.tensor("x", [batch, size], FLOAT32), [batch, units]
        gates = [const(f"i{k}", [units, size]) for k in range(4)] + [const(f"r{k}", [units, units]) for k in range(4)]
        ins = [x, *gates, -1, -1, -1, *(const(f"b{k}", [units]) for k in range(4)), -1, -1,
               b.tensor("h", [batch, units], FLOAT32, variable=True), b.tensor("c", [batch, units], FLOAT32, variable=True)]
    ys = [b.tensor("y", out, FLOAT32)]
    if name.startswith("BIDIRECTIONAL"):
        ys.append(b.tensor("y_bw", out, FLOAT32))
    b.op(name, ins, ys, options)
    return b.build([x], ys)


RECURRENT = {
    "RNN": ("RNNOptions", {"FusedActivationFunction": 1}),  # NNAPI RNN takes a FuseCode: no TANH
    "UNIDIRECTIONAL_SEQUENCE_RNN": ("SequenceRNNOptions", {"FusedActivationFunction": 1, "TimeMajor": False}),
    "SVDF": ("SVDFOptions", {"Rank": 1, "FusedActivationFunction": 1}),
    "LSTM": ("LSTMOptions", {"FusedActivationFunction": 4, "CellClip": 0.0, "ProjClip": 0.0}),
    "BIDIRECTIONAL_SEQUENCE_RNN": ("BidirectionalSequenceRNNOptions", {"FusedActivationFunction": 1}),
    "BIDIRECTIONAL_SEQUENCE_LSTM": ("BidirectionalSequenceLSTMOptions", {"FusedActivationFunction": 4, "TimeMajor": False,
                                                                          "CellClip": 5.0}),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(RECURRENT))
def test_recurrent_builtins_with_explicit_state(name):
    """The state is an extra input (zero at first) and its final value an
    extra output, as for UNIDIRECTIONAL_SEQUENCE_LSTM; two runs feeding the
    state back equal LiteRT's two invoke()s."""
    data = _recurrent_model(name, RECURRENT[name])
    m = import_tflite(data)
    assert op_names(m) == [{"RNN": "RNN", "SVDF": "SVDF", "LSTM": "LSTM"}.get(name, name)]
    n_state = {"LSTM": 2, "BIDIRECTIONAL_SEQUENCE_RNN": 2, "BIDIRECTIONAL_SEQUENCE_LSTM": 4}.get(name, 1)
    n_out = 2 if name.startswith("BIDIRECTIONAL") else 1
    assert len(m.inputs) == 1 + n_state and len(m.outputs) == n_out + n_state
    x = np.random.default_rng(10).uniform(-1, 1, m.operands[m.inputs[0]].dims).astype(np.float32)
    zeros = [np.zeros(m.operands[i].dims, np.float32) for i in m.inputs[1:]]
    compiled = nnc.compile(m)
    first = compiled.run(x, *zeros)
    second = compiled.run(x, *first[n_out:])
    try:
        from ai_edge_litert import interpreter
    except ImportError:
        assert np.abs(second[0] - first[0]).max() > 0  # the state is used
        return
    it = interpreter.Interpreter(model_content=data, num_threads=1,
                                 experimental_op_resolver_type=interpreter.OpResolverType.BUILTIN_REF)  # fmt: skip
    it.allocate_tensors()
    for got in (first, second):
        it.set_tensor(it.get_input_details()[0]["index"], x)
        it.invoke()
        for k, d in enumerate(it.get_output_details()):
            np.testing.assert_allclose(got[k], it.get_tensor(d["index"]), rtol=1e-5, atol=1e-6)


def test_elu_fill_pack():
    b = TFLiteBuilder()
    x = b.tensor("x", [2, 3], FLOAT32)
    e = b.tensor("e", [2, 3], FLOAT32)
    dims = b.tensor("dims", [2], INT32, np.array([2, 3]))
    val = b.tensor("val", [], FLOAT32, np.array(1.5))
    f = b.tensor("f", [2, 3], FLOAT32)
    y = b.tensor("y", [2, 2, 3], FLOAT32)
    b.op("ELU", [x], [e])
    b.op("FILL", [dims, val], [f])
    b.op("PACK", [e, f], [y], ("PackOptions", {"ValuesCount": 2, "Axis": -2}))
    data = b.build([x], [y])
    m = import_tflite(data)
    assert op_names(m) == ["ELU", "FILL", "PACK"]
    xv = np.random.default_rng(1).uniform(-2, 2, (2, 3)).astype(np.float32)
    got = nnc.compile(m).run(xv)[0]
    elu = np.where(xv > 0, xv, np.expm1(xv.astype(np.float64)))
    want = np.stack([elu, np.full((2, 3), 1.5)], axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    lite = litert(data, [xv], reference=False)  # LiteRT's reference resolver has no ELU
    if lite is not None:
        np.testing.assert_allclose(got, lite[0], rtol=1e-5, atol=1e-6)


def test_int8_transpose_conv_with_one_scale_is_made_per_channel():
    """TFLite's int8 TRANSPOSE_CONV is per-channel even with one filter scale
    (the delegate forces it too): the scale is repeated, the bias scale is 0."""
    b = TFLiteBuilder()
    shape = b.tensor("shape", [4], INT32, np.array([1, 4, 4, 2]))
    w = b.tensor("w", [2, 2, 2, 3], INT8, np.ones((2, 2, 2, 3)), scale=0.1, zero_point=0)
    x = b.tensor("x", [1, 2, 2, 3], INT8, scale=0.5, zero_point=1)
    bias = b.tensor("bias", [2], INT32, np.array([3, 4]), scale=0.05, zero_point=0)
    y = b.tensor("y", [1, 4, 4, 2], INT8, scale=0.25, zero_point=0)
    b.op("TRANSPOSE_CONV", [shape, w, x, bias], [y], ("TransposeConvOptions", {"Padding": 1, "StrideW": 2,
                                                                              "StrideH": 2}))  # fmt: skip
    m = translate_tflite(b.build([x], [y])).model
    ins = [m.operands[i] for i in m.operations[0].inputs]
    assert ins[1].type == T.TENSOR_QUANT8_SYMM_PER_CHANNEL and ins[1].channel_quant[1] == 0
    assert ins[1].channel_quant[0] == pytest.approx((0.1, 0.1))
    assert ins[2].scale == 0.0 and list(ins[2].value) == [3, 4]


def test_topk_v2_maps_with_k_as_a_scalar():
    b = TFLiteBuilder()
    x = b.tensor("x", [2, 6], FLOAT32)
    k = b.tensor("k", [], INT32, np.array(3))
    v = b.tensor("v", [2, 3], FLOAT32)
    i = b.tensor("i", [2, 3], INT32)
    b.op("TOPK_V2", [x, k], [v, i])
    data = b.build([x], [v, i])
    m = translate_tflite(data).model
    assert op_names(m) == ["TOPK_V2"]
    kop = m.operands[m.operations[0].inputs[1]]
    assert kop.type == T.INT32 and int(kop.value) == 3

    def ref(xv):
        order = np.argsort(-xv, axis=-1, kind="stable")[:, :3]
        return np.take_along_axis(xv, order, -1)

    _check_runs_or_is_reported(data, Op.TOPK_V2, ref)


def test_padv2_without_a_value_is_pad():
    b = TFLiteBuilder()
    x = b.tensor("x", [2, 3], FLOAT32)
    p = b.tensor("p", [2, 2], INT32, np.array([[1, 0], [0, 2]]))
    y = b.tensor("y", [3, 5], FLOAT32)
    b.op("PADV2", [x, p, -1], [y])
    m = import_tflite(b.build([x], [y]))
    assert op_names(m) == ["PAD"]
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(nnc.compile(m).run(xv)[0], np.pad(xv, ((1, 0), (0, 2))))


def test_requantize_is_dequantize_then_quantize():
    """NNAPI's QUANTIZE takes float only; int8 -> int8 with another scale goes
    through float (within one unit of LiteRT's integer requantisation)."""
    b = TFLiteBuilder()
    x = b.tensor("x", [1, 64], INT8, scale=0.05, zero_point=3)
    y = b.tensor("y", [1, 64], INT8, scale=0.07, zero_point=-5)
    b.op("QUANTIZE", [x], [y])
    data = b.build([x], [y])
    m = import_tflite(data)
    assert op_names(m) == ["DEQUANTIZE", "QUANTIZE"]
    xq = np.arange(-128, 128, 4, dtype=np.int16).astype(np.int8).reshape(1, 64)
    got = nnc.compile(m).run(xq)[0].astype(np.int32)
    want = np.clip(np.round((xq.astype(np.float64) - 3) * 0.05 / 0.07) - 5, -128, 127)
    assert np.abs(got - want).max() <= 1
    lite = litert(data, [xq])
    if lite is not None:
        assert np.abs(got - lite[0]).max() <= 1


def test_lsh_projection_dense_against_litert():
    rng = np.random.default_rng(3)
    b = TFLiteBuilder()
    h = b.tensor("hash", [4, 5], FLOAT32, rng.uniform(-1, 1, (4, 5)))
    x = b.tensor("x", [3, 2], INT32)
    w = b.tensor("w", [3], FLOAT32, np.array([0.5, 1.0, 2.0]))
    y = b.tensor("y", [20], INT32)
    b.op("LSH_PROJECTION", [h, x, w], [y], ("LSHProjectionOptions", {"Type": 2}))
    data = b.build([x], [y])
    m = import_tflite(data)
    assert op_names(m) == ["LSH_PROJECTION"] and int(m.operands[m.operations[0].inputs[3]].value) == 2
    xv = rng.integers(0, 100, (3, 2)).astype(np.int32)
    got = nnc.compile(m).run(xv)[0]
    assert set(np.unique(got)) <= {0, 1}
    lite = litert(data, [xv], reference=False)
    if lite is not None:
        np.testing.assert_array_equal(got, lite[0])


def test_docs_table_of_builtins_agrees_with_the_importer():
    """Each builtin the tables of docs/tflite.md call mapped/decomposed has a
    converter (decomposed ones in DECOMPOSITIONS); each it calls not mapped has
    none."""
    import os
    import re

    from nnc import tflite

    readme = open(os.path.join(os.path.dirname(__file__), "..", "docs", "tflite.md")).read()
    section = readme[readme.index("**The delegate's table.**"):readme.index("**State.** NNAPI models")]
    rows = re.findall(r"^\| ([A-Z0-9_]+) \| [^|]* \| ([^|]*) \|$", section, re.M)
    assert len(rows) > 80
    for name, status in rows:
        if status.startswith("not mapped"):
            assert name not in tflite.CONVERTERS, name
        else:
            assert name in tflite.CONVERTERS, name
            assert (name in tflite.DECOMPOSITIONS) == status.startswith("decomposed"), name


@pytest.mark.parametrize("per_channel", [False, True])
def test_int8_transpose_conv_matches_litert_once_lowered(per_channel):
    """An int8 TRANSPOSE_CONV (one filter scale, made per-channel, or a scale
    per channel): reported until nnc lowers TRANSPOSE_CONV_2D for signed
    quant8, then within one unit of LiteRT's reference kernel."""
    rng = np.random.default_rng(0)
    b = TFLiteBuilder()
    shape = b.tensor("shape", [4], INT32, np.array([1, 9, 9, 4]))
    scales = [0.02, 0.03, 0.01, 0.05] if per_channel else [0.02]
    zps = [0] * len(scales)
    w = b.tensor("w", [4, 3, 3, 3], INT8, rng.integers(-127, 128, (4, 3, 3, 3)), scale=scales, zero_point=zps)
    x = b.tensor("x", [1, 4, 4, 3], INT8, scale=0.1, zero_point=2)
    bias = b.tensor("bias", [4], INT32, rng.integers(-300, 300, 4), scale=np.array(scales) * 0.1, zero_point=zps)
    y = b.tensor("y", [1, 9, 9, 4], INT8, scale=0.3, zero_point=-3)
    b.op("TRANSPOSE_CONV", [shape, w, x, bias], [y], ("TransposeConvOptions", {"Padding": 1, "StrideW": 2,
                                                                              "StrideH": 2}))  # fmt: skip
    data = b.build([x], [y])
    if T.TENSOR_QUANT8_ASYMM_SIGNED not in SPECS[Op.TRANSPOSE_CONV_2D].implemented:
        with pytest.raises(UnsupportedOperatorsError) as info:
            import_tflite(data)
        assert "mapped to NNAPI TRANSPOSE_CONV_2D, which nnc cannot compile yet" in info.value.problems[0][2]
        return
    xq = rng.integers(-128, 128, (1, 4, 4, 3)).astype(np.int8)
    got = nnc.compile(import_tflite(data)).run(xq)[0].astype(np.int32)
    want = litert(data, [xq])
    if want is None:
        pytest.skip("ai_edge_litert (the 'bench' extra) is not installed")
    assert np.abs(got - want[0]).max() <= 1


def test_float16_constant_that_is_a_model_output_is_cast_not_folded():
    """A model output cannot be a constant: there the DEQUANTIZE is a CAST."""
    b = TFLiteBuilder()
    x = b.tensor("x", [2], FLOAT32)
    c16 = b.tensor("c16", [2], FLOAT16, np.array([0.5, -2.0]))
    c = b.tensor("c", [2], FLOAT32)
    y = b.tensor("y", [2], FLOAT32)
    b.op("DEQUANTIZE", [c16], [c])
    b.op("ADD", [x, c], [y], ("AddOptions", {}))
    result = translate_tflite(b.build([x], [y, c]))
    assert [o.nnapi for o in result.operators] == [["CAST"], ["ADD"]]


def _int8_one(name: str, in_shapes, out_shape, options=None, consts=(), out_q=(0.1, 3)) -> bytes:
    """One int8 operator (inputs at scale 0.1, zero point 3), then int32 constants."""
    b = TFLiteBuilder()
    ins = [b.tensor(f"x{k}", s, INT8, scale=0.1, zero_point=3) for k, s in enumerate(in_shapes)]
    cs = [b.tensor(f"c{k}", np.shape(v), INT32, v) for k, v in enumerate(consts)]
    y = b.tensor("y", out_shape, INT8, scale=out_q[0], zero_point=out_q[1])
    b.op(name, [*ins, *cs], [y], options)
    return b.build(ins, [y])


INT8_BLOCKS = {
    "resize_half_pixel": lambda: _int8_one("RESIZE_BILINEAR", [[1, 4, 4, 3]], [1, 8, 8, 3], ("ResizeBilinearOptions", {
        "HalfPixelCenters": True}), [np.array([8, 8], np.int32)]),
    "concat": lambda: _int8_one("CONCATENATION", [[1, 4, 4, 3], [1, 4, 4, 2]], [1, 4, 4, 5],
                                ("ConcatenationOptions", {"Axis": 3})),
    "softmax": lambda: _int8_one("SOFTMAX", [[1, 4, 4, 4]], [1, 4, 4, 4], ("SoftmaxOptions", {"Beta": 1.0}),
                                 out_q=(1 / 256, -128)),
    "mean": lambda: _int8_one("MEAN", [[1, 4, 4, 4]], [1, 4], ("ReducerOptions", {}), [np.array([1, 2], np.int32)],
                              out_q=(0.05, -2)),
    "add": lambda: _int8_one("ADD", [[1, 4, 4, 4], [1, 4, 4, 4]], [1, 4, 4, 4], ("AddOptions", {}), out_q=(0.15, -2)),
    "max_pool": lambda: _int8_one("MAX_POOL_2D", [[1, 4, 4, 2]], [1, 2, 2, 2], ("Pool2DOptions", {
        "Padding": 1, "StrideW": 2, "StrideH": 2, "FilterWidth": 2, "FilterHeight": 2})),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(INT8_BLOCKS))
def test_int8_building_blocks_against_litert(case):
    """The other int8 operators of an int8 U-Net / MobileNetV2, within one
    unit of LiteRT's reference kernels."""
    pytest.importorskip("ai_edge_litert.interpreter")
    data = INT8_BLOCKS[case]()
    m = import_tflite(data)
    rng = np.random.default_rng(13)
    xs = [rng.integers(-128, 128, m.operands[i].dims).astype(np.int8) for i in m.inputs]
    got = nnc.compile(m).run(*xs)[0].astype(np.int32)
    assert np.abs(got - litert(data, xs)[0]).max() <= 1
