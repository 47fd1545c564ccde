"""``nnc-fuse-elementwise``: groups of float32 element-wise operations
computed as one loop, with no intermediate tensor.

On the nnapi dialect, after ``nnc-fuse-epilogues``.  A chain of element-wise
operations on one tensor (swish's LOGISTIC then MUL, the operations of a
GELU or of LayerNorm's tail, an activation after a residual ADD) lowers one
``linalg.generic`` per operation: each writes its whole result to memory and
the next reads it back.  The pass marks groups that
``convert-nnapi-to-linalg`` lowers as one ``linalg.generic`` instead, whose
body computes the members' scalar bodies one after the other per element:
the same operations in the same order, so every result bit is the one the
unfused program computes, without the intermediate tensors' writes and reads.

A group is a set of operations of :data:`FUSABLE` (whose float32 lowering
is one element-wise body):

* every tensor operand and the result are TENSOR_FLOAT32 with static shapes,
  every member's result has the group's shape (external inputs may
  broadcast to it, as in the operations themselves);
* a member joins the group of an operation that reads its result when every
  reader of that result is such an operation with that shape (then they all
  join); a result read by anything else, or returned, ends the group there;
* exactly one member's result leaves the group, and it is the last member
  (the root): every other member's result is read only inside the group.
  When the readers-join rule gives a group with more than one such result
  (LayerNorm: the centred input feeds both the variance and the output),
  the group is built again from single-reader edges only;
* a group of more than :data:`MAX_GROUP_OPS` members (the option
  ``max-group-ops``) is cut into pieces of at least that many, each cut
  where only the last member before it is read after it (a long chain of
  operations would otherwise be one loop body LLVM takes superlinear time
  over).

Members get :data:`GROUP_ATTR` (the group's number), the root also
:data:`ROOT_ATTR`; operations are never moved, so every operation keeps its
NNAPI index (a member's time in a profile is 0, its group's is the root's).

Not fused: quantised and float16 operations (their lowerings requantise or
round to half per operation), operations of IF/WHILE bodies, operations
``nnc-fuse-epilogues`` marked, and operations in groups of one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntAttr, ModuleOp, TensorType, UnitAttr, f32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from nnc.dialects import nnapi
from nnc.enums import OperationType as Op
from nnc.passes.fuse_epilogues import CONSUMER_ATTR, PRODUCER_ATTR
from nnc.passes.graph import graph_functions, require_static_shapes

#: the group number of every member of a fused group
GROUP_ATTR = "nnc.fused_group"
#: the member lowered last, as the whole group's loop
ROOT_ATTR = "nnc.fused_root"

#: operations whose float32 lowering is one element-wise body
#: (``LoweringContext.elementwise``), so that bodies compose
FUSABLE = frozenset({
    Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.RELU, Op.RELU1, Op.RELU6, Op.LOGISTIC, Op.TANH, Op.FLOOR,
    Op.ABS, Op.NEG, Op.EXP, Op.LOG, Op.RSQRT, Op.SIN, Op.SQRT, Op.HARD_SWISH, Op.ELU,
    Op.MAXIMUM, Op.MINIMUM, Op.POW, Op.PRELU,
})  # fmt: skip


def _float32_static(v: SSAValue) -> tuple[int, ...] | None:
    """The static shape of a float32 tensor value, else None."""
    t = v.type
    if isinstance(t, TensorType) and t.element_type == f32 and all(d >= 0 for d in t.get_shape()):
        return tuple(t.get_shape())
    return None


def _fusable(op: Operation) -> bool:
    if not isinstance(op, nnapi.NNAPIOperation) or op.SPEC.type not in FUSABLE:
        return False
    require_static_shapes(op, FuseElementwisePass.name)
    if CONSUMER_ATTR in op.attributes or PRODUCER_ATTR in op.attributes or len(op.outs) != 1:
        return False
    tensors = [a for a in op.args if isinstance(a.type, TensorType)]
    return _float32_static(op.outs[0]) is not None and all(_float32_static(a) is not None for a in tensors)


class _Groups:
    """Union-find over operations."""

    def __init__(self) -> None:
        self.parent: dict[Operation, Operation] = {}

    def find(self, op: Operation) -> Operation:
        root = op
        while self.parent.get(root, root) is not root:
            root = self.parent[root]
        self.parent[op] = root
        return root

    def union(self, a: Operation, b: Operation) -> None:
        self.parent[self.find(a)] = self.find(b)


def _groups(ops: list[Operation], joins: Callable[[SSAValue, Operation, Operation], bool]) -> list[list[Operation]]:
    """The groups of ``ops`` that the edges ``joins(value, producer,
    reader)`` accepts make (an edge: a result of one of ``ops`` read by
    another), members in program order."""
    uf, members = _Groups(), set(ops)
    for c in ops:
        for v in c.operands:
            if isinstance(v.owner, Operation) and v.owner in members and joins(v, v.owner, c):
                uf.union(v.owner, c)
    by_root: dict[Operation, list[Operation]] = {}
    for op in ops:
        by_root.setdefault(uf.find(op), []).append(op)
    return [g for g in by_root.values() if len(g) > 1]


#: a group longer than this is cut into pieces of about this many members:
#: LLVM's time on one loop body grows faster than the body (a chain of 2,000
#: operations fused whole took 4.7 s of LLVM, 64 pieces of it a fraction),
#: while a cut costs one store and one load per element every 64 operations
MAX_GROUP_OPS = 64


def _pieces(group: list[Operation], limit: int = MAX_GROUP_OPS) -> list[list[Operation]]:
    """``group`` (valid, members in program order) cut into valid groups of
    at least ``limit`` members (the rest in the last), each cut where no
    member before it has a result read after it but the last: a chain is cut
    every ``limit`` members, a graph at its first such point past that."""
    if len(group) <= limit:
        return [group]
    at = {op: k for k, op in enumerate(group)}
    # the last position that reads each member's result (len(group): outside)
    last = [max((at.get(u.operation, len(group)) for u in op.results[0].uses), default=k) for k, op in enumerate(group)]
    pieces, start, reach = [], 0, -1
    for j in range(len(group)):
        if j - start + 1 >= limit and reach <= j and j < len(group) - 1:
            pieces.append(group[start : j + 1])
            start, reach = j + 1, -1
            continue
        reach = max(reach, last[j])
    pieces.append(group[start:])
    return [p for p in pieces if len(p) > 1]


def _valid(group: list[Operation]) -> bool:
    """Only the last member's result is read outside the group (or returned)."""
    members = set(group)
    leaving = [op for op in group if any(u.operation not in members for u in op.results[0].uses)]
    return leaving == [group[-1]]


@dataclass(frozen=True)
class FuseElementwisePass(ModulePass):
    """Marks groups of float32 element-wise operations (see the module doc);
    ``max-group-ops``: where a longer group is cut (:func:`_pieces`)."""

    name = "nnc-fuse-elementwise"

    max_group_ops: int = MAX_GROUP_OPS

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_group_ops < 2:
            raise PassFailedException(
                f"nnc-fuse-elementwise: max-group-ops must be at least 2 (a group has two members), got {self.max_group_ops}"
            )
        number = 0
        for fn in graph_functions(op):
            number = _mark(list(fn.body.block.ops), number, self.max_group_ops)


def _mark(block_ops: list[Operation], number: int, limit: int = MAX_GROUP_OPS) -> int:
    """Mark the groups among one function's operations, numbered from
    ``number``; the next free number."""
    ops = [o for o in block_ops if _fusable(o)]
    fusable = set(ops)
    shape = {o: _float32_static(o.results[0]) for o in ops}

    def all_readers(v: SSAValue, producer: Operation, c: Operation) -> bool:
        s = shape[producer]
        return all(u.operation in fusable and shape[u.operation] == s for u in v.uses)

    def single_reader(v: SSAValue, producer: Operation, c: Operation) -> bool:
        return len(list(v.uses)) == 1 and shape[c] == shape[producer]

    for group in _groups(ops, all_readers):
        chosen = [group] if _valid(group) else [g for g in _groups(group, single_reader) if _valid(g)]
        for g in (piece for c in chosen for piece in _pieces(c, limit)):
            for member in g:
                member.attributes[GROUP_ATTR] = IntAttr(number)
            g[-1].attributes[ROOT_ATTR] = UnitAttr()
            number += 1
    return number
