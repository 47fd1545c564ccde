"""Per-operation rules (validation and shape inference), one module per family.

The family of each operation is named by its record (:mod:`nnc.dialects.optable`);
the shared machinery and the registry are in :mod:`nnc.dialects.rules.base`,
re-exported here.  Importing this package registers every family's rules.
"""

from nnc.dialects.rules import (  # each registers its rules
    conv,
    detection,
    elementwise,
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
from nnc.dialects.rules.base import (
    RULES,
    OpCall,
    OperandInfo,
    RuleError,
    Unsupported,
    infer,
    rule,
)

__all__ = [
    "OpCall",
    "OperandInfo",
    "RULES",
    "RuleError",
    "Unsupported",
    "conv",
    "detection",
    "elementwise",
    "hashing",
    "infer",
    "layout",
    "matmul",
    "normalization",
    "pool",
    "proposals",
    "recurrent",
    "reduce",
    "roi",
    "rule",
    "shape_ops",
    "ssd",
    "tensor_ops",
]
