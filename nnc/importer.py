"""Import a finished :class:`nnc.Model` into an ``nnapi`` dialect module.

The model becomes ``func.func @main`` whose arguments are the model inputs and
whose results are the model outputs, with one ``nnapi.<op>`` per operation in
(sorted) order.  Constants become ``nnapi.constant``: scalars, integer tensors
(whose values may decide shapes) and tensors of at most 128 bytes inline, larger
tensors as ``#nnapi.blob`` references into the returned constant pool, so that
megabytes of weights never pass through the IR.

Control flow (IF, WHILE): every *use* of a referenced model becomes its own
``func.func private @<name>`` marked ``nnapi.subgraph`` (named after the path
of operations that leads to it: ``@main_op0_then``, ``@main_op0_body_op1_cond``),
and the MODEL operand becomes ``nnapi.constant @<name> : none``.  One function
per use lets shape inference specialise each copy to the shapes at its call
site; NNAPI forbids reference cycles, so the recursion ends.  A subgraph input
whose outer operand is a constant (always for IF; for WHILE only the
input-only operands, which do not change between iterations) reads a copy of
that constant inside the subgraph, so that its value is known there as in the
outer graph (scalars are compile-time values in nnc).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import IntAttr, ModuleOp, NoneType, StringAttr, SymbolRefAttr, UnitAttr
from xdsl.ir import Attribute, Block, Region, SSAValue

from nnc.dialects import nnapi
from nnc.enums import MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES, Lifetime, OperandType, OperationType
from nnc.operand_types import OperandInfo
from nnc.runtime.chunks import ByteChunks

if TYPE_CHECKING:
    from nnc.model import Model


@dataclass
class ImportedModel:
    module: ModuleOp
    #: the constant pool that #nnapi.blob attributes point into: views of the
    #: model's values, not a copy
    weights: ByteChunks


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


#: Role names of the MODEL inputs of IF and WHILE, by input position.
_ROLES = {OperationType.IF: {1: "then", 2: "else"}, OperationType.WHILE: {0: "cond", 1: "body"}}


def import_model(
    model: Model,
    input_infos: Sequence[OperandInfo] | None = None,
) -> ImportedModel:
    """Build the nnapi module; ``input_infos`` override the inputs' declared
    shapes (and, with a value, make that input a constant: specialisation)."""
    infos = list(input_infos) if input_infos is not None else [model.operands[i].info() for i in model.inputs]
    arg_infos = [_arg_info(i) for i in infos]
    block = Block(arg_types=[nnapi.to_xdsl_type(i) for i in arg_infos])
    pool = ByteChunks()
    graph = _GraphImporter(model, pool, "main")
    ops: list = []
    for k, idx in enumerate(model.inputs):
        graph.values[idx] = block.args[k]
        if infos[k].omitted:
            no_value = nnapi.NoValueOp(nnapi.to_xdsl_type(model.operands[idx].info(with_value=False)))
            ops.append(no_value)
            graph.values[idx] = no_value.result
        elif infos[k].value is not None:
            graph.values[idx] = _constant(ops, infos[k], pool)
    fn = graph.build(block, ops)
    module = ModuleOp([fn, *graph.subgraphs])
    module.attributes["nnapi.weights_size"] = IntAttr(pool.size)
    return ImportedModel(module, pool)


class _GraphImporter:
    """Imports one graph (the main model or one use of a referenced model)."""

    def __init__(self, model: Model, pool: ByteChunks, name: str):
        self.model = model
        self.pool = pool
        self.name = name
        self.values: dict[int, SSAValue] = {}
        #: functions of referenced models used by this graph, nested ones included
        self.subgraphs: list[func.FuncOp] = []

    def build(self, block: Block, ops: list) -> func.FuncOp:
        """Append the graph's operations and return to ``block``; the function."""
        self.ops = ops
        for k, operation in enumerate(self.model.operations):
            # Data operands first: a referenced model's function reads which of
            # them are constants.
            is_model = [self.model.operands[i].type == OperandType.MODEL for i in operation.inputs]
            args: list = [None if m else self.value_of(i) for i, m in zip(operation.inputs, is_model)]
            for pos, i in enumerate(operation.inputs):
                if is_model[pos]:
                    args[pos] = self.model_reference(i, k, pos, operation)
            types = [nnapi.to_xdsl_type(self.model.operands[o].info(with_value=False)) for o in operation.outputs]
            op = nnapi.op_class(OperationType(operation.type))(args, types)
            ops.append(op)
            for o, r in zip(operation.outputs, op.outs):
                self.values[o] = r
        results = [self.value_of(o) for o in self.model.outputs]
        ops.append(func.ReturnOp(*results))
        block.add_ops(ops)
        return func.FuncOp(self.name, ([a.type for a in block.args], [r.type for r in results]), Region(block))

    def value_of(self, idx: int) -> SSAValue:
        operand = self.model.operands[idx]
        if idx not in self.values:
            info = operand.info()
            if operand.lifetime == Lifetime.NO_VALUE:
                op = nnapi.NoValueOp(nnapi.to_xdsl_type(info))
                self.ops.append(op)
                self.values[idx] = op.result
            elif operand.is_constant:
                self.values[idx] = _constant(self.ops, info, self.pool)
            else:
                raise KeyError(f"operand {idx} has no definition")
        return self.values[idx]

    def model_reference(self, idx: int, op_index: int, position: int, operation) -> SSAValue:
        """``nnapi.constant @name : none`` naming a new function for this use."""
        operand = self.model.operands[idx]
        if operand.subgraph is None:
            raise KeyError(f"MODEL operand {idx} has no referenced model")
        op_type = OperationType(operation.type)
        role = _ROLES.get(op_type, {}).get(position, f"model{position}")
        name = f"{self.name}_op{op_index}_{role}"
        first = 3 if op_type == OperationType.IF else 2
        outer = [self.values.get(i) for i in operation.inputs[first:]]
        self.subgraphs.extend(self._subgraph(operand.subgraph, name, outer, self._invariant_from(op_type, operation)))
        ref = nnapi.ConstantOp(SymbolRefAttr(name), NoneType())
        self.ops.append(ref)
        return ref.result

    def _invariant_from(self, op_type: OperationType, operation) -> int:
        """Index (among the data inputs) of the first one that is the same in
        every run of the referenced model: all of IF's; WHILE's input-only
        operands follow the m + k state operands (the body's outputs)."""
        if op_type != OperationType.WHILE:
            return 0
        body = self.model.operands[operation.inputs[1]].subgraph
        return len(body.outputs) if body is not None else len(operation.inputs)

    def _subgraph(self, sub: Model, name: str, outer: list, invariant_from: int) -> list[func.FuncOp]:
        """The function for one use of ``sub`` (plus the ones it uses)."""
        graph = _GraphImporter(sub, self.pool, name)
        block = Block(arg_types=[nnapi.to_xdsl_type(sub.operands[i].info(with_value=False)) for i in sub.inputs])
        ops: list = []
        for k, idx in enumerate(sub.inputs):
            graph.values[idx] = block.args[k]
            v = outer[k] if k < len(outer) else None
            if k >= invariant_from and v is not None and isinstance(v.owner, nnapi.ConstantOp | nnapi.NoValueOp):
                copy = v.owner.clone()
                ops.append(copy)
                graph.values[idx] = copy.results[0]
        fn = graph.build(block, ops)
        fn.sym_visibility = StringAttr("private")
        fn.attributes[nnapi.SUBGRAPH_ATTR] = UnitAttr()
        return [fn, *graph.subgraphs]


def _constant(ops: list, info: OperandInfo, pool: ByteChunks) -> SSAValue:
    t = nnapi.to_xdsl_type(info)
    value = info.value
    assert value is not None
    inline = (
        info.type.is_scalar
        or info.type == OperandType.TENSOR_INT32
        or value.nbytes <= MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES
    )
    attr: Attribute
    if inline:
        attr = nnapi.dense_attr(np.asarray(value), t)
    else:
        # The finished model's value itself (it cannot change any more).
        attr = nnapi.BlobAttr(IntAttr(pool.append(np.ascontiguousarray(value))), IntAttr(value.nbytes))
    op = nnapi.ConstantOp(attr, t)
    ops.append(op)
    return op.result
