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
are its branches' (which must agree); WHILE's are the loop state's.  Scalar
results and state are :class:`Unsupported` (nnc compiles scalars into the
code), as are operations nnc cannot compile inside a referenced model.

A WHILE whose body changes a state operand's shape between iterations (the
state grows by a CONCATENATION, say) is *unrolled*: the pass evaluates the
loop at compile time as far as shapes require.  At iteration k it specialises
a copy of the condition (``@<cond>_it<k>``) to the state's types and known
values and computes its value by folding; while it is true it specialises a
copy of the body (``@<body>_it<k>``) the same way, whose results give the
next iteration's types and values.  The WHILE then lists its bodies in the
attribute ``nnc.unrolled`` (:data:`~nnc.dialects.nnapi.UNROLLED_ATTR`), and
the lowering runs them in sequence (each behind the loop-timeout check, as a
loop's iterations), with no condition at run time: its value at each
iteration is a compile-time fact.  That needs the condition's value known at
compile time at every iteration (the driver compiles in the values of the
model inputs it depends on, see :func:`nnc.driver.loop_count_inputs`), else
the loop is Unsupported, as is one that would run more than
:data:`MAX_UNROLLED_ITERATIONS` iterations.  A body whose declared state
inputs all have full dimensions cannot change their shapes (each iteration's
types are checked against them), so only other bodies are tried this way;
a loop whose state keeps its shape stays a loop.

Folding: an operation the compile-time evaluator computes
(:mod:`nnc.passes.evaluate`: elementwise arithmetic, comparisons and logic)
whose inputs are all constants, with a small TENSOR_INT32 or TENSOR_BOOL8
result, is computed here; the operations that read it read a constant
instead (SLICE's begin computed from an unrolled loop's counter), and its
value is known (an unrolled loop's condition).  RANK's result is a scalar
the shapes decide and is folded the same way (:func:`_fold_rank`).  A folded
operation stays, writing its value where the model returns it, so operation
indexes (in error reports) do not move.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    FunctionType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnrankedTensorType,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from nnc.dialects import nnapi
from nnc.dialects.nnapi import UNROLLED_ATTR
from nnc.dialects.rules import OperandInfo, RuleError, Unsupported, infer
from nnc.dialects.rules.dynamic import propagate
from nnc.enums import OperandType, OperationType
from nnc.operand_types import DimensionMismatch, unify_bounded
from nnc.passes.evaluate import EVALUATORS, NotEvaluable, evaluate
from nnc.passes.graph import graph_functions
from nnc.passes.lowering import unsupported_reason

_CONTROL_FLOW = (OperationType.IF, OperationType.WHILE)

#: The most iterations an unrolled WHILE may run: each is a copy of the body
#: in the generated code, so a longer loop is Unsupported (a loop whose state
#: keeps its shape has no limit but the loop timeout).
MAX_UNROLLED_ITERATIONS = 1024
#: Folded results: integer and boolean tensors (computed exactly at compile
#: time) of at most this many elements.
_FOLDED_TYPES = (OperandType.TENSOR_INT32, OperandType.TENSOR_BOOL8)
FOLD_MAX_ELEMENTS = 1024


class ShapeInferenceError(PassFailedException):
    def __init__(self, index: int, op_name: str, message: str, unsupported: bool = False):
        self.index, self.op_name, self.unsupported = index, op_name, unsupported
        super().__init__(f"operation {index} ({op_name}): {message}")


def merge(declared: OperandInfo, inferred: OperandInfo) -> OperandInfo:
    """The declared output with the inferred dims (declared quantisation
    kept) and the inferred data-dependent dimension, if any (whose bound
    replaces a declared size there, see :func:`unify_bounded`)."""
    if declared.type != inferred.type:
        raise RuleError(f"declared type {declared.type.name}, inferred {inferred.type.name}")
    dims = inferred.dims
    if declared.dims is not None and dims is not None:
        if len(declared.dims) != len(dims):
            raise RuleError(f"declared rank {len(declared.dims)}, inferred {len(dims)}")
        try:
            unified = unify_bounded(declared.dims, dims, inferred.dynamic)
        except DimensionMismatch as e:
            raise RuleError(f"declared dimensions {list(declared.dims)}, inferred {list(dims)} ({e})") from None
        dims = unified
    return replace(declared, dims=dims if dims is not None else declared.dims, dynamic=inferred.dynamic)


@dataclass(frozen=True)
class ShapeInferencePass(ModulePass):
    """Static shapes everywhere (see the module docstring).  Option
    ``max-unrolled-iterations``: the most iterations a WHILE whose state
    changes shape may be unrolled to (default :data:`MAX_UNROLLED_ITERATIONS`)."""

    name = "nnapi-shape-inference"

    max_unrolled_iterations: int = MAX_UNROLLED_ITERATIONS

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        _Inference(op, self.max_unrolled_iterations).run()


class _Inference:
    """One run of the pass over ``module``: the functions by name (copies of
    referenced models are added as loops are unrolled) and the folded values."""

    def __init__(self, module: ModuleOp, max_unrolled_iterations: int):
        self.module = module
        self.max_unrolled_iterations = max_unrolled_iterations
        self.functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
        #: values of folded operations' results (their readers read constants)
        self.folded: dict[SSAValue, np.ndarray] = {}
        #: data-dependent sizes numbered so far (:mod:`nnc.dialects.rules.dynamic`)
        self.counts = 0

    def new_count(self) -> int:
        """The next data-dependent size's index in the counts buffer."""
        self.counts += 1
        return self.counts - 1

    def run(self) -> None:
        for fn in graph_functions(self.module):
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
                    inferred = propagate(call, infer(call), self.new_count)
                    if outer is not None:
                        self.check_supported(call)
                        _no_data_dependent_dims(inferred)
                if len(inferred) != len(op.outs):
                    raise RuleError(f"{len(op.outs)} outputs, expected {len(inferred)}")
                for res, decl, inf in zip(op.outs, declared, inferred):
                    Rewriter.replace_value_with_new_type(res, nnapi.to_xdsl_type(merge(decl, inf)))
                if op.SPEC.type == OperationType.RANK:
                    _fold_rank(op)
                else:
                    self.fold(op)
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

    # -- folding ---------------------------------------------------------------------------
    def fold(self, op: nnapi.NNAPIOperation) -> None:
        """Compute ``op`` now if the evaluator can and its inputs are constants
        (see the module docstring); its readers then read a constant."""
        if op.SPEC.type not in EVALUATORS or len(op.outs) != 1:
            return
        (out,) = op.outs
        info = nnapi.from_xdsl_type(out.type)
        if info.type not in _FOLDED_TYPES or info.dims is None or not info.shape_known or int(np.prod(info.dims)) > FOLD_MAX_ELEMENTS:
            return
        try:
            (value,) = evaluate(nnapi.op_call(op))
        except NotEvaluable:
            return
        self.folded[out] = value
        const = nnapi.ConstantOp(nnapi.dense_attr(value, out.type), out.type)
        Rewriter.insert_op(const, InsertPoint.before(op))
        for use in list(out.uses):
            if not isinstance(use.operation, func.ReturnOp):
                use.operation.operands[use.index] = const.result

    def known(self, v: SSAValue) -> np.ndarray | None:
        """The value of ``v`` if it is a TENSOR_INT32 or TENSOR_BOOL8 known at
        compile time (a constant, or the result of a folded operation): the
        values folding computes with, which an unrolled loop's copies of its
        condition and body read as constants."""
        owner = v.owner
        if isinstance(owner, nnapi.ConstantOp):
            info = nnapi.operand_info(v) if isinstance(owner.value, DenseIntOrFPElementsAttr) else None
            if info is None or info.type not in _FOLDED_TYPES or info.scale or info.zero_point:
                return None
            return info.value
        return self.folded.get(v)

    # -- IF / WHILE -------------------------------------------------------------------------
    def infer_control_flow(self, op: nnapi.NNAPIOperation, at: tuple[int, str, str]) -> list[OperandInfo]:
        _no_data_dependent_dims([nnapi.from_xdsl_type(a.type) for a in op.args if isinstance(a.type, TensorType)])
        if op.SPEC.type == OperationType.IF:
            return self.infer_if(op, at)
        return self.infer_while(op, at)

    def subgraph(self, v: SSAValue) -> func.FuncOp:
        try:
            return nnapi.referenced_function(self.functions, v)
        except ValueError as e:
            raise RuleError(str(e)) from None

    def specialise(
        self,
        fn: func.FuncOp,
        types: list[Attribute],
        at: tuple[int, str, str],
        role: str,
        values: Sequence[np.ndarray | None] = (),
        iteration: int | None = None,
    ) -> list[Attribute]:
        """Give ``fn`` the operand types of its use, infer it; its result types.
        ``values``: the inputs known at compile time (at ``iteration`` of an
        unrolled WHILE), which ``fn`` then reads as constants."""
        label = f"{role} model" if iteration is None else f"{role} model at iteration {iteration}"
        args = fn.body.block.args
        if len(args) != len(types):
            raise RuleError(f"the {role} model has {len(args)} inputs, the operation passes {len(types)}")
        for k, (arg, t) in enumerate(zip(args, types)):
            try:
                merged = merge(nnapi.from_xdsl_type(arg.type), nnapi.from_xdsl_type(t))
            except RuleError as e:
                raise RuleError(f"{label} input {k}: {e}") from None
            Rewriter.replace_value_with_new_type(arg, nnapi.to_xdsl_type(merged))
        for arg, value in zip(fn.body.block.args, values):  # the new arguments
            if value is not None and arg.uses:
                const = nnapi.ConstantOp(nnapi.dense_attr(value, arg.type), arg.type)
                Rewriter.insert_op(const, InsertPoint.at_start(fn.body.block))
                arg.replace_all_uses_with(const.result)
        self.infer_function(fn, (at[0], at[1], f"{at[2]}{label}"))
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
        cond_fn, body_fn = self.subgraph(op.args[0]), self.subgraph(op.args[1])
        _check_state_count(op, len(body_fn.function_type.outputs.data), len(data))
        if _state_may_change_shape(body_fn):
            unrolled = self.unroll_while(op, at, cond_fn, body_fn, data)
            if unrolled is not None:
                return unrolled
        body = self.specialise(body_fn, data, at, "body")
        for k, (before, after) in enumerate(zip(data, body)):
            _tensor_result(after, f"loop state operand {k}")
            if before != after:
                raise Unsupported(
                    f"the body model turns loop state operand {k} from {before} into {after} but declares that "
                    "input with full dimensions; a loop whose state changes shape between iterations (dynamic "
                    "shapes) is supported only when the body leaves them unspecified"
                )
        _condition_output(self.specialise(cond_fn, data, at, "condition"))
        return [nnapi.from_xdsl_type(t) for t in body[: len(op.outs)]]

    def unroll_while(
        self, op: nnapi.NNAPIOperation, at: tuple[int, str, str], cond_fn: func.FuncOp, body_fn: func.FuncOp,
        data: list[Attribute],
    ) -> list[OperandInfo] | None:  # fmt: skip
        """The outputs of the WHILE ``op`` run at compile time as far as shapes
        require (see the module docstring), recording its per-iteration
        bodies on ``op``; None (and nothing recorded) when the body keeps the
        state's shapes at the first iteration: an ordinary loop."""
        n_state = len(body_fn.function_type.outputs.data)
        known = [self.known(a) for a in op.args[2:]]
        types = list(data)
        made: list[func.FuncOp] = []
        bodies: list[func.FuncOp] = []
        limit = self.max_unrolled_iterations
        for k in range(limit + 1):
            cond, clones = self.instantiate(cond_fn, k, types, known, at, "condition")
            go = self.condition_value(cond)
            self.erase(clones)  # its value is all the lowering needs
            if go is False:
                break
            if k == limit:
                raise Unsupported(
                    f"the loop state changes shape between iterations, so nnc unrolls the loop at compile time, "
                    f"and it runs more than {limit} iterations (the limit)"
                )
            body, clones = self.instantiate(body_fn, k, types, known, at, "body")
            made += clones
            after = list(body.function_type.outputs.data)
            for j, t in enumerate(after):
                _tensor_result(t, f"loop state operand {j}")
            if k == 0 and after == types[:n_state]:
                self.erase(made)
                return None
            if go is None:
                j = next((j for j, (a, b) in enumerate(zip(types, after)) if a != b), 0)
                raise Unsupported(
                    f"the body model turns loop state operand {j} from {types[j]} into {after[j]} at iteration "
                    f"{k}; nnc unrolls a loop whose state changes shape (dynamic shapes) at compile time, which "
                    "needs the condition's value, but it depends on values known only at run time (it must be "
                    "computed from constants and model inputs by elementwise arithmetic)"
                )
            bodies.append(body)
            ret = body.body.block.last_op
            assert isinstance(ret, func.ReturnOp)
            known = [*(self.known(v) for v in ret.arguments), *known[n_state:]]
            types = [*after, *types[n_state:]]
        op.attributes[UNROLLED_ATTR] = ArrayAttr([SymbolRefAttr(b.sym_name.data) for b in bodies])
        return [nnapi.from_xdsl_type(t) for t in types[: len(op.outs)]]

    def instantiate(
        self, fn: func.FuncOp, k: int, types: list[Attribute], known: list[np.ndarray | None],
        at: tuple[int, str, str], role: str,
    ) -> tuple[func.FuncOp, list[func.FuncOp]]:  # fmt: skip
        """A copy of ``fn`` for iteration ``k`` of an unrolled loop,
        specialised to that iteration's types and known values; the copy and
        every function copied with it."""
        clones = self.clone_tree(fn, f"_it{k}")
        self.specialise(clones[0], types, at, role, known, iteration=k)
        return clones[0], clones

    def condition_value(self, cond: func.FuncOp) -> bool | None:
        """The value of an inferred condition model, None if not known."""
        _condition_output(list(cond.function_type.outputs.data))
        ret = cond.body.block.last_op
        assert isinstance(ret, func.ReturnOp)
        value = self.known(ret.arguments[0])
        return None if value is None else bool(value.reshape(-1)[0])

    def clone_tree(self, fn: func.FuncOp, suffix: str) -> list[func.FuncOp]:
        """A copy of the referenced model ``fn`` named ``@<name><suffix>``, and
        copies of the referenced models it uses (its own IF/WHILE), added to
        the module: each is specialised on its own.  The copy comes first."""
        copy = fn.clone()
        name = fn.sym_name.data + suffix
        if name in self.functions:
            raise PassFailedException(f"nnapi-shape-inference: @{name} exists already")
        copy.sym_name = StringAttr(name)
        made = [copy]
        for o in copy.walk():
            if isinstance(o, nnapi.ConstantOp) and isinstance(o.value, SymbolRefAttr):
                nested = self.clone_tree(self.subgraph(o.result), suffix)
                o.properties["value"] = SymbolRefAttr(nested[0].sym_name.data)
                made += nested
        self.module.body.block.add_op(copy)
        self.functions[name] = copy
        return made

    def erase(self, functions: list[func.FuncOp]) -> None:
        """Remove functions :meth:`clone_tree` added (an unrolling given up)."""
        for f in functions:
            del self.functions[f.sym_name.data]
            f.detach()
            f.erase(safe_erase=False)


def _check_state_count(op: nnapi.NNAPIOperation, n_state: int, n_data: int) -> None:
    if not len(op.outs) <= n_state <= n_data:
        raise RuleError(f"the body model has {n_state} outputs; the operation has {len(op.outs)} outputs "
                        f"and {n_data} loop inputs")  # fmt: skip


def _condition_output(types: list[Attribute]) -> None:
    if len(types) != 1 or nnapi.from_xdsl_type(types[0]) != OperandInfo(OperandType.TENSOR_BOOL8, (1,)):
        raise RuleError(f"the condition model must output one TENSOR_BOOL8 [1], got {[str(c) for c in types]}")


def _state_may_change_shape(body: func.FuncOp) -> bool:
    """Whether the body declares a loop state input without full dimensions:
    only then can the state's shape change between iterations (a declared
    shape is checked against every iteration's)."""
    n_state = len(body.function_type.outputs.data)
    return any(not _static(a.type) for a in body.body.block.args[:n_state])


def _static(t: Attribute) -> bool:
    """A tensor type of known rank and dimensions, or a scalar type."""
    if isinstance(t, TensorType):
        return all(d >= 0 for d in t.get_shape())
    return not isinstance(t, UnrankedTensorType)


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


def _no_data_dependent_dims(infos: Sequence[OperandInfo]) -> None:
    """IF and WHILE bodies are compiled with static shapes only."""
    for info in infos:
        if info.dynamic is not None:
            raise Unsupported(
                f"a {info.describe()} whose size is known only at run time (data-dependent) reaches an IF or "
                "WHILE body; data-dependent shapes inside referenced models are not supported"
            )

