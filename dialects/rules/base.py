"""Per-operation semantic rules: operand-type checks and output-shape inference.

A rule is a plain Python function over :class:`OperandInfo` records, so the same
code serves two callers:

* ``nnc.Model.finish()`` validates a model whose shapes may be partly unknown
  (a 0 in ``dims`` means "not specified yet"; ``dims=None`` means unknown rank);
* the ``nnapi-shape-inference`` pass, which runs with every input shape known,
  and writes the inferred shapes into the IR.

Rules raise :class:`RuleError` for an invalid model (reported as BAD_DATA with the
operation index and type) and return one ``OperandInfo`` per output.  A rule that
finds a *valid* combination nnc cannot run yet raises :class:`Unsupported`.

Rules register themselves with :func:`rule`; importing the package
:mod:`nnc.dialects.rules` imports every family module, which fills
:data:`RULES`.  Family modules import this module, never the package, so the
registry has no import cycle.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from nnc.dialects.optable import SPECS
from nnc.enums import OperandType, OperationType
from nnc.operand_types import DimensionMismatch, OperandInfo, unify_dim

T = OperandType


class RuleError(Exception):
    """The operation breaks an NNAPI rule (-> BAD_DATA)."""


class Unsupported(Exception):
    """Valid NNAPI that nnc does not implement (-> UnsupportedOperationError)."""


@dataclass
class OpCall:
    """One operation application as the rules see it."""

    type: OperationType
    inputs: list[OperandInfo]
    outputs: list[OperandInfo]
    index: int = -1

    # -- helpers for rule writers -------------------------------------------------
    def fail(self, message: str) -> RuleError:
        return RuleError(message)

    def input(self, i: int) -> OperandInfo:
        if i >= len(self.inputs):
            raise RuleError(f"missing input {i}")
        return self.inputs[i]

    def has_input(self, i: int) -> bool:
        return i < len(self.inputs) and not self.inputs[i].omitted

    def scalar(self, i: int, default=None):
        """The Python value of scalar input ``i`` (``default`` if absent).

        Raises Unsupported if the scalar is not a compile-time constant: every
        scalar parameter of an NNAPI operation decides the generated code.
        """
        if i >= len(self.inputs) or self.inputs[i].omitted:
            if default is None:
                raise RuleError(f"input {i} is required")
            return default
        info = self.inputs[i]
        if not info.type.is_scalar:
            raise RuleError(f"input {i} must be a scalar, got {info.type.name}")
        if info.value is None:
            raise Unsupported(f"scalar input {i} must be a constant")
        v = info.value.reshape(-1)[0]
        if info.type in (T.FLOAT32, T.FLOAT16):
            return float(v)
        if info.type == T.BOOL:
            return bool(v)
        return int(v)

    def const(self, i: int) -> np.ndarray:
        """The value of tensor input ``i``, which must be known now."""
        info = self.input(i)
        if info.value is None:
            raise Unsupported(f"input {i} must be a constant (its value decides the output shape)")
        return info.value


RuleFn = Callable[[OpCall], list[OperandInfo]]

#: OperationType -> rule.  Populated by the family modules.
RULES: dict[OperationType, RuleFn] = {}


def rule(*types: OperationType) -> Callable[[RuleFn], RuleFn]:
    """Register ``fn`` as the rule for each of ``types``."""

    def register(fn: RuleFn) -> RuleFn:
        for t in types:
            RULES[t] = fn
        return fn

    return register


# -- shared checks ------------------------------------------------------------------


def expect_type(call: OpCall, i: int, allowed: Iterable[OperandType]) -> OperandInfo:
    """Input ``i`` must have one of ``allowed`` types."""
    info = call.input(i)
    allowed = tuple(allowed)
    if info.type not in allowed:
        names = "/".join(t.name for t in allowed)
        raise RuleError(f"input {i} must be {names}, got {info.type.name}")
    return info


def check_present(call: OpCall, optional: Iterable[int] = ()) -> None:
    """Tensor inputs may be omitted only at the ``optional`` indexes."""
    optional = set(optional)
    for i, info in enumerate(call.inputs):
        if info.omitted and info.type.is_tensor and i not in optional:
            raise RuleError(f"input {i} is required but omitted")


def expect_count(call: OpCall, counts: tuple[int, ...], optional: tuple[int, ...] = ()) -> int:
    """The number of inputs, one of ``counts``; tensor inputs other than the
    ``optional`` ones must be present."""
    n = len(call.inputs)
    if n not in counts:
        raise RuleError(f"expected {' or '.join(map(str, counts))} inputs, got {n}")
    check_present(call, optional)
    return n


def expect_primary(call: OpCall) -> OperandInfo:
    """The input the operation's record declares operand types for (usually
    input 0), which must have one of them: the record
    (:mod:`nnc.dialects.optable`, NNAPI's lists of every feature level) is the
    one place that says which types an operation takes."""
    spec = SPECS[call.type]
    return expect_type(call, spec.inputs.index(spec.primary) if spec.primary else 0, spec.types)


def expect_rank(call: OpCall, i: int, ranks: Iterable[int] | int) -> None:
    info = call.input(i)
    ranks = (ranks,) if isinstance(ranks, int) else tuple(ranks)
    if info.dims is not None and len(info.dims) not in ranks:
        raise RuleError(f"input {i} must have rank {'/'.join(map(str, ranks))}, got {len(info.dims)}")


def same_dim(a: int, b: int, what: str) -> int:
    """Unify two dimensions where 0 means unknown."""
    try:
        return unify_dim(a, b)
    except DimensionMismatch:
        raise RuleError(f"{what}: {a} != {b}") from None


def broadcast_dims(a: tuple[int, ...] | None, b: tuple[int, ...] | None) -> tuple[int, ...] | None:
    """NumPy-style broadcasting of two shapes with 0 as unknown."""
    if a is None or b is None:
        return None
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        else:
            out.append(same_dim(x, y, "dimensions are not broadcastable"))
    return tuple(out)


def like(info: OperandInfo, dims: Sequence[int] | None, type: OperandType | None = None) -> OperandInfo:
    """An output with ``info``'s type and quantisation and the given dims."""
    out = info.with_dims(dims)
    return replace(out, type=type or info.type, omitted=False)


def infer(call: OpCall) -> list[OperandInfo]:
    """Run the registered rule for ``call`` (Unsupported if there is none)."""
    fn = RULES.get(call.type)
    if fn is None:
        raise Unsupported(f"no rule for {call.type.name}")
    return fn(call)


def check_output_quant(call: OpCall, scales: dict[T, tuple[float, int]]) -> None:
    """Quantized outputs whose scale and zeroPoint the spec fixes."""
    if not call.outputs:
        return
    out = call.outputs[0]
    want = scales.get(out.type)
    if want is None or (out.scale == 0 and out.zero_point == 0):
        return  # not quantized, or quantization not declared
    if not math.isclose(out.scale, want[0], rel_tol=1e-6) or out.zero_point != want[1]:
        raise RuleError(
            f"{out.type.name} output must have scale {want[0]} and zeroPoint {want[1]}, "
            f"got {out.scale} and {out.zero_point}"
        )
