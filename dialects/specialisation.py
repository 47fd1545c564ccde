"""Which model inputs have their *values* compiled in (not only their shapes).

Most inputs are compiled for their shape only; an input whose value decides
the code is "specialised": the compiled variant is valid for that value alone
(one variant per value, never cached: :mod:`nnc.runtime.cache`).  Which ones
those are follows from the operation records (:data:`SPECS`: the operands an
operation reads as a shape) and from control flow (the inputs a WHILE's trip
count depends on), so the question is answered here, beside the records,
without the compiler: ``nnc.Compilation`` asks it for every model, also when
its code then comes from the compilation cache and the compiler (xDSL, the
passes, LLVM) is never imported.  The driver re-exports both functions.

A model is used through its attributes (``operands``, ``operations``,
``inputs``, ``outputs``), as the driver uses it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from nnc.dialects.optable import SPECS
from nnc.enums import OperationType


class Graph(Protocol):
    """What these functions read of a model or of a referenced model (an
    ``nnc.Model`` is one): its input and output operand indexes, its operands
    (``.type``, ``.subgraph``, ``.fully_specified``) and its operations
    (``.type``, ``.inputs``, ``.outputs``).  A protocol, so this layer names
    no API class."""

    @property
    def inputs(self) -> Sequence[int]: ...
    @property
    def outputs(self) -> Sequence[int]: ...
    @property
    def operands(self) -> Sequence[Any]: ...
    @property
    def operations(self) -> Sequence[Any]: ...


def specialised_inputs(model: Graph) -> set[int]:
    """Model input positions whose *values* are compiled in: scalars, tensors
    that some operation reads as a shape (RESHAPE's shape, ...), and those
    that decide how often a WHILE whose state may change shape runs
    (:func:`loop_count_inputs`)."""
    by_operand = {idx: k for k, idx in enumerate(model.inputs)}
    result = {k for k, idx in enumerate(model.inputs) if model.operands[idx].type.is_scalar}
    for op in model.operations:
        for pos in SPECS[OperationType(op.type)].shape_inputs:
            if pos < len(op.inputs) and op.inputs[pos] in by_operand:
                result.add(by_operand[op.inputs[pos]])
    return result | loop_count_inputs(model)


def loop_count_inputs(model: Graph) -> set[int]:
    """Model input positions that a WHILE's condition depends on, for each
    WHILE of the main model whose body declares a loop state input without
    full dimensions (so that its shape may change between iterations).
    Shape inference unrolls such a loop at compile time when its state does
    change shape (:mod:`nnc.passes.shape_inference`), which needs the
    condition's value at every iteration: the values of these inputs are
    compiled in, one variant per value.  The dependence is followed
    backwards through the operations (an output depends on all inputs of its
    operation) and, inside the loop, through the body to a fixed point: the
    condition reads a counter the body advances."""
    result: set[int] = set()
    for op in model.operations:
        if OperationType(op.type) != OperationType.WHILE:
            continue
        cond, body = (model.operands[i].subgraph for i in op.inputs[:2])
        if cond is None or body is None:
            continue
        n_state = len(body.outputs)
        if all(body.operands[i].fully_specified for i in body.inputs[:n_state]):
            continue
        needed = _inputs_reaching(cond, cond.outputs)
        while True:
            more = _inputs_reaching(body, [body.outputs[j] for j in needed if j < n_state])
            if more <= needed:
                break
            needed |= more
        outer = [op.inputs[2 + j] for j in needed if 2 + j < len(op.inputs)]
        result |= _inputs_reaching(model, outer)
    return result


def _inputs_reaching(model: Graph, operands: Sequence[int]) -> set[int]:
    """Positions (in ``model.inputs``) of the inputs ``operands`` are computed from."""
    writer = {o: op for op in model.operations for o in op.outputs}
    seen: set[int] = set()
    stack = list(operands)
    while stack:
        o = stack.pop()
        if o in seen:
            continue
        seen.add(o)
        if o in writer:
            stack.extend(writer[o].inputs)
    return {k for k, idx in enumerate(model.inputs) if idx in seen}
