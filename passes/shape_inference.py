"""``nnapi-shape-inference``: fill in every tensor shape from the inputs'.

NNAPI lets a model leave dimensions unspecified (``?``) on temporaries and
outputs, and on inputs until execution.  Once the function's argument types are
static (the runtime specialises them to the shapes given at execution), this
pass runs each operation's rule (:mod:`nnc.dialects.rules`) in program order,
checks the declared result types against the inferred ones, and rewrites the
result types, the return and the function type with the static shapes.

An operation that breaks a rule with the actual shapes makes the pass fail with
:class:`ShapeInferenceError`, which names the operation (the runtime reports it
as BAD_DATA, or as UnsupportedOperationError for :class:`Unsupported`).

IF and WHILE: each use of a referenced model is its own function (see
:mod:`nnc.importer`), which this pass specialises to the operand types at the
use and infers like ``@main``; errors inside it name the IF/WHILE operation
(``operation 3 (WHILE): body model, operation 1 (ADD): ...``).  IF's outputs
are its branches' (which must agree); WHILE's are the loop state's, and a body
that changes a state operand's shape between iterations (dynamic shapes) is
:class:`Unsupported`, as are scalar results and state (nnc compiles scalars
into the code) and operations nnc cannot compile inside a referenced model.

RANK's result is a scalar the shapes decide: once inferred, the operations
that read it read a constant instead (:func:`_fold_rank`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from nnc.dialects import nnapi
from nnc.dialects.rules import OperandInfo, RuleError, Unsupported, infer
from nnc.enums import OperandType, OperationType
from nnc.dialects.nnapi import SUBGRAPH_ATTR
from nnc.operand_types import DimensionMismatch, unify_dims
from nnc.passes.lowering import unsupported_reason

_CONTROL_FLOW = (OperationType.IF, OperationType.WHILE)


class ShapeInferenceError(PassFailedException):
    def __init__(self, index: int, op_name: str, message: str, unsupported: bool = False):
        self.index, self.op_name, self.unsupported = index, op_name, unsupported
        super().__init__(f"operation {index} ({op_name}): {message}")


def merge(declared: OperandInfo, inferred: OperandInfo) -> OperandInfo:
    """The declared output with the inferred dims (declared quantisation kept)."""
    if declared.type != inferred.type:
        raise RuleError(f"declared type {declared.type.name}, inferred {inferred.type.name}")
    dims = inferred.dims
    if declared.dims is not None and dims is not None:
        if len(declared.dims) != len(dims):
            raise RuleError(f"declared rank {len(declared.dims)}, inferred {len(dims)}")
        try:
            dims = unify_dims(declared.dims, dims)
        except DimensionMismatch:
            raise RuleError(f"declared dimensions {list(declared.dims)}, inferred {list(dims)}") from None
    return replace(declared, dims=dims if dims is not None else declared.dims)


class ShapeInferencePass(ModulePass):
    name = "nnapi-shape-inference"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.functions = {f.sym_name.data: f for f in op.ops if isinstance(f, func.FuncOp)}
        for fn in op.ops:
            if isinstance(fn, func.FuncOp) and not fn.is_declaration and SUBGRAPH_ATTR not in fn.attributes:
                self.infer_function(fn)

    def infer_function(self, fn: func.FuncOp, outer: tuple[int, str, str] | None = None) -> None:
        """Infer ``fn``'s ops in order.  ``outer`` = (index, op name, which
        model) when ``fn`` is a referenced model used by that IF/WHILE: its
        errors then name the outer operation, whose index the runtime knows."""
        index = 0
        for op in fn.body.block.ops:
            if not isinstance(op, nnapi.NNAPIOperation):
                continue
            name = op.SPEC.type.name
            at = (index, name, "") if outer is None else (outer[0], outer[1], f"{outer[2]}, operation {index} ({name}): ")
            try:
                if op.SPEC.type in _CONTROL_FLOW:
                    declared = [nnapi.from_xdsl_type(r.type) for r in op.outs]
                    inferred = self.infer_control_flow(op, at)
                else:
                    call = nnapi.op_call(op, at[0])
                    declared = call.outputs
                    inferred = infer(call)
                    if outer is not None:
                        self.check_supported(call)
                if len(inferred) != len(op.outs):
                    raise RuleError(f"{len(op.outs)} outputs, expected {len(inferred)}")
                for res, decl, inf in zip(op.outs, declared, inferred):
                    Rewriter.replace_value_with_new_type(res, nnapi.to_xdsl_type(merge(decl, inf)))
                if op.SPEC.type == OperationType.RANK:
                    _fold_rank(op)
            except Unsupported as e:
                raise ShapeInferenceError(at[0], at[1], at[2] + str(e), unsupported=True) from None
            except RuleError as e:
                raise ShapeInferenceError(at[0], at[1], at[2] + str(e)) from None
            index += 1
        ret = fn.body.block.last_op
        assert isinstance(ret, func.ReturnOp)
        fn.function_type = FunctionType.from_lists(
            [a.type for a in fn.body.block.args], [v.type for v in ret.arguments]
        )

    @staticmethod
    def check_supported(call) -> None:
        """Inside a referenced model, what nnc cannot compile is found here
        (the compilation's support check sees only the outer operation)."""
        reason = unsupported_reason(call)
        if reason is not None:
            raise Unsupported(reason)

    # -- IF / WHILE -------------------------------------------------------------------------
    def infer_control_flow(self, op: nnapi.NNAPIOperation, at: tuple[int, str, str]) -> list[OperandInfo]:
        if op.SPEC.type == OperationType.IF:
            return self.infer_if(op, at)
        return self.infer_while(op, at)

    def subgraph(self, v: SSAValue) -> func.FuncOp:
        try:
            return nnapi.referenced_function(self.functions, v)
        except ValueError as e:
            raise RuleError(str(e)) from None

    def specialise(self, fn: func.FuncOp, types: list[Attribute], at: tuple[int, str, str], role: str) -> list[Attribute]:
        """Give ``fn`` the operand types of its use, infer it; its result types."""
        args = fn.body.block.args
        if len(args) != len(types):
            raise RuleError(f"the {role} model has {len(args)} inputs, the operation passes {len(types)}")
        for k, (arg, t) in enumerate(zip(args, types)):
            try:
                merged = merge(nnapi.from_xdsl_type(arg.type), nnapi.from_xdsl_type(t))
            except RuleError as e:
                raise RuleError(f"{role} model input {k}: {e}") from None
            Rewriter.replace_value_with_new_type(arg, nnapi.to_xdsl_type(merged))
        self.infer_function(fn, (at[0], at[1], f"{at[2]}{role} model"))
        return list(fn.function_type.outputs.data)

    def infer_if(self, op: nnapi.NNAPIOperation, at: tuple[int, str, str]) -> list[OperandInfo]:
        data = [a.type for a in op.args[3:]]
        then = self.specialise(self.subgraph(op.args[1]), data, at, "then")
        other = self.specialise(self.subgraph(op.args[2]), data, at, "else")
        for k, (a, b) in enumerate(zip(then, other, strict=True)):
            _tensor_result(a, f"output {k}")
            if a != b:
                raise Unsupported(f"output {k} is {a} in the then model and {b} in the else model; "
                                  "outputs whose shape depends on the branch taken (dynamic shapes) are not supported")  # fmt: skip
        return [nnapi.from_xdsl_type(t) for t in then]

    def infer_while(self, op: nnapi.NNAPIOperation, at: tuple[int, str, str]) -> list[OperandInfo]:
        data = [a.type for a in op.args[2:]]
        body = self.specialise(self.subgraph(op.args[1]), data, at, "body")
        if not len(op.outs) <= len(body) <= len(data):
            raise RuleError(f"the body model has {len(body)} outputs; the operation has {len(op.outs)} outputs "
                            f"and {len(data)} loop inputs")  # fmt: skip
        for k, (before, after) in enumerate(zip(data, body)):
            _tensor_result(after, f"loop state operand {k}")
            if before != after:
                raise Unsupported(
                    f"the body model turns loop state operand {k} from {before} into {after}; loops whose "
                    "state changes shape between iterations (dynamic shapes) are not supported"
                )
        cond = self.specialise(self.subgraph(op.args[0]), data, at, "condition")
        if len(cond) != 1 or nnapi.from_xdsl_type(cond[0]) != OperandInfo(OperandType.TENSOR_BOOL8, (1,)):
            raise RuleError(f"the condition model must output one TENSOR_BOOL8 [1], got {[str(c) for c in cond]}")
        return [nnapi.from_xdsl_type(t) for t in body[: len(op.outs)]]


def _fold_rank(op: nnapi.NNAPIOperation) -> None:
    """RANK's value is a shape fact: with the input's rank known, the
    operations that read it read a constant instead (nnc compiles every
    scalar operand into the code, e.g. FILL's value).  The operation stays,
    writing the value where the model returns it, so operation indexes (in
    error reports) do not move."""
    t = op.args[0].type
    if not isinstance(t, TensorType):
        return
    out = op.outs[0]
    const = nnapi.ConstantOp(nnapi.dense_attr(np.asarray(len(t.get_shape()), np.int32), out.type), out.type)
    Rewriter.insert_op(const, InsertPoint.before(op))
    for use in list(out.uses):
        if not isinstance(use.operation, func.ReturnOp):
            use.operation.operands[use.index] = const.result


def _tensor_result(t: Attribute, what: str) -> None:
    """Scalars are compile-time values in nnc: one computed at run time by a
    referenced model cannot be compiled."""
    if not isinstance(t, TensorType):
        raise Unsupported(f"{what} is a scalar ({t}) computed at run time; nnc compiles scalars into the code")
