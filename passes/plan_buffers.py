"""``nnc-plan-buffers``: place every temporary buffer in one reused arena.

After lowering, intermediate tensors are ``memref.alloc`` ops in the model
function.  This pass computes each buffer's live range over the function's
top-level operations (a use nested in a loop counts at the loop; a view or cast
of a buffer extends the buffer's range), then assigns byte offsets first-fit,
largest buffers first, so that buffers whose ranges do not overlap share
memory.  Each alloc becomes a ``memref.view`` into a new trailing function
argument ``%arena: memref<Nxi8>``; the arena size is recorded on the module as
``nnc.arena_size`` for the runtime, which allocates it once per execution
context.  The offset of the profile's timestamp buffer (the alloc marked
``nnc.profile``, see :mod:`nnc.passes.profile`) is recorded as the module
attribute ``nnc.profile = [offset, count]``, for the runtime to read the
stamps out of the arena.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    FunctionType,
    IndexType,
    IntAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    UnrealizedConversionCastOp,
    i8,
)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from nnc.passes.build import walk_ops
from nnc.passes.counts import COUNTS_ATTR, counts_layout
from nnc.passes.profile import PROFILE_ATTR, profile_layout

ALIGN = 64

#: operations whose results alias their memref operand: a use of a result is
#: a use of the buffer (``memref.view`` and ``reinterpret_cast`` included: the
#: recurrent lowerings view their gate blocks and time steps that way)
_ALIASING = (
    memref.CollapseShapeOp,
    memref.ExpandShapeOp,
    memref.CastOp,
    UnrealizedConversionCastOp,
    memref.SubviewOp,
    memref.ViewOp,
    memref.ReinterpretCastOp,
)


def byte_size(t: MemRefType) -> int:
    n = 1
    for d in t.get_shape():
        n *= d
    width = t.element_type.bitwidth if hasattr(t.element_type, "bitwidth") else 32
    return n * max(1, (width + 7) // 8)


@dataclass
class _Buffer:
    alloc: memref.AllocOp
    size: int
    start: int
    end: int
    offset: int = -1


def _top_level(op: Operation, block) -> Operation:
    while op.parent_block() is not block:
        parent = op.parent_op()
        assert parent is not None
        op = parent
    return op


def live_ranges(fn: func.FuncOp) -> list[_Buffer]:
    block = fn.body.block
    for op in walk_ops(fn):
        if isinstance(op, memref.AllocOp) and op.parent_block() is not block:
            # (lowerings hoist their temporaries; nothing later lowers an alloc)
            parent = op.parent_op()
            raise PassFailedException(
                f"nnc-plan-buffers: memref.alloc inside {parent.name if parent else 'a region'}: "
                "temporaries must be allocated at the top level of the function"
            )
    position = {op: i for i, op in enumerate(block.ops)}
    buffers = []
    for op in block.ops:
        if not isinstance(op, memref.AllocOp):
            continue
        if op.dynamic_sizes:
            # the arena is laid out at compile time: every size must be known
            raise PassFailedException(f"nnc-plan-buffers: memref.alloc of {op.memref.type} has dynamic sizes")
        start = end = position[op]
        work: list[SSAValue] = [op.memref]
        while work:
            v = work.pop()
            for use in v.uses:
                user = use.operation
                top = _top_level(user, block)
                end = max(end, position[top])
                if isinstance(user, _ALIASING):
                    work.extend(user.results)
        if COUNTS_ATTR in op.attributes:
            end = len(position)  # the runtime reads the counts after the call
        buffers.append(_Buffer(op, byte_size(op.memref.type), start, end))
    return buffers


def assign_offsets(buffers: list[_Buffer]) -> int:
    """First-fit by decreasing size; returns the arena size in bytes."""
    placed: list[_Buffer] = []
    total = 0
    for b in sorted(buffers, key=lambda b: (-b.size, b.start)):
        overlapping = sorted(
            (p for p in placed if p.start <= b.end and b.start <= p.end), key=lambda p: p.offset
        )
        offset = 0
        for p in overlapping:
            if offset + b.size <= p.offset:
                break
            offset = max(offset, _align(p.offset + p.size))
        b.offset = offset
        placed.append(b)
        total = max(total, _align(offset + b.size))
    return total


def _align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


class PlanBuffersPass(ModulePass):
    """Replace memref.alloc temporaries by views into one arena argument."""

    name = "nnc-plan-buffers"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        arena_size = 0
        for fn in op.ops:
            if not isinstance(fn, func.FuncOp) or fn.is_declaration:
                continue
            buffers = live_ranges(fn)
            size = assign_offsets(buffers)
            arena_size = max(arena_size, size)
            block = fn.body.block
            arena = block.insert_arg(MemRefType(i8, [max(size, 1)]), len(block.args))
            for b in buffers:
                if PROFILE_ATTR in b.alloc.attributes:
                    op.attributes[PROFILE_ATTR] = profile_layout(b.offset, b.alloc.memref.type.get_shape()[0])
                if COUNTS_ATTR in b.alloc.attributes:
                    op.attributes[COUNTS_ATTR] = counts_layout(b.offset, b.alloc.memref.type.get_shape()[0])
                off = arith.ConstantOp(IntegerAttr(b.offset, IndexType()))
                view = memref.ViewOp(arena, off, [], b.alloc.memref.type)
                block.insert_ops_before([off, view], b.alloc)
                b.alloc.memref.replace_all_uses_with(view.results[0])
                b.alloc.detach()
                b.alloc.erase()
            inputs = [a.type for a in block.args]
            fn.function_type = FunctionType.from_lists(inputs, list(fn.function_type.outputs.data))
        op.attributes["nnc.arena_size"] = IntAttr(arena_size)
