"""Imports every lowering family so that each registers its lowerings."""

from nnc.passes.lowering import (  # noqa: F401
    control_flow,
    conv,
    elementwise,
    hashing,
    layout,
    normalization,
    pool,
    quant_elementwise,
    recurrent,
    reduce,
    shape_ops,
    tensor_ops,
)
