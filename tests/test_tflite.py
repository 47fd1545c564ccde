"""TFLite import (issue 5): every model in ../shared/models against LiteRT's
stored outputs, through the Python runtime and through the C artifact path;
the mapping of types, quantisation and options; the all-at-once report of
operators nnc cannot take.
"""

from __future__ import annotations

import glob
import mmap
import os
import sys
from dataclasses import replace

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc.cli import main as nnc_main
from nnc.dialects.optable import SPECS
from nnc.model import dtype_of
from nnc.tflite import UnsupportedOperatorsError, import_tflite
from tflite_builder import FLOAT16, FLOAT32, INT8, INT32, UINT8, TFLiteBuilder, single_operator_model

# the model benchmark's accuracy criterion is the one these tests check
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import model_bench

MODELS_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "models")
#: every model of the shared folder and of its import-next/ (the models nnc
#: could not import when they were added); a missing folder falls back to
#: names that must exist, so that it fails instead of testing nothing
ZOO = sorted(
    os.path.relpath(p, MODELS_DIR)[: -len(".tflite")]
    for pattern in ("*.tflite", "import-next/*.tflite")
    for p in glob.glob(os.path.join(MODELS_DIR, pattern))
) or [
    "mobilenet_v1_0.5_160_float32", "mobilenet_v2_1.0_224_float32", "lstm_textcls_float32",
    "mobilenet_v1_0.5_160_int8", "mobilenet_v2_0.35_96_fp16w", "text_encoder_float32", "tiny_unet_64_float32",
]  # fmt: skip
#: models of import-next/ that nnc does not import yet, and why: each fails
#: its tests as expected (strict: one that starts importing fails the suite
#: until it is taken off this list)
NOT_YET = {
}
ZOO_CASES = [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=NOT_YET[n])) if n in NOT_YET else n
             for n in ZOO]  # fmt: skip
TOKEN = bytes(range(32))


def zoo_path(name: str, suffix: str) -> str:
    path = os.path.join(MODELS_DIR, name + suffix)
    if not os.path.exists(path):
        pytest.fail(f"{path} is missing: the model zoo lives in ../shared/models beside the repository")
    return path


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory) -> str:
    """One compilation cache for the whole run (shared by xdist workers)."""
    root = tmp_path_factory.getbasetemp()
    root = root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root
    path = root / "nnc-model-cache"
    path.mkdir(exist_ok=True)
    return str(path)


def zoo_inputs(model: nnc.Model, io) -> list[np.ndarray]:
    """The stored input, then zeros for the state inputs (the first run)."""
    rest = [np.zeros(model.operands[i].dims, dtype_of(model.operands[i].type)) for i in model.inputs[1:]]
    return [io["input_0"], *rest]


def run(model: nnc.Model, inputs: list[np.ndarray], cache_dir: str, threads: int | None = None) -> list[np.ndarray]:
    """The model's outputs for ``inputs`` (compiled through the cache; at
    ``threads`` threads if given, else the default)."""
    comp = nnc.Compilation(model)
    comp.set_caching(cache_dir, TOKEN)
    comp.finish()
    return execute(model, comp, inputs, threads)


def execute(model: nnc.Model, comp: nnc.Compilation, inputs: list[np.ndarray], threads: int | None = None) -> list[np.ndarray]:
    """One computation of a finished compilation of ``model`` (at ``threads``
    threads if given, else the default): its outputs."""
    ex = nnc.Execution(comp)
    if threads is not None:
        ex.set_num_threads(threads)
    outs = [np.zeros(model.operands[i].dims, dtype_of(model.operands[i].type)) for i in model.outputs]
    for k, x in enumerate(inputs):
        ex.set_input(k, x)
    for k, y in enumerate(outs):
        ex.set_output(k, y)
    ex.compute()
    return outs


def assert_matches_reference(got: np.ndarray, ref: np.ndarray, hybrid: bool = False) -> None:
    """LiteRT's stored output within the model benchmark's tolerance
    (:func:`model_bench.check`: float outputs within 1e-4 of the largest
    reference value with the same argmax; quantised outputs within twice the
    spread of LiteRT's own kernels), in the reference's dtype."""
    assert got.shape == ref.shape and got.dtype == ref.dtype
    try:
        model_bench.check(got, ref, hybrid)
    except model_bench.Mismatch as e:
        pytest.fail(str(e))


@pytest.mark.parametrize("name", ZOO_CASES)
def test_model_zoo_matches_litert(name, cache_dir):
    model = import_tflite(zoo_path(name, ".tflite"))
    io = np.load(zoo_path(name, ".io.npz"))
    outs = run(model, zoo_inputs(model, io), cache_dir)
    assert_matches_reference(outs[0], io["output_0"], model_bench.is_hybrid(zoo_path(name, ".tflite")))


def test_lstm_state_is_the_compiled_models_own(cache_dir):
    """Run with its one input, the LSTM keeps its variable tensors between
    runs as LiteRT does between invoke()s: zero at first, carried over,
    back to zero after reset_state()."""
    path = zoo_path("lstm_textcls_float32", ".tflite")
    model = import_tflite(path)
    assert model.state == [(1, 1), (2, 2)]
    io = np.load(zoo_path("lstm_textcls_float32", ".io.npz"))
    tokens = io["input_0"]
    compiled = nnc.CompiledModel(model, cache_dir)
    assert all(not v.any() for v in compiled.state.values())
    first = compiled.run(tokens)
    after_first = compiled.state
    second = compiled.run(tokens)
    assert len(first) == 1 and first[0].shape == io["output_0"].shape
    assert_matches_reference(first[0], io["output_0"])
    explicit = compiled.run(tokens, *[np.zeros((1, 128), np.float32)] * 2)  # every input: explicit state
    assert len(explicit) == 3 and np.array_equal(explicit[0], first[0])
    assert list(after_first) == ["op1.output_state", "op1.cell_state"]
    for carried, out in zip(after_first.values(), explicit[1:]):
        assert carried.any() and np.array_equal(carried, out)  # the carried state is the state outputs
    again = compiled.run(tokens, *explicit[1:])
    assert np.array_equal(again[0], second[0]) and not np.array_equal(again[1], explicit[1])
    assert list(compiled.run_named(tokens)) == ["probs"]
    compiled.reset_state()
    assert np.array_equal(compiled.run(tokens=tokens)[0], first[0])
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError:
        return
    it = Interpreter(model_path=path, num_threads=1)
    it.allocate_tensors()
    lite = []
    for _ in range(2):
        it.set_tensor(it.get_input_details()[0]["index"], tokens)
        it.invoke()
        lite.append(it.get_tensor(it.get_output_details()[0]["index"]).copy())
    for got, want in zip((first[0], second[0]), lite):
        assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max()
    assert not np.array_equal(lite[0], lite[1])  # LiteRT's state moves its output by ~3e-8


def test_model_state_survives_a_model_file(tmp_path):
    model = import_tflite(zoo_path("lstm_textcls_float32", ".tflite"))
    path = tmp_path / "lstm.nnc"
    model.save(str(path))
    assert nnc.Model.load(str(path)).state == [(1, 1), (2, 2)]
    import json

    data = json.loads(path.read_text())
    for bad in ([[1, 1], [1, 2]], [[3, 0]], [[1, "x"]], "state"):
        data["state"] = bad
        path.write_text(json.dumps(data))
        with pytest.raises(nnc.BadDataError, match="state must be"):
            nnc.Model.load(str(path))


def test_lstm_state_is_explicit_and_carries_over(cache_dir):
    """The LSTM's variable tensors are state inputs (zero on the first run)
    and state outputs; feeding the outputs back continues the sequence."""
    model = import_tflite(zoo_path("lstm_textcls_float32", ".tflite"))
    assert model.input_names[0] == "tokens" and model.output_names[0] == "probs"
    assert len(model.inputs) == 3 and len(model.outputs) == 3
    assert [model.operands[i].dims for i in model.inputs[1:]] == [(1, 128), (1, 128)]
    assert model.input_names[1:] == ["op1.output_state", "op1.cell_state"]
    assert model.output_names[1:] == ["op1.output_state:out", "op1.cell_state:out"]
    io = np.load(zoo_path("lstm_textcls_float32", ".io.npz"))
    first = run(model, zoo_inputs(model, io), cache_dir)
    h, c = first[1], first[2]
    assert np.abs(h).max() > 0 and np.abs(c).max() <= 10.0  # cell clip 10
    second = run(model, [io["input_0"], h, c], cache_dir)
    assert not np.array_equal(second[1], first[1])  # the state is really used
    np.testing.assert_allclose(second[0], first[0], atol=1e-6)  # LiteRT: moves by ~3e-8


def test_zoo_names_and_shapes():
    m = import_tflite(zoo_path("mobilenet_v2_1.0_224_float32", ".tflite"))
    assert m.input_names == ["image"] and m.output_names == ["probs"]
    assert m.operands[m.inputs[0]].dims == (1, 224, 224, 3)
    counts: dict[str, int] = {}
    for op in m.operations:
        counts[Op(op.type).name] = counts.get(Op(op.type).name, 0) + 1
    assert counts == {"CONV_2D": 35, "DEPTHWISE_CONV_2D": 17, "ADD": 10, "MEAN": 1,
                      "FULLY_CONNECTED": 1, "SOFTMAX": 1}  # fmt: skip


@pytest.mark.parametrize("name", ZOO_CASES)
def test_model_zoo_through_c_artifact(name, tmp_path):
    """`nnc compile model.tflite` -> shared library -> a C program."""
    from test_c_abi import CC

    if CC is None:
        pytest.skip("no C compiler on PATH")
    check_through_c_artifact(name, tmp_path)


def check_through_c_artifact(name: str, tmp_path) -> None:
    from test_c_abi import build_caller, run_caller

    lib = str(tmp_path / "libm.so")
    assert nnc_main(["compile", zoo_path(name, ".tflite"), "-o", lib]) == 0
    model = import_tflite(zoo_path(name, ".tflite"))
    io = np.load(zoo_path(name, ".io.npz"))
    exe = build_caller(tmp_path, str(tmp_path / "libm.h"), [lib, f"-Wl,-rpath,{tmp_path}"])
    outs, _ = run_caller(exe, tmp_path, model, zoo_inputs(model, io), lib + ".weights")
    assert_matches_reference(outs[0], io["output_0"], model_bench.is_hybrid(zoo_path(name, ".tflite")))


# -- mapping details, on small generated flatbuffers --------------------------------------------------
def conv_model(act: int = 3, padding: int = 0, with_bias: bool = True) -> bytes:
    rng = np.random.default_rng(1)
    b = TFLiteBuilder()
    x = b.tensor("in", [1, 5, 5, 2], FLOAT32)
    w = b.tensor("w", [3, 3, 3, 2], FLOAT32, rng.normal(size=(3, 3, 3, 2)))
    ins = [x, w]
    if with_bias:
        ins.append(b.tensor("b", [3], FLOAT32, rng.normal(size=3)))
    y = b.tensor("out", [1, 3, 3, 3] if padding else [1, 5, 5, 3], FLOAT32)
    b.op("CONV_2D", ins, [y], ("Conv2DOptions", {"Padding": padding, "StrideW": 1, "StrideH": 1,
                                                "FusedActivationFunction": act}))  # fmt: skip
    return b.build([x], [y])


def _buffer_owner(a: np.ndarray) -> object:
    """The object at the end of an array's ``base`` chain (past a memoryview)."""
    x: object = a
    while isinstance(x, np.ndarray):
        x = x.base
    return x.obj if isinstance(x, memoryview) else x


def test_imported_weights_are_read_only_views_of_the_mapped_file(tmp_path):
    """A path is mapped, not read: every constant above 128 bytes is a view
    of the mapping, kept by the model without a copy, and read-only (a write
    raises), as are the small ones the model copied."""
    path = tmp_path / "conv.tflite"
    path.write_bytes(conv_model())
    model = import_tflite(path)
    values = [o.value for o in model.operands if o.value is not None]
    large = [v for v in values if v.nbytes > nnc.MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES]
    assert [v.shape for v in large] == [(3, 3, 3, 2)]
    for v in large:
        mapping = _buffer_owner(v)
        assert isinstance(mapping, mmap.mmap)
        assert np.shares_memory(v, np.frombuffer(mapping, np.uint8))
    assert not any(v.flags.writeable for v in values)
    with pytest.raises(ValueError, match="read-only"):
        large[0][0, 0, 0, 0] = 1.0
    np.testing.assert_array_equal(large[0], np.random.default_rng(1).normal(size=(3, 3, 3, 2)).astype(np.float32))


def test_imported_weights_from_bytes_are_views_of_the_bytes():
    data = conv_model()
    filters = [o.value for o in import_tflite(data).operands if o.value is not None and o.value.size == 54]
    assert len(filters) == 1 and _buffer_owner(filters[0]) is data


def ref_conv(x, w, bias, padding_same: bool, act):
    if padding_same:
        x = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    oh, ow = x.shape[1] - 2, x.shape[2] - 2
    out = np.zeros((1, oh, ow, w.shape[0]), np.float64)
    for i in range(oh):
        for j in range(ow):
            out[0, i, j] = np.einsum("hwc,ohwc->o", x[0, i : i + 3, j : j + 3], w) + bias
    return act(out)


@pytest.mark.parametrize("padding,act,with_bias", [(0, 3, True), (1, 0, True), (0, 1, False)])
def test_conv_mapping_padding_activation_bias(padding, act, with_bias):
    m = import_tflite(conv_model(act, padding, with_bias))
    call = m.operations[0]
    assert Op(call.type) == Op.CONV_2D
    consts = [m.operands[i].value for i in call.inputs[3:]]
    assert [int(v) for v in consts] == [1 if padding == 0 else 2, 1, 1, act]  # SAME=1/VALID=2, strides, fuse
    x = np.random.default_rng(2).uniform(-1, 1, (1, 5, 5, 2)).astype(np.float32)
    w = m.operands[call.inputs[1]].value
    bias = m.operands[call.inputs[2]].value
    if not with_bias:
        assert not np.any(bias)  # the delegate's zero bias
    fns = {0: lambda v: v, 1: lambda v: np.maximum(v, 0), 3: lambda v: np.clip(v, 0, 6)}
    want = ref_conv(x.astype(np.float64), w, bias, padding == 0, fns[act])
    got = nnc.compile(m).run(x)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def quant_add_model(tfl_type: int, zp: int) -> bytes:
    b = TFLiteBuilder()
    x = b.tensor("x", [1, 8], tfl_type, scale=0.05, zero_point=zp)
    y = b.tensor("y", [1, 8], tfl_type, scale=0.1, zero_point=zp)
    c = b.tensor("c", [1, 8], tfl_type, np.arange(8) * 3 - 12 + (128 if tfl_type == UINT8 else 0), scale=0.05,
                 zero_point=zp)  # fmt: skip
    b.op("ADD", [x, c], [y], ("AddOptions", {"FusedActivationFunction": 0}))
    return b.build([x], [y])


@pytest.mark.parametrize("level,expect", [(4, T.TENSOR_QUANT8_ASYMM_SIGNED), (3, T.TENSOR_QUANT8_ASYMM)])
def test_int8_signed_or_shifted_by_feature_level(level, expect):
    """int8 -> QUANT8_ASYMM_SIGNED; below feature level 4, shifted to QUANT8_ASYMM (+128)."""
    m = import_tflite(quant_add_model(INT8, -3), feature_level=level)
    x = m.operands[m.inputs[0]]
    assert x.type == expect and x.scale == pytest.approx(0.05)
    assert x.zero_point == (-3 if level == 4 else 125)
    xq = np.arange(-60, 100, 20, dtype=np.int16)
    real = (xq + 3) * 0.05 + (np.arange(8) * 3 - 12 + 3) * 0.05
    feed = xq.astype(np.int8) if level == 4 else (xq + 128).astype(np.uint8)
    got = nnc.compile(m).run(feed)[0].astype(np.int16) - (0 if level == 4 else 128)
    want = np.clip(np.round(real / 0.1) - 3, -128, 127)
    assert np.abs(got - want).max() <= 1  # within one unit of the output scale


def test_uint8_maps_to_quant8_asymm():
    m = import_tflite(quant_add_model(UINT8, 128))
    assert m.operands[m.inputs[0]].type == T.TENSOR_QUANT8_ASYMM


def test_per_channel_int8_filter():
    """An int8 filter with a scale per output channel is SYMM_PER_CHANNEL,
    its bias INT32 with scale 0 (NNAPI's rule), and the result is within one
    output unit of the float computation."""
    rng = np.random.default_rng(3)
    b = TFLiteBuilder()
    x = b.tensor("x", [1, 4, 4, 2], INT8, scale=0.02, zero_point=1)
    wq = rng.integers(-127, 128, (3, 1, 1, 2))
    scales = [0.01, 0.02, 0.005]
    w = b.tensor("w", [3, 1, 1, 2], INT8, wq, scale=scales, zero_point=[0, 0, 0], qdim=0)
    bq = rng.integers(-200, 200, 3)
    bias = b.tensor("b", [3], INT32, bq, scale=[0.02 * s for s in scales], zero_point=[0, 0, 0])
    y = b.tensor("y", [1, 4, 4, 3], INT8, scale=0.05, zero_point=-2)
    b.op("CONV_2D", [x, w, bias], [y], ("Conv2DOptions", {"Padding": 1, "StrideW": 1, "StrideH": 1}))
    m = import_tflite(b.build([x], [y]))
    wop = m.operands[m.operations[0].inputs[1]]
    bop = m.operands[m.operations[0].inputs[2]]
    assert wop.type == T.TENSOR_QUANT8_SYMM_PER_CHANNEL and bop.type == T.TENSOR_INT32 and bop.scale == 0.0
    xq = rng.integers(-128, 128, (1, 4, 4, 2)).astype(np.int8)
    real = np.einsum("nhwc,oc->nhwo", (xq.astype(np.float64) - 1) * 0.02, wq[:, 0, 0, :] * np.array(scales)[:, None])
    real += bq * 0.02 * np.array(scales)
    want = np.clip(np.round(real / 0.05) - 2, -128, 127)
    got = nnc.compile(m).run(xq)[0]
    assert np.abs(got.astype(np.int32) - want).max() <= 1


# -- what cannot be imported ----------------------------------------------------------------------
def test_unsupported_operators_are_all_reported_before_compiling():
    b = TFLiteBuilder()
    x = b.tensor("x", [1, 4], FLOAT32)
    y = b.tensor("y", [1, 4], FLOAT32)
    z = b.tensor("z", [1, 4], FLOAT32)
    w = b.tensor("w", [1, 4], FLOAT32)
    v = b.tensor("v", [1, 4], FLOAT32)
    b.op("ADD", [x, x], [y], ("AddOptions", {"FusedActivationFunction": 4}))  # TANH: no FuseCode
    b.op("RELU", [y], [z])  # fine
    b.op("", [z], [w], custom="MyCustomOp")
    b.op("SEGMENT_SUM", [z, w], [v])  # no NNAPI equivalent (ADD_N was; it is decomposed now)
    with pytest.raises(UnsupportedOperatorsError) as info:
        import_tflite(b.build([x], [v]))
    e = info.value
    assert e.code == nnc.ResultCode.OP_FAILED and e.function == "nnc.import_tflite"
    assert [(i, name) for i, name, _ in e.problems] == [(0, "ADD"), (2, "CUSTOM:MyCustomOp"), (3, "SEGMENT_SUM")]
    assert "TANH" in e.problems[0][2]
    assert "operator 3 (SEGMENT_SUM)" in str(e)


def test_mapped_but_not_implemented_is_reported(monkeypatch):
    """An operator that maps to NNAPI but that nnc does not compile is
    reported, naming the NNAPI operation and the reason: by the compilation
    (the import does not load the compiler), or at import when asked.  Every
    mapped operation is implemented on every type today, so the record of ADD
    is made to leave float16 out."""
    spec = SPECS[Op.ADD]
    monkeypatch.setitem(SPECS, Op.ADD, replace(spec, implemented=spec.implemented - {T.TENSOR_FLOAT16}))
    b = TFLiteBuilder()
    x = b.tensor("x", [2, 3], FLOAT16)
    y = b.tensor("y", [2, 3], FLOAT16)
    b.op("ADD", [x, x], [y], ("AddOptions", {}))
    data = b.build([x], [y])
    with pytest.raises(UnsupportedOperatorsError) as info:
        import_tflite(data, check_compiler=True)
    assert info.value.function == "nnc.import_tflite"
    assert info.value.problems[0][:2] == (0, "ADD")
    assert "NNAPI ADD" in info.value.problems[0][2] and "FLOAT16" in info.value.problems[0][2]
    model = import_tflite(data)  # the compiler is asked when it would compile
    with pytest.raises(UnsupportedOperatorsError) as info:
        nnc.compile(model)
    assert info.value.function == "ANeuralNetworksCompilation_finish" and "cannot be compiled" in info.value.message
    assert info.value.problems[0][:2] == (0, "ADD") and "FLOAT16" in info.value.problems[0][2]
    with pytest.raises(UnsupportedOperatorsError):
        nnc.compile_artifact(model, "unused.so")


def test_import_does_not_load_the_compiler(tmp_path):
    """A TFLite import leaves xDSL (the compiler) unimported: a process that
    runs only cached models never pays for it."""
    import subprocess
    import sys

    code = ("import sys, nnc; nnc.import_tflite(sys.argv[1]); "
            "print(sorted(m for m in sys.modules if m == 'xdsl' or m == 'nnc.driver'))")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code, zoo_path("mobilenet_v1_0.5_160_int8", ".tflite")],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("data,what", [(b"", "not a TFLite"), (b"\0" * 64, "not a TFLite"),
                                       (b"1234TFL3" + b"\xff" * 40, "not a valid")])  # fmt: skip
def test_bad_files_are_bad_data(data, what):
    with pytest.raises(nnc.BadDataError) as info:
        import_tflite(data)
    assert info.value.function == "nnc.import_tflite" and what in info.value.message


def test_cli_runs_a_tflite_model_by_input_name(tmp_path, capsys):
    data = conv_model()
    path = tmp_path / "conv.tflite"
    path.write_bytes(data)
    x = np.random.default_rng(0).uniform(-1, 1, (1, 5, 5, 2)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    assert nnc_main(["run", str(path), "--input", f"in={tmp_path / 'x.npy'}", "--output-dir", str(tmp_path / "o")]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "output_0.npy"), nnc.compile(import_tflite(data)).run(x)[0])
    assert nnc_main(["info", str(path)]) == 0
    assert "input_0 (in)" in capsys.readouterr().out


def test_names_survive_the_model_file(tmp_path):
    m = import_tflite(conv_model())
    m.save(tmp_path / "m.nnc")
    back = nnc.Model.load(tmp_path / "m.nnc")
    assert (back.input_names, back.output_names) == (["in"], ["out"])


def test_quantize_dequantize_signed():
    """QUANTIZE / DEQUANTIZE through TENSOR_QUANT8_ASYMM_SIGNED (NNAPI 1.3)."""
    b = TFLiteBuilder()
    x = b.tensor("x", [1, 6], FLOAT32)
    q = b.tensor("q", [1, 6], INT8, scale=0.1, zero_point=-5)
    y = b.tensor("y", [1, 6], FLOAT32)
    b.op("QUANTIZE", [x], [q])
    b.op("DEQUANTIZE", [q], [y])
    m = import_tflite(b.build([x], [y, q]))
    assert m.operands[m.outputs[1]].type == T.TENSOR_QUANT8_ASYMM_SIGNED
    xv = np.array([[-20, -1.26, 0, 0.04, 0.16, 30]], np.float32)
    y_got, q_got = nnc.compile(m).run(xv)
    q_want = np.clip(np.floor(xv / 0.1 + 0.5) - 5, -128, 127)  # the values here have no ties
    np.testing.assert_array_equal(q_got, q_want.astype(np.int8))
    np.testing.assert_allclose(y_got, (q_want + 5) * 0.1, rtol=1e-6)


def test_lstm_second_run_matches_litert_second_invoke(cache_dir):
    """With LiteRT installed (the optional 'bench' extra): feeding the state
    outputs back gives LiteRT's second invoke(), which starts from its
    variable tensors."""
    interpreter = pytest.importorskip("ai_edge_litert.interpreter")
    path = zoo_path("lstm_textcls_float32", ".tflite")
    io = np.load(zoo_path("lstm_textcls_float32", ".io.npz"))
    it = interpreter.Interpreter(model_path=path, num_threads=1)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], io["input_0"])
    it.invoke()
    it.invoke()
    want = it.get_tensor(it.get_output_details()[0]["index"])
    model = import_tflite(path)
    first = run(model, zoo_inputs(model, io), cache_dir)
    second = run(model, [io["input_0"], first[1], first[2]], cache_dir)
    assert_matches_reference(second[0], want)
    assert np.abs(second[0] - want).max() <= 1e-6


# -- one-operator models against numpy -----------------------------------------------------------------


def _pool_ref(x, k, s, fn):
    n, h, w, c = x.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    return np.array([[[fn(x[0, i * s : i * s + k, j * s : j * s + k], axis=(0, 1)) for j in range(ow)]
                      for i in range(oh)]])  # fmt: skip


_I32 = np.int32
SINGLE_OPS = {
    "sub_relu6": (lambda: single_operator_model("SUB", [[2, 3], [2, 3]], [2, 3], ("SubOptions", {"FusedActivationFunction": 3})),
                  lambda a, b: np.clip(a - b, 0, 6)),
    "mul_broadcast": (lambda: single_operator_model("MUL", [[2, 3], [3]], [2, 3], ("MulOptions", {})), lambda a, b: a * b),
    "max_pool": (lambda: single_operator_model("MAX_POOL_2D", [[1, 4, 4, 2]], [1, 2, 2, 2], ("Pool2DOptions", {
                    "Padding": 1, "StrideW": 2, "StrideH": 2, "FilterWidth": 2, "FilterHeight": 2})),
                 lambda x: _pool_ref(x, 2, 2, np.max)),
    "avg_pool": (lambda: single_operator_model("AVERAGE_POOL_2D", [[1, 4, 4, 2]], [1, 2, 2, 2], ("Pool2DOptions", {
                    "Padding": 1, "StrideW": 2, "StrideH": 2, "FilterWidth": 2, "FilterHeight": 2})),
                 lambda x: _pool_ref(x, 2, 2, np.mean)),
    "softmax_beta": (lambda: single_operator_model("SOFTMAX", [[2, 5]], [2, 5], ("SoftmaxOptions", {"Beta": 0.5})),
                     lambda x: np.exp(0.5 * x) / np.exp(0.5 * x).sum(-1, keepdims=True)),
    "concat": (lambda: single_operator_model("CONCATENATION", [[2, 3], [2, 2]], [2, 5], ("ConcatenationOptions", {"Axis": -1})),
               lambda a, b: np.concatenate([a, b], -1)),
    "reshape": (lambda: single_operator_model("RESHAPE", [[2, 6]], [3, 4], None, [np.array([3, -1], _I32)]),
                lambda x: x.reshape(3, 4)),
    "mean_keep": (lambda: single_operator_model("MEAN", [[1, 3, 4, 2]], [1, 1, 1, 2], ("ReducerOptions", {"KeepDims": True}),
                                  [np.array([1, 2], _I32)]), lambda x: x.mean((1, 2), keepdims=True)),
    "transpose": (lambda: single_operator_model("TRANSPOSE", [[2, 3, 4]], [4, 2, 3], None, [np.array([2, 0, 1], _I32)]),
                  lambda x: x.transpose(2, 0, 1)),
    "pad": (lambda: single_operator_model("PAD", [[2, 3]], [3, 6], None, [np.array([[1, 0], [2, 1]], _I32)]),
            lambda x: np.pad(x, ((1, 0), (2, 1)))),
    "strided_slice_shrink": (lambda: single_operator_model("STRIDED_SLICE", [[1, 5, 3]], [1, 3], ("StridedSliceOptions", {
                                 "ShrinkAxisMask": 2}), [np.array([0, -1, 0], _I32), np.array([0, 0, 0], _I32),
                                                         np.array([1, 1, 1], _I32)]),
                             lambda x: x[:, -1, :]),
    "space_to_depth": (lambda: single_operator_model("SPACE_TO_DEPTH", [[1, 4, 4, 1]], [1, 2, 2, 4], ("SpaceToDepthOptions", {
                           "BlockSize": 2})),
                       lambda x: x.reshape(1, 2, 2, 2, 2, 1).transpose(0, 1, 3, 2, 4, 5).reshape(1, 2, 2, 4)),
    "logistic": (lambda: single_operator_model("LOGISTIC", [[2, 4]], [2, 4]), lambda x: 1 / (1 + np.exp(-x))),
    "relu_n1_to_1": (lambda: single_operator_model("RELU_N1_TO_1", [[2, 4]], [2, 4]), lambda x: np.clip(x, -1, 1)),
    "l2norm": (lambda: single_operator_model("L2_NORMALIZATION", [[2, 4]], [2, 4]),
               lambda x: x / np.sqrt((x * x).sum(-1, keepdims=True))),
    "mirror_pad_reflect": (lambda: single_operator_model("MIRROR_PAD", [[3, 4]], [5, 7], ("MirrorPadOptions", {"Mode": 0}),
                                                         [np.array([[1, 1], [2, 1]], _I32)]),
                           lambda x: np.pad(x, ((1, 1), (2, 1)), mode="reflect")),
    "mirror_pad_symmetric": (lambda: single_operator_model("MIRROR_PAD", [[3, 4]], [5, 7], ("MirrorPadOptions", {"Mode": 1}),
                                                           [np.array([[1, 1], [2, 1]], _I32)]),
                             lambda x: np.pad(x, ((1, 1), (2, 1)), mode="symmetric")),
    "square": (lambda: single_operator_model("SQUARE", [[2, 5]], [2, 5]), lambda x: x * x),
    "floor_div": (lambda: single_operator_model("FLOOR_DIV", [[2, 5], [5]], [2, 5]), lambda a, b: np.floor(a / b)),
    "broadcast_to_rank": (lambda: single_operator_model("BROADCAST_TO", [[3]], [2, 3], None, [np.array([2, 3], _I32)]),
                          lambda x: np.broadcast_to(x, (2, 3))),
    "broadcast_to_dim": (lambda: single_operator_model("BROADCAST_TO", [[2, 1, 4]], [2, 3, 4], None,
                                                       [np.array([2, 3, 4], _I32)]), lambda x: np.broadcast_to(x, (2, 3, 4))),
    "reverse_v2": (lambda: single_operator_model("REVERSE_V2", [[2, 3, 4]], [2, 3, 4], None, [np.array([-1], _I32)]),
                   lambda x: x[:, :, ::-1]),
    "reverse_v2_two_axes": (lambda: single_operator_model("REVERSE_V2", [[2, 3, 4]], [2, 3, 4], None,
                                                          [np.array([0, 2], _I32)]), lambda x: x[::-1, :, ::-1]),
}  # fmt: skip


def _multi_output_model(name: str, in_shape: list[int], out_shapes: list[list[int]], options=None, consts=()) -> bytes:
    """One float TFLite operator with several outputs (SPLIT_V, UNPACK)."""
    b = TFLiteBuilder()
    x = b.tensor("x", in_shape, FLOAT32)
    cs = [b.tensor(f"c{k}", np.shape(v), INT32, v) for k, v in enumerate(consts)]
    ys = [b.tensor(f"y{k}", s, FLOAT32) for k, s in enumerate(out_shapes)]
    b.op(name, [x, *cs], ys, options)
    return b.build([x], ys)


@pytest.mark.parametrize(
    "build,ref",
    [
        (lambda: _multi_output_model("SPLIT_V", [2, 7, 3], [[2, 2, 3], [2, 4, 3], [2, 1, 3]],
                                     ("SplitVOptions", {"NumSplits": 3}), [np.array([2, -1, 1], _I32), np.array(-2, _I32)]),
         lambda x: np.split(x, [2, 6], axis=1)),
        (lambda: _multi_output_model("UNPACK", [2, 3, 4], [[2, 4]] * 3, ("UnpackOptions", {"Num": 3, "Axis": 1})),
         lambda x: [x[:, k, :] for k in range(3)]),
    ],
    ids=["split_v", "unpack"],
)  # fmt: skip
def test_multi_output_operator_against_numpy(build, ref):
    m = import_tflite(build())
    x = np.random.default_rng(3).uniform(-2, 2, m.operands[m.inputs[0]].dims).astype(np.float32)
    got = nnc.compile(m).run(x)
    want = ref(x)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_floor_mod_int32_against_numpy():
    """FLOOR_MOD of int32 (with a broadcast divisor, negative operands and
    INT32_MIN mod -1) is numpy's remainder, the sign of the divisor's."""
    b = TFLiteBuilder()
    x = b.tensor("x", [2, 4], INT32)
    d = b.tensor("d", [4], INT32)
    y = b.tensor("y", [2, 4], INT32)
    b.op("FLOOR_MOD", [x, d], [y])
    m = import_tflite(b.build([x, d], [y]))
    xv = np.array([[7, -7, 7, -7], [np.iinfo(np.int32).min, 5, -1, 0]], np.int32)
    dv = np.array([3, 3, -3, -1], np.int32)
    np.testing.assert_array_equal(nnc.compile(m).run(xv, dv)[0], np.remainder(xv, dv))


@pytest.mark.parametrize("out_type,dtype", [(FLOAT32, np.float32), (INT32, np.int32)], ids=["float32", "int32"])
def test_one_hot_against_numpy(out_type, dtype):
    """ONE_HOT along a new last axis, out-of-range indices all off."""
    b = TFLiteBuilder()
    idx = b.tensor("idx", [2, 3], INT32)
    depth = b.tensor("depth", [], INT32, np.array(4, _I32))
    on = b.tensor("on", [], out_type, np.array(5, dtype))
    off = b.tensor("off", [], out_type, np.array(-1, dtype))
    y = b.tensor("y", [2, 3, 4], out_type)
    b.op("ONE_HOT", [idx, depth, on, off], [y], ("OneHotOptions", {"Axis": -1}))
    m = import_tflite(b.build([idx], [y]))
    iv = np.array([[0, 3, 1], [4, -1, 2]], np.int32)
    want = np.where(iv[..., None] == np.arange(4), 5, -1).astype(dtype)
    np.testing.assert_array_equal(nnc.compile(m).run(iv)[0], want)


def test_shape_and_range_fold_into_constants():
    """SHAPE of a static tensor and RANGE of constants become constants at
    import: here RESHAPE's target and a float sequence added to the input."""
    b = TFLiteBuilder()
    x = b.tensor("x", [2, 3], FLOAT32)
    z = b.tensor("z", [6], FLOAT32)
    s = b.tensor("s", [2], INT32)
    b.op("SHAPE", [x], [s], ("ShapeOptions", {"OutType": INT32}))
    y = b.tensor("y", [2, 3], FLOAT32)
    b.op("RESHAPE", [z, s], [y])
    r = b.tensor("r", [6], INT32)
    start, limit, delta = (b.tensor(n, [], INT32, np.array(v, _I32)) for n, v in (("start", 0), ("limit", 12), ("delta", 2)))
    b.op("RANGE", [start, limit, delta], [r])
    rf = b.tensor("rf", [6], FLOAT32)
    b.op("CAST", [r], [rf])
    out = b.tensor("out", [6], FLOAT32)
    b.op("ADD", [z, rf], [out], ("AddOptions", {}))
    m = import_tflite(b.build([x, z], [y, out]))
    assert [Op(op.type) for op in m.operations] == [Op.RESHAPE, Op.CAST, Op.ADD]
    xv, zv = np.ones((2, 3), np.float32), np.arange(6, dtype=np.float32) / 4
    got = nnc.compile(m).run(xv, zv)
    np.testing.assert_array_equal(got[0], zv.reshape(2, 3))
    np.testing.assert_array_equal(got[1], zv + np.arange(0, 12, 2, dtype=np.float32))


@pytest.mark.parametrize("case", sorted(SINGLE_OPS))
def test_single_operator_against_numpy(case):
    build, ref = SINGLE_OPS[case]
    m = import_tflite(build())
    rng = np.random.default_rng(7)
    xs = [rng.uniform(-2, 2, m.operands[i].dims).astype(np.float32) for i in m.inputs]
    got = nnc.compile(m).run(*xs)[0]
    want = ref(*[x.astype(np.float64) for x in xs])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _custom_model(code: str) -> bytes:
    """x -> custom operator ``code`` -> y (float32 [2, 3])."""
    b = TFLiteBuilder()
    x = b.tensor("x", [2, 3], FLOAT32)
    y = b.tensor("y", [2, 3], FLOAT32)
    b.op("", [x], [y], custom=code)
    return b.build([x], [y])


@pytest.fixture
def custom_registry():
    """The process-wide registry of custom-operator converters, restored
    after the test (another test checks that every converter is a record's
    or a decomposition)."""
    from nnc.tflite import converters

    saved = dict(converters.CONVERTERS), dict(converters.CUSTOM_OPS)
    yield
    for table, contents in zip((converters.CONVERTERS, converters.CUSTOM_OPS), saved):
        table.clear()
        table.update(contents)


def test_a_registered_custom_operator_imports(custom_registry):
    """Refused (naming it and the registry) before register_custom, imported
    through the registered converter after; a second registration, a name
    with the 'CUSTOM:' prefix and the built-in detection post-processing are
    refused."""
    from nnc import tflite

    data = _custom_model("TestTwiceAndAHalf")
    with pytest.raises(UnsupportedOperatorsError) as e:
        import_tflite(data)
    assert "operator 0 (CUSTOM:TestTwiceAndAHalf)" in str(e.value) and "register_custom" in str(e.value)

    def twice_and_a_half(c: tflite.OperatorCall) -> None:
        double = c.temporary(0, c.tensor(0).shape)
        c.emit(Op.ADD, [c.input(0), c.input(0), c.int32(0)], [double])
        c.emit(Op.ADD, [double, c.constant(np.full([1], 0.5, np.float32), T.TENSOR_FLOAT32), c.int32(0)])

    tflite.register_custom("TestTwiceAndAHalf", twice_and_a_half)
    m = import_tflite(data)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(nnc.compile(m).run(x)[0], 2 * x + 0.5)
    for code in ("TestTwiceAndAHalf", "TFLite_Detection_PostProcess", "CUSTOM:Other", ""):
        with pytest.raises(nnc.BadDataError, match="register_custom"):
            tflite.register_custom(code, twice_and_a_half)


def test_a_failing_custom_converter_is_reported_not_raised(custom_registry):
    """A registered converter that raises is the operator's import problem."""
    from nnc import tflite

    def broken(c: tflite.OperatorCall) -> None:
        raise KeyError("no such option")

    tflite.register_custom("TestBroken", broken)
    with pytest.raises(UnsupportedOperatorsError, match="converter registered for it failed: KeyError"):
        import_tflite(_custom_model("TestBroken"))
