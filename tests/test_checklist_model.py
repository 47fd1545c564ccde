"""Checklist section 2 (Model, C9-C78) and the Model part of section 1 (C1-C6).

Every test names its items with ``@pytest.mark.checklist`` and asserts the
result code and the NDK function of the error.  Python spellings of the C
calls (binding rules of checklist section 11):

* the NDK's NULL object handle is ``None`` in the place of ``self``:
  ``ANeuralNetworksModel_finish(NULL)`` is ``nnc.Model.finish(None)``;
* a NULL array (inputs, outputs, dimensions, memory, referenced model) is a
  ``None`` argument; an empty list is a real array of length 0;
* a value carries its own length, so "NULL buffer with length != 0" and a
  dimension count that disagrees with the dimension array cannot be written
  (see tests/checklist_na.py).

The helpers here (``raises``, ``add_model``, ``Case``) are shared by the other
``test_checklist_*`` files.
"""

from __future__ import annotations

import gc
import mmap
import os
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc import ResultCode as RC
from nnc.model import Lifetime

F32, I32T, BOOL8 = T.TENSOR_FLOAT32, T.TENSOR_INT32, T.TENSOR_BOOL8
Q8, Q8S, PC = T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED, T.TENSOR_QUANT8_SYMM_PER_CHANNEL

M_ADD_OPERAND = "ANeuralNetworksModel_addOperand"
M_SET_VALUE = "ANeuralNetworksModel_setOperandValue"
M_SET_MEMORY = "ANeuralNetworksModel_setOperandValueFromMemory"
M_SET_MODEL = "ANeuralNetworksModel_setOperandValueFromModel"
M_PER_CHANNEL = "ANeuralNetworksModel_setOperandSymmPerChannelQuantParams"
M_ADD_OPERATION = "ANeuralNetworksModel_addOperation"
M_IDENTIFY = "ANeuralNetworksModel_identifyInputsAndOutputs"
M_RELAX = "ANeuralNetworksModel_relaxComputationFloat32toFloat16"
M_FINISH = "ANeuralNetworksModel_finish"
M_SUPPORTED = "ANeuralNetworksModel_getSupportedOperationsForDevices"
C_CREATE = "ANeuralNetworksCompilation_create"
C_FOR_DEVICES = "ANeuralNetworksCompilation_createForDevices"

#: one exception class per result code (checklist section 11)
ERROR_CLASS = {
    RC.UNEXPECTED_NULL: nnc.UnexpectedNullError,
    RC.BAD_DATA: nnc.BadDataError,
    RC.OP_FAILED: nnc.OpFailedError,
    RC.BAD_STATE: nnc.BadStateError,
    RC.MISSED_DEADLINE_TRANSIENT: nnc.MissedDeadlineError,
    RC.MISSED_DEADLINE_PERSISTENT: nnc.MissedDeadlineError,
}


def check_error(err: BaseException, code: RC, function: str) -> None:
    """The error is an NNError of the class for ``code``, with that code and
    NDK function (and, C1, a failure code)."""
    assert isinstance(err, nnc.NNError), repr(err)
    assert err.code == code, f"{err!r}: code {err.code!r}, expected {code!r}"
    assert err.function == function, f"{err!r}: function {err.function!r}, expected {function!r}"
    assert isinstance(err, ERROR_CLASS[code]), f"{type(err).__name__} for {code.name}"
    assert err.code != RC.NO_ERROR


@contextmanager
def raises(code: RC, function: str) -> Iterator[pytest.ExceptionInfo]:
    """Expect an NNError with exactly this code and NDK function."""
    with pytest.raises(nnc.NNError) as info:
        yield info
    check_error(info.value, code, function)


@dataclass
class Case:
    """One row of a table: ``act()`` builds what it needs and makes the call."""

    id: str
    items: tuple[int, ...]
    act: Callable[[], object]
    code: RC
    function: str
    marks: list = field(default_factory=list)

    def param(self):
        return pytest.param(self, id=self.id, marks=[pytest.mark.checklist(*self.items), *self.marks])


def run_case(case: Case) -> None:
    with raises(case.code, case.function):
        case.act()


# -- model builders ---------------------------------------------------------------------------------


def add_model(finish: bool = True, dims=(2,), out_dims=None) -> nnc.Model:
    """out = a + b, the inputs and output TENSOR_FLOAT32 ``dims``."""
    m = nnc.Model()
    a = m.add_operand(F32, list(dims))
    b = m.add_operand(F32, list(dims))
    act = m.add_operand(T.INT32)
    m.set_operand_value(act, 0)
    o = m.add_operand(F32, list(out_dims if out_dims is not None else dims))
    m.add_operation(Op.ADD, [a, b, act], [o])
    m.identify_inputs_and_outputs([a, b], [o])
    if finish:
        m.finish()
    return m


def invalid_model() -> nnc.Model:
    """A model whose finish failed (an operand nobody writes): INVALID."""
    m = nnc.Model()
    a = m.add_operand(F32, [2])
    t = m.add_operand(F32, [2])
    o = m.add_operand(F32, [2])
    m.add_operation(Op.RELU, [t], [o])
    m.identify_inputs_and_outputs([a], [o])
    with raises(RC.BAD_DATA, M_FINISH):
        m.finish()
    return m


def compute(compilation: nnc.Compilation, *inputs: np.ndarray, out_shape=None) -> np.ndarray:
    ex = nnc.Execution(compilation)
    for k, x in enumerate(inputs):
        ex.set_input(k, x)
    y = np.zeros(out_shape if out_shape is not None else inputs[0].shape, np.float32)
    ex.set_output(0, y)
    ex.compute()
    return y


def cpu() -> nnc.Device:
    return nnc.get_device(0)


def fd_memory(tmp_path, data: bytes) -> nnc.Memory:
    """A read-only fd memory holding ``data``."""
    path = tmp_path / "weights.bin"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        return nnc.Memory.from_fd(len(data), mmap.PROT_READ, fd, 0)
    finally:
        os.close(fd)


def device_memory() -> nnc.Memory:
    c = nnc.Compilation(add_model())
    c.finish()
    desc = nnc.MemoryDesc()
    desc.add_input_role(c, 0, 1.0)
    desc.finish()
    return nnc.Memory.from_desc(desc)


def with_operand(type_, dims=None, scale=0.0, zp=0) -> tuple[nnc.Model, int]:
    m = nnc.Model()
    return m, m.add_operand(type_, dims, scale, zp)


def per_channel(dims=(2, 3)) -> tuple[nnc.Model, int]:
    return with_operand(PC, list(dims))


# -- state: modifiers after finish (C9-C17) and after a failed finish (C18) -----------------------

_MODIFIERS: dict[str, tuple[str, Callable[[nnc.Model], object]]] = {
    "addOperand": (M_ADD_OPERAND, lambda m: m.add_operand(F32, [2])),
    "addOperand-OEM-type": (M_ADD_OPERAND, lambda m: m.add_operand(10000)),
    "addOperand-OEM-tensor": (M_ADD_OPERAND, lambda m: m.add_operand(10001, [2])),
    "setOperandValue": (M_SET_VALUE, lambda m: m.set_operand_value(0, np.zeros(2, np.float32))),
    "setOperandValue-omit": (M_SET_VALUE, lambda m: m.set_operand_value(0, None)),
    "setOperandValueFromMemory": (M_SET_MEMORY, lambda m: m.set_operand_value_from_memory(0, _ANY_MEMORY, 0, 8)),
    "setOperandValueFromModel": (M_SET_MODEL, lambda m: m.set_operand_value_from_model(0, add_model())),
    "setOperandSymmPerChannelQuantParams": (M_PER_CHANNEL,
                                            lambda m: m.set_operand_symm_per_channel_quant_params(0, [1.0, 1.0], 0)),
    "addOperation": (M_ADD_OPERATION, lambda m: m.add_operation(Op.RELU, [0], [3])),
    "identifyInputsAndOutputs": (M_IDENTIFY, lambda m: m.identify_inputs_and_outputs([0], [3])),
    "relax-true": (M_RELAX, lambda m: m.relax_computation_float32_to_float16(True)),
    "relax-false": (M_RELAX, lambda m: m.relax_computation_float32_to_float16(False)),
    "finish": (M_FINISH, lambda m: m.finish()),
}  # fmt: skip
_ITEM_OF = {
    "addOperand": 10, "addOperand-OEM-type": 10, "addOperand-OEM-tensor": 10, "setOperandValue": 11,
    "setOperandValue-omit": 11, "setOperandValueFromMemory": 12, "setOperandValueFromModel": 13,
    "setOperandSymmPerChannelQuantParams": 17, "addOperation": 14, "identifyInputsAndOutputs": 15,
    "relax-true": 16, "relax-false": 16, "finish": 9,
}  # fmt: skip


class _AnyMemory:
    """Resolved lazily: an fd memory is only needed when the row runs."""

    def __getattr__(self, name):
        raise AssertionError("the state check must come before the memory is looked at")


_ANY_MEMORY = _AnyMemory()


STATE_CASES = [
    *(Case(f"finished-{name}", (_ITEM_OF[name],), (lambda a=act: a(add_model())), RC.BAD_STATE, fn)
      for name, (fn, act) in _MODIFIERS.items()),
    *(Case(f"invalid-{name}", (18,), (lambda a=act: a(invalid_model())), RC.BAD_STATE, fn)
      for name, (fn, act) in _MODIFIERS.items()),
    Case("invalid-Compilation", (18,), lambda: nnc.Compilation(invalid_model()), RC.BAD_STATE, C_CREATE),
    Case("invalid-for_devices", (18,), lambda: nnc.Compilation.for_devices(invalid_model(), [cpu()]),
         RC.BAD_STATE, C_FOR_DEVICES),
    Case("unfinished-Compilation", (19,), lambda: nnc.Compilation(add_model(finish=False)), RC.BAD_STATE, C_CREATE),
    Case("null-model-Compilation", (19,), lambda: nnc.Compilation(None), RC.UNEXPECTED_NULL, C_CREATE),
    Case("unfinished-getSupported", (20,), lambda: add_model(finish=False).get_supported_operations_for_devices(
        [cpu()]), RC.BAD_STATE, M_SUPPORTED),
    Case("invalid-getSupported", (20,), lambda: invalid_model().get_supported_operations_for_devices([cpu()]),
         RC.BAD_STATE, M_SUPPORTED),
]  # fmt: skip


@pytest.mark.parametrize("case", [c.param() for c in STATE_CASES])
def test_state_machine(case: Case) -> None:
    """Only BUILDING accepts modifications, only FINISHED is compiled or
    queried; a failed finish is sticky (INVALID).  The state is checked before
    the data: the OEM operand type codes, which nnc does not accept, are still
    BAD_STATE after finish (C10)."""
    run_case(case)


# -- NULL handles and NULL arguments (C2 and the NULL parts of C8-C61) -----------------------------

NULL_CASES = [
    Case("finish(NULL)", (2, 9), lambda: nnc.Model.finish(None), RC.UNEXPECTED_NULL, M_FINISH),
    Case("relax(NULL)", (2, 16), lambda: nnc.Model.relax_computation_float32_to_float16(None, True),
         RC.UNEXPECTED_NULL, M_RELAX),
    Case("addOperand(NULL, type)", (2, 22), lambda: nnc.Model.add_operand(None, F32, [2]),
         RC.UNEXPECTED_NULL, M_ADD_OPERAND),
    Case("addOperand(model, NULL)", (2, 22), lambda: nnc.Model().add_operand(None), RC.UNEXPECTED_NULL, M_ADD_OPERAND),
    Case("addOperand(finished, NULL)", (2, 22), lambda: add_model().add_operand(None),
         RC.UNEXPECTED_NULL, M_ADD_OPERAND),
    Case("setOperandValue(NULL)", (2, 39), lambda: nnc.Model.set_operand_value(None, 0, b"\0" * 4),
         RC.UNEXPECTED_NULL, M_SET_VALUE),
    Case("setOperandValueFromMemory(NULL)", (2, 47), lambda: nnc.Model.set_operand_value_from_memory(
        None, 0, _ANY_MEMORY, 0, 4), RC.UNEXPECTED_NULL, M_SET_MEMORY),
    Case("setOperandValueFromMemory(model, i, NULL)", (2, 47),
         lambda: add_model(finish=False).set_operand_value_from_memory(0, None, 0, 8), RC.UNEXPECTED_NULL, M_SET_MEMORY),
    Case("setOperandValueFromMemory(finished, i, NULL)", (2, 47),
         lambda: add_model().set_operand_value_from_memory(0, None, 0, 8), RC.UNEXPECTED_NULL, M_SET_MEMORY),
    Case("setOperandValueFromModel(NULL)", (2, 51), lambda: nnc.Model.set_operand_value_from_model(None, 0, add_model()),
         RC.UNEXPECTED_NULL, M_SET_MODEL),
    Case("setOperandValueFromModel(model, i, NULL)", (2, 51),
         lambda: with_operand(T.MODEL)[0].set_operand_value_from_model(0, None), RC.UNEXPECTED_NULL, M_SET_MODEL),
    Case("setOperandValueFromModel(finished, i, NULL)", (2, 51),
         lambda: add_model().set_operand_value_from_model(0, None), RC.UNEXPECTED_NULL, M_SET_MODEL),
    Case("setOperandSymmPerChannelQuantParams(NULL)", (2, 35),
         lambda: nnc.Model.set_operand_symm_per_channel_quant_params(None, 0, [1.0], 0), RC.UNEXPECTED_NULL, M_PER_CHANNEL),
    Case("addOperation(NULL)", (2, 54), lambda: nnc.Model.add_operation(None, Op.RELU, [0], [1]),
         RC.UNEXPECTED_NULL, M_ADD_OPERATION),
    Case("addOperation(inputs NULL)", (2, 54, 55), lambda: add_model(finish=False).add_operation(Op.RELU, None, [3]),
         RC.UNEXPECTED_NULL, M_ADD_OPERATION),
    Case("addOperation(outputs NULL)", (2, 54, 55), lambda: add_model(finish=False).add_operation(Op.RELU, [0], None),
         RC.UNEXPECTED_NULL, M_ADD_OPERATION),
    Case("addOperation(finished, inputs NULL)", (2, 54), lambda: add_model().add_operation(Op.RELU, None, []),
         RC.UNEXPECTED_NULL, M_ADD_OPERATION),
    Case("identify(NULL)", (2, 61), lambda: nnc.Model.identify_inputs_and_outputs(None, [0], [1]),
         RC.UNEXPECTED_NULL, M_IDENTIFY),
    Case("identify(inputs NULL)", (2, 61), lambda: nnc.Model().identify_inputs_and_outputs(None, []),
         RC.UNEXPECTED_NULL, M_IDENTIFY),
    Case("identify(outputs NULL)", (2, 61), lambda: nnc.Model().identify_inputs_and_outputs([], None),
         RC.UNEXPECTED_NULL, M_IDENTIFY),
    Case("identify(finished, outputs NULL)", (2, 61), lambda: add_model().identify_inputs_and_outputs([0], None),
         RC.UNEXPECTED_NULL, M_IDENTIFY),
    Case("getSupported(NULL)", (2, 77), lambda: nnc.Model.get_supported_operations_for_devices(None, [cpu()]),
         RC.UNEXPECTED_NULL, M_SUPPORTED),
    Case("getSupported(devices NULL)", (2, 77), lambda: add_model().get_supported_operations_for_devices(None),
         RC.UNEXPECTED_NULL, M_SUPPORTED),
    Case("getSupported(unfinished, devices NULL)", (2, 77),
         lambda: add_model(finish=False).get_supported_operations_for_devices(None), RC.UNEXPECTED_NULL, M_SUPPORTED),
]  # fmt: skip


@pytest.mark.parametrize("case", [c.param() for c in NULL_CASES])
def test_null_arguments(case: Case) -> None:
    """A NULL handle or required array is UNEXPECTED_NULL, checked before the
    state: even on a finished model (C2)."""
    run_case(case)


# -- addOperand (C22-C34) ------------------------------------------------------------------------------

_SCALARS = (T.INT32, T.UINT32, T.FLOAT32, T.FLOAT16, T.BOOL, T.MODEL)

ADD_OPERAND_BAD = [
    *((f"{t.name}-with-dims", (24,), (t, [1], 0.0, 0)) for t in _SCALARS),
    ("Q8-negative-scale", (25,), (Q8, [2], -1.0, 0)),
    ("Q8-zero-scale", (25,), (Q8, [2], 0.0, 0)),
    ("Q8-zp-minus-1", (25,), (Q8, [2], 1.0, -1)),
    ("Q8-zp-256", (25,), (Q8, [2], 1.0, 256)),
    ("Q8S-zero-scale", (26,), (Q8S, [2], 0.0, 0)),
    ("Q8S-zp-minus-129", (26,), (Q8S, [2], 1.0, -129)),
    ("Q8S-zp-128", (26,), (Q8S, [2], 1.0, 128)),
    ("Q8SYMM-zp-1", (27,), (T.TENSOR_QUANT8_SYMM, [2], 1.0, 1)),
    ("Q8SYMM-zero-scale", (27,), (T.TENSOR_QUANT8_SYMM, [2], 0.0, 0)),
    ("Q16SYMM-zp-1", (27,), (T.TENSOR_QUANT16_SYMM, [2], 1.0, 1)),
    ("Q16SYMM-negative-scale", (27,), (T.TENSOR_QUANT16_SYMM, [2], -0.5, 0)),
    ("Q16ASYMM-zp-minus-1", (28,), (T.TENSOR_QUANT16_ASYMM, [2], 1.0, -1)),
    ("Q16ASYMM-zp-65536", (28,), (T.TENSOR_QUANT16_ASYMM, [2], 1.0, 65536)),
    ("Q16ASYMM-zero-scale", (28,), (T.TENSOR_QUANT16_ASYMM, [2], 0.0, 0)),
    *((f"{t.name}-scale", (29,), (t, [2] if t.is_tensor else None, 0.5, 0))
      for t in (F32, T.TENSOR_FLOAT16, BOOL8, PC, T.INT32, T.FLOAT32, T.BOOL)),
    *((f"{t.name}-zero-point", (29,), (t, [2] if t.is_tensor else None, 0.0, 1))
      for t in (F32, T.TENSOR_FLOAT16, BOOL8, PC, T.UINT32, T.FLOAT16)),
    ("byte-size-overflow", (30,), (F32, [5, 4, 4, 786433, 5, 3, 16777216, 4, 5], 0.0, 0)),
    ("byte-size-overflow-by-element-size", (30,), (F32, [1 << 30, 4], 0.0, 0)),
    ("type-minus-1", (31,), (-1, None, 0.0, 0)),
    ("type-16", (31,), (16, None, 0.0, 0)),
    ("type-OEM", (31,), (10000, None, 0.0, 0)),
    ("type-as-str", (31,), ("TENSOR_FLOAT32", [2], 0.0, 0)),
    ("dimension-negative", (), (F32, [2, -1], 0.0, 0)),
    ("dimensions-not-a-sequence", (), (F32, 4, 0.0, 0)),
]  # fmt: skip


@pytest.mark.parametrize("args", [pytest.param(a, id=i, marks=pytest.mark.checklist(*n)) for i, n, a in ADD_OPERAND_BAD])
def test_add_operand_rejects(args) -> None:
    """validateOperandType: scalar dimensions, quantisation parameters per type,
    uint32 byte-size overflow, unknown type codes (C24-C31)."""
    m = nnc.Model()
    with raises(RC.BAD_DATA, M_ADD_OPERAND):
        m.add_operand(*args)
    assert m.operands == []  # C6: nothing was added


ADD_OPERAND_GOOD = [
    ("Q8-edges", (25,), (Q8, [2], 0.5, 255)),
    ("Q8S-edges", (26,), (Q8S, [2], 0.5, -128)),
    ("Q16ASYMM-edge", (28,), (T.TENSOR_QUANT16_ASYMM, [2], 0.25, 65535)),
    ("TENSOR_INT32-lenient-scale-and-zp", (29,), (I32T, [2], 0.5, 3)),
    ("TENSOR_INT32-lenient-negative-scale", (29,), (I32T, [2], -2.0, -7)),
    ("just-under-uint32", (30,), (Q8, [65536, 65535], 1.0, 0)),
    ("unknown-dimension", (32,), (F32, [0, 3], 0.0, 0)),
    ("unknown-rank-none", (32,), (F32, None, 0.0, 0)),
    ("unknown-rank-empty", (32,), (F32, [], 0.0, 0)),
    ("overflow-ignores-unknown-dims", (30, 32), (F32, [0, 1 << 29], 0.0, 0)),
]


@pytest.mark.parametrize("args", [pytest.param(a, id=i, marks=pytest.mark.checklist(*n)) for i, n, a in ADD_OPERAND_GOOD])
def test_add_operand_accepts(args) -> None:
    m = nnc.Model()
    assert m.add_operand(*args) == 0


@pytest.mark.checklist(33)
def test_operand_indices_count_up_from_zero() -> None:
    m = nnc.Model()
    assert [m.add_operand(t, d, s) for t, d, s in ((F32, [2], 0.0), (T.INT32, None, 0.0), (Q8, None, 0.5))] == [0, 1, 2]
    with raises(RC.BAD_DATA, M_ADD_OPERAND):
        m.add_operand(T.INT32, [3])
    assert m.add_operand(T.FLOAT32) == 3  # the rejected call used no index


# -- per-channel quantisation (C35-C38) ------------------------------------------------------------------

PER_CHANNEL_BAD = [
    ("index-out-of-range", (35,), lambda m, i: m.set_operand_symm_per_channel_quant_params(i + 1, [1.0, 1.0], 0)),
    ("index-minus-1", (35, 5), lambda m, i: m.set_operand_symm_per_channel_quant_params(-1, [1.0, 1.0], 0)),
    ("channel-dim-equals-rank", (37,), lambda m, i: m.set_operand_symm_per_channel_quant_params(i, [1.0, 1.0], 2)),
    ("channel-dim-negative", (37,), lambda m, i: m.set_operand_symm_per_channel_quant_params(i, [1.0, 1.0], -1)),
    ("scale-count-mismatch", (37,), lambda m, i: m.set_operand_symm_per_channel_quant_params(i, [1.0, 1.0, 1.0], 0)),
    ("scale-zero", (37,), lambda m, i: m.set_operand_symm_per_channel_quant_params(i, [1.0, 0.0], 0)),
    ("scale-negative", (37,), lambda m, i: m.set_operand_symm_per_channel_quant_params(i, [-1.0, 1.0], 0)),
    ("scale-nan", (37,), lambda m, i: m.set_operand_symm_per_channel_quant_params(i, [float("nan"), 1.0], 0)),
    ("scales-null", (37,), lambda m, i: m.set_operand_symm_per_channel_quant_params(i, None, 0)),
]


@pytest.mark.parametrize("act", [pytest.param(a, id=i, marks=pytest.mark.checklist(*n)) for i, n, a in PER_CHANNEL_BAD])
def test_per_channel_params_rejected(act) -> None:
    m, i = per_channel((2, 3))
    with raises(RC.BAD_DATA, M_PER_CHANNEL):
        act(m, i)
    assert m.operands[i].channel_quant is None
    m.set_operand_symm_per_channel_quant_params(i, [0.5, 0.25], 0)  # C6: the corrected call succeeds
    assert m.operands[i].channel_quant == ((0.5, 0.25), 0)


@pytest.mark.checklist(37)
def test_per_channel_unknown_channel_dimension() -> None:
    m, i = per_channel((0, 3))
    with raises(RC.BAD_DATA, M_PER_CHANNEL):
        m.set_operand_symm_per_channel_quant_params(i, [], 0)
    m.set_operand_symm_per_channel_quant_params(i, [1.0, 1.0, 1.0], 1)


@pytest.mark.checklist(36)
@pytest.mark.parametrize("t", [F32, T.TENSOR_QUANT8_SYMM, Q8, I32T])
def test_per_channel_params_on_other_types(t) -> None:
    m, i = with_operand(t, [2, 3], 1.0 if t in (T.TENSOR_QUANT8_SYMM, Q8) else 0.0)
    with raises(RC.BAD_DATA, M_PER_CHANNEL):
        m.set_operand_symm_per_channel_quant_params(i, [1.0, 1.0], 0)


@pytest.mark.checklist(35)
def test_per_channel_params_valid() -> None:
    m, i = per_channel((3, 2))
    m.set_operand_symm_per_channel_quant_params(i, np.array([1.0, 2.0, 3.0], np.float32), 0)
    assert m.operands[i].channel_quant == ((1.0, 2.0, 3.0), 0)


@pytest.mark.checklist(38)
def test_per_channel_operand_without_params_fails_finish() -> None:
    """A per-channel constant whose params were never set: finish is BAD_DATA."""
    m = nnc.Model()
    x = m.add_operand(F32, [1, 2, 2, 2])
    w = m.add_operand(PC, [2, 1, 1, 2])
    m.set_operand_value(w, np.ones((2, 1, 1, 2), np.int8))
    o = m.add_operand(F32, [1, 2, 2, 2])
    m.add_operation(Op.RELU, [x], [o])
    m.identify_inputs_and_outputs([x], [o])
    with raises(RC.BAD_DATA, M_FINISH):
        m.finish()


# -- constant values (C39-C53) ---------------------------------------------------------------------------

SET_VALUE_BAD = [
    ("20-bytes-for-FLOAT32", (40,), (T.FLOAT32, None), lambda m, i: m.set_operand_value(i, b"\0" * 20)),
    ("3-bytes-for-FLOAT32", (40,), (T.FLOAT32, None), lambda m, i: m.set_operand_value(i, b"\0" * 3)),
    ("array-too-long", (40,), (F32, [2]), lambda m, i: m.set_operand_value(i, np.zeros(3, np.float32))),
    ("index-equals-count", (41,), (F32, [2]), lambda m, i: m.set_operand_value(i + 1, np.zeros(2, np.float32))),
    ("index-minus-1", (41, 5), (F32, [2]), lambda m, i: m.set_operand_value(-1, np.zeros(2, np.float32))),
    ("index-not-an-int", (41,), (F32, [2]), lambda m, i: m.set_operand_value("0", np.zeros(2, np.float32))),
    ("unspecified-dimension", (43,), (F32, [0, 2]), lambda m, i: m.set_operand_value(i, np.zeros(2, np.float32))),
    ("unspecified-rank", (43,), (F32, None), lambda m, i: m.set_operand_value(i, np.zeros(2, np.float32))),
    ("length-over-uint32", (44,), (T.TENSOR_QUANT8_ASYMM, [4]),
     lambda m, i: m.set_operand_value(i, np.broadcast_to(np.zeros(1, np.uint8), (1 << 32) + 4))),
    ("wrong-kind-of-value", (40,), (F32, [2]), lambda m, i: m.set_operand_value(i, ["a", "b"])),
]


@pytest.mark.parametrize(
    "operand,act", [pytest.param(o, a, id=i, marks=pytest.mark.checklist(*n)) for i, n, o, a in SET_VALUE_BAD]
)
def test_set_operand_value_rejected(operand, act) -> None:
    """Exact byte size, index in range, fully specified operand, length <= 0xFFFFFFFF."""
    t, dims = operand
    m, i = with_operand(t, dims, 1.0 if t == T.TENSOR_QUANT8_ASYMM else 0.0)
    with raises(RC.BAD_DATA, M_SET_VALUE):
        act(m, i)
    assert m.operands[i].lifetime == Lifetime.TEMPORARY_VARIABLE  # C6: unchanged


@pytest.mark.checklist(40, 6)
def test_set_operand_value_after_wrong_length() -> None:
    m, i = with_operand(T.FLOAT32)
    with raises(RC.BAD_DATA, M_SET_VALUE):
        m.set_operand_value(i, b"\0" * 20)
    m.set_operand_value(i, np.float32(2.5).tobytes())
    assert m.operands[i].value == np.float32(2.5)


@pytest.mark.checklist(42)
def test_null_value_omits_the_operand() -> None:
    """setOperandValue(NULL, 0) marks an optional operand as omitted (NO_VALUE),
    whatever its type or shape."""
    m = nnc.Model()
    for t, dims in ((F32, [2]), (F32, None), (T.INT32, None)):
        i = m.add_operand(t, dims)
        m.set_operand_value(i, None)
        assert m.operands[i].lifetime == Lifetime.NO_VALUE
        assert m.operands[i].info().omitted


def _two_constant_model(small: np.ndarray, large: np.ndarray) -> nnc.Model:
    """o1 = x + large (1 KiB), o2 = y + small (8 bytes)."""
    m = nnc.Model()
    x = m.add_operand(F32, [256])
    y = m.add_operand(F32, [2])
    s = m.add_operand(F32, [2])
    m.set_operand_value(s, small)
    big = m.add_operand(F32, [256])
    m.set_operand_value(big, large)
    act = m.add_operand(T.INT32)
    m.set_operand_value(act, 0)
    o1 = m.add_operand(F32, [256])
    o2 = m.add_operand(F32, [2])
    m.add_operation(Op.ADD, [x, big, act], [o1])
    m.add_operation(Op.ADD, [y, s, act], [o2])
    m.identify_inputs_and_outputs([x, y], [o1, o2])
    return m


@pytest.mark.checklist(45, 46)
def test_values_are_copied_when_set() -> None:
    """Values of <= 128 bytes are copied at the call (C45).  Larger ones: the
    NDK leaves later changes undefined; nnc copies a writable one at the call
    too, so the caller may change or drop its buffer at once (C46)."""
    small = np.array([1.0, 2.0], np.float32)
    large = np.arange(256, dtype=np.float32)
    m = _two_constant_model(small, large)
    assert m.operands[2].lifetime == Lifetime.CONSTANT_COPY
    assert m.operands[3].lifetime == Lifetime.CONSTANT_REFERENCE
    small[:] = 99.0
    large[:] = -1.0
    ref = weakref.ref(large)
    del large
    gc.collect()
    assert ref() is None  # nnc kept no reference to the caller's buffer
    m.finish()
    c = nnc.Compilation(m)
    c.finish()
    ex = nnc.Execution(c)
    x, y = np.ones(256, np.float32), np.array([0.5, 0.25], np.float32)
    o1, o2 = np.zeros(256, np.float32), np.zeros(2, np.float32)
    ex.set_input(0, x)
    ex.set_input(1, y)
    ex.set_output(0, o1)
    ex.set_output(1, o2)
    ex.compute()
    np.testing.assert_array_equal(o1, x + np.arange(256, dtype=np.float32))
    np.testing.assert_array_equal(o2, [1.5, 2.25])


@pytest.mark.checklist(46)
def test_large_values_that_cannot_change_are_referenced() -> None:
    """A large value nothing can write into (a read-only view of bytes, or
    bytes) is kept by reference; a read-only view of a writable array is
    copied (its owner may still change it).  Every kept value is read-only."""
    data = np.arange(64, dtype=np.float32).tobytes()
    frozen = np.frombuffer(data, np.float32)
    writable = np.arange(64, dtype=np.float32)
    view = writable.view()
    view.flags.writeable = False
    m = nnc.Model()
    ops = [m.add_operand(F32, [64]) for _ in range(4)]
    for k, value in zip(ops, (frozen, data, view, writable)):
        m.set_operand_value(k, value)
    kept = [m.operands[k].value for k in ops]
    assert np.shares_memory(kept[0], frozen) and np.shares_memory(kept[1], frozen)
    assert not np.shares_memory(kept[2], writable) and not np.shares_memory(kept[3], writable)
    assert all(m.operands[k].lifetime == Lifetime.CONSTANT_REFERENCE for k in ops)
    assert not any(v.flags.writeable for v in kept)



def _memory_cases():
    return [
        ("index-minus-1", (47, 5), lambda m, mem: m.set_operand_value_from_memory(-1, mem, 0, 8)),
        ("index-equals-count", (47,), lambda m, mem: m.set_operand_value_from_memory(1, mem, 0, 8)),
        ("length-not-operand-size", (47,), lambda m, mem: m.set_operand_value_from_memory(0, mem, 0, 12)),
        ("whole-memory-for-smaller-operand", (47,), lambda m, mem: m.set_operand_value_from_memory(0, mem, 0, 20)),
        ("offset-past-end", (47,), lambda m, mem: m.set_operand_value_from_memory(0, mem, 24, 8)),
        ("offset-plus-length-past-end", (47,), lambda m, mem: m.set_operand_value_from_memory(0, mem, 16, 8)),
        ("offset-negative", (47,), lambda m, mem: m.set_operand_value_from_memory(0, mem, -4, 8)),
        ("offset-0-length-0", (49,), lambda m, mem: m.set_operand_value_from_memory(0, mem, 0, 0)),
        ("misaligned-offset", (50,), lambda m, mem: m.set_operand_value_from_memory(0, mem, 2, 8)),
        ("not-a-memory", (47,), lambda m, mem: m.set_operand_value_from_memory(0, b"\0" * 20, 0, 8)),
    ]


@pytest.mark.parametrize("act", [pytest.param(a, id=i, marks=pytest.mark.checklist(*n)) for i, n, a in _memory_cases()])
def test_set_operand_value_from_memory_rejected(tmp_path, act) -> None:
    """A TENSOR_FLOAT32 [2] (8 bytes) constant from a 20-byte fd memory."""
    mem = fd_memory(tmp_path, bytes(20))
    m, i = with_operand(F32, [2])
    with raises(RC.BAD_DATA, M_SET_MEMORY):
        act(m, mem)
    assert m.operands[i].lifetime == Lifetime.TEMPORARY_VARIABLE


@pytest.mark.checklist(49)
def test_device_memory_cannot_hold_a_constant() -> None:
    mem = device_memory()
    m, i = with_operand(F32, [2])
    with raises(RC.BAD_DATA, M_SET_MEMORY):
        m.set_operand_value_from_memory(i, mem, 0, 8)
    with raises(RC.BAD_DATA, M_SET_MEMORY):
        m.set_operand_value_from_memory(i, mem, 0, 0)


@pytest.mark.checklist(47, 50, 12)
def test_constant_from_fd_memory_is_read_at_finish(tmp_path) -> None:
    """Constants at offsets 4 and 200 of a file: bound now, read when the
    model is finished (so bytes written after the call count), aligned to
    their element size (C50: nnc rejects misaligned offsets, as it does for
    execution arguments), and computed correctly."""
    data = bytearray(256)
    mem_path = tmp_path / "w.bin"
    mem_path.write_bytes(bytes(data))
    fd = os.open(mem_path, os.O_RDWR)
    try:
        mem = nnc.Memory.from_fd(256, mmap.PROT_READ | mmap.PROT_WRITE, fd, 0)
    finally:
        os.close(fd)
    m = nnc.Model()
    x = m.add_operand(F32, [2])
    a = m.add_operand(F32, [2])
    b = m.add_operand(F32, [2])
    m.set_operand_value_from_memory(a, mem, 4, 8)
    m.set_operand_value_from_memory(b, mem, 200, 8)
    act = m.add_operand(T.INT32)
    m.set_operand_value(act, 0)
    t = m.add_operand(F32, [2])
    o = m.add_operand(F32, [2])
    m.add_operation(Op.ADD, [x, a, act], [t])
    m.add_operation(Op.ADD, [t, b, act], [o])
    m.identify_inputs_and_outputs([x], [o])
    with open(mem_path, "r+b") as f:  # written after binding, before finish
        f.seek(4)
        f.write(np.array([1.0, 2.0], np.float32).tobytes())
        f.seek(200)
        f.write(np.array([10.0, 20.0], np.float32).tobytes())
    m.finish()
    with raises(RC.BAD_STATE, M_SET_MEMORY):
        m.set_operand_value_from_memory(a, mem, 4, 8)
    mem.close()  # the model holds its own copy now
    c = nnc.Compilation(m)
    c.finish()
    np.testing.assert_array_equal(compute(c, np.array([0.5, 0.25], np.float32)), [11.5, 22.25])


def test_memory_closed_before_finish(tmp_path) -> None:
    """The memory of a constant must stay open until finish reads it: closed
    earlier, finish fails with the memory's code (BAD_STATE) and the model
    is INVALID."""
    mem = fd_memory(tmp_path, bytes(16))
    m = add_model(finish=False)
    c = m.add_operand(F32, [2])
    m.set_operand_value_from_memory(c, mem, 8, 8)
    o = m.add_operand(F32, [2])
    m.add_operation(Op.RELU, [c], [o])
    mem.close()
    with raises(RC.BAD_STATE, M_FINISH):
        m.finish()
    assert m.invalid
    with raises(RC.BAD_STATE, M_FINISH):
        m.finish()


def _sub_model() -> nnc.Model:
    return add_model()


SET_MODEL_CASES = [
    Case("referenced-unfinished", (51,), lambda: with_operand(T.MODEL)[0].set_operand_value_from_model(
        0, add_model(finish=False)), RC.BAD_STATE, M_SET_MODEL),
    Case("referenced-itself", (51, 74), lambda: (lambda m: m.set_operand_value_from_model(0, m))(
        with_operand(T.MODEL)[0]), RC.BAD_STATE, M_SET_MODEL),
    Case("referenced-invalid", (52,), lambda: with_operand(T.MODEL)[0].set_operand_value_from_model(
        0, invalid_model()), RC.BAD_STATE, M_SET_MODEL),
    Case("index-minus-1", (51, 5), lambda: with_operand(T.MODEL)[0].set_operand_value_from_model(-1, _sub_model()),
         RC.BAD_DATA, M_SET_MODEL),
    Case("index-out-of-range", (51,), lambda: with_operand(T.MODEL)[0].set_operand_value_from_model(1, _sub_model()),
         RC.BAD_DATA, M_SET_MODEL),
    Case("not-a-MODEL-operand", (51,), lambda: with_operand(F32, [2])[0].set_operand_value_from_model(0, _sub_model()),
         RC.BAD_DATA, M_SET_MODEL),
    Case("not-a-model", (51,), lambda: with_operand(T.MODEL)[0].set_operand_value_from_model(0, "model"),
         RC.BAD_DATA, M_SET_MODEL),
]  # fmt: skip


@pytest.mark.parametrize("case", [c.param() for c in SET_MODEL_CASES])
def test_set_operand_value_from_model_rejected(case: Case) -> None:
    """The referenced model must be finished and valid (BAD_STATE, C51/C52);
    a model cannot reference itself, so no reference cycle can be built (C74)."""
    run_case(case)


@pytest.mark.checklist(53)
def test_referenced_model_is_kept_alive() -> None:
    """The referring model holds a strong reference (C53).  (The relaxed flag
    of the main model overriding the referenced ones cannot be observed yet:
    nnc does not compile IF/WHILE.)"""
    m, i = with_operand(T.MODEL)
    sub = _sub_model()
    ref = weakref.ref(sub)
    m.set_operand_value_from_model(i, sub)
    del sub
    gc.collect()
    assert ref() is not None and m.operands[i].subgraph is ref()


# -- addOperation (C54-C60) ----------------------------------------------------------------------------


def _ready_model() -> nnc.Model:
    """Operands 0..1 F32 [2], 2 INT32 = 0, 3 F32 [2]: ADD(0, 1, 2) -> 3 is valid."""
    m = nnc.Model()
    m.add_operand(F32, [2])
    m.add_operand(F32, [2])
    m.set_operand_value(m.add_operand(T.INT32), 0)
    m.add_operand(F32, [2])
    return m


ADD_OPERATION_BAD = [
    ("empty-inputs", (55,), lambda m: m.add_operation(Op.ADD, [], [3])),
    ("empty-outputs", (55,), lambda m: m.add_operation(Op.ADD, [0, 1, 2], [])),
    ("operation-minus-1", (56,), lambda m: m.add_operation(-1, [0, 1, 2], [3])),
    ("operation-106", (56,), lambda m: m.add_operation(106, [0, 1, 2], [3])),
    ("operation-9999", (56,), lambda m: m.add_operation(9999, [0, 1, 2], [3])),
    ("operation-None", (56,), lambda m: m.add_operation(None, [0, 1, 2], [3])),
    ("input-index-out-of-range", (57,), lambda m: m.add_operation(Op.ADD, [0, 1, 4], [3])),
    ("output-index-out-of-range", (57,), lambda m: m.add_operation(Op.ADD, [0, 1, 2], [4])),
    ("input-index-minus-1", (57, 5), lambda m: m.add_operation(Op.ADD, [0, -1, 2], [3])),
    ("output-index-minus-1", (57, 5), lambda m: m.add_operation(Op.ADD, [0, 1, 2], [-1])),
]


@pytest.mark.parametrize("act", [pytest.param(a, id=i, marks=pytest.mark.checklist(*n)) for i, n, a in ADD_OPERATION_BAD])
def test_add_operation_rejected(act) -> None:
    m = _ready_model()
    with raises(RC.BAD_DATA, M_ADD_OPERATION):
        act(m)
    assert m.operations == []
    m.add_operation(Op.ADD, [0, 1, 2], [3])  # C6: the corrected call succeeds


# C58: signatures of a few operations, each checked at addOperation under mutation.
# An operand spec is (type, dims, value); scalars have dims None.


@dataclass
class Signature:
    op: Op
    inputs: list[tuple]
    outputs: list[tuple]
    #: input position whose rank is pushed out of the allowed range, and the bad dims
    bad_rank: tuple[int, list[int]]


SIGNATURES = [
    Signature(Op.ADD, [(F32, [2, 2], None), (F32, [2, 2], None), (T.INT32, None, 0)], [(F32, [2, 2])],
              (0, [1, 1, 1, 2, 2])),
    Signature(Op.MUL, [(F32, [2, 2], None), (F32, [2, 2], None), (T.INT32, None, 0)], [(F32, [2, 2])],
              (1, [1, 1, 1, 2, 2])),
    Signature(Op.RELU, [(F32, [2, 3], None)], [(F32, [2, 3])], (0, [1, 1, 1, 2, 3])),
    Signature(Op.SOFTMAX, [(F32, [1, 4], None), (T.FLOAT32, None, 1.0)], [(F32, [1, 4])], (0, [1, 1, 1, 1, 4])),
    Signature(Op.CONV_2D, [(F32, [1, 3, 3, 1], None), (F32, [1, 2, 2, 1], np.ones((1, 2, 2, 1))),
                           (F32, [1], np.zeros(1)), (T.INT32, None, 1), (T.INT32, None, 1), (T.INT32, None, 1),
                           (T.INT32, None, 0)], [(F32, [1, 3, 3, 1])], (0, [3, 3, 1])),
    Signature(Op.FULLY_CONNECTED, [(F32, [1, 3], None), (F32, [2, 3], np.ones((2, 3))), (F32, [2], np.zeros(2)),
                                   (T.INT32, None, 0)], [(F32, [1, 2])], (1, [2, 3, 1])),
    Signature(Op.AVERAGE_POOL_2D, [(F32, [1, 4, 4, 1], None), (T.INT32, None, 1), (T.INT32, None, 1),
                                   (T.INT32, None, 1), (T.INT32, None, 2), (T.INT32, None, 2), (T.INT32, None, 0)],
              [(F32, [1, 4, 4, 1])], (0, [4, 4, 1])),
    Signature(Op.CONCATENATION, [(F32, [1, 2], None), (F32, [1, 2], None), (T.INT32, None, 1)], [(F32, [1, 4])],
              (0, [1, 1, 1, 1, 2])),
    Signature(Op.RESHAPE, [(F32, [2, 3], None), (I32T, [2], np.array([3, 2]))], [(F32, [3, 2])],
              (0, [1, 1, 1, 2, 3])),
]  # fmt: skip

#: a type no operation in SIGNATURES allows in the place of the original
_WRONG_TYPE = {F32: BOOL8, T.INT32: T.FLOAT32, T.FLOAT32: T.INT32, I32T: F32}
_VALUE_OF = {BOOL8: lambda dims: np.ones(dims, np.bool_), T.FLOAT32: lambda _: 1.0, T.INT32: lambda _: 1,
             F32: lambda dims: np.ones(dims, np.float32)}  # fmt: skip


def _build(sig: Signature, inputs=None, outputs=None, extra_inputs: int = 0, extra_outputs: int = 0):
    """A model with the signature's operands (values set), ready for addOperation."""
    m = nnc.Model()
    ins = []
    for t, dims, value in inputs or sig.inputs:
        i = m.add_operand(t, dims)
        if value is not None:
            m.set_operand_value(i, value)
        ins.append(i)
    for _ in range(extra_inputs):
        i = m.add_operand(BOOL8, [1])
        m.set_operand_value(i, np.ones(1, np.bool_))
        ins.append(i)
    outs = [m.add_operand(t, dims) for t, dims in outputs or sig.outputs]
    outs += [m.add_operand(F32, [1]) for _ in range(extra_outputs)]
    return m, ins, outs


def _mutations(sig: Signature):
    for k, (t, dims, value) in enumerate(sig.inputs):
        wrong = _WRONG_TYPE[t]
        ins = list(sig.inputs)
        ins[k] = (wrong, dims, None if value is None else _VALUE_OF[wrong](dims))
        yield f"input{k}-{t.name}-to-{wrong.name}", dict(inputs=ins)
    for n in range(1, 6):
        yield f"{n}-extra-inputs", dict(extra_inputs=n)
    for k, (t, dims) in enumerate(sig.outputs):
        outs = list(sig.outputs)
        outs[k] = (I32T if t != I32T else F32, dims)
        yield f"output{k}-type", dict(outputs=outs)
    yield "extra-output", dict(extra_outputs=1)
    k, dims = sig.bad_rank
    ins = list(sig.inputs)
    ins[k] = (ins[k][0], dims, None if ins[k][2] is None else np.ones(dims, np.float32))
    yield f"input{k}-rank-{len(dims)}", dict(inputs=ins)


@pytest.mark.checklist(58)
@pytest.mark.parametrize("sig", SIGNATURES, ids=lambda s: s.op.name)
def test_signature_checked_at_add_operation(sig: Signature) -> None:
    """The valid form is accepted (and finishes); every mutation -- an input of
    a type the signature does not allow, 1 to 5 extra inputs, another output
    type, an extra output, an input rank out of range -- fails at
    addOperation, not later (C58)."""
    m, ins, outs = _build(sig)
    m.add_operation(sig.op, ins, outs)
    m.identify_inputs_and_outputs([i for i, s in zip(ins, sig.inputs) if s[2] is None], outs)
    m.finish()
    for name, change in _mutations(sig):
        m, ins, outs = _build(sig, **change)
        try:
            with raises(RC.BAD_DATA, M_ADD_OPERATION):
                m.add_operation(sig.op, ins, outs)
        except AssertionError as e:  # name the mutation that slipped through
            raise AssertionError(f"{sig.op.name} {name}: {e}") from None
        assert m.operations == []


@pytest.mark.checklist(59)
def test_quant8_mul_output_scale_must_exceed_product() -> None:
    def mul(out_scale: float) -> None:
        m = nnc.Model()
        a = m.add_operand(Q8, [2], 0.5, 0)
        b = m.add_operand(Q8, [2], 0.5, 0)
        act = m.add_operand(T.INT32)
        m.set_operand_value(act, 0)
        o = m.add_operand(Q8, [2], out_scale, 0)
        m.add_operation(Op.MUL, [a, b, act], [o])

    mul(0.26)
    for bad in (0.25, 0.1):
        with raises(RC.BAD_DATA, M_ADD_OPERATION):
            mul(bad)


@pytest.mark.checklist(60)
def test_operations_need_not_be_added_in_order() -> None:
    m = nnc.Model()
    a = m.add_operand(F32, [2])
    t = m.add_operand(F32, [2])
    o = m.add_operand(F32, [2])
    m.add_operation(Op.RELU, [t], [o])  # the consumer first
    m.add_operation(Op.TANH, [a], [t])
    m.identify_inputs_and_outputs([a], [o])
    m.finish()
    assert [op.type for op in m.operations] == [Op.TANH, Op.RELU]
    assert [op.type for op in m.operations_as_added] == [Op.RELU, Op.TANH]


# -- identifyInputsAndOutputs (C61-C66) -------------------------------------------------------------------

IDENTIFY_BAD = [
    ("input-is-output", (62,), lambda m: m.identify_inputs_and_outputs([0, 1], [0])),
    ("output-is-input", (62,), lambda m: m.identify_inputs_and_outputs([3, 1], [3])),
    ("duplicate-inputs", (63,), lambda m: m.identify_inputs_and_outputs([0, 0, 1], [3])),
    ("duplicate-outputs", (63,), lambda m: m.identify_inputs_and_outputs([0, 1], [3, 3])),
    ("index-out-of-range", (64,), lambda m: m.identify_inputs_and_outputs([0, 9], [3])),
    ("index-minus-1", (64, 5), lambda m: m.identify_inputs_and_outputs([0, 1], [-1])),
    ("constant-as-input", (64,), lambda m: m.identify_inputs_and_outputs([0, 1, 2], [3])),
    ("omitted-as-output", (64,), lambda m: (m.set_operand_value(4, None), m.identify_inputs_and_outputs([0, 1], [4]))),
    ("subgraph-as-input", (64,), lambda m: m.identify_inputs_and_outputs([0, 1, 5], [3])),
]


@pytest.mark.parametrize("act", [pytest.param(a, id=i, marks=pytest.mark.checklist(*n)) for i, n, a in IDENTIFY_BAD])
def test_identify_rejected(act) -> None:
    m = _ready_model()
    m.add_operand(F32, [2])  # 4
    m.set_operand_value_from_model(m.add_operand(T.MODEL), add_model())  # 5
    m.add_operation(Op.ADD, [0, 1, 2], [3])
    with raises(RC.BAD_DATA, M_IDENTIFY):
        act(m)
    assert [o.lifetime for o in m.operands[:4]] == [Lifetime.TEMPORARY_VARIABLE] * 2 + [
        Lifetime.CONSTANT_COPY, Lifetime.TEMPORARY_VARIABLE]  # C6: nothing changed
    assert m.inputs == [] and m.outputs == []


@pytest.mark.checklist(64)
def test_identify_twice_is_rejected() -> None:
    """An operand that is already an input or output cannot be named again,
    even by a second call."""
    m = add_model(finish=False)
    with raises(RC.BAD_DATA, M_IDENTIFY):
        m.identify_inputs_and_outputs([0, 1], [3])
    m.finish()


@pytest.mark.checklist(65, 6)
def test_identify_single_add() -> None:
    m = _ready_model()
    m.add_operation(Op.ADD, [0, 1, 2], [3])
    with raises(RC.BAD_DATA, M_IDENTIFY):
        m.identify_inputs_and_outputs([0, 0], [3])
    m.identify_inputs_and_outputs([0, 1], [3])
    m.finish()
    assert m.finished and m.inputs == [0, 1] and m.outputs == [3]


# -- finish: graph validity (C66-C74) ------------------------------------------------------------------


def _graph(build: Callable[[nnc.Model], None]) -> nnc.Model:
    m = nnc.Model()
    build(m)
    return m


def _no_inputs(m):
    c = m.add_operand(F32, [2])
    m.set_operand_value(c, np.ones(2, np.float32))
    o = m.add_operand(F32, [2])
    m.add_operation(Op.RELU, [c], [o])
    m.identify_inputs_and_outputs([], [o])


def _no_outputs(m):
    a = m.add_operand(F32, [2])
    o = m.add_operand(F32, [2])
    m.add_operation(Op.RELU, [a], [o])
    m.identify_inputs_and_outputs([a], [])


def _no_operations(m):
    a = m.add_operand(F32, [2])
    o = m.add_operand(F32, [2])
    m.identify_inputs_and_outputs([a], [o])


def _cycle(m):
    a = m.add_operand(F32, [2])
    t = m.add_operand(F32, [2])
    u = m.add_operand(F32, [2])
    m.add_operation(Op.RELU, [u], [t])
    m.add_operation(Op.TANH, [t], [u])
    m.identify_inputs_and_outputs([a], [u])


def _missing_write(m):
    a = m.add_operand(F32, [2])
    t = m.add_operand(F32, [2])
    act = m.add_operand(T.INT32)
    m.set_operand_value(act, 0)
    o = m.add_operand(F32, [2])
    m.add_operation(Op.ADD, [a, t, act], [o])
    m.identify_inputs_and_outputs([a], [o])


def _unwritten_unread(m):
    a = m.add_operand(F32, [2])
    o = m.add_operand(F32, [2])
    m.add_operand(F32, [2])  # nobody reads or writes it
    m.add_operation(Op.RELU, [a], [o])
    m.identify_inputs_and_outputs([a], [o])


def _multiple_write(m):
    a = m.add_operand(F32, [2])
    o = m.add_operand(F32, [2])
    m.add_operation(Op.RELU, [a], [o])
    m.add_operation(Op.TANH, [a], [o])
    m.identify_inputs_and_outputs([a], [o])


def _constant_unspecified(m):
    a = m.add_operand(F32, [2])
    c = m.add_operand(F32, [0])
    with raises(RC.BAD_DATA, M_SET_VALUE):
        m.set_operand_value(c, np.ones(2, np.float32))
    act = m.add_operand(T.INT32)
    m.set_operand_value(act, 0)
    o = m.add_operand(F32, [2])
    m.add_operation(Op.ADD, [a, c, act], [o])
    m.identify_inputs_and_outputs([a], [o])


def _constant_wrong_length(m):
    a = m.add_operand(F32, [2])
    c = m.add_operand(F32, [2])
    with raises(RC.BAD_DATA, M_SET_VALUE):
        m.set_operand_value(c, np.ones(3, np.float32))
    act = m.add_operand(T.INT32)
    m.set_operand_value(act, 0)
    o = m.add_operand(F32, [2])
    m.add_operation(Op.ADD, [a, c, act], [o])
    m.identify_inputs_and_outputs([a], [o])


def _input_given_value_later(m):
    a = m.add_operand(F32, [2])
    o = m.add_operand(F32, [2])
    m.add_operation(Op.RELU, [a], [o])
    m.identify_inputs_and_outputs([a], [o])
    m.set_operand_value(a, np.ones(2, np.float32))


def _no_operands(m):
    pass


FINISH_BAD = [
    ("no-inputs", (66,), _no_inputs),
    ("no-outputs", (66,), _no_outputs),
    ("no-operands", (67,), _no_operands),
    ("no-operations", (67,), _no_operations),
    ("cycle", (68,), _cycle),
    ("missing-write", (69,), _missing_write),
    ("unwritten-operand", (70,), _unwritten_unread),
    ("multiple-write", (71,), _multiple_write),
    ("constant-not-fully-specified", (72,), _constant_unspecified),
    ("constant-wrong-length", (72,), _constant_wrong_length),
    ("input-missing-from-its-role", (74,), _input_given_value_later),
]


@pytest.mark.parametrize("build", [pytest.param(b, id=i, marks=pytest.mark.checklist(*n)) for i, n, b in FINISH_BAD])
def test_finish_rejects_invalid_graphs(build) -> None:
    """finish() is BAD_DATA and the model becomes INVALID (C18)."""
    m = _graph(build)
    with raises(RC.BAD_DATA, M_FINISH):
        m.finish()
    with raises(RC.BAD_STATE, M_FINISH):
        m.finish()


@pytest.mark.checklist(73)
@pytest.mark.parametrize("temp_dims", [[0, 0], None], ids=["unknown-dimensions", "unknown-rank"])
def test_temporaries_may_stay_unspecified(temp_dims) -> None:
    """A temporary with unknown dimensions or rank: model, compilation and
    computation all succeed."""
    m = nnc.Model()
    a = m.add_operand(F32, [2, 3])
    t = m.add_operand(F32, temp_dims)
    o = m.add_operand(F32, [2, 3])
    m.add_operation(Op.TANH, [a], [t])
    m.add_operation(Op.RELU, [t], [o])
    m.identify_inputs_and_outputs([a], [o])
    m.finish()
    c = nnc.Compilation(m)
    c.finish()
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(compute(c, x), np.maximum(np.tanh(x), 0), rtol=1e-6)


# -- IF and WHILE at addOperation (C75, C76) -------------------------------------------------------------


def _branch(in_dims=(2,), out_dims=(2,), t=F32, scale=0.0, zp=0, n_in=1, n_out=1) -> nnc.Model:
    """A finished model with ``n_in`` inputs and ``n_out`` outputs of type
    ``t`` (out_k = RELU(in_0))."""
    m = nnc.Model()
    ins = [m.add_operand(t, list(in_dims), scale, zp) for _ in range(n_in)]
    outs = [m.add_operand(t, list(out_dims), scale, zp) for _ in range(n_out)]
    for o in outs:
        m.add_operation(Op.RELU, [ins[0]], [o])
    m.identify_inputs_and_outputs(ins, outs)
    m.finish()
    return m


@dataclass
class IfCase:
    cond: tuple = (BOOL8, [1])
    then: dict = field(default_factory=dict)
    other: dict = field(default_factory=dict)  # the else branch
    outer_in: tuple = (F32, [2], 0.0, 0)
    outer_out: tuple = (F32, [2], 0.0, 0)
    n_outer_in: int = 1
    n_outer_out: int = 1
    then_operand_type: T = T.MODEL


def _if_model(c: IfCase):
    m = nnc.Model()
    cond = m.add_operand(c.cond[0], c.cond[1])
    refs = []
    for branch in (c.then, c.other):
        r = m.add_operand(T.MODEL)
        m.set_operand_value_from_model(r, _branch(**branch))
        refs.append(r)
    if c.then_operand_type != T.MODEL:
        refs[0] = m.add_operand(c.then_operand_type, [2])
    t, dims, scale, zp = c.outer_in
    ins = [m.add_operand(t, dims, scale, zp) for _ in range(c.n_outer_in)]
    t, dims, scale, zp = c.outer_out
    outs = [m.add_operand(t, dims, scale, zp) for _ in range(c.n_outer_out)]
    return m, [cond, *refs, *ins], outs


IF_VALID = {
    "fully-specified": IfCase(),
    "outer-unknown-dims": IfCase(outer_in=(F32, [0], 0.0, 0), outer_out=(F32, [0], 0.0, 0)),
    "outer-unknown-rank": IfCase(outer_in=(F32, None, 0.0, 0), outer_out=(F32, None, 0.0, 0)),
    "inner-unknown-dims": IfCase(then=dict(in_dims=(0,), out_dims=(0,)), other=dict(in_dims=(0,), out_dims=(0,))),
    "quantised": IfCase(then=dict(t=Q8, scale=0.5, zp=3), other=dict(t=Q8, scale=0.5, zp=3),
                        outer_in=(Q8, [2], 0.5, 3), outer_out=(Q8, [2], 0.5, 3)),
}
IF_INVALID = {
    "condition-not-bool": IfCase(cond=(F32, [1])),
    "condition-shape-2": IfCase(cond=(BOOL8, [2])),
    "condition-rank-2": IfCase(cond=(BOOL8, [1, 1])),
    "condition-unknown-rank": IfCase(cond=(BOOL8, None)),
    "then-not-a-model-operand": IfCase(then_operand_type=F32),
    "too-many-inputs": IfCase(n_outer_in=2),
    "too-few-outputs-for-branch": IfCase(then=dict(n_out=2), other=dict(n_out=2)),
    "too-many-outputs": IfCase(n_outer_out=2),
    "input-type": IfCase(outer_in=(I32T, [2], 0.0, 0)),
    "output-type": IfCase(outer_out=(I32T, [2], 0.0, 0)),
    "input-rank": IfCase(outer_in=(F32, [2, 1], 0.0, 0)),
    "input-dims": IfCase(outer_in=(F32, [3], 0.0, 0)),
    "output-dims": IfCase(outer_out=(F32, [3], 0.0, 0)),
    "else-branch-differs": IfCase(other=dict(in_dims=(3,), out_dims=(3,))),
    "scale": IfCase(then=dict(t=Q8, scale=0.5), other=dict(t=Q8, scale=0.5),
                    outer_in=(Q8, [2], 0.25, 0), outer_out=(Q8, [2], 0.5, 0)),
    "zero-point": IfCase(then=dict(t=Q8, scale=0.5), other=dict(t=Q8, scale=0.5),
                         outer_in=(Q8, [2], 0.5, 1), outer_out=(Q8, [2], 0.5, 0)),
}


@pytest.mark.checklist(75)
@pytest.mark.parametrize("name", list(IF_VALID))
def test_if_valid_forms(name) -> None:
    m, ins, outs = _if_model(IF_VALID[name])
    m.add_operation(Op.IF, ins, outs)
    assert len(m.operations) == 1


@pytest.mark.checklist(75)
@pytest.mark.parametrize("name", list(IF_INVALID))
def test_if_mutations_fail_at_add_operation(name) -> None:
    m, ins, outs = _if_model(IF_INVALID[name])
    with raises(RC.BAD_DATA, M_ADD_OPERATION):
        m.add_operation(Op.IF, ins, outs)
    assert m.operations == []


@pytest.mark.checklist(75)
def test_if_needs_three_inputs_and_an_output() -> None:
    m, ins, outs = _if_model(IfCase())
    with raises(RC.BAD_DATA, M_ADD_OPERATION):
        m.add_operation(Op.IF, ins[:2], outs)
    with raises(RC.BAD_DATA, M_ADD_OPERATION):
        m.add_operation(Op.IF, ins, [])


def _cond_model(n_in: int = 2, out=(BOOL8, [1]), n_out: int = 1, in_dims=(1,)) -> nnc.Model:
    """A WHILE condition: out = in_0 > 0, with ``n_in`` F32 inputs."""
    m = nnc.Model()
    ins = [m.add_operand(F32, list(in_dims)) for _ in range(n_in)]
    zero = m.add_operand(F32, [1])
    m.set_operand_value(zero, np.zeros(1, np.float32))
    outs = []
    for _ in range(n_out):
        o = m.add_operand(*out)
        if out[0] == BOOL8:
            m.add_operation(Op.GREATER, [ins[0], zero], [o])
        else:
            m.add_operation(Op.RELU, [ins[0]], [o])
        outs.append(o)
    m.identify_inputs_and_outputs(ins, outs)
    m.finish()
    return m


def _body_model(n_in: int = 2, n_out: int = 1, out_type=F32, dims=(1,)) -> nnc.Model:
    """A WHILE body: out_k = in_0 - in_last, with ``n_in`` inputs and ``n_out`` outputs."""
    m = nnc.Model()
    ins = [m.add_operand(F32, list(dims)) for _ in range(n_in)]
    act = m.add_operand(T.INT32)
    m.set_operand_value(act, 0)
    outs = []
    for _ in range(n_out):
        o = m.add_operand(out_type, list(dims))
        if out_type == F32:
            m.add_operation(Op.SUB, [ins[0], ins[-1], act], [o])
        else:
            m.add_operation(Op.CAST, [ins[0]], [o])
        outs.append(o)
    m.identify_inputs_and_outputs(ins, outs)
    m.finish()
    return m


def _while(cond=None, body=None, outer_in=((F32, [1]), (F32, [1])), outer_out=((F32, [1]),)):
    """WHILE with m = 1 input-output operand and n = 1 input-only operand."""
    m = nnc.Model()
    c = m.add_operand(T.MODEL)
    m.set_operand_value_from_model(c, cond if cond is not None else _cond_model())
    b = m.add_operand(T.MODEL)
    m.set_operand_value_from_model(b, body if body is not None else _body_model())
    ins = [m.add_operand(t, d) for t, d in outer_in]
    outs = [m.add_operand(t, d) for t, d in outer_out]
    return m, [c, b, *ins], outs


WHILE_INVALID = {
    "condition-two-outputs": lambda: _while(cond=_cond_model(n_out=2)),
    "condition-output-not-bool": lambda: _while(cond=_cond_model(out=(F32, [1]))),
    "condition-output-shape": lambda: _while(cond=_cond_model(out=(BOOL8, [2]), in_dims=(2,)),
                                             outer_in=((F32, [2]), (F32, [2])), outer_out=((F32, [2]),)),
    "condition-input-count": lambda: _while(cond=_cond_model(n_in=3)),
    "body-input-count": lambda: _while(body=_body_model(n_in=3)),
    "body-fewer-outputs-than-while": lambda: _while(outer_out=((F32, [1]), (F32, [1]))),
    "body-more-outputs-than-inputs": lambda: _while(body=_body_model(n_in=2, n_out=3)),
    "outer-input-type": lambda: _while(outer_in=((I32T, [1]), (F32, [1]))),
    "outer-output-type": lambda: _while(outer_out=((I32T, [1]),)),
    "outer-input-dims": lambda: _while(outer_in=((F32, [1]), (F32, [3]))),
    "body-input-output-type": lambda: _while(body=_body_model(out_type=I32T), outer_out=((I32T, [1]),)),
    "condition-not-a-model": lambda: (lambda m, ins, outs: (m, [ins[2], ins[1], *ins[2:]], outs))(*_while()),
}


@pytest.mark.checklist(76)
def test_while_valid_forms() -> None:
    for outer in (((F32, [1]), (F32, [1])), ((F32, [0]), (F32, None))):
        m, ins, outs = _while(outer_in=outer, outer_out=((F32, None),))
        m.add_operation(Op.WHILE, ins, outs)
        assert len(m.operations) == 1


@pytest.mark.checklist(76)
@pytest.mark.parametrize("name", list(WHILE_INVALID))
def test_while_mutations_fail_at_add_operation(name) -> None:
    m, ins, outs = WHILE_INVALID[name]()
    with raises(RC.BAD_DATA, M_ADD_OPERATION):
        m.add_operation(Op.WHILE, ins, outs)
    assert m.operations == []


# -- getSupportedOperationsForDevices (C77, C78) ------------------------------------------------------------


def _partly_supported() -> nnc.Model:
    """Added: op 0 = OEM_OPERATION (valid NNAPI, a vendor's operation, which
    nnc's CPU device does not implement), op 1 = RELU, op 2 = TANH, the
    consumer of op 1."""
    m = nnc.Model()
    x = m.add_operand(F32, [2])
    vendor = m.add_operand(F32, [2])
    a = m.add_operand(F32, [2])
    r = m.add_operand(F32, [2])
    o = m.add_operand(F32, [2])
    m.add_operation(Op.OEM_OPERATION, [x], [vendor])
    m.add_operation(Op.RELU, [a], [r])
    m.add_operation(Op.TANH, [r], [o])
    m.identify_inputs_and_outputs([x, a], [vendor, o])
    m.finish()
    return m


SUPPORTED_BAD = [
    Case("empty-device-list", (77,), lambda: add_model().get_supported_operations_for_devices([]),
         RC.BAD_DATA, M_SUPPORTED),
    Case("empty-list-before-state", (77,), lambda: add_model(finish=False).get_supported_operations_for_devices([]),
         RC.BAD_DATA, M_SUPPORTED),
    Case("same-device-twice", (77,), lambda: add_model().get_supported_operations_for_devices([cpu(), cpu()]),
         RC.BAD_DATA, M_SUPPORTED),
    Case("null-device", (77,), lambda: add_model().get_supported_operations_for_devices([None]),
         RC.UNEXPECTED_NULL, M_SUPPORTED),
    Case("null-device-after-good", (77,), lambda: add_model().get_supported_operations_for_devices([cpu(), None]),
         RC.UNEXPECTED_NULL, M_SUPPORTED),
    Case("foreign-device", (77,), lambda: add_model().get_supported_operations_for_devices(["nnc-cpu"]),
         RC.BAD_DATA, M_SUPPORTED),
]  # fmt: skip


@pytest.mark.parametrize("case", [c.param() for c in SUPPORTED_BAD])
def test_get_supported_operations_rejected(case: Case) -> None:
    run_case(case)


@pytest.mark.checklist(78)
def test_supported_operations_in_order_added() -> None:
    """Indexed as added, not as sorted; the same answer Compilation.finish
    gives (its UnsupportedOperationError names the operation by the same
    index)."""
    m = _partly_supported()
    assert [op.type for op in m.operations_as_added] == [Op.OEM_OPERATION, Op.RELU, Op.TANH]
    assert m.get_supported_operations_for_devices([cpu()]) == [False, True, True]
    assert m.get_supported_operations_for_devices(nnc.get_devices()) == [False, True, True]
    assert add_model().get_supported_operations_for_devices((cpu(),)) == [True]
    c = nnc.Compilation(m)
    with raises(RC.OP_FAILED, "ANeuralNetworksCompilation_finish") as info:
        c.finish()
    assert isinstance(info.value, nnc.UnsupportedOperationError)
    assert info.value.operation_index == 0 and info.value.operation_type == Op.OEM_OPERATION


@pytest.mark.checklist(78)
def test_supported_operations_answer_per_operation() -> None:
    """The answer is per operation and its operands: LSH_PROJECTION, which
    hashes its input's bytes, is supported for int32 and float16 inputs
    alike (a float16 input is hashed as its stored halves), OEM_OPERATION
    is not supported in any type."""

    def lsh(input_type: T) -> nnc.Model:
        m = nnc.Model()
        fns = m.add_operand(F32, [2, 2])
        x = m.add_operand(input_type, [3, 2])
        kind = m.add_operand(T.INT32)
        o = m.add_operand(T.TENSOR_INT32, [2])
        m.set_operand_value(kind, 1)
        w = m.add_operand(F32, [3])
        m.add_operation(Op.LSH_PROJECTION, [fns, x, w, kind], [o])
        m.identify_inputs_and_outputs([fns, x, w], [o])
        m.finish()
        return m

    assert lsh(T.TENSOR_FLOAT16).get_supported_operations_for_devices([cpu()]) == [True]
    assert lsh(T.TENSOR_INT32).get_supported_operations_for_devices([cpu()]) == [True]
    assert _partly_supported().get_supported_operations_for_devices([cpu()]) == [False, True, True]


# -- section 1 for the model ---------------------------------------------------------------------------------


@pytest.mark.checklist(1)
def test_every_error_is_a_failure_of_its_class() -> None:
    """Every error of this file's tables is an NNError of the class of its
    code, and never NO_ERROR (C1).  (Unknown result codes are part B's
    errors.py; here: nothing is ever reported as success.)"""
    for case in [*STATE_CASES, *NULL_CASES, *SET_MODEL_CASES, *SUPPORTED_BAD]:
        with pytest.raises(nnc.NNError) as info:
            case.act()
        check_error(info.value, case.code, case.function)


@pytest.mark.checklist(3, 4)
def test_close_is_harmless() -> None:
    """Model_free(NULL) does nothing; closing twice, or an unfinished model,
    never fails; a closed model refuses further use with BAD_STATE; a
    compilation made before keeps working (it holds its own reference)."""
    nnc.Model.close(None)
    unfinished = add_model(finish=False)
    unfinished.close()
    unfinished.close()
    with nnc.Model() as m:
        m.add_operand(F32, [2])
    m.close()
    done = add_model()
    c = nnc.Compilation(done)
    done.close()
    with raises(RC.BAD_STATE, M_ADD_OPERAND):
        done.add_operand(F32, [2])
    with raises(RC.BAD_STATE, C_CREATE):
        nnc.Compilation(done)
    c.finish()
    x = np.array([1.0, 2.0], np.float32)
    np.testing.assert_array_equal(compute(c, x, x), 2 * x)


@pytest.mark.checklist(6, 18)
def test_failed_setters_do_not_poison_finish() -> None:
    """Only finish's own failure is sticky (C18); a rejected setter leaves the
    model as it was and finish still succeeds (C6)."""
    m = add_model(finish=False)
    for bad in (lambda: m.add_operand(T.INT32, [3]), lambda: m.set_operand_value(2, b"\0"),
                lambda: m.add_operation(Op.ADD, [0], [3]), lambda: m.identify_inputs_and_outputs([0], [0])):
        with pytest.raises(nnc.BadDataError):
            bad()
    m.finish()
    assert m.finished


@pytest.mark.checklist(21)
def test_finished_model_is_shared_by_threads() -> None:
    """A finished model may be compiled from several threads at once; each
    compilation keeps the model alive (C21)."""
    m = add_model(dims=(3,))
    results: list[object] = [None] * 4

    def work(model: nnc.Model, k: int) -> None:
        try:
            c = nnc.Compilation(model)
            c.finish()
            x = np.full(3, k, np.float32)
            results[k] = compute(c, x, x)
        except BaseException as e:  # noqa: BLE001 - reported below
            results[k] = e

    threads = [threading.Thread(target=work, args=(m, k)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k, r in enumerate(results):
        assert isinstance(r, np.ndarray), r
        np.testing.assert_array_equal(r, np.full(3, 2 * k, np.float32))
    c = nnc.Compilation(m)
    ref = weakref.ref(m)
    del m
    gc.collect()
    assert ref() is not None and c.model is ref()
