"""Registers the library's C functions (``ffi.def_extern``) on the runtime."""

from __future__ import annotations

from typing import Any

from nnc import device as devices
from nnc.compilation import Compilation
from nnc.enums import OperandType
from nnc.execution.facade import Execution
from nnc.model import Model
from nnc.ndk.api_more import install_more
from nnc.ndk.entry import (
    BAD_DATA,
    UNEXPECTED_NULL,
    Handles,
    array_at,
    define_free,
    device_at,
    dims_of,
    guarded,
    out_pointer,
)
from nnc.operand_types import dtype_of


def install(ffi: Any) -> None:
    """Define every implemented entry point for the embedded ``ffi``."""
    h = Handles(ffi)
    _global(ffi, h)
    _model(ffi, h)
    _compilation(ffi, h)
    _execution(ffi, h)
    install_more(ffi, h)


def _global(ffi: Any, h: Handles) -> None:
    @ffi.def_extern(name="ANeuralNetworks_getRuntimeFeatureLevel")
    def feature_level():
        return int(devices.get_runtime_feature_level())

    @ffi.def_extern(name="ANeuralNetworks_getDeviceCount")
    @guarded("ANeuralNetworks_getDeviceCount")
    def device_count(out):
        out_pointer(ffi, out, "ANeuralNetworks_getDeviceCount")
        out[0] = devices.get_device_count()

    @ffi.def_extern(name="ANeuralNetworks_getDevice")
    @guarded("ANeuralNetworks_getDevice")
    def get_device(index, out):
        out_pointer(ffi, out, "ANeuralNetworks_getDevice")
        out[0] = h.new(devices.get_device(int(index)), "ANeuralNetworksDevice *")

    names: dict[int, Any] = {}

    @ffi.def_extern(name="ANeuralNetworksDevice_getName")
    @guarded("ANeuralNetworksDevice_getName")
    def device_name(dev, out):
        d = device_at(h, dev, "ANeuralNetworksDevice_getName")
        name = d.name
        out_pointer(ffi, out, "ANeuralNetworksDevice_getName")
        names.setdefault(id(d), ffi.new("char[]", name.encode()))
        out[0] = names[id(d)]

    @ffi.def_extern(name="ANeuralNetworksDevice_getType")
    @guarded("ANeuralNetworksDevice_getType")
    def device_type(dev, out):
        t = device_at(h, dev, "ANeuralNetworksDevice_getType").type
        out_pointer(ffi, out, "ANeuralNetworksDevice_getType")
        out[0] = int(t)


def _model(ffi: Any, h: Handles) -> None:
    @ffi.def_extern(name="ANeuralNetworksModel_create")
    @guarded("ANeuralNetworksModel_create")
    def create(out):
        out_pointer(ffi, out, "ANeuralNetworksModel_create")
        out[0] = h.new(Model(), "ANeuralNetworksModel *")

    define_free(ffi, h, "ANeuralNetworksModel_free")

    @ffi.def_extern(name="ANeuralNetworksModel_finish")
    @guarded("ANeuralNetworksModel_finish")
    def finish(m):
        Model.finish(h.get(m))

    @ffi.def_extern(name="ANeuralNetworksModel_addOperand")
    @guarded("ANeuralNetworksModel_addOperand")
    def add_operand(m, t):
        model = h.get(m)
        if t == ffi.NULL:
            return Model.add_operand(model, None)  # type: ignore[arg-type]
        Model.add_operand(model, int(t.type), dims_of(ffi, t) or [], float(t.scale), int(t.zeroPoint))

    @ffi.def_extern(name="ANeuralNetworksModel_setOperandValue")
    @guarded("ANeuralNetworksModel_setOperandValue")
    def set_value(m, index, buf, length):
        model = h.get(m)
        if model is None or buf == ffi.NULL:
            return Model.set_operand_value(model, int(index), None) if buf == ffi.NULL else UNEXPECTED_NULL
        if not 0 <= int(index) < len(model.operands):
            return BAD_DATA
        dtype = dtype_of(OperandType(model.operands[int(index)].type))
        value = array_at(ffi, buf, int(length), dtype, "ANeuralNetworksModel_setOperandValue")
        Model.set_operand_value(model, int(index), value.copy())

    @ffi.def_extern(name="ANeuralNetworksModel_addOperation")
    @guarded("ANeuralNetworksModel_addOperation")
    def add_operation(m, op, n_in, ins, n_out, outs):
        if ins == ffi.NULL or outs == ffi.NULL:
            return UNEXPECTED_NULL
        Model.add_operation(h.get(m), int(op), list(ins[0:n_in]), list(outs[0:n_out]))

    @ffi.def_extern(name="ANeuralNetworksModel_identifyInputsAndOutputs")
    @guarded("ANeuralNetworksModel_identifyInputsAndOutputs")
    def identify(m, n_in, ins, n_out, outs):
        if ins == ffi.NULL or outs == ffi.NULL:
            return UNEXPECTED_NULL
        Model.identify_inputs_and_outputs(h.get(m), list(ins[0:n_in]), list(outs[0:n_out]))

    @ffi.def_extern(name="ANeuralNetworksModel_relaxComputationFloat32toFloat16")
    @guarded("ANeuralNetworksModel_relaxComputationFloat32toFloat16")
    def relax(m, allow):
        Model.relax_computation_float32_to_float16(h.get(m), bool(allow))


def _compilation(ffi: Any, h: Handles) -> None:
    @ffi.def_extern(name="ANeuralNetworksCompilation_create")
    @guarded("ANeuralNetworksCompilation_create")
    def create(m, out):
        model = h.get(m)
        out_pointer(ffi, out, "ANeuralNetworksCompilation_create")
        out[0] = h.new(Compilation(model), "ANeuralNetworksCompilation *")

    define_free(ffi, h, "ANeuralNetworksCompilation_free")

    @ffi.def_extern(name="ANeuralNetworksCompilation_setPreference")
    @guarded("ANeuralNetworksCompilation_setPreference")
    def preference(c, p):
        Compilation.set_preference(h.get(c), int(p))

    @ffi.def_extern(name="ANeuralNetworksCompilation_setCaching")
    @guarded("ANeuralNetworksCompilation_setCaching")
    def caching(c, cache_dir, token):
        if cache_dir == ffi.NULL or token == ffi.NULL:
            return UNEXPECTED_NULL
        Compilation.set_caching(h.get(c), ffi.string(cache_dir).decode(), bytes(ffi.buffer(token, 32)))

    @ffi.def_extern(name="ANeuralNetworksCompilation_finish")
    @guarded("ANeuralNetworksCompilation_finish")
    def finish(c):
        Compilation.finish(h.get(c))


def _execution(ffi: Any, h: Handles) -> None:
    @ffi.def_extern(name="ANeuralNetworksExecution_create")
    @guarded("ANeuralNetworksExecution_create")
    def create(c, out):
        comp = h.get(c)
        out_pointer(ffi, out, "ANeuralNetworksExecution_create")
        out[0] = h.new(Execution(comp), "ANeuralNetworksExecution *")

    define_free(ffi, h, "ANeuralNetworksExecution_free")

    def _bind(fn, name, e, index, t, buf, length, output: bool):
        ex = h.get(e)
        if ex is None:
            return UNEXPECTED_NULL
        roles = ex.model.outputs if output else ex.model.inputs
        if not 0 <= int(index) < len(roles):
            return BAD_DATA
        dtype = dtype_of(OperandType(ex.model.operands[roles[int(index)]].type))
        arr = None if buf == ffi.NULL else array_at(ffi, buf, int(length), dtype, name)
        fn(ex, int(index), arr, dims_of(ffi, t))

    @ffi.def_extern(name="ANeuralNetworksExecution_setInput")
    @guarded("ANeuralNetworksExecution_setInput")
    def set_input(e, index, t, buf, length):
        return _bind(Execution.set_input, "ANeuralNetworksExecution_setInput", e, index, t, buf, length, False)

    @ffi.def_extern(name="ANeuralNetworksExecution_setOutput")
    @guarded("ANeuralNetworksExecution_setOutput")
    def set_output(e, index, t, buf, length):
        return _bind(Execution.set_output, "ANeuralNetworksExecution_setOutput", e, index, t, buf, length, True)

    @ffi.def_extern(name="ANeuralNetworksExecution_setReusable")
    @guarded("ANeuralNetworksExecution_setReusable")
    def reusable(e, flag):
        Execution.set_reusable(h.get(e), bool(flag))

    @ffi.def_extern(name="ANeuralNetworksExecution_compute")
    @guarded("ANeuralNetworksExecution_compute")
    def compute(e):
        Execution.compute(h.get(e))

    @ffi.def_extern(name="ANeuralNetworksExecution_getOutputOperandRank")
    @guarded("ANeuralNetworksExecution_getOutputOperandRank")
    def rank(e, index, out):
        r = Execution.get_output_operand_rank(h.get(e), int(index))
        out_pointer(ffi, out, "ANeuralNetworksExecution_getOutputOperandRank")
        out[0] = int(r)
        return int(r.code)

    @ffi.def_extern(name="ANeuralNetworksExecution_getOutputOperandDimensions")
    @guarded("ANeuralNetworksExecution_getOutputOperandDimensions")
    def dimensions(e, index, out):
        d = Execution.get_output_operand_dimensions(h.get(e), int(index))
        out_pointer(ffi, out, "ANeuralNetworksExecution_getOutputOperandDimensions")
        for i, v in enumerate(d):
            out[i] = int(v)
        return int(d.code)
