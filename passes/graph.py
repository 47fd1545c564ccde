"""What the nnapi-level passes after shape inference share: the functions
that hold a model's graph, and their precondition that every shape is known.

A module's graph functions are its ``main`` and the models IF/WHILE use
after shape inference specialised them; the referenced models themselves
(``nnapi.subgraph``, the shapes of no particular use) and declarations
are not rewritten.
"""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.utils.exceptions import PassFailedException

from nnc.dialects import nnapi
from nnc.dialects.nnapi import SUBGRAPH_ATTR


def graph_functions(module: ModuleOp) -> Iterator[func.FuncOp]:
    """The module's functions that hold a graph to rewrite (see the module doc)."""
    for fn in list(module.ops):
        if isinstance(fn, func.FuncOp) and not fn.is_declaration and SUBGRAPH_ATTR not in fn.attributes:
            yield fn


def require_static_shapes(op: nnapi.NNAPIOperation, pass_name: str) -> None:
    """Raise for a tensor of ``op`` whose shape is not known: the rules of
    the passes after shape inference compare shapes, and an unknown one
    means that pass did not run."""
    for v in (*op.args, *op.outs):
        t = v.type
        if isinstance(t, TensorType) and not all(d >= 0 for d in t.get_shape()):
            raise PassFailedException(
                f"{pass_name}: {op.SPEC.type.name} has a tensor of unknown shape {t} (run nnapi-shape-inference first)"
            )
