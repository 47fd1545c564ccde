"""Checklist items of ``api-behaviour-checklist.md`` that cannot apply to nnc.

Each entry says why.  Everything not listed here must have a test marked
``@pytest.mark.checklist(N)``; the conftest prints the coverage line.
"""

from __future__ import annotations

#: item number -> reason it does not apply on Linux / to a Python binding
NOT_APPLICABLE: dict[int, str] = {
    8: "Model_create(NULL) is only a NULL out-pointer; nnc.Model() returns the model, there is no pointer to pass",
    23: "dimensionCount and the dimensions pointer cannot disagree in Python: add_operand takes one sequence, "
    "which carries its own length (a non-sequence is BAD_DATA)",
    34: "nnc leaves out the deprecated OEM operand types (the checklist allows it): add_operand(10000) and "
    "add_operand(10001) are BAD_DATA (tested under C31), BAD_STATE after finish (C10)",
    48: "AHardwareBuffer does not exist on Linux, so there is no non-BLOB AHardwareBuffer memory to pass",
    88: "nnc offers one device (nnc-cpu), so no model needs two devices and nothing is partitioned between devices",
    89: "nnc's only device is the CPU: Compilation(model) has no other device to fall back from, and returns "
    "every error as it is",
    116: "an execution-time dimensionCount and dimensions pointer cannot disagree in Python: the set calls take "
    "one dimensions sequence, which carries its own length (a non-sequence is BAD_DATA)",
    187: "MemoryDesc_create(NULL) is only a NULL out-pointer; nnc.MemoryDesc() returns the descriptor, "
    "there is no pointer to pass",
    210: "nnc's device is the calling process itself: it cannot enter a dead state, so no call returns "
    "DEAD_OBJECT and Device.wait() always returns at once",
    227: "optional (for compatibility only): nnc names an entry nnc-<64 hex digit key>.model and .data "
    "(runtime/cache.py) instead of AOSP's letter encoding",
}
