"""``nnc-lower-scf-while``: ``scf.while`` to blocks and ``cf`` branches.

xDSL 0.74's ``convert-scf-to-cf`` lowers ``scf.if`` and ``scf.for`` but leaves
``scf.while`` (which nnc's WHILE lowering produces, see
:mod:`nnc.passes.lowering.control_flow`) alone.  This pass runs right before it,
so that its if/for lowering then sees the loop's blocks like any others.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import cf, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from nnc.passes.build import walk_ops


def _check_terminators(op: scf.WhileOp) -> None:
    """The condition region leaves through ``scf.condition`` and the body
    through ``scf.yield`` (xDSL's verifier does not check it; a wrong one
    would be left in a block outside any loop)."""
    regions = ((op.before_region, scf.ConditionOp, "condition"), (op.after_region, scf.YieldOp, "body"))
    for region, wanted, where in regions:
        exits = [blk.last_op for blk in region.blocks if isinstance(blk.last_op, scf.ConditionOp | scf.YieldOp)]
        if not exits or any(not isinstance(t, wanted) for t in exits):
            found = ", ".join(t.name for t in exits) or "no scf terminator"
            raise PassFailedException(
                f"nnc-lower-scf-while: the {where} region of scf.while ends in {found}, expected {wanted.name}"
            )


def _lower_while_to_cf(op: scf.WhileOp) -> None:
    """Replace ``op`` by blocks of its parent region::

        ^pre:    ... cf.br ^before(args)
        ^before: <before region> cf.cond_br %c, ^after(vals), ^continue(vals)
        ^after:  <after region>  cf.br ^before(yielded)
        ^continue(results): <ops that followed the loop>
    """
    _check_terminators(op)
    parent = op.parent_block()
    region = op.parent_region()
    assert parent is not None and region is not None
    rest = parent.split_before(op)
    cont = Block(arg_types=op.result_types)
    region.insert_block_before(cont, rest)
    cont.add_op(cf.BranchOp(rest))
    before_blocks = list(op.before_region.blocks)
    after_blocks = list(op.after_region.blocks)
    for blocks, r in ((before_blocks, op.before_region), (after_blocks, op.after_region)):
        for blk in blocks:
            r.detach_block(blk)
            region.insert_block_before(blk, cont)
    entry, body_entry = before_blocks[0], after_blocks[0]
    for blk in before_blocks:
        term = blk.last_op
        if isinstance(term, scf.ConditionOp):
            args = list(term.args)
            blk.insert_op_before(cf.ConditionalBranchOp(term.condition, body_entry, args, cont, args), term)
            blk.erase_op(term)
    for blk in after_blocks:
        term = blk.last_op
        if isinstance(term, scf.YieldOp):
            blk.insert_op_before(cf.BranchOp(entry, *term.operands), term)
            blk.erase_op(term)
    for res, arg in zip(op.results, cont.args):
        res.replace_all_uses_with(arg)
    # rest now starts with the while op (split_before moved it there)
    parent.add_op(cf.BranchOp(entry, *op.arguments))
    op.detach()
    op.erase()


class LowerScfWhilePass(ModulePass):
    """``nnc-lower-scf-while``: ``scf.while`` to blocks and branches (xDSL's
    convert-scf-to-cf does not do it); runs before convert-scf-to-cf, whose
    if/for lowering then sees the loop's blocks like any others."""

    name = "nnc-lower-scf-while"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        while True:
            loops = [o for o in walk_ops(op) if isinstance(o, scf.WhileOp)]
            if not loops:
                return
            _lower_while_to_cf(loops[0])
