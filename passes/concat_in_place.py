"""``nnc-concat-in-place``: producers that write their result straight into
its slice of a CONCATENATION's output, so the concatenation copies less.

On the nnapi dialect, after shape inference.  CONCATENATION copies each
input into its window of the output.  When every dimension before the axis
is 1, input ``i``'s window is one contiguous byte range of the output
(starting at the sum of the earlier inputs' sizes), laid out exactly as the
input itself; its producer can then be given that range as its output
buffer (a ``memref.view`` of the concatenation's output), and the
concatenation has nothing to copy for it.  An input ``x`` qualifies when:

* the concatenation is in the main graph (not an IF/WHILE body), its output
  static and unbounded, of TENSOR_FLOAT32 or an 8-bit asymmetric quantised
  type, and ``x`` has the output's element type exactly (quantised: the same
  scale and zero point, so the window holds ``x``'s bytes unchanged);
* ``x`` is the single result of an operation of the same block that writes
  it into any buffer it is given: not a model input or constant, not a
  view (RESHAPE, SQUEEZE, EXPAND_DIMS: lowered as the input's buffer), not
  IF/WHILE or another CONCATENATION, not an operation
  ``nnc-fold-quantize-pairs`` elided;
* ``x`` is not a model output (those are written into the caller's
  buffer) and is read by no other CONCATENATION nor twice by this one (one
  window per value).

Other readers of ``x`` are fine: they read the window, which nothing else
writes (windows are disjoint, and the concatenation writes only the windows
of the other inputs).  The lowering allocates the concatenation's output
when it lowers the first such producer (or uses the model output it is),
so the buffer planner sees the output live from there on: its live range
covers every reader of ``x``, since each reads a view of it.

The pass marks the concatenation with :data:`IN_PLACE_ATTR`, the positions
of its inputs written in place; ``convert-nnapi-to-linalg`` asks
:func:`in_place_slot` at each producer.  Operations are never moved, so
every operation keeps its NNAPI index.  The bits are the same: the window
receives what the copy would have written.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, DenseIntOrFPElementsAttr, ModuleOp, TensorType, f32, i64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from nnc.dialects import nnapi
from nnc.enums import OperandType as T
from nnc.enums import OperationType as Op
from nnc.passes.fold_quantize_pairs import ELIDED_ATTR
from nnc.passes.graph import graph_functions, require_static_shapes

#: the positions of a CONCATENATION's inputs their producers write in place
IN_PLACE_ATTR = "nnc.concat_in_place"

#: producers whose output buffer is not theirs to place
_NOT_PRODUCERS = frozenset({Op.RESHAPE, Op.SQUEEZE, Op.EXPAND_DIMS, Op.IF, Op.WHILE, Op.CONCATENATION})
_QUANT8 = frozenset({T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED})


@dataclass(frozen=True)
class Slot:
    """Where a value lives in place: the concatenation whose output holds
    it, at ``offset`` elements from the output's start."""

    concat: nnapi.NNAPIOperation
    offset: int


def _static(t: object) -> tuple[int, ...] | None:
    """The shape of a static, unbounded tensor type, else None."""
    if not isinstance(t, TensorType) or nnapi.dynamic_dim(t) is not None:
        return None
    shape = tuple(t.get_shape())
    return shape if all(d >= 0 for d in shape) else None


def _axis(concat: nnapi.NNAPIOperation) -> int | None:
    """The concatenation's axis (non-negative), if it is a constant."""
    owner = concat.args[-1].owner
    if not isinstance(owner, nnapi.ConstantOp) or not isinstance(owner.value, DenseIntOrFPElementsAttr):
        return None
    values = owner.value.get_values()
    rank = len(concat.outs[0].type.get_shape())  # type: ignore[attr-defined]
    if len(values) != 1 or not -rank <= int(values[0]) < rank:
        return None
    return int(values[0]) % rank


def contiguous(concat: nnapi.NNAPIOperation) -> bool:
    """Whether each input's window of ``concat``'s output is one contiguous
    range (every output dimension before the axis is 1), with an element
    type the pass handles."""
    shape = _static(concat.outs[0].type)
    axis = _axis(concat) if shape is not None else None
    if shape is None or axis is None or math.prod(shape[:axis]) != 1:
        return False
    elem = concat.outs[0].type.element_type  # type: ignore[attr-defined]
    return elem == f32 or nnapi.from_xdsl_type(concat.outs[0].type).type in _QUANT8


def _writable(x: SSAValue, concat: nnapi.NNAPIOperation) -> bool:
    """Whether ``x``'s producer may write it into ``concat``'s output (see
    the module doc)."""
    producer = x.owner
    if not isinstance(producer, nnapi.NNAPIOperation) or producer.SPEC.type in _NOT_PRODUCERS:
        return False
    if len(producer.outs) != 1 or ELIDED_ATTR in producer.attributes or producer.parent_block() is not concat.parent_block():
        return False
    shape = _static(x.type)
    if shape is None or not all(shape) or x.type.element_type != concat.outs[0].type.element_type:  # type: ignore[attr-defined]
        return False
    readers = [u.operation for u in x.uses]
    concats = [r for r in readers if isinstance(r, nnapi.NNAPIOperation) and r.SPEC.type == Op.CONCATENATION]
    returned = any(isinstance(r, func.ReturnOp) for r in readers)
    return not returned and concats == [concat]


def in_place_inputs(concat: nnapi.NNAPIOperation) -> list[int]:
    """The positions of ``concat``'s inputs whose producers may write them
    in place (the rule of the module doc)."""
    if concat.SPEC.type != Op.CONCATENATION or not contiguous(concat):
        return []
    return [k for k, x in enumerate(concat.args[:-1]) if _writable(x, concat)]


def in_place_slot(x: SSAValue) -> Slot | None:
    """The window of a marked concatenation's output that ``x``'s producer
    writes, or None (the lowering's question at each producer)."""
    for use in x.uses:
        concat = use.operation
        if not isinstance(concat, nnapi.NNAPIOperation) or concat.SPEC.type != Op.CONCATENATION:
            continue
        marked = concat.attributes.get(IN_PLACE_ATTR)
        if not isinstance(marked, DenseArrayBase) or use.index not in marked.get_values():
            continue
        return Slot(concat, sum(math.prod(_static(a.type) or ()) for a in concat.args[: use.index]))
    return None


def in_place_positions(concat: Operation) -> frozenset[int]:
    """The positions :data:`IN_PLACE_ATTR` marks on ``concat`` (none: empty)."""
    marked = concat.attributes.get(IN_PLACE_ATTR)
    return frozenset(int(k) for k in marked.get_values()) if isinstance(marked, DenseArrayBase) else frozenset()


class ConcatInPlacePass(ModulePass):
    """Mark CONCATENATION inputs their producers write in place (see the module doc)."""

    name = "nnc-concat-in-place"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in graph_functions(op):
            for concat in fn.body.block.ops:
                if not isinstance(concat, nnapi.NNAPIOperation) or concat.SPEC.type != Op.CONCATENATION:
                    continue
                require_static_shapes(concat, self.name)
                positions = in_place_inputs(concat)
                if positions:
                    concat.attributes[IN_PLACE_ATTR] = DenseArrayBase.from_list(i64, positions)
