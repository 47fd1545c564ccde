"""Per-operation rules (validation and shape inference), one module per family.

The family of each operation is named by its record (:mod:`nnc.dialects.optable`),
and the modules imported here are those the records name;
the shared machinery and the registry are in :mod:`nnc.dialects.rules.base`,
re-exported here.  Importing this package registers every family's rules.
"""

from importlib import import_module

from nnc.dialects.optable import NO_RULES_MODULE, implemented_families
from nnc.dialects.rules.base import (
    RULES,
    OpCall,
    OperandInfo,
    RuleError,
    Unsupported,
    infer,
    rule,
)

__all__ = ["OpCall", "OperandInfo", "RULES", "RuleError", "Unsupported", "infer", "rule"]

# Each family's module registers its rules when imported.
for _family in implemented_families():
    if _family not in NO_RULES_MODULE:
        import_module(f"{__name__}.{_family}")
