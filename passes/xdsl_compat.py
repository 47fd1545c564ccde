"""What nnc relies on in xDSL beyond its documented API, in one place.

Each function here depends on how the pinned xDSL (pyproject: ``xdsl>=0.74,<0.75``)
implements something, not on a promise of its API; its comment says what and
why.  When xDSL changes, this module is where to look: the tests that cover
each use are named with it.
"""

from __future__ import annotations

import re

from xdsl.traits import RecursiveMemoryEffect

# RecursiveMemoryEffect.get_effects is a classmethod; the function under it
# identifies the trait class's behaviour: a trait whose get_effects is this
# very function collects the effects of the operations nested in its op.
# nnc.passes.build's effect cache needs to know that without calling
# get_effects (which walks the regions again for every ancestor).
# Covered by tests/test_xdsl_copies.py (dead-code erasure in the copies).
_RECURSIVE = RecursiveMemoryEffect.get_effects.__func__  # type: ignore[attr-defined]


def is_recursive_memory_effect(trait: object) -> bool:
    """Whether ``trait``'s effects are those of the operations nested in its op."""
    return getattr(getattr(type(trait), "get_effects", None), "__func__", None) is _RECURSIVE


# xDSL's verifier attaches the whole module to its exception as a note
# (``__notes__``), printed in generic form with a line of carets under the
# failing operation.  Neither the note nor its layout is API; nnc-opt reads
# them to name that operation in its one-line errors.  Covered by the negative
# lit tests (lit/passes/*-invalid.mlir).
_OP_NAME = re.compile(r'"([A-Za-z_][\w$]*\.[\w$.]+)"\(')
_UNDERLINE = re.compile(r"^\s*\^+-*\s*$")


def failing_operation(e: BaseException) -> str | None:
    """The name of the operation an xDSL verification error is about, if its
    note underlines one (see above), else None."""
    for note in getattr(e, "__notes__", ()):
        lines = note.splitlines()
        for above, line in zip(lines, lines[1:]):
            m = _OP_NAME.search(above)
            if _UNDERLINE.match(line) and m:
                return m.group(1)
    return None
