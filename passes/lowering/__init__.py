"""Lowerings of nnapi operations to linalg on memrefs, one module per family.

The family of each operation is named by its record (:mod:`nnc.dialects.optable`);
the shared builders (:class:`LoweringContext`, :class:`Emitter`) and the
registry are in :mod:`nnc.passes.lowering.base`, re-exported here.  Importing
this package registers every family's lowerings.
"""

from nnc.passes.lowering import (  # each registers its lowerings
    control_flow,
    conv,
    detection,
    elementwise,
    float16,
    hashing,
    layout,
    matmul,
    normalization,
    pool,
    proposals,
    recurrent,
    reduce,
    roi,
    shape_ops,
    ssd,
    tensor_ops,
)
from nnc.passes.lowering.base import (
    LOWERINGS,
    EmissionState,
    Emitter,
    LoweringContext,
    identity_map,
    lowering,
    unsupported_reason,
)

__all__ = [
    "EmissionState",
    "Emitter",
    "LOWERINGS",
    "LoweringContext",
    "control_flow",
    "conv",
    "detection",
    "elementwise",
    "float16",
    "hashing",
    "identity_map",
    "layout",
    "lowering",
    "matmul",
    "normalization",
    "pool",
    "proposals",
    "recurrent",
    "reduce",
    "roi",
    "shape_ops",
    "ssd",
    "tensor_ops",
    "unsupported_reason",
]
