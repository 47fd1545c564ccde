"""``nnc-convert-scf-to-cf``: xDSL's ``convert-scf-to-cf``, last loop first.

xDSL's patterns lower an ``scf.for`` or ``scf.if`` by splitting its block
before it (``Block.split_before``), which finds the block's index by walking
the region from its first block and moves every later operation of the block
into the new one.  Walking the function forwards, the split block is the last
of an ever longer region and holds every operation not yet lowered, so a
function of n loops costs n^2: a third of the compile time of a model with a
few thousand operations (an LSTM), most of it for the reduction sizes test.

This pass applies the same three patterns (``SwitchLowering``,
``IfLowering``, ``ForLowering``) walking each block from its last operation
backwards: the block to split is then near the front of the region and only
the operations after the loop (already lowered into their own blocks) move.
The result is the same IR, block for block.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker
from xdsl.transforms.convert_scf_to_cf import ForLowering, IfLowering, SwitchLowering


@dataclass(frozen=True)
class ConvertScfToCfPass(ModulePass):
    """Lower ``scf.for``, ``scf.if`` and ``scf.index_switch`` to blocks and
    ``cf`` branches (xDSL's patterns, applied last operation first)."""

    name = "nnc-convert-scf-to-cf"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = GreedyRewritePatternApplier([SwitchLowering(), IfLowering(), ForLowering()])
        PatternRewriteWalker(patterns, walk_reverse=True).rewrite_module(op)
