"""The library's C functions for memory, bursts, events, devices lists,
timing and the rarer model/compilation/execution calls."""

from __future__ import annotations

from typing import Any

from nnc import device as devices
from nnc.burst import Burst
from nnc.compilation import Compilation
from nnc.event import Event
from nnc.execution.facade import Execution
from nnc.memory import Memory, MemoryDesc
from nnc.model import Model
from nnc.ndk.entry import UNEXPECTED_NULL, Handles, define_free, device_at, dims_of, guarded, out_pointer


def install_more(ffi: Any, h: Handles) -> None:
    """Define the remaining entry points for the embedded ``ffi``."""
    _runtime(ffi, h)
    _device_more(ffi, h)
    _model_more(ffi, h)
    _compilation_more(ffi, h)
    _execution_more(ffi, h)
    _memory(ffi, h)
    _memory_desc(ffi, h)
    _burst(ffi, h)
    _event(ffi, h)


def _device_list(ffi: Any, h: Handles, ptr: Any, n: int) -> list | None:
    """A C ``const ANeuralNetworksDevice* const*`` array as Python objects (None for NULL)."""
    if ptr == ffi.NULL:
        return None
    return [h.get(ptr[i]) for i in range(int(n))]


def _runtime(ffi: Any, h: Handles) -> None:
    @ffi.def_extern(name="ANeuralNetworks_getDefaultLoopTimeout")
    def default_loop_timeout():
        return int(devices.get_default_loop_timeout())

    @ffi.def_extern(name="ANeuralNetworks_getMaximumLoopTimeout")
    def maximum_loop_timeout():
        return int(devices.get_maximum_loop_timeout())


def _device_more(ffi: Any, h: Handles) -> None:
    versions: dict[int, Any] = {}

    @ffi.def_extern(name="ANeuralNetworksDevice_getVersion")
    @guarded("ANeuralNetworksDevice_getVersion")
    def version(dev, out):
        d = device_at(h, dev, "ANeuralNetworksDevice_getVersion")
        v = d.version
        out_pointer(ffi, out, "ANeuralNetworksDevice_getVersion")
        versions.setdefault(id(d), ffi.new("char[]", v.encode()))
        out[0] = versions[id(d)]

    @ffi.def_extern(name="ANeuralNetworksDevice_getFeatureLevel")
    @guarded("ANeuralNetworksDevice_getFeatureLevel")
    def feature_level(dev, out):
        level = device_at(h, dev, "ANeuralNetworksDevice_getFeatureLevel").feature_level
        out_pointer(ffi, out, "ANeuralNetworksDevice_getFeatureLevel")
        out[0] = int(level)

    @ffi.def_extern(name="ANeuralNetworksDevice_wait")
    @guarded("ANeuralNetworksDevice_wait")
    def wait(dev):
        device_at(h, dev, "ANeuralNetworksDevice_wait").wait()


def _model_more(ffi: Any, h: Handles) -> None:
    @ffi.def_extern(name="ANeuralNetworksModel_setOperandValueFromMemory")
    @guarded("ANeuralNetworksModel_setOperandValueFromMemory")
    def from_memory(m, index, mem, offset, length):
        Model.set_operand_value_from_memory(h.get(m), int(index), h.get(mem), int(offset), int(length))

    @ffi.def_extern(name="ANeuralNetworksModel_setOperandValueFromModel")
    @guarded("ANeuralNetworksModel_setOperandValueFromModel")
    def from_model(m, index, value):
        Model.set_operand_value_from_model(h.get(m), int(index), h.get(value))

    @ffi.def_extern(name="ANeuralNetworksModel_setOperandSymmPerChannelQuantParams")
    @guarded("ANeuralNetworksModel_setOperandSymmPerChannelQuantParams")
    def per_channel(m, index, params):
        model = h.get(m)
        if model is None or params == ffi.NULL:
            return UNEXPECTED_NULL
        if params.scales == ffi.NULL and params.scaleCount:
            return UNEXPECTED_NULL
        scales = [float(params.scales[i]) for i in range(int(params.scaleCount))]
        Model.set_operand_symm_per_channel_quant_params(model, int(index), scales, int(params.channelDim))

    @ffi.def_extern(name="ANeuralNetworksModel_getSupportedOperationsForDevices")
    @guarded("ANeuralNetworksModel_getSupportedOperationsForDevices")
    def supported(m, devs, n, out):
        flags = Model.get_supported_operations_for_devices(h.get(m), _device_list(ffi, h, devs, n))
        out_pointer(ffi, out, "ANeuralNetworksModel_getSupportedOperationsForDevices")
        for i, f in enumerate(flags):
            out[i] = bool(f)


def _compilation_more(ffi: Any, h: Handles) -> None:
    @ffi.def_extern(name="ANeuralNetworksCompilation_createForDevices")
    @guarded("ANeuralNetworksCompilation_createForDevices")
    def create_for_devices(m, devs, n, out):
        comp = Compilation.for_devices(h.get(m), _device_list(ffi, h, devs, n))
        out_pointer(ffi, out, "ANeuralNetworksCompilation_createForDevices")
        out[0] = h.new(comp, "ANeuralNetworksCompilation *")

    @ffi.def_extern(name="ANeuralNetworksCompilation_setPriority")
    @guarded("ANeuralNetworksCompilation_setPriority")
    def priority(c, p):
        Compilation.set_priority(h.get(c), int(p))

    @ffi.def_extern(name="ANeuralNetworksCompilation_setTimeout")
    @guarded("ANeuralNetworksCompilation_setTimeout")
    def timeout(c, ns):
        Compilation.set_timeout(h.get(c), int(ns))

    def preferred(name: str, method: Any) -> None:
        @ffi.def_extern(name=name)
        @guarded(name)
        def query(c, index, out):
            value = method(h.get(c), int(index))
            out_pointer(ffi, out, name)
            out[0] = int(value)

    preferred(
        "ANeuralNetworksCompilation_getPreferredMemoryAlignmentForInput",
        Compilation.get_preferred_memory_alignment_for_input,
    )
    preferred(
        "ANeuralNetworksCompilation_getPreferredMemoryAlignmentForOutput",
        Compilation.get_preferred_memory_alignment_for_output,
    )
    preferred(
        "ANeuralNetworksCompilation_getPreferredMemoryPaddingForInput",
        Compilation.get_preferred_memory_padding_for_input,
    )
    preferred(
        "ANeuralNetworksCompilation_getPreferredMemoryPaddingForOutput",
        Compilation.get_preferred_memory_padding_for_output,
    )


def _execution_more(ffi: Any, h: Handles) -> None:
    @ffi.def_extern(name="ANeuralNetworksExecution_setInputFromMemory")
    @guarded("ANeuralNetworksExecution_setInputFromMemory")
    def input_from_memory(e, index, t, mem, offset, length):
        Execution.set_input_from_memory(h.get(e), int(index), h.get(mem), int(offset), int(length), dims_of(ffi, t))

    @ffi.def_extern(name="ANeuralNetworksExecution_setOutputFromMemory")
    @guarded("ANeuralNetworksExecution_setOutputFromMemory")
    def output_from_memory(e, index, t, mem, offset, length):
        Execution.set_output_from_memory(h.get(e), int(index), h.get(mem), int(offset), int(length), dims_of(ffi, t))

    @ffi.def_extern(name="ANeuralNetworksExecution_setMeasureTiming")
    @guarded("ANeuralNetworksExecution_setMeasureTiming")
    def measure(e, flag):
        Execution.set_measure_timing(h.get(e), bool(flag))

    @ffi.def_extern(name="ANeuralNetworksExecution_setTimeout")
    @guarded("ANeuralNetworksExecution_setTimeout")
    def timeout(e, ns):
        Execution.set_timeout(h.get(e), int(ns))

    @ffi.def_extern(name="ANeuralNetworksExecution_setLoopTimeout")
    @guarded("ANeuralNetworksExecution_setLoopTimeout")
    def loop_timeout(e, ns):
        Execution.set_loop_timeout(h.get(e), int(ns))

    @ffi.def_extern(name="ANeuralNetworksExecution_enableInputAndOutputPadding")
    @guarded("ANeuralNetworksExecution_enableInputAndOutputPadding")
    def padding(e, flag):
        Execution.enable_input_and_output_padding(h.get(e), bool(flag))

    @ffi.def_extern(name="ANeuralNetworksExecution_getDuration")
    @guarded("ANeuralNetworksExecution_getDuration")
    def duration(e, code, out):
        ns = Execution.get_duration(h.get(e), int(code))
        out_pointer(ffi, out, "ANeuralNetworksExecution_getDuration")
        out[0] = int(ns)

    @ffi.def_extern(name="ANeuralNetworksExecution_burstCompute")
    @guarded("ANeuralNetworksExecution_burstCompute")
    def burst_compute(e, b):
        Execution.burst_compute(h.get(e), h.get(b))

    @ffi.def_extern(name="ANeuralNetworksExecution_startCompute")
    @guarded("ANeuralNetworksExecution_startCompute")
    def start(e, out):
        ex = h.get(e)
        out_pointer(ffi, out, "ANeuralNetworksExecution_startCompute", "the event pointer")
        out[0] = ffi.NULL
        out[0] = h.new(Execution.start_compute(ex), "ANeuralNetworksEvent *")

    @ffi.def_extern(name="ANeuralNetworksExecution_startComputeWithDependencies")
    @guarded("ANeuralNetworksExecution_startComputeWithDependencies")
    def start_with(e, deps, n, duration_ns, out):
        ex = h.get(e)
        if ex is None or out == ffi.NULL or (deps == ffi.NULL and n):
            return UNEXPECTED_NULL
        out[0] = ffi.NULL
        events = [h.get(deps[i]) for i in range(int(n))]
        if any(ev is None for ev in events):
            return UNEXPECTED_NULL
        out[0] = h.new(
            Execution.start_compute_with_dependencies(ex, events, int(duration_ns)), "ANeuralNetworksEvent *"
        )


def _memory(ffi: Any, h: Handles) -> None:
    @ffi.def_extern(name="ANeuralNetworksMemory_createFromFd")
    @guarded("ANeuralNetworksMemory_createFromFd")
    def from_fd(size, protect, fd, offset, out):
        out_pointer(ffi, out, "ANeuralNetworksMemory_createFromFd")
        out[0] = h.new(Memory.from_fd(int(size), int(protect), int(fd), int(offset)), "ANeuralNetworksMemory *")

    @ffi.def_extern(name="ANeuralNetworksMemory_createFromDesc")
    @guarded("ANeuralNetworksMemory_createFromDesc")
    def from_desc(d, out):
        desc = h.get(d)
        out_pointer(ffi, out, "ANeuralNetworksMemory_createFromDesc")
        out[0] = h.new(Memory.from_desc(desc), "ANeuralNetworksMemory *")

    @ffi.def_extern(name="ANeuralNetworksMemory_createFromAHardwareBuffer")
    @guarded("ANeuralNetworksMemory_createFromAHardwareBuffer")
    def from_ahwb(ahwb, out):
        if out == ffi.NULL:
            return UNEXPECTED_NULL
        Memory.from_ahardware_buffer(None if ahwb == ffi.NULL else int(ffi.cast("uintptr_t", ahwb)))

    @ffi.def_extern(name="ANeuralNetworksMemory_copy")
    @guarded("ANeuralNetworksMemory_copy")
    def copy(src, dst):
        Memory.copy(h.get(src), h.get(dst))

    define_free(ffi, h, "ANeuralNetworksMemory_free")


def _memory_desc(ffi: Any, h: Handles) -> None:
    @ffi.def_extern(name="ANeuralNetworksMemoryDesc_create")
    @guarded("ANeuralNetworksMemoryDesc_create")
    def create(out):
        out_pointer(ffi, out, "ANeuralNetworksMemoryDesc_create")
        out[0] = h.new(MemoryDesc(), "ANeuralNetworksMemoryDesc *")

    @ffi.def_extern(name="ANeuralNetworksMemoryDesc_addInputRole")
    @guarded("ANeuralNetworksMemoryDesc_addInputRole")
    def input_role(d, c, index, freq):
        MemoryDesc.add_input_role(h.get(d), h.get(c), int(index), float(freq))

    @ffi.def_extern(name="ANeuralNetworksMemoryDesc_addOutputRole")
    @guarded("ANeuralNetworksMemoryDesc_addOutputRole")
    def output_role(d, c, index, freq):
        MemoryDesc.add_output_role(h.get(d), h.get(c), int(index), float(freq))

    @ffi.def_extern(name="ANeuralNetworksMemoryDesc_setDimensions")
    @guarded("ANeuralNetworksMemoryDesc_setDimensions")
    def dimensions(d, rank, dims):
        desc = h.get(d)
        if desc is None or (dims == ffi.NULL and rank):
            return UNEXPECTED_NULL
        MemoryDesc.set_dimensions(desc, [int(dims[i]) for i in range(int(rank))])

    @ffi.def_extern(name="ANeuralNetworksMemoryDesc_finish")
    @guarded("ANeuralNetworksMemoryDesc_finish")
    def finish(d):
        MemoryDesc.finish(h.get(d))

    define_free(ffi, h, "ANeuralNetworksMemoryDesc_free")


def _burst(ffi: Any, h: Handles) -> None:
    @ffi.def_extern(name="ANeuralNetworksBurst_create")
    @guarded("ANeuralNetworksBurst_create")
    def create(c, out):
        comp = h.get(c)
        if comp is None or out == ffi.NULL:
            return UNEXPECTED_NULL
        out[0] = h.new(Burst(comp), "ANeuralNetworksBurst *")

    define_free(ffi, h, "ANeuralNetworksBurst_free")


def _event(ffi: Any, h: Handles) -> None:
    @ffi.def_extern(name="ANeuralNetworksEvent_wait")
    @guarded("ANeuralNetworksEvent_wait")
    def wait(ev):
        Event.wait(h.get(ev))

    @ffi.def_extern(name="ANeuralNetworksEvent_createFromSyncFenceFd")
    @guarded("ANeuralNetworksEvent_createFromSyncFenceFd")
    def from_fence(fd, out):
        out_pointer(ffi, out, "ANeuralNetworksEvent_createFromSyncFenceFd")
        out[0] = h.new(Event.from_sync_fence_fd(int(fd)), "ANeuralNetworksEvent *")

    @ffi.def_extern(name="ANeuralNetworksEvent_getSyncFenceFd")
    @guarded("ANeuralNetworksEvent_getSyncFenceFd")
    def fence_fd(ev, out):
        event = h.get(ev)
        out_pointer(ffi, out, "ANeuralNetworksEvent_getSyncFenceFd")
        out[0] = -1
        out[0] = Event.get_sync_fence_fd(event)

    define_free(ffi, h, "ANeuralNetworksEvent_free")
