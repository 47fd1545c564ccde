"""Lowerings of nnapi operations to linalg on memrefs, one module per family.

The family of each operation is named by its record (:mod:`nnc.dialects.optable`),
and the modules imported here are those the records name;
the shared builders (:class:`LoweringContext`, :class:`Emitter`) and the
registry are in :mod:`nnc.passes.lowering.base`, re-exported here.  Importing
this package registers every family's lowerings.
"""

from importlib import import_module

from nnc.dialects.optable import implemented_families
from nnc.passes.lowering import float16  # every family's float16 forms, widened to float32
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
    "LOWERINGS",
    "byte_lookup",
    "EmissionState",
    "Emitter",
    "LoweringContext",
    "float16",
    "identity_map",
    "lowering",
    "unsupported_reason",
]

# Each family's module registers its lowerings when imported.
for _family in implemented_families():
    import_module(f"{__name__}.{_family}")

# The byte shuffle lookup of tabulated element-wise operations
# (LoweringContext.byte_lookup), which the pass gives its contexts: it is a
# vector kernel, and the kernels build on base, so it loads after the families.
from nnc.passes.kernels.lut import lookup as byte_lookup  # noqa: E402
