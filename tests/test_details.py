"""Model details in Python (issue 18, item 2): ``Model.input_details`` /
``output_details``, ``CompiledModel.inputs`` / ``outputs``, inputs by name."""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc import ResultCode
from nnc.details import TensorDetails, unique_names

MODELS_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "models")
MODELS = sorted(glob.glob(os.path.join(MODELS_DIR, "*.tflite")))


def test_the_model_zoo_is_there():
    assert MODELS, f"no .tflite in {MODELS_DIR}: the model zoo lives in ../shared/models beside the repository"


@pytest.mark.parametrize("path", MODELS, ids=os.path.basename)
def test_details_of_every_shared_model_match_its_reference_data(path):
    """No compilation: details come from the imported model.  Each input and
    output agrees with the reference .io.npz (input_K / output_K arrays)."""
    model = nnc.load_model(path)
    ref = np.load(path.removesuffix(".tflite") + ".io.npz")
    for kind, details in (("input", model.input_details), ("output", model.output_details)):
        assert [d.position for d in details] == list(range(len(details)))
        assert len({d.name for d in details}) == len(details)  # every name selects one tensor
        for d in details:
            assert isinstance(d, TensorDetails)
            assert d.operand == (model.inputs if kind == "input" else model.outputs)[d.position]
            assert d.name and d.type.is_tensor and d.dtype == nnc.operand_types.dtype_of(d.type)
            key = f"{kind}_{d.position}"
            if key in ref:  # the LSTM's state tensors have no reference arrays
                assert d.shape == ref[key].shape and d.dtype == ref[key].dtype, d.describe()
            if d.quantized:
                assert d.scale > 0 and d.channel_scales is None
    assert model.input_details[0].name != "input_0"  # TFLite signature names are used


def test_quantised_details_carry_scale_and_zero_point():
    [d] = nnc.load_model(os.path.join(MODELS_DIR, "mobilenet_v1_0.5_160_int8.tflite")).input_details
    assert d.type == T.TENSOR_QUANT8_ASYMM_SIGNED and d.dtype == np.int8
    assert d.scale > 0 and -128 <= d.zero_point <= 127
    assert "scale=" in d.describe()


def test_per_channel_and_unknown_dimensions():
    m = nnc.Model()
    x = m.add_operand(T.TENSOR_QUANT8_ASYMM_SIGNED, [0, 2, 2, 2], 0.5, 3)
    w = m.add_operand(T.TENSOR_QUANT8_SYMM_PER_CHANNEL, [2, 1, 1, 2])
    m.set_operand_symm_per_channel_quant_params(w, [0.25, 0.5], 0)
    b = m.add_operand(T.TENSOR_INT32, [2])
    m.set_operand_value(b, np.zeros(2, np.int32))
    scalars = []
    for v in (0, 0, 0, 0, 1, 1, 0):
        s = m.add_operand(T.INT32)
        m.set_operand_value(s, v)
        scalars.append(s)
    o = m.add_operand(T.TENSOR_QUANT8_ASYMM_SIGNED, [0, 0, 0, 0], 1.0, 0)
    m.add_operation(Op.CONV_2D, [x, w, b, *scalars], [o])
    m.identify_inputs_and_outputs([x, w], [o])
    m.finish()
    dx, dw = m.input_details
    assert dx.shape == (None, 2, 2, 2) and dx.nnapi_dims == (0, 2, 2, 2)
    assert (dx.scale, dx.zero_point, dx.channel_scales) == (0.5, 3, None)
    assert dw.channel_scales == (0.25, 0.5) and dw.channel_dim == 0 and dw.scale == 0.0
    assert "per-channel" in dw.describe()
    assert m.output_details[0].describe() == "output_0: TENSOR_QUANT8_ASYMM_SIGNED[?x?x?x?] int8 scale=1 zero_point=0"


def test_unique_names_fall_back_to_positions():
    assert unique_names(["a", "b"], 2, "input") == ["a", "b"]
    assert unique_names(None, 2, "input") == ["input_0", "input_1"]
    assert unique_names(["a", "a", ""], 3, "output") == ["output_0", "output_1", "output_2"]
    assert unique_names(["input_1", "x"], 2, "input") == ["input_0", "x"]  # a name that is another's position


@pytest.fixture(scope="module")
def named_add() -> nnc.CompiledModel:
    m = nnc.Model()
    a = m.add_operand(T.TENSOR_FLOAT32, [2])
    b = m.add_operand(T.TENSOR_FLOAT32, [2])
    act = m.add_operand(T.INT32)
    m.set_operand_value(act, 0)
    o = m.add_operand(T.TENSOR_FLOAT32, [2])
    m.add_operation(Op.SUB, [a, b, act], [o])
    m.identify_inputs_and_outputs([a, b], [o])
    m.finish()
    m.input_names = ["x", "serving_default_y:0"]
    m.output_names = ["diff"]
    return nnc.compile(m)


def test_compiled_model_details_and_run_by_name(named_add):
    assert [d.name for d in named_add.inputs] == ["x", "serving_default_y:0"]
    assert [d.name for d in named_add.outputs] == ["diff"]
    assert named_add.inputs == named_add.model.input_details
    x, y = np.array([5, 7], np.float32), np.array([1, 2], np.float32)
    expected = np.array([4, 5], np.float32)
    np.testing.assert_array_equal(named_add.run(x, y)[0], expected)
    np.testing.assert_array_equal(named_add.run(x=x, **{"serving_default_y:0": y})[0], expected)
    np.testing.assert_array_equal(named_add.run(**{"serving_default_y:0": y, "x": x})[0], expected)
    np.testing.assert_array_equal(named_add.run(x, input_1=y)[0], expected)
    out = named_add.run_named(input_0=x, input_1=y)
    assert list(out) == ["diff"]
    np.testing.assert_array_equal(out["diff"], expected)


@pytest.mark.parametrize(
    "args, kwargs, message",
    [
        ((), {"x": 1}, "missing input(s): serving_default_y:0"),
        ((), {"z": 1}, "unknown input 'z'"),
        ((np.zeros(2, np.float32),), {"x": 1, "input_1": 1}, "given twice"),
        ((1, 2, 3), {"x": 1}, "has 2 inputs"),
    ],
)
def test_run_by_name_mistakes_are_bad_data(named_add, args, kwargs, message):
    with pytest.raises(nnc.BadDataError) as e:
        named_add.run(*args, **kwargs)
    assert e.value.code == ResultCode.BAD_DATA and e.value.function == "nnc.CompiledModel.run"
    assert message in str(e.value)
