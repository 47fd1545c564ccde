"""Import a finished :class:`nnc.Model` into an ``nnapi`` dialect module.

The model becomes ``func.func @main`` whose arguments are the model inputs and
whose results are the model outputs, with one ``nnapi.<op>`` per operation in
(sorted) order.  Constants become ``nnapi.constant``: scalars, integer tensors
(whose values may decide shapes) and tensors of at most 128 bytes inline, larger
tensors as ``#nnapi.blob`` references into the returned constant pool, so that
megabytes of weights never pass through the IR.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import IntAttr, ModuleOp
from xdsl.ir import Block, Region, SSAValue

from nnc.dialects import nnapi
from nnc.dialects.rules import OperandInfo
from nnc.enums import MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES, OperandType
from nnc.model import Lifetime, Model

POOL_ALIGN = 64


@dataclass
class ImportedModel:
    module: ModuleOp
    #: the constant pool that #nnapi.blob attributes point into
    weights: bytes


#: The one-element tensor type that carries a scalar model input's argument.
_SCALAR_ARG = {OperandType.INT32: OperandType.TENSOR_INT32, OperandType.UINT32: OperandType.TENSOR_INT32,
               OperandType.FLOAT32: OperandType.TENSOR_FLOAT32, OperandType.FLOAT16: OperandType.TENSOR_FLOAT16,
               OperandType.BOOL: OperandType.TENSOR_BOOL8}  # fmt: skip


def _arg_info(info: OperandInfo) -> OperandInfo:
    """The function-argument type of a model input.

    An omitted input, and a scalar input (always specialised: its value is
    compiled in), keep an unused one-element argument so the ABI (one pointer
    per model input) does not change."""
    if info.omitted:
        return replace(info, dims=(1,) * len(info.dims or (1,)))
    if not info.type.is_tensor:
        return replace(info, type=_SCALAR_ARG[info.type], dims=(1,), value=None)
    return info


def import_model(
    model: Model,
    input_infos: Sequence[OperandInfo] | None = None,
) -> ImportedModel:
    """Build the nnapi module; ``input_infos`` override the inputs' declared
    shapes (and, with a value, make that input a constant: specialisation)."""
    infos = list(input_infos) if input_infos is not None else [model.operands[i].info() for i in model.inputs]
    arg_infos = [_arg_info(i) for i in infos]
    block = Block(arg_types=[nnapi.to_xdsl_type(i) for i in arg_infos])
    values: dict[int, SSAValue] = {}
    pool = bytearray()
    ops = []
    for k, idx in enumerate(model.inputs):
        values[idx] = block.args[k]
        if infos[k].omitted:
            no_value = nnapi.NoValueOp(nnapi.to_xdsl_type(model.operands[idx].info(with_value=False)))
            ops.append(no_value)
            values[idx] = no_value.result
        elif infos[k].value is not None:
            values[idx] = _constant(ops, infos[k], pool)

    def value_of(idx: int) -> SSAValue:
        if idx not in values:
            operand = model.operands[idx]
            info = operand.info()
            if operand.lifetime == Lifetime.NO_VALUE:
                op = nnapi.NoValueOp(nnapi.to_xdsl_type(info))
                ops.append(op)
                values[idx] = op.result
            elif operand.is_constant:
                values[idx] = _constant(ops, info, pool)
            else:
                raise KeyError(f"operand {idx} has no definition")
        return values[idx]

    for operation in model.operations:
        args = [value_of(i) for i in operation.inputs]
        types = [nnapi.to_xdsl_type(model.operands[o].info(with_value=False)) for o in operation.outputs]
        op = nnapi.op_class(operation.type)(args, types)
        ops.append(op)
        for o, r in zip(operation.outputs, op.outs):
            values[o] = r
    results = [value_of(o) for o in model.outputs]
    ops.append(func.ReturnOp(*results))
    block.add_ops(ops)
    fn = func.FuncOp("main", ([a.type for a in block.args], [r.type for r in results]), Region(block))
    module = ModuleOp([fn])
    module.attributes["nnapi.weights_size"] = IntAttr(len(pool))
    return ImportedModel(module, bytes(pool))


def _constant(ops: list, info: OperandInfo, pool: bytearray) -> SSAValue:
    t = nnapi.to_xdsl_type(info)
    value = info.value
    assert value is not None
    inline = (
        info.type.is_scalar
        or info.type == OperandType.TENSOR_INT32
        or value.nbytes <= MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES
    )
    if inline:
        attr = nnapi.dense_attr(np.asarray(value), t)
    else:
        pad = (-len(pool)) % POOL_ALIGN
        pool.extend(b"\0" * pad)
        attr = nnapi.BlobAttr(IntAttr(len(pool)), IntAttr(value.nbytes))
        pool.extend(np.ascontiguousarray(value).tobytes())
    op = nnapi.ConstantOp(attr, t)
    ops.append(op)
    return op.result
