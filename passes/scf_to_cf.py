"""``nnc-convert-scf-to-cf``: structured control flow to blocks, in one walk.

The IR is that of xDSL's ``convert-scf-to-cf`` (its ``ForLowering``,
``IfLowering`` and ``SwitchLowering`` patterns, which follow MLIR's
SCFToControlFlow), block for block and operation for operation, but built
without the pattern rewriter:

* xDSL's walker visits every operation of the module at least twice (a
  worklist, then a second walk to find that nothing is left to rewrite) and
  runs the greedy applier's trivial dead code elimination on each;
* ``Block.split_before`` finds the block's index by walking the region from
  its first block, so a function of n loops costs n^2.

Here trivially dead operations are erased first (:func:`erase_dead_ops`: the
same operations the greedy applier erases), then each block is walked from
its last operation backwards, lowering each ``scf.for`` / ``scf.if`` /
``scf.index_switch`` (after the structured ops nested in it).  Splitting a
block before an operation moves only the operations after it, which the
backwards walk has already lowered into their own blocks, and inserts the
new block by its neighbour's link, so the pass is linear in the function.
Lowering a nest inner loops first or outer first gives the same blocks in
the same order: each lowering splits its own block and places the blocks of
its regions between the two halves.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, cf, scf
from xdsl.dialects.builtin import DenseIntElementsAttr, ModuleOp, VectorType, i1, i32
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from nnc.passes.build import erase_dead_ops, integer_attr, new_op, replace_op, segment_sizes

# The ops xDSL's patterns build, with the properties their constructors give
# (built with new_op: the generic IRDL constructor was a third of the pass).
_NO_OVERFLOW = {"overflowFlags": arith.IntegerOverflowAttr("none")}
_SLT = {"predicate": integer_attr(2, 64)}  # arith.CmpiOp's code of "slt"


def _br(dest: Block, *args: SSAValue) -> Operation:
    return new_op(cf.BranchOp, args, successors=(dest,))


def _cond_br(cond: SSAValue, then_block: Block, else_block: Block) -> Operation:
    """``cf.cond_br`` without block arguments."""
    props = {"operandSegmentSizes": segment_sizes(1, 0, 0)}
    return new_op(cf.ConditionalBranchOp, (cond,), (), props, successors=(then_block, else_block))


def _split_before(block: Block, op: Operation) -> Block:
    """``block.split_before(op)`` without its search for the block's index:
    ``op`` and the operations after it move to a new block right after
    ``block``."""
    region = block.parent
    assert region is not None
    rest = Block()
    region.insert_block_after(rest, block)
    moved: list[Operation] = []
    cur: Operation | None = op
    while cur is not None:
        moved.append(cur)
        cur = cur.next_op
    for o in moved:
        block.detach_op(o)
    rest.add_ops(moved)
    return rest


def _inline_before(region: Region, target: Block) -> None:
    """Move every block of ``region`` before ``target`` (``inline_region``)."""
    region.move_blocks_before(target)


def _lower_regions(op: Operation) -> None:
    for region in op.regions:
        for block in list(region.blocks):
            _lower_block(block)


def _lower_block(block: Block) -> None:
    """Lower the structured ops of ``block`` (and nested in its ops), last first."""
    op = block.last_op
    while op is not None:
        prev = op.prev_op
        _lower_regions(op)
        if isinstance(op, scf.ForOp):
            _lower_for(op)
        elif isinstance(op, scf.IfOp):
            _lower_if(op)
        elif isinstance(op, scf.IndexSwitchOp):
            _lower_switch(op)
        op = prev


def _lower_for(for_op: scf.ForOp) -> None:
    """xDSL's ``ForLowering``: header block (induction variable and carried
    values as arguments, compare and branch), body blocks, continuation."""
    init_block = for_op.parent_block()
    assert init_block is not None
    end_block = _split_before(init_block, for_op)
    condition_block = for_op.body.first_block
    assert condition_block is not None
    first_op = condition_block.first_op
    assert first_op is not None
    first_body_block = _split_before(condition_block, first_op)
    last_body_block = for_op.body.last_block
    assert last_body_block is not None
    _inline_before(for_op.body, end_block)
    iv = condition_block.args[0]

    terminator = last_body_block.last_op
    assert terminator is not None
    stepped = new_op(arith.AddiOp, (iv, for_op.step), (iv.type,), _NO_OVERFLOW)
    last_body_block.insert_op_before(stepped, terminator)
    last_body_block.insert_op_before(_br(condition_block, stepped.results[0], *terminator.operands), terminator)
    last_body_block.erase_op(terminator)

    init_block.add_op(_br(condition_block, for_op.lb, *for_op.iter_args))
    comparison = new_op(arith.CmpiOp, (iv, for_op.ub), (i1,), _SLT)
    condition_block.add_op(comparison)
    condition_block.add_op(_cond_br(comparison.results[0], first_body_block, end_block))
    replace_op(for_op, (), condition_block.args[1:])


def _branch_out(region: Region, continue_block: Block) -> Block:
    """The region's terminator becomes a branch to ``continue_block`` with its
    operands, and its blocks move before ``continue_block``; its first block."""
    first, last = region.first_block, region.last_block
    assert first is not None and last is not None
    terminator = last.last_op
    assert terminator is not None
    last.add_op(_br(continue_block, *terminator.operands))
    last.erase_op(terminator)
    _inline_before(region, continue_block)
    return first


def _lower_if(if_op: scf.IfOp) -> None:
    """xDSL's ``IfLowering``: a conditional branch to the then- and
    else-blocks, which branch to the continuation (whose arguments are the
    results)."""
    condition_block = if_op.parent_block()
    assert condition_block is not None
    remaining_ops_block = _split_before(condition_block, if_op)
    if if_op.results:
        continue_block = Block(arg_types=if_op.result_types)
        region = condition_block.parent
        assert region is not None
        region.insert_block_before(continue_block, remaining_ops_block)
        continue_block.add_op(_br(remaining_ops_block))
    else:
        continue_block = remaining_ops_block
    then_block = _branch_out(if_op.true_region, continue_block)
    else_block = continue_block
    if if_op.false_region.first_block is not None:
        else_block = _branch_out(if_op.false_region, continue_block)
    condition_block.add_op(_cond_br(if_op.cond, then_block, else_block))
    replace_op(if_op, (), continue_block.args)


def _lower_switch(op: scf.IndexSwitchOp) -> None:
    """xDSL's ``SwitchLowering``: ``cf.switch`` on the index cast to i32."""
    condition_block = op.parent_block()
    assert condition_block is not None
    continue_block = _split_before(condition_block, op)
    for i, t in enumerate(op.result_types):
        continue_block.insert_arg(t, i)
    cases = tuple(_branch_out(region, continue_block) for region in op.case_regions)
    case_values = op.cases.get_values()
    default_block = _branch_out(op.default_region, continue_block)
    case_value = arith.IndexCastOp(op.arg, i32)
    condition_block.add_op(case_value)
    values = DenseIntElementsAttr.from_list(VectorType(i32, (len(case_values),)), case_values)
    condition_block.add_op(cf.SwitchOp(case_value, default_block, (), values, cases, tuple(() for _ in cases)))
    replace_op(op, (), continue_block.args)


@dataclass(frozen=True)
class ConvertScfToCfPass(ModulePass):
    """Lower ``scf.for``, ``scf.if`` and ``scf.index_switch`` to blocks and
    ``cf`` branches (the IR of xDSL's patterns, in one walk)."""

    name = "nnc-convert-scf-to-cf"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        erase_dead_ops(op)
        for block in list(op.body.blocks):
            _lower_block(block)
