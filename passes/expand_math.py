"""``nnc-expand-math``: float32 ``math.exp``, ``math.log`` and ``math.tanh``
become the polynomials of :mod:`nnc.passes.kernels.vmath` (scalars, and
vectors for exp).

The LLVM translation turns these operations into ``llvm.exp``/``llvm.log``
intrinsics and a ``tanhf`` call, which end as one libm call per element: a
loop that contains one is not vectorised, and LOGISTIC, TANH, EXP, LOG, ELU,
SOFTMAX's generic path and the recurrent cells' gates ran at a call per
element.  Expanded into arith operations (multiply-adds, min/max, selects,
integer bit operations), every such loop is vectorised like any other
arithmetic.  Like MLIR's ``math-polynomial-approximation``, the rewrite is
local: each operation is replaced by its expansion in place.  Other float
types (float64, whose operations RANDOM_MULTINOMIAL uses as the reference
does) keep their operations.

It runs last before ``convert-nnc-to-llvm``, so the passes before it
(``nnc-mark-cold`` counts the operations a function runs) see one operation
per function call, as the code the pass replaces would have made.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import math
from xdsl.dialects.builtin import ModuleOp, VectorType, f32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from nnc.passes.build import replace_op, walk_ops
from nnc.passes.kernels import vmath

#: the operations expanded, and their expansion
EXPANSIONS: dict[type[Operation], Callable[[vmath.Emitter, SSAValue], SSAValue]] = {
    math.ExpOp: vmath.exp,
    math.LogOp: vmath.log,
    math.TanhOp: vmath.tanh,
}


def _expands(op: Operation) -> bool:
    """A float32 operation of :data:`EXPANSIONS` (exp also on vectors)."""
    t = op.results[0].type
    return t == f32 or (isinstance(op, math.ExpOp) and isinstance(t, VectorType) and t.element_type == f32)


class _Before:
    """Builds before one operation; a constant asked for twice is built once."""

    def __init__(self, op: Operation):
        self.builder = Builder(InsertPoint.before(op))
        self.constants: dict[int | tuple[Attribute, str], SSAValue] = {}

    def op(self, op: Operation) -> SSAValue:
        self.builder.insert(op)
        return op.results[0]

    def constant(self, key: int | tuple[Attribute, str], make: Callable[[], Operation]) -> SSAValue:
        value = self.constants.get(key)
        if value is None:
            value = self.constants[key] = self.op(make())
        return value


class ExpandMathPass(ModulePass):
    """float32 exp, log and tanh -> polynomials (see the module doc)."""

    name = "nnc-expand-math"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for target in walk_ops(op):
            expand = EXPANSIONS.get(type(target))
            if expand is None or not _expands(target):
                continue
            value = expand(_Before(target), target.operands[0])
            replace_op(target, (), (value,))
