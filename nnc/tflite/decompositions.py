"""Builtins the delegate rejects, as exact NNAPI graphs: no one NNAPI
operation is theirs, so no record lists them; ``DECOMPOSITIONS`` says what
each becomes (docs/tflite.md's table and the tests check against it)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from nnc.enums import FuseCode, OperandType, OperationType
from nnc.tflite.reader import _options
from nnc.tflite.state import Converter, _Call, _Unsupported

T = OperandType
Op = OperationType

#: builtin -> the NNAPI graph it becomes (these have no record: no one NNAPI operation is theirs)
DECOMPOSITIONS: dict[str, str] = {}


#: builtin -> its converter (merged into ``CONVERTERS``)
DECOMPOSED: dict[str, Converter] = {}


def decomposes(name: str, graph: str) -> Callable[[Converter], Converter]:
    DECOMPOSITIONS[name] = graph

    def register(fn: Converter) -> Converter:
        DECOMPOSED[name] = fn
        return fn

    return register


def _float_only(c: _Call) -> None:
    if any(c.tensor(k).tfl_type != 0 for k in range(len(c.ins)) if c.has(k)):
        raise _Unsupported(f"only float32 {c.name} is decomposed (no exact integer expansion)")


def _f32(c: _Call, v: float) -> int:
    """A one-element float32 constant (broadcasts like a scalar)."""
    return c.imp.const(np.array([v], np.float32), T.TENSOR_FLOAT32)


class _Graph:
    """Emits an element-wise float32 expansion: each step a new intermediate
    of the output's shape (the last step writes the operator's output)."""

    def __init__(self, c: _Call):
        self.c = c
        self.shape = c.imp.tensors[c.outs[0]].shape
        self.none = c.imp.int32(FuseCode.NONE)

    def op(self, t: OperationType, *ins: int, fuse: int | None = None, out: bool = False) -> int:
        args = list(ins)
        if t in (Op.ADD, Op.SUB, Op.MUL, Op.DIV):
            args.append(self.none if fuse is None else self.c.imp.int32(fuse))
        y = self.c.output(0) if out else self.c.imp.temp_like(self.c.outs[0], self.shape)
        self.c.emit(t, args, [y])
        return y


@decomposes("SQUARED_DIFFERENCE", "SUB, then MUL of the difference by itself")
def _squared_difference(c: _Call) -> None:
    _float_only(c)
    g = _Graph(c)
    d = g.op(Op.SUB, c.input(0), c.input(1))
    g.op(Op.MUL, d, d, out=True)


@decomposes("ADD_N", "a chain of ADDs, in TFLite's order")
def _add_n(c: _Call) -> None:
    if any(c.tensor(k).tfl_type not in (0, 2) for k in range(len(c.ins))):
        raise _Unsupported("ADD_N is decomposed for float32 and int32 only")
    if len(c.ins) < 2:
        raise _Unsupported("ADD_N of one input")
    g = _Graph(c)
    acc = c.input(0)
    for k in range(1, len(c.ins)):
        acc = g.op(Op.ADD, acc, c.input(k), out=k == len(c.ins) - 1)


#: Abramowitz & Stegun 7.1.26: erfc(u) = t*(a1 + t*(a2 + ...)) * exp(-u*u), t = 1/(1 + p*u),
#: for u >= 0, absolute error below 1.5e-7.
_ERFC_P = 0.3275911
_ERFC_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


@decomposes("GELU", "exact: relu(x) - |x|*erfc(|x|/sqrt 2)/2, erfc by A&S 7.1.26 (|err| < 1.5e-7); "
                    "approximate: 0.5*x*(1 + tanh(sqrt(2/pi)*(x + 0.044715*x^3)))")  # fmt: skip
def _gelu(c: _Call) -> None:
    """NNAPI has no ERF.  x*Phi(x) = relu(x) - |x|*erfc(|x|/sqrt2)/2 for
    either sign of x, and erfc of a non-negative argument has a rational-times-
    exponential expansion within 1.5e-7 (A&S 7.1.26): ABS, MUL, ADD, DIV,
    EXP, RELU, SUB.  The tanh form is TFLite's own approximate=True formula."""
    _float_only(c)
    o = _options(c.op, "GeluOptions")
    g, x = _Graph(c), c.input(0)
    if o is not None and o.Approximate():
        x3 = g.op(Op.MUL, g.op(Op.MUL, x, x), x)
        inner = g.op(Op.ADD, x, g.op(Op.MUL, x3, _f32(c, 0.044715)))
        th = g.op(Op.TANH, g.op(Op.MUL, inner, _f32(c, float(np.sqrt(2 / np.pi)))))
        half_x = g.op(Op.MUL, x, _f32(c, 0.5))
        g.op(Op.MUL, half_x, g.op(Op.ADD, th, _f32(c, 1.0)), out=True)
        return
    ax = g.op(Op.ABS, x)
    u = g.op(Op.MUL, ax, _f32(c, float(np.sqrt(0.5))))
    t = g.op(Op.DIV, _f32(c, 1.0), g.op(Op.ADD, g.op(Op.MUL, u, _f32(c, _ERFC_P)), _f32(c, 1.0)))
    poly = _f32(c, _ERFC_A[-1])
    for a in reversed(_ERFC_A[:-1]):
        poly = g.op(Op.ADD, g.op(Op.MUL, poly, t), _f32(c, a))
    e = g.op(Op.EXP, g.op(Op.MUL, g.op(Op.MUL, u, u), _f32(c, -1.0)))
    half_erfc = g.op(Op.MUL, g.op(Op.MUL, g.op(Op.MUL, poly, t), e), _f32(c, 0.5))
    g.op(Op.SUB, g.op(Op.RELU, x), g.op(Op.MUL, ax, half_erfc), out=True)

