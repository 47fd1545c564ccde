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
from collections.abc import Collection, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import TypeVar

from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import UNKNOWN_LOC, DenseArrayBase, IntegerAttr, VectorType, i32
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.traits import (
    EffectInstance,
    IsTerminator,
    MemoryEffect,
    MemoryEffectKind,
    SymbolOpInterface,
)

from nnc.passes.xdsl_compat import is_recursive_memory_effect

OpT = TypeVar("OpT", bound=Operation)
AttrT = TypeVar("AttrT", bound=Attribute)

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


#: the default properties the IRDL constructors give the operations below
_NO_OVERFLOW = arith.IntegerOverflowAttr("none")
_NO_FASTMATH = arith.FastMathFlagsAttr("none")
_NO_LLVM_OVERFLOW = llvm.OverflowAttr("none")


def arith_binary(cls: type[OpT], a: SSAValue, b: SSAValue, fastmath: arith.FastMathFlagsAttr | None = None) -> OpT:
    """``cls(a, b)`` for an arith binary operation (result of ``a``'s type),
    with the properties its IRDL constructor gives it (no overflow flags;
    ``fastmath``, default none, on a float operation), built as
    :func:`new_op` builds: the kernels emit tens of thousands, and the IRDL
    constructor costs three times as much."""
    if issubclass(cls, arith.SignlessIntegerBinaryOperationWithOverflow):
        props: Mapping[str, Attribute] = {"overflowFlags": _NO_OVERFLOW}
    elif issubclass(cls, arith.FloatingPointLikeBinaryOperation):
        props = {"fastmath": fastmath or _NO_FASTMATH}
    else:
        props = _NO_ATTRS
    return new_op(cls, (a, b), (a.type,), props)


def integer_cast(cls: type[OpT], v: SSAValue, to: Attribute) -> OpT:
    """``llvm.sext`` / ``llvm.zext`` / ``llvm.trunc`` (``cls``) of ``v`` to
    ``to``, with the IRDL constructor's properties, built as :func:`new_op` builds."""
    props = {"overflowFlags": _NO_LLVM_OVERFLOW} if cls is llvm.TruncOp else _NO_ATTRS
    return new_op(cls, (v,), (to,), props)


@functools.lru_cache(maxsize=4096)
def integer_attr(value: int, type: Attribute | int) -> IntegerAttr:
    """``IntegerAttr(value, type)``, one instance per (value, type)."""
    return IntegerAttr(value, type)  # type: ignore[arg-type]


@functools.lru_cache(maxsize=1024)
def vector_type(element_type: AttrT, lanes: int) -> VectorType[AttrT]:
    """``VectorType(element_type, [lanes])``, one instance per (type, lanes):
    a vector type's construction builds and verifies its shape and
    scalable-dimension arrays, about 50 us, and the kernel builders ask for
    the same few types thousands of times per model."""
    return VectorType(element_type, [lanes])


@functools.lru_cache(maxsize=1024)
def i32_array(values: tuple[int, ...]) -> DenseArrayBase:
    """``DenseArrayBase.from_list(i32, values)``, one instance per tuple."""
    return DenseArrayBase.from_list(i32, values)


def segment_sizes(*sizes: int) -> DenseArrayBase:
    """The ``operandSegmentSizes`` property of an op whose operand groups
    have these sizes (what ``irdl_op_init`` computes)."""
    return i32_array(sizes)


def walk_ops(root: Operation) -> list[Operation]:
    """``list(root.walk())``: ``root`` and every operation nested in it, in
    pre-order (xDSL's walk order), by following the blocks' linked lists.
    xDSL's walk is a generator per operation, region and block, chained by
    ``yield from``: several times slower for the passes that only need the
    list (a whole-module walk cost each of them about as much as its work)."""
    found = [root]
    _collect_nested(root, found)
    return found


def _collect_nested(op: Operation, found: list[Operation]) -> None:
    for region in op.regions:
        block = region.first_block
        while block is not None:
            inner = block.first_op
            while inner is not None:
                found.append(inner)
                if inner.regions:
                    _collect_nested(inner, found)
                inner = inner.next_op
            block = block.next_block


def dismantle(root: Operation) -> None:
    """Break the reference cycles inside an erased operation tree (``root``
    detached, its references dropped): parent pointers, the blocks' and
    regions' linked lists, the results' and block arguments' owners.
    Reference counting then frees the tree at once.  The lowering runs with
    the cyclic collector paused (:func:`nnc.driver.gc_paused`), so without
    this an erased function would stay in memory until the compilation
    ends, and the memory of its operations could not serve the next ones."""
    for op in walk_ops(root):
        for region in op.regions:
            block = region.first_block
            while block is not None:
                following = block.next_block
                for arg in block.args:
                    arg.block = None  # type: ignore[assignment]
                block._first_op = block._last_op = None  # pyright: ignore[reportPrivateUsage]
                block._next_block = block._prev_block = None  # pyright: ignore[reportPrivateUsage]
                block.parent = None
                block = following
            region._first_block = region._last_block = None  # pyright: ignore[reportPrivateUsage]
            region.parent = None
        for result in op.results:
            result.op = None  # type: ignore[assignment]
        op.parent = None
        op._next_op = op._prev_op = None  # pyright: ignore[reportPrivateUsage]


def erase_dead_ops(root: Operation) -> None:
    """Erase every operation nested in ``root`` that is trivially dead
    (``is_trivially_dead``: no used result, no effect beyond them), until
    none is: what xDSL's greedy pattern applier does to each operation it
    visits, walk after walk, in one walk and a worklist of the definitions
    an erasure leaves unused.

    The operations' memory effects are computed bottom-up once
    (:class:`_Effects`): ``is_trivially_dead`` recomputes a loop's effects
    from every operation nested in it, so each operation of a nest of depth
    d was visited d times, and that was half of this function's time."""
    pending = walk_ops(root)[1:]
    erased: set[Operation] = set()
    effects = _Effects()
    while pending:
        op = pending.pop()  # nested operations (later in the walk) before their parent
        if op in erased or op.parent is None or not effects.is_trivially_dead(op):
            continue
        nested = walk_ops(op)
        erased.update(nested)
        owners = [v.owner for o in nested for v in o.operands if isinstance(v.owner, Operation)]
        effects.forget_ancestors(op)
        op.parent.erase_op(op)
        pending.extend(o for o in owners if o not in erased)


#: What an operation class's traits say for dead code elimination: whether
#: it is a terminator or a symbol (never trivially dead), and its memory
#: effect traits (none: unknown effects).
_ClassTraits = tuple[bool, tuple[MemoryEffect, ...]]


@functools.cache
def _class_traits(cls: type[Operation]) -> _ClassTraits:
    kept = cls.has_trait(IsTerminator, value_if_unregistered=False) or cls.has_trait(
        SymbolOpInterface, value_if_unregistered=False
    )
    return kept, tuple(cls.get_traits_of_type(MemoryEffect))  # type: ignore[type-abstract]


class _Effects:
    """xDSL's ``is_trivially_dead`` with each operation's memory effects
    (``get_effects``) remembered: the same answers, as long as the effects
    of an operation's ancestors are forgotten when it is erased
    (:meth:`forget_ancestors`), the only change :func:`erase_dead_ops` makes."""

    def __init__(self) -> None:
        self._known: dict[Operation, AbstractSet[EffectInstance] | None] = {}

    def is_trivially_dead(self, op: Operation) -> bool:
        """``xdsl.transforms.dead_code_elimination.is_trivially_dead(op)``."""
        if any(r.first_use is not None for r in op.results):
            return False
        kept, _ = _class_traits(type(op))
        if kept:
            return False
        found = self.of(op)
        # result_only_effects: reads, and allocations of values defined in op
        return found is not None and all(
            e.kind == MemoryEffectKind.READ
            or (e.kind == MemoryEffectKind.ALLOC and isinstance(v := e.value, SSAValue) and op.is_ancestor(v.owner))
            for e in found
        )

    def of(self, op: Operation) -> AbstractSet[EffectInstance] | None:
        """``xdsl.traits.get_effects(op)``, computed once per operation."""
        known = self._known
        if op in known:
            return known[op]
        _, traits = _class_traits(type(op))
        found: set[EffectInstance] | None = set() if traits else None
        for trait in traits:
            if found is None:
                break
            if is_recursive_memory_effect(trait):
                for region in op.regions:
                    for block in region.blocks:
                        for child in block.ops:
                            inner = self.of(child)
                            if inner is None:
                                found = None
                                break
                            found.update(inner)
                        if found is None:
                            break
                    if found is None:
                        break
            else:
                own = trait.get_effects(op)
                if own is None:
                    found = None
                else:
                    found.update(own)
        known[op] = found
        return found

    def forget_ancestors(self, op: Operation) -> None:
        """Forget the effects of the operations ``op`` is nested in (it is
        about to be erased, so theirs change)."""
        parent = op.parent_op()
        while parent is not None:
            self._known.pop(parent, None)
            parent = parent.parent_op()


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


def structural_key(ops: Sequence[Operation], args: Sequence[SSAValue] = (), masked: Collection[Operation] = ()) -> tuple:
    """A hashable value equal for two operation lists exactly when their
    generic textual forms are (locations aside), ``args`` (values defined
    outside, a function's block arguments) numbered first: every operation
    in order with its name, operands and results (numbered at first sight,
    as the printer names them), result types, attributes, properties,
    successors and regions (blocks with their argument types).  xDSL
    attributes compare by value (floats bit for bit, so -0.0 is not 0.0),
    and a dictionary lookup compares keys for equality, so a match never
    rests on a hash alone.  Building it walks the operations once: several
    times cheaper than printing them.

    The properties and attributes of the ``masked`` operations are left
    out: two lists that differ only there (constants' values) get one key."""
    values: dict[SSAValue, int] = {a: k for k, a in enumerate(args)}
    blocks: dict[Block, int] = {}
    out: list[object] = []

    def number(v: SSAValue) -> int:
        return values.setdefault(v, len(values))

    def visit(op: Operation) -> None:
        out.append(op.name)
        out.append(tuple(number(v) for v in op.operands))
        out.append(tuple((number(r), r.type) for r in op.results))
        if op in masked:
            out.append("masked")
        else:
            out.append(tuple(op.attributes.items()))
            out.append(tuple(op.properties.items()))
        out.append(tuple(blocks.setdefault(b, len(blocks)) for b in op.successors))
        out.append(len(op.regions))
        for region in op.regions:
            out.append(len(region.blocks))
            for block in region.blocks:
                out.append(("block", blocks.setdefault(block, len(blocks)), tuple((number(a), a.type) for a in block.args)))
                for inner in block.ops:
                    visit(inner)
                out.append("end")

    for op in ops:
        visit(op)
    return tuple(out)

