"""The public API's state rules and argument validation (NDK result codes)."""

from __future__ import annotations

import mmap
import os

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc import ResultCode


def add_model(dims=(2, 2), out_dims=None, finish=True) -> nnc.Model:
    m = nnc.Model()
    a = m.add_operand(T.TENSOR_FLOAT32, list(dims))
    b = m.add_operand(T.TENSOR_FLOAT32, list(dims))
    act = m.add_operand(T.INT32)
    m.set_operand_value(act, 0)
    o = m.add_operand(T.TENSOR_FLOAT32, list(out_dims if out_dims is not None else dims))
    m.add_operation(Op.ADD, [a, b, act], [o])
    m.identify_inputs_and_outputs([a, b], [o])
    if finish:
        m.finish()
    return m


def expect(exc_type, code: ResultCode, function: str):
    class _Ctx:
        def __enter__(self):
            self.cm = pytest.raises(exc_type)
            self.info = self.cm.__enter__()
            return self.info

        def __exit__(self, *a):
            r = self.cm.__exit__(*a)
            assert self.info.value.code == code
            assert self.info.value.function == function
            return r

    return _Ctx()


def test_errors_carry_code_and_function():
    m = nnc.Model()
    with expect(nnc.BadDataError, ResultCode.BAD_DATA, "ANeuralNetworksModel_addOperand"):
        m.add_operand(99)
    assert issubclass(nnc.UnsupportedOperationError, nnc.OpFailedError)
    assert issubclass(nnc.OpFailedError, nnc.NNError)


def test_enums_have_ndk_values():
    assert len([o for o in Op if o != Op.OEM_OPERATION]) == 106
    assert Op.REVERSE == 105 and Op.OEM_OPERATION == 10000
    assert len(T) == 16 and T.MODEL == 15
    assert len(ResultCode) == 15 and ResultCode.DEAD_OBJECT == 14
    assert nnc.FeatureLevel.LEVEL_8 == 1000008
    assert nnc.Priority.DEFAULT == nnc.Priority.MEDIUM == 100


def test_modifying_finished_model_is_bad_state():
    m = add_model()
    with expect(nnc.BadStateError, ResultCode.BAD_STATE, "ANeuralNetworksModel_addOperand"):
        m.add_operand(T.TENSOR_FLOAT32, [1])
    with expect(nnc.BadStateError, ResultCode.BAD_STATE, "ANeuralNetworksModel_finish"):
        m.finish()


@pytest.mark.parametrize(
    "type_,dims,scale,zp",
    [
        (T.INT32, [2], 0.0, 0),  # scalar with dimensions
        (T.TENSOR_QUANT8_ASYMM, [2], 0.0, 0),  # zero scale
        (T.TENSOR_QUANT8_ASYMM, [2], 1.0, 256),  # zero point out of range
        (T.TENSOR_QUANT8_ASYMM_SIGNED, [2], 1.0, 128),
        (T.TENSOR_FLOAT32, [2], 0.5, 0),  # float with a scale
        (T.TENSOR_QUANT8_SYMM, [2], 1.0, 3),
    ],
)
def test_add_operand_validates_type(type_, dims, scale, zp):
    with expect(nnc.BadDataError, ResultCode.BAD_DATA, "ANeuralNetworksModel_addOperand"):
        nnc.Model().add_operand(type_, dims, scale, zp)


def test_set_operand_value_checks_size_and_index():
    m = nnc.Model()
    t = m.add_operand(T.TENSOR_FLOAT32, [2])
    with expect(nnc.BadDataError, ResultCode.BAD_DATA, "ANeuralNetworksModel_setOperandValue"):
        m.set_operand_value(t, np.zeros(3, np.float32))
    with expect(nnc.BadDataError, ResultCode.BAD_DATA, "ANeuralNetworksModel_setOperandValue"):
        m.set_operand_value(5, np.zeros(2, np.float32))
    with expect(nnc.BadDataError, ResultCode.BAD_DATA, "ANeuralNetworksModel_setOperandValue"):
        m.set_operand_value(t, b"\0" * 7)


def test_small_values_are_copied():
    m = nnc.Model()
    t = m.add_operand(T.TENSOR_FLOAT32, [2])
    v = np.ones(2, np.float32)
    m.set_operand_value(t, v)
    v[:] = 5
    assert m.operands[t].value.tolist() == [1.0, 1.0]


def test_add_operation_checks_counts_and_indexes():
    m = nnc.Model()
    a = m.add_operand(T.TENSOR_FLOAT32, [2])
    with expect(nnc.BadDataError, ResultCode.BAD_DATA, "ANeuralNetworksModel_addOperation"):
        m.add_operation(Op.ADD, [a, a], [a])  # ADD takes 3 inputs
    with expect(nnc.BadDataError, ResultCode.BAD_DATA, "ANeuralNetworksModel_addOperation"):
        m.add_operation(Op.ADD, [a, a, 7], [a])
    with expect(nnc.BadDataError, ResultCode.BAD_DATA, "ANeuralNetworksModel_addOperation"):
        m.add_operation(12345, [a], [a])


def test_failed_finish_is_sticky_but_failed_setters_are_not():
    m = add_model(finish=False)
    with pytest.raises(nnc.BadDataError):
        m.add_operand(T.INT32, [3])
    m.finish()  # C6: the rejected call changed nothing
    bad = add_model(dims=(2, 2), out_dims=(3, 2), finish=False)
    with pytest.raises(nnc.BadDataError):
        bad.finish()
    with expect(nnc.BadStateError, ResultCode.BAD_STATE, "ANeuralNetworksModel_finish"):
        bad.finish()  # C18


def test_finish_rejects_bad_graphs():
    # an operation reading an operand nobody writes
    m = nnc.Model()
    a = m.add_operand(T.TENSOR_FLOAT32, [2])
    t = m.add_operand(T.TENSOR_FLOAT32, [2])
    act = m.add_operand(T.INT32)
    m.set_operand_value(act, 0)
    o = m.add_operand(T.TENSOR_FLOAT32, [2])
    m.add_operation(Op.ADD, [a, t, act], [o])
    m.identify_inputs_and_outputs([a], [o])
    with expect(nnc.BadDataError, ResultCode.BAD_DATA, "ANeuralNetworksModel_finish"):
        m.finish()
    # no outputs identified
    m = nnc.Model()
    a = m.add_operand(T.TENSOR_FLOAT32, [2])
    m.identify_inputs_and_outputs([a], [])
    with expect(nnc.BadDataError, ResultCode.BAD_DATA, "ANeuralNetworksModel_finish"):
        m.finish()


def test_finish_rejects_shape_mismatch_naming_the_operation():
    m = add_model(dims=(2, 2), out_dims=(3, 2), finish=False)
    with pytest.raises(nnc.BadDataError, match=r"operation 0 \(ADD\)"):
        m.finish()


def test_finish_sorts_operations():
    m = nnc.Model()
    a = m.add_operand(T.TENSOR_FLOAT32, [2])
    t = m.add_operand(T.TENSOR_FLOAT32, [2])
    o = m.add_operand(T.TENSOR_FLOAT32, [2])
    m.add_operation(Op.RELU, [t], [o])
    m.add_operation(Op.TANH, [a], [t])
    m.identify_inputs_and_outputs([a], [o])
    m.finish()
    assert [op.type for op in m.operations] == [Op.TANH, Op.RELU]
    x = np.array([-1.0, 2.0], np.float32)
    [y] = nnc.compile(m).run(x)
    np.testing.assert_allclose(y, np.maximum(np.tanh(x), 0), rtol=1e-6)


def test_cycle_is_rejected():
    m = nnc.Model()
    a = m.add_operand(T.TENSOR_FLOAT32, [2])
    t = m.add_operand(T.TENSOR_FLOAT32, [2])
    u = m.add_operand(T.TENSOR_FLOAT32, [2])
    m.add_operation(Op.RELU, [u], [t])
    m.add_operation(Op.TANH, [t], [u])
    m.identify_inputs_and_outputs([a], [u])
    with pytest.raises(nnc.BadDataError, match="cycle"):
        m.finish()


def test_compilation_requires_finished_model():
    with expect(nnc.BadStateError, ResultCode.BAD_STATE, "ANeuralNetworksCompilation_create"):
        nnc.Compilation(add_model(finish=False))
    with expect(nnc.UnexpectedNullError, ResultCode.UNEXPECTED_NULL, "ANeuralNetworksCompilation_create"):
        nnc.Compilation(None)


def test_compilation_settings_validated():
    c = nnc.Compilation(add_model())
    with expect(nnc.BadDataError, ResultCode.BAD_DATA, "ANeuralNetworksCompilation_setPreference"):
        c.set_preference(40)
    with expect(nnc.BadDataError, ResultCode.BAD_DATA, "ANeuralNetworksCompilation_setPriority"):
        c.set_priority(101)
    with expect(nnc.BadDataError, ResultCode.BAD_DATA, "ANeuralNetworksCompilation_setCaching"):
        c.set_caching("/tmp", b"short")
    c.set_caching("/tmp", bytes(32))
    c.finish()
    with expect(nnc.BadStateError, ResultCode.BAD_STATE, "ANeuralNetworksCompilation_setPreference"):
        c.set_preference(nnc.Preference.LOW_POWER)


def test_execution_argument_checks():
    c = nnc.Compilation(add_model())
    c.finish()
    ex = nnc.Execution(c)
    x = np.ones((2, 2), np.float32)
    with expect(nnc.BadDataError, ResultCode.BAD_DATA, "ANeuralNetworksExecution_setInput"):
        ex.set_input(2, x)
    with expect(nnc.BadDataError, ResultCode.BAD_DATA, "ANeuralNetworksExecution_setInput"):
        ex.set_input(0, np.ones(5, np.float32))
    with expect(nnc.BadDataError, ResultCode.BAD_DATA, "ANeuralNetworksExecution_setInput"):
        ex.set_input(0, np.ones((2, 2), np.float64))
    with expect(nnc.BadDataError, ResultCode.BAD_DATA, "ANeuralNetworksExecution_setInput"):
        ex.set_input(0, x, [4])
    ex.set_input(0, x)
    with expect(nnc.BadStateError, ResultCode.BAD_STATE, "ANeuralNetworksExecution_setInput"):
        ex.set_input(0, x)
    with expect(nnc.BadDataError, ResultCode.BAD_DATA, "ANeuralNetworksExecution_setOutput"):
        ex.set_output(0, np.zeros(5, np.float32))
    with expect(nnc.BadDataError, ResultCode.BAD_DATA, "ANeuralNetworksExecution_compute"):
        ex.compute()  # input 1 and output 0 not set


def test_execution_computes_once_and_reports_dims():
    c = nnc.Compilation(add_model())
    c.finish()
    ex = nnc.Execution(c)
    with expect(nnc.BadStateError, ResultCode.BAD_STATE, "ANeuralNetworksExecution_getOutputOperandRank"):
        ex.get_output_operand_rank(0)
    x = np.arange(4, dtype=np.float32).reshape(2, 2)
    y = np.zeros((2, 2), np.float32)
    ex.set_input(0, x)
    ex.set_input(1, x)
    ex.set_output(0, y)
    ex.compute()
    np.testing.assert_array_equal(y, 2 * x)
    assert ex.get_output_operand_rank(0) == 2
    assert ex.get_output_operand_dimensions(0) == [2, 2]
    with expect(nnc.BadStateError, ResultCode.BAD_STATE, "ANeuralNetworksExecution_compute"):
        ex.compute()


def test_output_insufficient_size_reports_real_dims():
    m = add_model(dims=(2, 3), out_dims=(0, 0))
    c = nnc.Compilation(m)
    c.finish()
    ex = nnc.Execution(c)
    x = np.ones((2, 3), np.float32)
    ex.set_input(0, x)
    ex.set_input(1, x)
    ex.set_output(0, np.zeros(4, np.float32))
    with expect(nnc.OutputInsufficientSizeError, ResultCode.OUTPUT_INSUFFICIENT_SIZE, "ANeuralNetworksExecution_compute"):
        ex.compute()
    assert ex.get_output_operand_dimensions(0) == [2, 3]


def test_unspecified_input_dims_compile_per_shape():
    m = add_model(dims=(0, 2), out_dims=(0, 2))
    c = nnc.Compilation(m)
    c.finish()
    for rows in (1, 3, 1):
        x = np.ones((rows, 2), np.float32)
        y = np.zeros((rows, 2), np.float32)
        ex = nnc.Execution(c)
        ex.set_input(0, x, [rows, 2])
        ex.set_input(1, x)
        ex.set_output(0, y)
        ex.compute()
        np.testing.assert_array_equal(y, 2 * x)
    assert len(c._variants) == 2


def test_unsupported_operation_names_op_and_types(monkeypatch):
    from nnc.passes.lowering import LOWERINGS

    monkeypatch.delitem(LOWERINGS, Op.ADD)  # pretend ADD had no lowering
    c = nnc.Compilation(add_model(dims=(2, 3)))
    with pytest.raises(nnc.UnsupportedOperationError) as info:
        c.finish()
    assert info.value.operation_index == 0
    assert info.value.operation_type == Op.ADD
    assert info.value.function == "ANeuralNetworksCompilation_finish"
    assert "TENSOR_FLOAT32[2x3]" in str(info.value)


def test_model_file_round_trip(tmp_path):
    m = add_model()
    path = tmp_path / "m.nnc"
    m.save(path)
    m2 = nnc.Model.load(path)
    x = np.ones((2, 2), np.float32)
    np.testing.assert_array_equal(nnc.compile(m2).run(x, x)[0], 2 * x)
    path.write_text('{"format": "nnc-model", "version": 1, "operands": [{"type": "NOPE"}]}')
    with pytest.raises(nnc.BadDataError):
        nnc.Model.load(path)
    path.write_bytes(b"\x00\xff garbage")
    with pytest.raises(nnc.BadDataError):
        nnc.Model.load(path)


def _add_with_activation_input() -> nnc.Model:
    """ADD of two [2] tensors whose activation is a scalar model input."""
    m = nnc.Model()
    a, b = (m.add_operand(T.TENSOR_FLOAT32, [2]) for _ in range(2))
    act = m.add_operand(T.INT32)
    out = m.add_operand(T.TENSOR_FLOAT32, [2])
    m.add_operation(Op.ADD, [a, b, act], [out])
    m.identify_inputs_and_outputs([a, b, act], [out])
    m.finish()
    return m


def test_scalar_model_input_is_compiled_in_per_value():
    """A scalar model input (here ADD's activation) is specialised on its
    value; its function argument stays, unused, so the ABI is unchanged."""
    m = _add_with_activation_input()
    cm = nnc.compile(m)
    x, y = np.array([1, -5], np.float32), np.array([1, 2], np.float32)
    np.testing.assert_array_equal(cm.run(x, y, np.array(0, np.int32))[0], [2, -3])
    np.testing.assert_array_equal(cm.run(x, y, np.array(1, np.int32))[0], [2, 0])


# -- a reusable execution keeps what its bindings fix (nnc.execution.computation.Runner._plan_for) -----
def _reusable_add(x, y, out) -> nnc.Execution:
    c = nnc.Compilation(add_model(dims=(2,)))
    c.finish()
    ex = nnc.Execution(c)
    ex.set_reusable(True)
    ex.set_input(0, x)
    ex.set_input(1, y)
    ex.set_output(0, out)
    return ex


def test_reusable_execution_reads_its_buffers_at_every_computation():
    """The pointers are kept from the first computation; the data is not."""
    x, y, out = np.array([1, 2], np.float32), np.array([10, 20], np.float32), np.zeros(2, np.float32)
    ex = _reusable_add(x, y, out)
    burst = nnc.Burst(ex.compilation)
    for k in range(4):
        x[:] = [k, -k]
        out[:] = np.nan
        if k % 2:
            ex.burst_compute(burst)
        else:
            ex.compute()
        np.testing.assert_array_equal(out, [10 + k, 20 - k])
        assert ex.get_output_operand_dimensions(0) == [2]


def test_reusable_execution_measures_every_computation():
    c = nnc.Compilation.for_devices(add_model(dims=(2,)), [nnc.get_devices()[0]])
    c.finish()
    ex = nnc.Execution(c)
    ex.set_reusable(True)
    ex.set_measure_timing(True)
    ex.set_input(0, np.ones(2, np.float32))
    ex.set_input(1, np.ones(2, np.float32))
    ex.set_output(0, np.zeros(2, np.float32))
    for _ in range(2):
        ex.compute()
        hw, driver = ex.get_duration(nnc.DurationCode.ON_HARDWARE), ex.get_duration(nnc.DurationCode.IN_DRIVER)
        assert 0 < hw <= driver < 2**64 - 1


def test_reusable_execution_follows_a_value_specialised_input():
    """An input whose value selects the compiled variant (a scalar input) is
    read again at every computation: the caller may change it in place."""
    m = _add_with_activation_input()
    c = nnc.Compilation(m)
    c.finish()
    ex = nnc.Execution(c)
    ex.set_reusable(True)
    activation, y = np.array(0, np.int32), np.zeros(2, np.float32)
    ex.set_input(0, np.array([1, -5], np.float32))
    ex.set_input(1, np.array([1, 2], np.float32))
    ex.set_input(2, activation)
    ex.set_output(0, y)
    ex.compute()
    np.testing.assert_array_equal(y, [2, -3])
    activation[()] = 1  # RELU
    ex.compute()
    np.testing.assert_array_equal(y, [2, 0])


def test_reusable_execution_checks_a_client_memory_mapping_every_time():
    """A file that shrank after the first computation is UNMAPPABLE at the
    next one, never a SIGBUS in native code."""
    fd = os.memfd_create("nnc-test")
    os.ftruncate(fd, 4096)
    mem = nnc.Memory.from_fd(4096, mmap.PROT_READ | mmap.PROT_WRITE, fd, 0)
    c = nnc.Compilation(add_model(dims=(2,)))
    c.finish()
    ex = nnc.Execution(c)
    ex.set_reusable(True)
    ex.set_input_from_memory(0, mem, 0, 8)
    ex.set_input(1, np.ones(2, np.float32))
    ex.set_output(0, np.zeros(2, np.float32))
    ex.compute()
    os.ftruncate(fd, 0)
    os.close(fd)
    with pytest.raises(nnc.UnmappableError) as info:
        ex.compute()
    assert info.value.function == "ANeuralNetworksExecution_compute"


def test_reusable_execution_reads_a_device_memory_as_last_written():
    """A device memory input is looked up at every computation: its contents
    (and whether it is initialised) change with the executions that write it."""
    c = nnc.Compilation(add_model(dims=(2,)))
    c.finish()
    d = nnc.MemoryDesc()
    d.add_input_role(c, 0, 1.0)
    d.add_output_role(c, 0, 1.0)
    d.finish()
    mem = nnc.Memory.from_desc(d)
    reader = nnc.Execution(c)
    reader.set_reusable(True)
    reader.set_input_from_memory(0, mem, 0, 0)
    reader.set_input(1, np.ones(2, np.float32))
    out = np.zeros(2, np.float32)
    reader.set_output(0, out)
    with pytest.raises(nnc.OpFailedError):
        reader.compute()  # uninitialised
    for k in range(2):
        writer = nnc.Execution(c)
        writer.set_input(0, np.full(2, k, np.float32))
        writer.set_input(1, np.full(2, k, np.float32))
        writer.set_output_from_memory(0, mem, 0, 0)
        writer.compute()
        reader.compute()
        np.testing.assert_array_equal(out, [2 * k + 1] * 2)
    failing = nnc.Execution(c)  # reads an uninitialised memory: fails, and leaves ``mem`` uninitialised
    failing.set_input_from_memory(0, nnc.Memory.from_desc(d), 0, 0)
    failing.set_input(1, np.ones(2, np.float32))
    failing.set_output_from_memory(0, mem, 0, 0)
    with pytest.raises(nnc.OpFailedError):
        failing.compute()
    with pytest.raises(nnc.OpFailedError):
        reader.compute()
