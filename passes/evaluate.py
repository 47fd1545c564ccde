"""Compile-time evaluation of small elementwise computations, over numpy.

Shape inference needs some *values* at compile time: a WHILE whose loop state
changes shape between iterations is unrolled, which needs its condition's
value at each iteration (a counter compared with a limit), and an operation
that reads a tensor as a shape (SLICE's begin, say) needs that tensor's value.
Such values are small integer computations on constants: ``i + 1``,
``(i - 2) * [0, 1]``, ``i < n``.  :func:`evaluate` computes one operation on
known inputs; :data:`EVALUATORS` says which operations it can compute (one
row per operation: a numpy function of the input values).  Anything else --
another operation, a quantised or omitted operand, an activation on an
integer, a division by zero -- is :class:`NotEvaluable`, and the caller keeps
the value a run-time one.

The semantics are NNAPI's: numpy broadcasting is NNAPI's (trailing dimensions
first, 1 against anything), TENSOR_INT32 arithmetic wraps in 32 bits, integer
DIV is floor division ("//" in Python, as the NDK header says), and the fused
activation of ADD/SUB/MUL/DIV clamps a float result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from nnc.dialects.rules import OpCall
from nnc.enums import FuseCode, OperandType, OperationType

T = OperandType
Op = OperationType

#: Tensor types the evaluator computes in (with the numpy dtype of each).
#: Quantised tensors, and TENSOR_INT32 with a scale, are left to run time.
EVALUATED_TYPES: dict[OperandType, np.dtype] = {
    T.TENSOR_INT32: np.dtype(np.int32),
    T.TENSOR_BOOL8: np.dtype(np.bool_),
    T.TENSOR_FLOAT32: np.dtype(np.float32),
    T.TENSOR_FLOAT16: np.dtype(np.float16),
}


class NotEvaluable(Exception):
    """The operation's result cannot be computed at compile time (why)."""


@dataclass(frozen=True)
class Evaluator:
    """How one operation is computed: ``fn`` of its tensor inputs' values
    (the first ``arity`` inputs); ``fused`` when the next input is a fused
    activation code."""

    fn: Callable[..., np.ndarray]
    arity: int
    fused: bool = False


def _floor_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(a.dtype, np.integer):
        if (b == 0).any():
            raise NotEvaluable("an integer division by zero (left to run time)")
        return np.floor_divide(a, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.divide(a, b)


def _wrapping(fn: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    """``fn`` with numpy's overflow warnings off: TENSOR_INT32 wraps."""

    def run(*args: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return fn(*args)

    return run


#: OperationType -> how to compute it.  Comparisons and logical operations
#: produce TENSOR_BOOL8; the rest keep their inputs' type.
EVALUATORS: dict[OperationType, Evaluator] = {
    Op.ADD: Evaluator(_wrapping(np.add), 2, fused=True),
    Op.SUB: Evaluator(_wrapping(np.subtract), 2, fused=True),
    Op.MUL: Evaluator(_wrapping(np.multiply), 2, fused=True),
    Op.DIV: Evaluator(_floor_divide, 2, fused=True),
    Op.MAXIMUM: Evaluator(np.maximum, 2),
    Op.MINIMUM: Evaluator(np.minimum, 2),
    Op.LESS: Evaluator(np.less, 2),
    Op.LESS_EQUAL: Evaluator(np.less_equal, 2),
    Op.GREATER: Evaluator(np.greater, 2),
    Op.GREATER_EQUAL: Evaluator(np.greater_equal, 2),
    Op.EQUAL: Evaluator(np.equal, 2),
    Op.NOT_EQUAL: Evaluator(np.not_equal, 2),
    Op.LOGICAL_AND: Evaluator(np.logical_and, 2),
    Op.LOGICAL_OR: Evaluator(np.logical_or, 2),
    Op.LOGICAL_NOT: Evaluator(np.logical_not, 1),
    Op.NEG: Evaluator(_wrapping(np.negative), 1),
    Op.ABS: Evaluator(_wrapping(np.abs), 1),
}

#: Fused activation code -> the clamp of a float result (NONE: none).
_ACTIVATIONS: dict[int, tuple[float, float] | None] = {
    FuseCode.NONE: None,
    FuseCode.RELU: (0.0, np.inf),
    FuseCode.RELU1: (-1.0, 1.0),
    FuseCode.RELU6: (0.0, 6.0),
}


def evaluate(call: OpCall) -> list[np.ndarray]:
    """The values of ``call``'s outputs, computed from its inputs' values
    (each :class:`OperandInfo` ``value``); NotEvaluable if that cannot be done."""
    ev = EVALUATORS.get(call.type)
    if ev is None:
        raise NotEvaluable(f"{call.type.name} is not evaluated at compile time")
    if len(call.inputs) < ev.arity + ev.fused or len(call.outputs) != 1:
        raise NotEvaluable(f"{call.type.name} with {len(call.inputs)} inputs and {len(call.outputs)} outputs")
    values = []
    for k, info in enumerate(call.inputs[: ev.arity]):
        if info.omitted or info.value is None:
            raise NotEvaluable(f"input {k} of {call.type.name} is not known at compile time")
        values.append(np.asarray(info.value, dtype=_dtype(info, f"input {k}")))
    out = call.outputs[0]
    dtype = _dtype(out, "the output")
    result = np.asarray(ev.fn(*values))
    if ev.fused:
        result = _activate(result, call.inputs[ev.arity])
    if out.dims is not None and all(d > 0 for d in out.dims) and tuple(result.shape) != tuple(out.dims):
        raise NotEvaluable(f"{call.type.name} computed shape {list(result.shape)}, declared {list(out.dims)}")
    return [result.astype(dtype)]


def _dtype(info, what: str) -> np.dtype:
    dtype = EVALUATED_TYPES.get(info.type)
    if dtype is None or info.scale or info.zero_point:
        raise NotEvaluable(f"{what} is {info.type.name}{' with a scale' if dtype is not None else ''}, "
                           "which is not evaluated at compile time")  # fmt: skip
    return dtype


def _activate(result: np.ndarray, code) -> np.ndarray:
    if code.value is None:
        raise NotEvaluable("the fused activation code is not known at compile time")
    fuse = int(np.asarray(code.value).reshape(-1)[0])
    if fuse not in _ACTIVATIONS:
        raise NotEvaluable(f"fused activation code {fuse} is not one NNAPI defines")
    clamp = _ACTIVATIONS[fuse]
    if clamp is None:
        return result
    if not np.issubdtype(result.dtype, np.floating):
        raise NotEvaluable("a fused activation on an integer result")
    return np.clip(result, clamp[0], clamp[1]).astype(result.dtype)
