"""Cheap construction of xDSL operations and attributes, and the two
rewrites nnc's direct (pattern-rewriter-free) passes share, for the hot
paths of nnc's passes: :func:`replace_op` (the rewriter's ``replace``, name
hints included) and :func:`erase_dead_ops` (the greedy applier's trivial
dead code elimination, in one walk).

An IRDL operation's own constructor (``llvm.AddOp(a, b)``) goes through
xDSL's generic ``irdl_op_init``, which normalises every argument (operands,
results, regions and successors as possibly-variadic lists), computes segment
sizes and then calls ``Operation.__init__``: three times the cost of
:meth:`Operation.create` with the final lists.  Most constructors also build
their attributes anew (``IntegerAttr(0, 32)`` for an add's overflow flags,
the calling convention of a call...), and an attribute's construction
verifies it, which costs as much again.  A pass that builds thousands of
operations (``convert-nnc-to-llvm`` builds one per input operation, ~8000
for MobileNetV2) spent most of its time there.

:func:`new_op` is :meth:`Operation.create` with the location given (the
default looks it up with a function-local import at each call), and the
attribute helpers return one shared instance per value (attributes are
immutable, so sharing them is safe).  A caller passes exactly the operands,
result types and properties the class's own constructor would produce
(``irdl_op_init`` adds the ``operandSegmentSizes`` of ops with variadic
operand groups: :func:`segment_sizes`); the op's default properties are
filled in as by the constructor (``IRDLOperation.__post_init__``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TypeVar

from xdsl.dialects.builtin import UNKNOWN_LOC, DenseArrayBase, IntegerAttr, i32
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.transforms.dead_code_elimination import is_trivially_dead

OpT = TypeVar("OpT", bound=Operation)

_NO_ATTRS: Mapping[str, Attribute] = {}


def new_op(
    cls: type[OpT],
    operands: Sequence[SSAValue] = (),
    result_types: Sequence[Attribute] = (),
    properties: Mapping[str, Attribute] = _NO_ATTRS,
    attributes: Mapping[str, Attribute] = _NO_ATTRS,
    successors: Sequence[Block] = (),
    regions: Sequence[Region] = (),
) -> OpT:
    """A ``cls`` operation with exactly these parts (no normalisation: flat
    operand and result lists, no None properties)."""
    return cls.create(
        operands=operands,
        result_types=result_types,
        properties=properties,
        attributes=attributes,
        location=UNKNOWN_LOC,
        successors=successors,
        regions=regions,
    )


@functools.lru_cache(maxsize=4096)
def integer_attr(value: int, type: Attribute | int) -> IntegerAttr:
    """``IntegerAttr(value, type)``, one instance per (value, type)."""
    return IntegerAttr(value, type)  # type: ignore[arg-type]


@functools.lru_cache(maxsize=1024)
def i32_array(values: tuple[int, ...]) -> DenseArrayBase:
    """``DenseArrayBase.from_list(i32, values)``, one instance per tuple."""
    return DenseArrayBase.from_list(i32, values)


def segment_sizes(*sizes: int) -> DenseArrayBase:
    """The ``operandSegmentSizes`` property of an op whose operand groups
    have these sizes (what ``irdl_op_init`` computes)."""
    return i32_array(sizes)


def erase_dead_ops(root: Operation) -> None:
    """Erase every operation nested in ``root`` that is trivially dead
    (``is_trivially_dead``: no used result, no effect beyond them), until
    none is: what xDSL's greedy pattern applier does to each operation it
    visits, walk after walk, in one walk and a worklist of the definitions
    an erasure leaves unused."""
    pending = [op for op in root.walk() if op is not root]
    erased: set[Operation] = set()
    while pending:
        op = pending.pop()  # nested operations (later in the walk) before their parent
        if op in erased or op.parent is None or not is_trivially_dead(op):
            continue
        nested = list(op.walk())
        erased.update(nested)
        owners = [v.owner for o in nested for v in o.operands if isinstance(v.owner, Operation)]
        op.parent.erase_op(op)
        pending.extend(o for o in owners if o not in erased)


def replace_op(op: Operation, new_ops: Sequence[Operation], new_results: Sequence[SSAValue]) -> None:
    """Insert ``new_ops`` before ``op``, let ``new_results`` take the place of
    its results and erase it: the pattern rewriter's ``replace``, name hints
    included (each new result takes the old one's hint when it has none; with
    a single result, the new ops' results take its hint), without a rewriter."""
    block = op.parent
    assert block is not None
    if new_ops:
        block.insert_ops_before(new_ops, op)
    for old, new in zip(op.results, new_results, strict=True):
        old.replace_all_uses_with(new)
        if not new.name_hint:
            new.name_hint = old.name_hint
    if len(new_results) == 1 and (hint := new_results[0].name_hint) is not None:
        for new_op in new_ops:
            for res in new_op.results:
                if not res.name_hint:
                    res.name_hint = hint
    block.erase_op(op)
