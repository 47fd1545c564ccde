"""Element-wise operations from one 8-bit tensor to another as 256-entry tables.

Each output byte of such an operation is a function of one input byte:
whatever its scalar body computes (HARD_SWISH in int16 fixed point, a
requantisation, a clamp), there are only 256 inputs.  :func:`byte_table`
evaluates the very body the lowering would emit on all of them at compile
time -- its operations interpreted over numpy with LLVM's integer semantics
(two's complement wrapping at each type's width, division truncating toward
zero, arithmetic and logical shifts) -- and the operation becomes one table
lookup per element (:meth:`~nnc.passes.lowering.base.LoweringContext.elementwise`).
The lookup loop is the same for every such operation of a model on flat
buffers, so LLVM compiles it once (``nnc-outline-parallel`` shares it),
where each body was a function LLVM vectorised on its own: MobileNetV3's 18
HARD_SWISH bodies cost about 0.7 s of LLVM.

The table's entries are the body's results by construction.  A body with
anything else -- a load, a float, an index, a region, a division by zero,
an out-of-range shift -- is not tabulated (:class:`NotTabulable`) and is
lowered as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.builder import Builder, InsertPoint
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, IntegerType, i8
from xdsl.ir import Attribute, Block, Operation, SSAValue

#: builds operations at the end of a block (the lowering's ``Emitter``, which
#: this leaf module does not import: the lowering context imports it)
EmitterFactory = Callable[[Builder], Any]

#: every stored byte, as the i8 value the body receives (entry ``k`` of a
#: table is the result for the byte whose unsigned value is ``k``)
BYTES = np.arange(256, dtype=np.int64) - np.where(np.arange(256) > 127, 256, 0)


class NotTabulable(Exception):
    """The body computes something the evaluator does not (what)."""


def byte_table(
    body: Callable[[Any, list[SSAValue]], SSAValue], emitter: EmitterFactory, min_ops: int = 0
) -> np.ndarray:
    """The 256 results of ``body`` (an element-wise body from one i8 to one
    i8, as :meth:`LoweringContext.elementwise` takes, built with
    ``emitter``) for the stored bytes 0..255, as int8.  NotTabulable when it
    cannot be evaluated, or when it has fewer than ``min_ops`` operations
    besides constants (a copy or a clamp is cheaper as code: LLVM
    vectorises it, where a table lookup is a load per element)."""
    block = Block(arg_types=[i8])
    result = body(emitter(Builder(InsertPoint.at_end(block))), [block.args[0]])
    if not isinstance(result, SSAValue) or result.type != i8:
        raise NotTabulable("the body's result is not an i8")
    if sum(1 for op in block.ops if not isinstance(op, arith.ConstantOp)) < min_ops:
        raise NotTabulable(f"fewer than {min_ops} operations")
    values: dict[SSAValue, np.ndarray] = {block.args[0]: BYTES}
    for op in block.ops:
        if op.regions:
            raise NotTabulable(f"{op.name} has regions")
        values[op.results[0]] = _evaluate(op, [values[v] for v in op.operands])
    return values[result].astype(np.int8)


def _bits(t: Attribute) -> int:
    if not isinstance(t, IntegerType):
        raise NotTabulable(f"a value of type {t}")
    return t.width.data


def _wrap(v: np.ndarray, bits: int) -> np.ndarray:
    """``v`` as the signed value of its low ``bits`` bits."""
    if bits >= 64:
        return v.astype(np.int64)
    half = 1 << (bits - 1)
    return ((v + half) & ((1 << bits) - 1)) - half


def _unsigned(v: np.ndarray, bits: int) -> np.ndarray:
    """``v``'s low ``bits`` bits as an unsigned value (bits < 64)."""
    if bits >= 64:
        raise NotTabulable("an unsigned 64-bit operation")
    return v & ((1 << bits) - 1)


def _divide(a: np.ndarray, b: np.ndarray, bits: int) -> np.ndarray:
    """C's signed division, truncating toward zero; undefined cases refused."""
    if (b == 0).any() or ((a == -(1 << (bits - 1))) & (b == -1)).any():
        raise NotTabulable("a division by zero or an overflowing division")
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def _shift(b: np.ndarray, bits: int) -> np.ndarray:
    if ((b < 0) | (b >= bits)).any():
        raise NotTabulable("a shift by the width or more")
    return b


_PREDICATES: dict[int, Callable[[np.ndarray, np.ndarray, int], np.ndarray]] = {
    0: lambda a, b, n: a == b,
    1: lambda a, b, n: a != b,
    2: lambda a, b, n: a < b,
    3: lambda a, b, n: a <= b,
    4: lambda a, b, n: a > b,
    5: lambda a, b, n: a >= b,
    6: lambda a, b, n: _unsigned(a, n) < _unsigned(b, n),
    7: lambda a, b, n: _unsigned(a, n) <= _unsigned(b, n),
    8: lambda a, b, n: _unsigned(a, n) > _unsigned(b, n),
    9: lambda a, b, n: _unsigned(a, n) >= _unsigned(b, n),
}

#: integer operations with two operands of one type: (a, b, bits) -> result
_BINARY: dict[type[Operation], Callable[[np.ndarray, np.ndarray, int], np.ndarray]] = {
    arith.AddiOp: lambda a, b, n: a + b,
    arith.SubiOp: lambda a, b, n: a - b,
    arith.MuliOp: lambda a, b, n: a * b,
    arith.AndIOp: lambda a, b, n: a & b,
    arith.OrIOp: lambda a, b, n: a | b,
    arith.XOrIOp: lambda a, b, n: a ^ b,
    arith.MaxSIOp: lambda a, b, n: np.maximum(a, b),
    arith.MinSIOp: lambda a, b, n: np.minimum(a, b),
    arith.MaxUIOp: lambda a, b, n: np.where(_unsigned(a, n) >= _unsigned(b, n), a, b),
    arith.MinUIOp: lambda a, b, n: np.where(_unsigned(a, n) <= _unsigned(b, n), a, b),
    arith.DivSIOp: _divide,
    arith.RemSIOp: lambda a, b, n: a - b * _divide(a, b, n),
    arith.FloorDivSIOp: lambda a, b, n: _divide(a, b, n) - ((a % np.where(b == 0, 1, b) != 0) & ((a < 0) != (b < 0))),
    arith.ShLIOp: lambda a, b, n: a << _shift(b, n),
    arith.ShRSIOp: lambda a, b, n: a >> _shift(b, n),
    arith.ShRUIOp: lambda a, b, n: _unsigned(a, n) >> _shift(b, n),
}


def _evaluate(op: Operation, args: Sequence[np.ndarray]) -> np.ndarray:
    """One operation's results for every input byte, as signed values of
    its result type's width."""
    if len(op.results) != 1:
        raise NotTabulable(f"{op.name} has {len(op.results)} results")
    bits = _bits(op.results[0].type)
    if isinstance(op, arith.ConstantOp):
        if not isinstance(op.value, IntegerAttr):
            raise NotTabulable(f"a constant {op.value}")
        return _wrap(np.full(BYTES.shape, op.value.value.data, dtype=np.int64), bits)
    if type(op) in _BINARY:
        return _wrap(_BINARY[type(op)](args[0], args[1], bits), bits)
    if isinstance(op, arith.CmpiOp):
        n = _bits(op.operands[0].type)
        return -_PREDICATES[op.predicate.value.data](args[0], args[1], n).astype(np.int64)
    if isinstance(op, arith.SelectOp):
        return np.where(args[0] != 0, args[1], args[2])
    if isinstance(op, arith.ExtSIOp):
        return args[0]
    if isinstance(op, arith.ExtUIOp):
        return _unsigned(args[0], _bits(op.operands[0].type))
    if isinstance(op, arith.TruncIOp):
        return _wrap(args[0], bits)
    raise NotTabulable(f"the operation {op.name}")
