"""``nnc-fold-quantize-pairs``: a DEQUANTIZE read only by a QUANTIZE of the
same scale computes nothing the quantised values do not already say.

On the nnapi dialect, after shape inference.  The pattern is a DEQUANTIZE
``d = DEQUANTIZE(x)`` (``x`` TENSOR_QUANT8_ASYMM or _SIGNED, scale ``s``,
zero point ``zp1``, ``d`` TENSOR_FLOAT32) reaching a QUANTIZE ``y =
QUANTIZE(v)`` (TENSOR_QUANT8_ASYMM or _SIGNED, scale ``s`` as float32, zero
point ``zp2``) through zero or more views (RESHAPE, SQUEEZE, EXPAND_DIMS),
each value on the way read by exactly one operation (so none is a model
output and nothing else sees the float values).

Why it is exact.  nnc computes DEQUANTIZE as ``f = fl(s * n)`` with the
exact integer ``n = q - zp1`` (``|n| <= 255``: both are 8-bit values of one
type) and QUANTIZE as ``clamp(zp2 + round(fl(f / s)), qmin, qmax)``, all in
float32 (``fl``: rounding to nearest, relative error at most ``u = 2^-24``
when the result is normal).  Then ``fl(fl(s * n) / s) = n (1 + e1)(1 + e2)``
with ``|e1|, |e2| <= u``, so it differs from ``n`` by at most ``255 * 2.0000001
* 2^-24 < 3.1e-5``: well inside ``(-0.5, 0.5)``, so ``round`` (either tie
rule; a reciprocal multiply instead of the division adds a third ``(1 + e3)``
and changes nothing) gives ``n`` back exactly, and ``zp2 + n`` is an exact
float32 integer.  ``n = 0`` gives ``+0`` and then ``zp2``.  The bound needs
every product normal and finite: ``2^-126 <= s`` (then ``|s n| >= s`` is
normal for ``n != 0``) and ``256 s`` finite (:func:`exact_scale`).  So the
pair computes ``clamp(q - zp1 + zp2, qmin, qmax)`` for every stored ``q``:

* same type and zero point: the identity (``q`` is in range).  Every use of
  ``y`` is replaced by ``x`` (the views, if any, now reshape ``x`` itself,
  their results retyped to ``x``'s element type);
* another zero point or the other 8-bit type: ``y`` becomes
  ``QUANTIZE(x)`` (through the views likewise), marked
  :data:`REQUANTIZE_ATTR`; ``convert-nnapi-to-linalg`` lowers it as that
  integer shift and clamp (no float arithmetic).

A QUANTIZE -> DEQUANTIZE pair is never touched: it rounds the float values.

Operations are never removed or moved, so every operation keeps the index
the runtime reports (errors, ``nnc bench --profile``).  An operation the
rewrite leaves computing nothing (the DEQUANTIZE; the QUANTIZE of an
identity) gets :data:`ELIDED_ATTR` and reads a ``nnapi.no_value`` of its
former input's type instead (no tensor keeps a reader that is not there);
the lowering emits nothing for it.

Not folded: per-channel or float16 operands, scales outside the range
above, a float value with another reader, and operations in IF/WHILE bodies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType, UnitAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from nnc.dialects import nnapi
from nnc.enums import OperandType as T
from nnc.enums import OperationType as Op
from nnc.operand_types import OperandInfo
from nnc.passes.graph import graph_functions, require_static_shapes

#: unit attribute of an operation left computing nothing: its inputs are
#: ``nnapi.no_value``, its results are read by nothing; lowered as nothing
ELIDED_ATTR = "nnc.elided"
#: unit attribute of a QUANTIZE whose input is quantised with the output's
#: scale: ``clamp(q - zp_in + zp_out)`` on the stored integers
REQUANTIZE_ATTR = "nnc.requantize"

VIEWS = frozenset({Op.RESHAPE, Op.SQUEEZE, Op.EXPAND_DIMS})
_QUANT8 = frozenset({T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED})
#: the smallest normal float32 and the largest scale whose 256 multiple is finite
_MIN_SCALE = float(np.finfo(np.float32).tiny)
_MAX_SCALE = float(np.finfo(np.float32).max) / 256


def exact_scale(scale: float) -> bool:
    """Whether ``fl(fl(s * n) / s) = n`` rounds back exactly for every
    ``|n| <= 255`` (see the module doc): ``s`` float32 and normal, with
    ``256 s`` finite."""
    s = float(np.float32(scale))
    return _MIN_SCALE <= s <= _MAX_SCALE


@dataclass(frozen=True)
class QuantizePair:
    """A DEQUANTIZE ``dequantize`` of ``source`` reaching ``quantize``
    through ``views`` (in order); ``identity``: same type and zero point."""

    dequantize: nnapi.NNAPIOperation
    views: tuple[nnapi.NNAPIOperation, ...]
    quantize: nnapi.NNAPIOperation
    identity: bool

    @property
    def source(self) -> SSAValue:
        return self.dequantize.args[0]


def _kind(op: Operation | None) -> Op | None:
    return op.SPEC.type if isinstance(op, nnapi.NNAPIOperation) else None


def _single_user(v: SSAValue) -> Operation | None:
    uses = list(v.uses)
    return uses[0].operation if len(uses) == 1 else None


def _info(v: SSAValue) -> OperandInfo | None:
    """``v``'s operand info when it is a static, unbounded tensor, else None."""
    t = v.type
    if not isinstance(t, TensorType) or nnapi.dynamic_dim(t) is not None:
        return None
    if not all(d >= 0 for d in t.get_shape()):
        return None
    return nnapi.from_xdsl_type(t)


def quantize_pair(dequantize: nnapi.NNAPIOperation) -> QuantizePair | None:
    """The pair ``dequantize`` starts (see the module doc), or None."""
    if _kind(dequantize) != Op.DEQUANTIZE or ELIDED_ATTR in dequantize.attributes:
        return None
    src, out = _info(dequantize.args[0]), _info(dequantize.outs[0])
    if src is None or out is None or src.type not in _QUANT8 or out.type != T.TENSOR_FLOAT32:
        return None
    if not exact_scale(src.scale):
        return None
    views: list[nnapi.NNAPIOperation] = []
    v = dequantize.outs[0]
    user = _single_user(v)
    while isinstance(user, nnapi.NNAPIOperation) and _kind(user) in VIEWS and user.args[0] is v:
        if len(user.outs) != 1 or _info(user.outs[0]) is None:
            return None
        views.append(user)
        v = user.outs[0]
        user = _single_user(v)
    if not isinstance(user, nnapi.NNAPIOperation) or _kind(user) != Op.QUANTIZE or user.args[0] is not v:
        return None
    dst = _info(user.outs[0])
    if dst is None or dst.type not in _QUANT8 or np.float32(dst.scale) != np.float32(src.scale):
        return None
    identity = dst.type == src.type and dst.zero_point == src.zero_point
    return QuantizePair(dequantize, tuple(views), user, identity)


def _quantised_views(pair: QuantizePair) -> SSAValue:
    """Point the pair's views at the source, each result retyped to the
    source's element type (same shape); the last one (the source without
    views)."""
    elem = pair.source.type.element_type  # type: ignore[attr-defined]
    v = pair.source
    for view in pair.views:
        view.operands[0] = v
        shape = view.outs[0].type.get_shape()  # type: ignore[attr-defined]
        v = Rewriter.replace_value_with_new_type(view.outs[0], TensorType(elem, shape))
    return v


def _elide(op: nnapi.NNAPIOperation, keep: SSAValue | None = None) -> None:
    """Mark ``op`` :data:`ELIDED_ATTR`; every input but ``keep`` is replaced
    by a ``nnapi.no_value`` of its type (placed before ``op``)."""
    for k, a in enumerate(op.args):
        if a is keep:
            continue
        none = nnapi.NoValueOp(a.type)
        Rewriter.insert_op(none, InsertPoint.before(op))
        op.operands[k] = none.result
    op.attributes[ELIDED_ATTR] = UnitAttr()


def fold(pair: QuantizePair) -> None:
    """Rewrite ``pair`` as the module doc says."""
    d, q = pair.dequantize, pair.quantize
    source = pair.source
    value = _quantised_views(pair)
    if pair.identity:
        q.outs[0].replace_all_uses_with(value)
        q.operands[0] = d.outs[0]  # the elided pair reads only itself
        Rewriter.replace_value_with_new_type(q.outs[0], source.type)
        _elide(q, keep=d.outs[0])
    else:
        q.operands[0] = value
        q.attributes[REQUANTIZE_ATTR] = UnitAttr()
    _elide(d)


class FoldQuantizePairsPass(ModulePass):
    """Fold DEQUANTIZE -> QUANTIZE pairs of one scale (see the module doc)."""

    name = "nnc-fold-quantize-pairs"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in graph_functions(op):
            for d in list(fn.body.block.ops):
                if _kind(d) != Op.DEQUANTIZE:
                    continue
                assert isinstance(d, nnapi.NNAPIOperation)
                require_static_shapes(d, self.name)
                pair = quantize_pair(d)
                if pair is not None:
                    fold(pair)
