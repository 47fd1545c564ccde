"""Checklist sections 7 and 8: ANeuralNetworksMemory_* and ANeuralNetworksMemoryDesc_*.

Client memory comes from memfds (``os.memfd_create``); device memory from
MemoryDescs over small ADD compilations.  Helpers come from
test_checklist_execution.
"""

from __future__ import annotations

import gc
import math
import mmap
import os

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc import ResultCode as RC
from test_checklist_execution import RW, X, add_model, bound, comp, compiled, fd_memory, raises  # noqa: F401

F = "ANeuralNetworksMemory_copy"
SET_IN = "ANeuralNetworksExecution_setInputFromMemory"
SET_OUT = "ANeuralNetworksExecution_setOutputFromMemory"
COMPUTE = "ANeuralNetworksExecution_compute"


def device_memory(c, inputs=(0,), outputs=(0,), dims=None) -> nnc.Memory:
    d = nnc.MemoryDesc()
    for i in inputs:
        d.add_input_role(c, i, 1.0)
    for o in outputs:
        d.add_output_role(c, o, 1.0)
    if dims is not None:
        d.set_dimensions(dims)
    d.finish()
    return nnc.Memory.from_desc(d)


def produce(c, mem, a, b=None, act=None, dims=None) -> None:
    """Compute a + b into ``mem`` (output 0 of an ADD compilation)."""
    ex = nnc.Execution(c)
    ex.set_input(0, a)
    ex.set_input(1, a if b is None else b)
    if act is not None:
        ex.set_input(2, np.int32(act))
    ex.set_output_from_memory(0, mem, 0, 0, dims)
    ex.compute()


def consume(c, mem, dims=None, act=None) -> np.ndarray:
    """mem + 0 through an execution reading ``mem`` as input 0."""
    ex = nnc.Execution(c)
    ex.set_input_from_memory(0, mem, 0, 0, dims)
    n = math.prod(dims) if dims else 2
    ex.set_input(1, np.zeros(dims or (2,), np.float32))
    if act is not None:
        ex.set_input(2, np.int32(act))
    y = np.zeros(n, np.float32)
    ex.set_output(0, y, dims)
    ex.compute()
    return y


@pytest.fixture(scope="module")
def lookup() -> nnc.Compilation:
    """out[3, 2] = values[3, 2][lookups[3]]: input 1 and output 0 have the same
    type, so one device memory can be both; a lookup out of range fails the
    computation (OP_FAILED)."""
    m = nnc.Model()
    lookups = m.add_operand(T.TENSOR_INT32, [3])
    values = m.add_operand(T.TENSOR_FLOAT32, [3, 2])
    out = m.add_operand(T.TENSOR_FLOAT32, [3, 2])
    m.add_operation(Op.EMBEDDING_LOOKUP, [lookups, values], [out])
    m.identify_inputs_and_outputs([lookups, values], [out])
    m.finish()
    return compiled(m)


def lookup_into(c, mem, lookups, values=None) -> None:
    ex = nnc.Execution(c)
    ex.set_input(0, np.array(lookups, np.int32))
    ex.set_input(1, np.arange(6, dtype=np.float32).reshape(3, 2) if values is None else values)
    ex.set_output_from_memory(0, mem, 0, 0)
    ex.compute()


def lookup_from(c, mem, out=None) -> nnc.Execution:
    """An execution reading ``mem`` as its values (input 1), ready to compute."""
    ex = nnc.Execution(c)
    ex.set_input(0, np.array([2, 1, 0], np.int32))
    ex.set_input_from_memory(1, mem, 0, 0)
    ex.set_output(0, np.zeros((3, 2), np.float32) if out is None else out)
    return ex


@pytest.fixture(scope="module")
def dyn1() -> nnc.Compilation:
    """ADD on {0}: the size is given at execution."""
    return compiled(add_model(dims=(0,)))


@pytest.fixture(scope="module")
def any_rank() -> nnc.Compilation:
    """ADD on inputs of unknown rank."""
    return compiled(add_model(dims=None))


def fd_bytes(data: bytes, prot: int = RW) -> nnc.Memory:
    fd = os.memfd_create("nnc-test")
    os.write(fd, data)
    try:
        return nnc.Memory.from_fd(len(data), prot, fd, 0)
    finally:
        os.close(fd)


# -- section 7: memories --------------------------------------------------------------------------------


@pytest.mark.checklist(171)
def test_create_from_fd_checks(tmp_path):
    fn = "ANeuralNetworksMemory_createFromFd"
    fd = os.memfd_create("nnc-test")
    os.ftruncate(fd, 8192)
    try:
        for args in [(0, RW, fd, 0), (8, RW, -1, 0), (8, RW, fd, 100), (16384, RW, fd, 0),
                     (8, mmap.PROT_EXEC, fd, 0), (8, RW, "3", 0), (-8, RW, fd, 0)]:  # fmt: skip
            with raises(RC.BAD_DATA, fn):
                nnc.Memory.from_fd(*args)
        mem = nnc.Memory.from_fd(8, RW, fd, 4096)  # a page-aligned offset
        os.pwrite(fd, np.array([7.0, 8.0], np.float32).tobytes(), 4096)
    finally:
        os.close(fd)  # the memory keeps its own duplicate
    assert np.frombuffer(mem.view(0, 8), np.float32).tolist() == [7.0, 8.0]
    assert mem.kind == "fd" and mem.size == 8
    r, w = os.pipe()
    os.close(r)
    os.close(w)
    with raises(RC.UNMAPPABLE, fn):
        nnc.Memory.from_fd(8, RW, r, 0)  # fd no longer open: cannot be duplicated
    ro = os.open(tmp_path / "f", os.O_RDWR | os.O_CREAT)
    os.ftruncate(ro, 4096)
    os.close(ro)
    ro = os.open(tmp_path / "f", os.O_RDONLY)
    with raises(RC.UNMAPPABLE, fn):
        nnc.Memory.from_fd(4096, RW, ro, 0)  # a shared writable mapping of a read-only fd
    nnc.Memory.from_fd(4096, mmap.PROT_READ, ro, 0).close()
    os.close(ro)


@pytest.mark.checklist(172)
def test_create_from_desc_checks(comp):
    with raises(RC.UNEXPECTED_NULL, "ANeuralNetworksMemory_createFromDesc"):
        nnc.Memory.from_desc(None)
    d = nnc.MemoryDesc()
    d.add_input_role(comp, 0, 1.0)
    with raises(RC.BAD_STATE, "ANeuralNetworksMemory_createFromDesc"):
        nnc.Memory.from_desc(d)
    d.finish()
    mem = nnc.Memory.from_desc(d)
    d.close()  # memories outlive their descriptor
    assert mem.kind == "device" and mem.size == 8 and not mem.initialized


@pytest.mark.checklist(173, 174)
def test_uninitialised_device_memory_as_input(lookup):
    mem = device_memory(lookup, inputs=(1,), outputs=(0,))
    with raises(RC.OP_FAILED, COMPUTE):
        lookup_from(lookup, mem).compute()  # never written
    with raises(RC.OP_FAILED, "ANeuralNetworksExecution_startCompute"):
        lookup_from(lookup, mem).start_compute()  # detected when a computation starts, in every mode
    lookup_into(lookup, mem, [0, 1, 2])
    assert mem.initialized
    y = np.zeros((3, 2), np.float32)
    ok = lookup_from(lookup, mem, y)
    ok.compute()
    assert y.tolist() == [[4, 5], [2, 3], [0, 1]]
    # bound while the memory is initialised; then a failed computation writing
    # the memory resets it before this execution computes (C174)
    ex = lookup_from(lookup, mem)
    with raises(RC.OP_FAILED, COMPUTE):
        lookup_into(lookup, mem, [0, 9, 1])
    assert not mem.initialized
    with raises(RC.OP_FAILED, COMPUTE):
        ex.compute()


@pytest.mark.checklist(175, 130)
def test_device_memory_regions_and_roles(comp):
    both = device_memory(comp)
    for offset, length in [(0, 8), (8, 0), (4, 4)]:
        with raises(RC.BAD_DATA, SET_IN):
            nnc.Execution(comp).set_input_from_memory(0, both, offset, length)
        with raises(RC.BAD_DATA, SET_OUT):
            nnc.Execution(comp).set_output_from_memory(0, both, offset, length)
    input_only = device_memory(comp, inputs=(0,), outputs=())
    output_only = device_memory(comp, inputs=(), outputs=(0,))
    with raises(RC.BAD_DATA, SET_OUT):
        nnc.Execution(comp).set_output_from_memory(0, input_only, 0, 0)
    with raises(RC.BAD_DATA, SET_IN):
        nnc.Execution(comp).set_input_from_memory(0, output_only, 0, 0)
    with raises(RC.BAD_DATA, SET_IN):
        nnc.Execution(comp).set_input_from_memory(1, input_only, 0, 0)  # input 1 has no role
    other = compiled(comp.model)
    with raises(RC.BAD_DATA, SET_IN):
        nnc.Execution(other).set_input_from_memory(0, input_only, 0, 0)  # another compilation


@pytest.mark.checklist(176)
def test_device_memory_dimensions_against_execution_type(dyn1):
    mem = device_memory(dyn1, dims=[1])
    with raises(RC.BAD_DATA, SET_IN):
        nnc.Execution(dyn1).set_input_from_memory(0, mem, 0, 0, [2])
    with raises(RC.BAD_DATA, SET_OUT):
        nnc.Execution(dyn1).set_output_from_memory(0, mem, 0, 0, [2])
    nnc.Execution(dyn1).set_input_from_memory(0, mem, 0, 0, [1])


@pytest.mark.checklist(177, 200)
def test_device_memory_shape_comes_from_its_last_producer(dyn1):
    mem = device_memory(dyn1)  # dimensions unknown: shaped by the outputs that write it
    assert mem.dimensions == (0,) and mem.size == 0
    produce(dyn1, mem, np.array([1.0, 2.0], np.float32))
    assert mem.dimensions == (2,) and mem.size == 8
    with raises(RC.OP_FAILED, COMPUTE):
        consume(dyn1, mem, dims=[3])
    assert consume(dyn1, mem, dims=[2]).tolist() == [2.0, 4.0]
    produce(dyn1, mem, np.array([1.0, 2.0, 3.0], np.float32))
    assert mem.dimensions == (3,)
    assert consume(dyn1, mem, dims=[3]).tolist() == [2.0, 4.0, 6.0]


@pytest.mark.checklist(178)
def test_device_memory_allocation(comp, dyn1, monkeypatch):
    fixed = device_memory(comp)
    assert fixed.size == 8
    dynamic = device_memory(dyn1)
    assert dynamic.kind == "device"

    def no_memory(n, align=64):
        raise MemoryError

    monkeypatch.setattr(nnc.memory, "_aligned_zeros", no_memory)
    d = nnc.MemoryDesc()
    d.add_input_role(comp, 0, 1.0)
    d.finish()
    with raises(RC.OP_FAILED, "ANeuralNetworksMemory_createFromDesc"):
        nnc.Memory.from_desc(d)  # the device cannot allocate: no fallback


@pytest.mark.checklist(179)
def test_copy_null_arguments(comp):
    mem = device_memory(comp)
    with raises(RC.UNEXPECTED_NULL, F):
        nnc.Memory.copy(None, mem)
    with raises(RC.UNEXPECTED_NULL, F):
        nnc.Memory.copy(mem, None)


@pytest.mark.checklist(180)
def test_copy_needs_equal_logical_sizes(comp):
    good, small, large = fd_bytes(bytes(8)), fd_bytes(bytes(4)), fd_bytes(bytes(16))
    for src, dst in [(good, small), (good, large), (small, good), (large, good)]:
        with raises(RC.BAD_DATA, F):
            nnc.Memory.copy(src, dst)
    dev = device_memory(comp)  # 8 bytes
    for wrong in (small, large):
        with raises(RC.BAD_DATA, F):
            nnc.Memory.copy(wrong, dev)
    nnc.Memory.copy(good, dev)
    for wrong in (small, large):
        with raises(RC.BAD_DATA, F):
            nnc.Memory.copy(dev, wrong)
    nnc.Memory.copy(dev, good)


@pytest.mark.checklist(181, 182)
def test_copy_and_initialisation(comp):
    good, small = fd_bytes(np.array([5.0, 6.0], np.float32).tobytes()), fd_bytes(bytes(4))
    dev1, dev2 = device_memory(comp), device_memory(comp)
    with raises(RC.BAD_DATA, F):
        nnc.Memory.copy(dev1, good)  # never written
    nnc.Memory.copy(good, dev1)  # a successful copy initialises
    assert dev1.initialized and consume(comp, dev1).tolist() == [5.0, 6.0]
    with raises(RC.BAD_DATA, F):
        nnc.Memory.copy(small, dev1)  # fails: the destination is uninitialised again
    assert not dev1.initialized
    with raises(RC.BAD_DATA, F):
        nnc.Memory.copy(dev1, good)
    with raises(RC.OP_FAILED, COMPUTE):
        consume(comp, dev1)
    nnc.Memory.copy(good, dev2)
    with raises(RC.BAD_DATA, F):
        nnc.Memory.copy(dev1, dev2)  # uninitialised source: dev2 is reset too
    assert not dev2.initialized


@pytest.mark.checklist(183)
def test_device_to_device_needs_compatible_shapes(any_rank):
    eight = fd_bytes(bytes(8))
    good = device_memory(any_rank, dims=[1, 2])
    other = device_memory(any_rank, dims=[1, 2])
    rank1 = device_memory(any_rank, dims=[2])
    transposed = device_memory(any_rank, dims=[2, 1])
    for mem in (good, rank1, transposed):
        nnc.Memory.copy(eight, mem)
    for src in (rank1, transposed):
        with raises(RC.BAD_DATA, F):
            nnc.Memory.copy(src, other)
    nnc.Memory.copy(good, other)
    assert other.dimensions == (1, 2)


@pytest.mark.checklist(183)
def test_device_copy_needs_the_same_operand_type(comp):
    quant = compiled(add_model(t=T.TENSOR_QUANT8_ASYMM, scale=0.5, dims=(8,)))
    f = device_memory(comp)
    q = device_memory(quant)
    nnc.Memory.copy(fd_bytes(bytes(8)), q)
    with raises(RC.BAD_DATA, F):
        nnc.Memory.copy(q, f)  # 8 bytes both, but uint8 vs float32 operands


@pytest.mark.checklist(184)
def test_copy_chain_keeps_every_bit(any_rank):
    raw = np.random.default_rng(0).integers(0, 256, 24, dtype=np.uint8)
    raw[:4] = [0, 0, 0xC0, 0x7F]  # a NaN payload too
    src = fd_bytes(raw.tobytes())
    dst, peer = fd_memory(length=24)
    a = device_memory(any_rank, dims=[2, 3])
    b = device_memory(any_rank, dims=[2, 0])
    nnc.Memory.copy(src, a)
    nnc.Memory.copy(a, b)
    assert b.dimensions == (2, 3)
    nnc.Memory.copy(b, dst)
    assert peer[:24].tobytes() == raw.tobytes()


@pytest.mark.checklist(185)
def test_copy_onto_itself_and_unmappable_memories(comp):
    mem = fd_bytes(bytes(8))
    nnc.Memory.copy(mem, mem)
    dev = device_memory(comp)
    nnc.Memory.copy(dev, dev)  # nothing happens, even uninitialised
    sealed = fd_bytes(bytes(8), prot=0)  # PROT_NONE
    with raises(RC.UNMAPPABLE, F):
        nnc.Memory.copy(sealed, mem)
    read_only = fd_bytes(bytes(8), prot=mmap.PROT_READ)
    with raises(RC.UNMAPPABLE, F):
        nnc.Memory.copy(mem, read_only)
    with raises(RC.UNMAPPABLE, SET_IN):
        nnc.Execution(comp).set_input_from_memory(0, sealed, 0, 8)
    with raises(RC.UNMAPPABLE, SET_OUT):
        nnc.Execution(comp).set_output_from_memory(0, read_only, 0, 8)


@pytest.mark.checklist(186)
def test_memory_outlives_its_users(comp):
    mem, peer = fd_memory()
    floats = peer.view(np.float32)
    floats[:2] = [3.0, 4.0]
    ex = nnc.Execution(comp)
    ex.set_input_from_memory(0, mem, 0, 8)
    ex.set_input(1, X)
    ex.set_output_from_memory(0, mem, 8, 8)
    mem.close()  # freed too early: the execution keeps the mapping
    mem.close()
    with raises(RC.BAD_STATE, SET_IN):
        nnc.Execution(comp).set_input_from_memory(0, mem, 0, 8)
    gc.collect()
    ex.compute()
    assert floats[2:4].tolist() == [4.0, 6.0]


@pytest.mark.checklist(186)
def test_truncated_file_is_unmappable_not_a_crash(comp):
    fd = os.memfd_create("nnc-test")
    os.ftruncate(fd, 4096)
    mem = nnc.Memory.from_fd(4096, RW, fd, 0)
    ex = bound(comp)
    ex2 = nnc.Execution(comp)
    ex2.set_input_from_memory(0, mem, 0, 8)
    ex2.set_input(1, X)
    ex2.set_output(0, np.zeros(2, np.float32))
    os.ftruncate(fd, 0)  # reading the mapping now would be SIGBUS
    os.close(fd)
    with raises(RC.UNMAPPABLE, COMPUTE):
        ex2.compute()
    ex.compute()


def test_memory_api_surface(comp):
    mem, peer = fd_memory(length=64)
    peer[:4] = [1, 2, 3, 4]
    view = mem.view(0, 4)
    assert isinstance(view, memoryview) and bytes(view) == b"\x01\x02\x03\x04"
    peer[0] = 9
    assert view[0] == 9  # live bytes, not a copy
    del view
    with raises(RC.BAD_DATA, "ANeuralNetworksModel_setOperandValueFromMemory"):
        mem.view(60, 8)
    with raises(RC.BAD_DATA, "ANeuralNetworksModel_setOperandValueFromMemory"):
        device_memory(comp).view(0, 8)  # device memory has no client bytes
    with raises(RC.UNEXPECTED_NULL, "ANeuralNetworksMemory_createFromAHardwareBuffer"):
        nnc.Memory.from_ahardware_buffer(None)
    with pytest.raises(nnc.BadDataError, match="AHardwareBuffer does not exist on this platform") as info:
        nnc.Memory.from_ahardware_buffer(object())
    assert info.value.function == "ANeuralNetworksMemory_createFromAHardwareBuffer"
    with mem:
        pass
    with raises(RC.BAD_STATE, "ANeuralNetworksModel_setOperandValueFromMemory"):
        mem.view(0, 4)


# -- section 8: memory descriptors ----------------------------------------------------------------------

IN_ROLE = "ANeuralNetworksMemoryDesc_addInputRole"
OUT_ROLE = "ANeuralNetworksMemoryDesc_addOutputRole"
SET_DIMS = "ANeuralNetworksMemoryDesc_setDimensions"
FINISH = "ANeuralNetworksMemoryDesc_finish"


def add_role(d: nnc.MemoryDesc, io: str, *args):
    return (d.add_input_role if io == "input" else d.add_output_role)(*args)


ROLE_FN = {"input": IN_ROLE, "output": OUT_ROLE}


@pytest.mark.checklist(188)
@pytest.mark.parametrize("io", ["input", "output"])
def test_role_null_compilation(io):
    with raises(RC.UNEXPECTED_NULL, ROLE_FN[io]):
        add_role(nnc.MemoryDesc(), io, None, 0, 1.0)


@pytest.mark.checklist(189)
@pytest.mark.parametrize("io", ["input", "output"])
def test_role_on_unfinished_compilation(io):
    c = nnc.Compilation(add_model())
    with raises(RC.BAD_DATA, ROLE_FN[io]):
        add_role(nnc.MemoryDesc(), io, c, 0, 1.0)


@pytest.mark.checklist(190)
@pytest.mark.parametrize("io", ["input", "output"])
def test_role_on_failed_compilation(io, monkeypatch):
    from nnc.passes.lowering import LOWERINGS

    monkeypatch.delitem(LOWERINGS, Op.ADD)
    c = nnc.Compilation(add_model(dims=(7,)))
    with pytest.raises(nnc.OpFailedError):
        c.finish()
    with raises(RC.BAD_DATA, ROLE_FN[io]):
        add_role(nnc.MemoryDesc(), io, c, 0, 1.0)


@pytest.mark.checklist(191, 192, 193, 6)
@pytest.mark.parametrize("io", ["input", "output"])
def test_role_arguments(comp, io):
    d = nnc.MemoryDesc()
    for index in (999, -1, 1 if io == "output" else 2):
        with raises(RC.BAD_DATA, ROLE_FN[io]):
            add_role(d, io, comp, index, 1.0)
    for frequency in (10.0, 0.0, -1.0, float("nan"), "1"):
        with raises(RC.BAD_DATA, ROLE_FN[io]):
            add_role(d, io, comp, 0, frequency)
    add_role(d, io, comp, 0, 0.5)  # accepted after the rejections (C6)
    with raises(RC.BAD_DATA, ROLE_FN[io]):
        add_role(d, io, comp, 0, 1.0)  # the same role twice
    d.finish()


@pytest.mark.checklist(194)
def test_descriptor_is_frozen_after_finish(comp):
    d = nnc.MemoryDesc()
    d.add_input_role(comp, 0, 1.0)
    d.finish()
    with raises(RC.BAD_STATE, IN_ROLE):
        d.add_input_role(comp, 1, 1.0)
    with raises(RC.BAD_STATE, OUT_ROLE):
        d.add_output_role(comp, 0, 1.0)
    with raises(RC.BAD_STATE, SET_DIMS):
        d.set_dimensions([2])


@pytest.mark.checklist(195)
@pytest.mark.parametrize("io", ["input", "output"])
def test_roles_must_agree_on_operand_metadata(comp, io):
    q = T.TENSOR_QUANT8_ASYMM
    others = [
        compiled(add_model(t=q, scale=0.5, dims=(8,))),  # another type
        compiled(add_model(dims=(2, 2))),  # another rank
        compiled(add_model(dims=(3,))),  # another dimension
    ]
    for other in others:
        d = nnc.MemoryDesc()
        d.add_input_role(comp, 0, 1.0)
        with raises(RC.BAD_DATA, ROLE_FN[io]):
            add_role(d, io, other, 0, 1.0)
    base = compiled(add_model(t=q, scale=0.5, dims=(2,)))
    other_scale = compiled(add_model(t=q, scale=1.0, dims=(2,)))
    other_zero_point = compiled(add_model(t=q, scale=0.5, zero_point=3, dims=(2,)))
    for other in (other_scale, other_zero_point):
        d = nnc.MemoryDesc()
        d.add_output_role(base, 0, 1.0)
        with raises(RC.BAD_DATA, ROLE_FN[io]):  # another scale, another zero point
            add_role(d, io, other, 0, 1.0)
    d = nnc.MemoryDesc()
    d.add_input_role(comp, 0, 1.0)
    add_role(d, io, compiled(add_model(dims=(0,))), 0, 1.0)  # compatible: {0} and {2}
    assert d.dimensions == (2,)


def per_channel_conv(scales) -> nnc.Compilation:
    """CONV_2D whose filter (input 1) is a per-channel quantised model input."""
    m = nnc.Model()
    x = m.add_operand(T.TENSOR_QUANT8_ASYMM_SIGNED, [1, 2, 2, 2], 0.5, 0)
    w = m.add_operand(T.TENSOR_QUANT8_SYMM_PER_CHANNEL, [2, 1, 1, 2])
    m.set_operand_symm_per_channel_quant_params(w, scales, 0)
    b = m.add_operand(T.TENSOR_INT32, [2])
    m.set_operand_value(b, np.zeros(2, np.int32))
    scalars = []
    for v in (0, 0, 0, 0, 1, 1, 0):  # paddings, strides, activation
        s = m.add_operand(T.INT32)
        m.set_operand_value(s, v)
        scalars.append(s)
    o = m.add_operand(T.TENSOR_QUANT8_ASYMM_SIGNED, [1, 2, 2, 2], 1.0, 0)
    m.add_operation(Op.CONV_2D, [x, w, b, *scalars], [o])
    m.identify_inputs_and_outputs([x, w], [o])
    m.finish()
    return compiled(m)


@pytest.mark.checklist(196)
def test_roles_must_agree_on_channel_scales():
    d = nnc.MemoryDesc()
    d.add_input_role(per_channel_conv([1.0, 1.0]), 1, 1.0)
    with raises(RC.BAD_DATA, IN_ROLE):
        d.add_input_role(per_channel_conv([0.5, 0.5]), 1, 1.0)
    d.add_input_role(per_channel_conv([1.0, 1.0]), 1, 1.0)


@pytest.mark.checklist(197)
def test_set_dimensions_checks(any_rank):
    d = nnc.MemoryDesc()
    with raises(RC.UNEXPECTED_NULL, SET_DIMS):
        d.set_dimensions(None)
    d.set_dimensions([2])
    with raises(RC.BAD_DATA, SET_DIMS):
        d.set_dimensions([3])
    with raises(RC.BAD_DATA, SET_DIMS):
        d.set_dimensions([2, 1])
    for bad in ([-1], ["x"], 5):
        with raises(RC.BAD_DATA, SET_DIMS):
            d.set_dimensions(bad)
    d.set_dimensions([0])  # compatible: nothing new
    d.add_input_role(any_rank, 0, 1.0)
    assert d.dimensions == (2,)


@pytest.mark.checklist(198)
def test_scalar_roles_have_no_dimensions():
    c = compiled(add_model(act_input=True))  # input 2 is an INT32 scalar
    d = nnc.MemoryDesc()
    d.set_dimensions([2])
    with raises(RC.BAD_DATA, IN_ROLE):
        d.add_input_role(c, 2, 1.0)
    d = nnc.MemoryDesc()
    d.add_input_role(c, 2, 1.0)
    with raises(RC.BAD_DATA, SET_DIMS):
        d.set_dimensions([2])
    d.set_dimensions([])  # rank 0: fine for a scalar
    d.finish()
    assert nnc.Memory.from_desc(d).size == 4


@pytest.mark.checklist(199)
def test_finish_checks(comp):
    d = nnc.MemoryDesc()
    with raises(RC.BAD_DATA, FINISH):
        d.finish()  # no role
    d.add_output_role(comp, 0, 1.0)
    d.finish()
    with raises(RC.BAD_STATE, FINISH):
        d.finish()


@pytest.mark.checklist(200)
def test_descriptor_dimensions_combine_roles_and_set_dimensions():
    c = compiled(add_model(dims=(0, 2)))
    d = nnc.MemoryDesc()
    d.add_input_role(c, 0, 1.0)
    assert d.dimensions == (0, 2)
    d.set_dimensions([0, 0])
    assert d.dimensions == (0, 2)  # still partly unknown
    d.add_output_role(c, 0, 1.0)
    d.finish()
    mem = nnc.Memory.from_desc(d)
    produce(c, mem, np.ones((4, 2), np.float32))
    assert mem.dimensions == (4, 2)
    y = consume(c, mem, dims=[4, 2])
    assert y.tolist() == [2.0] * 8
