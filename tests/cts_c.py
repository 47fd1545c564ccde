"""The conformance harness's Model, Compilation and Execution, driven through
libneuralnetworks.so with ctypes instead of nnc's Python classes.

Each class has the methods :mod:`cts` calls, with the same arguments; a result
code other than NO_ERROR raises the NNError of that code, as the Python API
would, so :func:`cts.run_case` judges both paths by the same rules.
"""

from __future__ import annotations

import ctypes
from ctypes import POINTER, byref, c_float, c_int32, c_uint32, c_void_p
from types import SimpleNamespace

import numpy as np

from nnc.errors import error_for


class OperandType(ctypes.Structure):
    _fields_ = [("type", c_int32), ("dimensionCount", c_uint32), ("dimensions", POINTER(c_uint32)),
                ("scale", c_float), ("zeroPoint", c_int32)]  # fmt: skip


class PerChannel(ctypes.Structure):
    _fields_ = [("channelDim", c_uint32), ("scaleCount", c_uint32), ("scales", POINTER(c_float))]


def _u32(values) -> ctypes.Array:
    values = [int(v) for v in values]
    return (c_uint32 * max(len(values), 1))(*values)


def api(path: str) -> SimpleNamespace:
    """``Model``, ``Compilation`` and ``Execution`` classes over the library at ``path``."""
    lib = ctypes.CDLL(path)

    def call(fn: str, *args) -> None:
        code = getattr(lib, fn)(*args)
        if code != 0:
            raise error_for(code, fn, f"result code {code} from the C library")

    class Model:
        def __init__(self) -> None:
            self.handle = c_void_p()
            call("ANeuralNetworksModel_create", byref(self.handle))
            self._keep: list = []

        def __del__(self) -> None:
            lib.ANeuralNetworksModel_free(self.handle)

        def add_operand(self, t, dims, scale: float = 0.0, zero_point: int = 0) -> None:
            d = list(dims or [])
            arr = _u32(d)
            self._keep.append(arr)
            ot = OperandType(int(t), len(d), ctypes.cast(arr, POINTER(c_uint32)) if d else None, scale, zero_point)
            call("ANeuralNetworksModel_addOperand", self.handle, byref(ot))

        def set_operand_symm_per_channel_quant_params(self, k: int, scales, channel_dim: int) -> None:
            s = (c_float * len(scales))(*scales)
            params = PerChannel(channel_dim, len(scales), ctypes.cast(s, POINTER(c_float)))
            call("ANeuralNetworksModel_setOperandSymmPerChannelQuantParams", self.handle, k, byref(params))

        def set_operand_value(self, k: int, value) -> None:
            if value is None:
                call("ANeuralNetworksModel_setOperandValue", self.handle, k, None, 0)
                return
            data = np.ascontiguousarray(value).tobytes()
            buf = ctypes.create_string_buffer(data, len(data))
            self._keep.append(buf)
            call("ANeuralNetworksModel_setOperandValue", self.handle, k, buf, len(data))

        def set_operand_value_from_model(self, k: int, model: Model) -> None:
            self._keep.append(model)
            call("ANeuralNetworksModel_setOperandValueFromModel", self.handle, k, model.handle)

        def add_operation(self, op, ins, outs) -> None:
            call("ANeuralNetworksModel_addOperation", self.handle, int(op), len(ins), _u32(ins), len(outs), _u32(outs))

        def identify_inputs_and_outputs(self, ins, outs) -> None:
            call("ANeuralNetworksModel_identifyInputsAndOutputs", self.handle, len(ins), _u32(ins), len(outs),
                 _u32(outs))  # fmt: skip

        def relax_computation_float32_to_float16(self, allow: bool) -> None:
            call("ANeuralNetworksModel_relaxComputationFloat32toFloat16", self.handle, ctypes.c_bool(allow))

        def finish(self) -> None:
            call("ANeuralNetworksModel_finish", self.handle)

    class Compilation:
        def __init__(self, model: Model) -> None:
            self.handle = c_void_p()
            self.model = model
            call("ANeuralNetworksCompilation_create", model.handle, byref(self.handle))

        def __del__(self) -> None:
            lib.ANeuralNetworksCompilation_free(self.handle)

        def finish(self) -> None:
            call("ANeuralNetworksCompilation_finish", self.handle)

    class Execution:
        def __init__(self, compilation: Compilation) -> None:
            self.handle = c_void_p()
            self.compilation = compilation
            self._keep: list = []
            call("ANeuralNetworksExecution_create", compilation.handle, byref(self.handle))

        def __del__(self) -> None:
            lib.ANeuralNetworksExecution_free(self.handle)

        def set_input(self, k: int, value) -> None:
            if value is None:
                call("ANeuralNetworksExecution_setInput", self.handle, k, None, None, 0)
                return
            arr = np.ascontiguousarray(value)
            self._keep.append(arr)
            call("ANeuralNetworksExecution_setInput", self.handle, k, None, c_void_p(arr.ctypes.data), arr.nbytes)

        def set_output(self, k: int, buf: np.ndarray, dims=None) -> None:
            self._keep.append(buf)
            call("ANeuralNetworksExecution_setOutput", self.handle, k, None, c_void_p(buf.ctypes.data), buf.nbytes)

        def compute(self) -> None:
            call("ANeuralNetworksExecution_compute", self.handle)

        def get_output_operand_dimensions(self, k: int) -> list[int]:
            rank = c_uint32()
            call("ANeuralNetworksExecution_getOutputOperandRank", self.handle, k, byref(rank))
            dims = (c_uint32 * max(rank.value, 1))()
            call("ANeuralNetworksExecution_getOutputOperandDimensions", self.handle, k, dims)
            return list(dims[: rank.value])

    return SimpleNamespace(Model=Model, Compilation=Compilation, Execution=Execution)
