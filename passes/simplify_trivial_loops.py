"""``nnc-simplify-trivial-loops``: loops of one iteration become their body.

``convert-linalg-to-loops`` emits one ``scf.for`` per dimension of a
``linalg.generic``'s domain, size-1 dimensions included, and most tensors of
a model have some (the batch of 1, a 1 x 1 spatial extent, a channel of 1).
Each such loop costs three blocks and a compare after ``convert-scf-to-cf``,
and every later stage pays for them: the xDSL passes (``convert-scf-to-cf``
finds a block's index by walking the region, so a function's cost grows with
the square of its blocks), the LLVM IR translation and LLVM's loop passes
(loop rotation is superlinear in the loops of a function).  LLVM would delete
those loops itself, but only after paying for them.

This pass applies xDSL's ``SimplifyTrivialLoops`` pattern (the scf.for
canonicalisation of MLIR): a loop whose constant bounds give one iteration
is replaced by its body with the induction variable set to the lower bound,
and a loop of no iteration by its initial values.  The computation, and so
every result bit, is the same: the same operations run in the same order.
It runs right after ``convert-linalg-to-loops``, when every loop exists and
none has been lowered to branches yet.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriteWalker
from xdsl.transforms.canonicalization_patterns.scf import SimplifyTrivialLoops


@dataclass(frozen=True)
class SimplifyTrivialLoopsPass(ModulePass):
    """Inline ``scf.for`` loops of one iteration; drop those of none."""

    name = "nnc-simplify-trivial-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(SimplifyTrivialLoops()).rewrite_module(op)
