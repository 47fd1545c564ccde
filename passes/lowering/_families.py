"""Imports every lowering family so that each registers its lowerings."""

from nnc.passes.lowering import (  # noqa: F401
    control_flow,
    conv,
    elementwise,
    layout,
    normalization,
    pool,
    recurrent,
    reduce,
    shape_ops,
    tensor_ops,
)
