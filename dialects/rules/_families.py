"""Imports every rule family so that each registers its rules."""

from nnc.dialects.rules import (  # noqa: F401
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
