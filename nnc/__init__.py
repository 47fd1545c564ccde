"""nnc: an ahead-of-time compiler and runtime for Android NNAPI models.

Build a model with :class:`Model` (the NDK's ANeuralNetworksModel), compile it
with :class:`Compilation` and run it with :class:`Execution`; or use the
convenience layer :func:`compile` -> :class:`CompiledModel`; or compile it
ahead of time into a native library for this or another machine (an AArch64
phone) with :func:`compile_artifact`, as ``nnc compile`` does.

Why the public names load lazily: the compiler behind them (xDSL, the passes,
llvmlite's LLVM) takes over a second to import, and a process that only runs
models from the compilation cache, or only reads the enums, should not pay for
it.  So ``import nnc`` loads just the bottom layer (the enums, the errors, the
version) and every other public name is resolved on first use by the module
``__getattr__`` below (PEP 562) from the table :data:`_LAZY`, which maps each
name to the module that defines it; submodules (``nnc.driver``, ...) are
reachable as attributes the same way.  Nothing imports in a function to dodge
a cycle: the table is the package's export list, and the ``TYPE_CHECKING``
block gives type checkers and IDEs the same names eagerly.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from nnc.enums import (
    BYTE_SIZE_OF_CACHE_TOKEN,
    MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES,
    DeviceType,
    DurationCode,
    FeatureLevel,
    FuseCode,
    OperandType,
    OperationType,
    PaddingCode,
    Preference,
    Priority,
    ResultCode,
)
from nnc.errors import (
    BadDataError,
    BadStateError,
    DeadObjectError,
    IncompleteError,
    MissedDeadlineError,
    MissedDeadlinePersistentError,
    MissedDeadlineTransientError,
    NNError,
    OpFailedError,
    OutOfMemoryError,
    OutputInsufficientSizeError,
    ResourceExhaustedError,
    ResourceExhaustedPersistentError,
    ResourceExhaustedTransientError,
    UnavailableDeviceError,
    UnexpectedNullError,
    UnmappableError,
    UnsupportedOperationError,
)
from nnc.version import __version__ as __version__

if TYPE_CHECKING:
    from nnc.api import CompiledModel, compile, compile_artifact, load_model
    from nnc.burst import Burst
    from nnc.compilation import Compilation
    from nnc.details import TensorDetails
    from nnc.device import (
        Device,
        get_default_loop_timeout,
        get_device,
        get_device_count,
        get_devices,
        get_maximum_loop_timeout,
        get_runtime_feature_level,
    )
    from nnc.event import Event
    from nnc.execution import Execution
    from nnc.memory import Memory, MemoryDesc
    from nnc.model import Model
    from nnc.tflite import UnsupportedOperatorsError, import_tflite, translate_tflite

#: public name -> the module defining it, imported on first access
_LAZY: dict[str, str] = {
    **dict.fromkeys(("CompiledModel", "compile", "compile_artifact", "load_model"), "nnc.api"),
    "Burst": "nnc.burst",
    "Compilation": "nnc.compilation",
    "TensorDetails": "nnc.details",
    **dict.fromkeys(
        (
            "Device",
            "get_default_loop_timeout",
            "get_device",
            "get_device_count",
            "get_devices",
            "get_maximum_loop_timeout",
            "get_runtime_feature_level",
        ),
        "nnc.device",
    ),
    "Event": "nnc.event",
    "Execution": "nnc.execution",
    **dict.fromkeys(("Memory", "MemoryDesc"), "nnc.memory"),
    "Model": "nnc.model",
    **dict.fromkeys(("UnsupportedOperatorsError", "import_tflite", "translate_tflite"), "nnc.tflite"),
}


def __getattr__(name: str) -> Any:
    """A public name from :data:`_LAZY` (cached in the package afterwards), or a submodule."""
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if not name.startswith("_"):
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "BYTE_SIZE_OF_CACHE_TOKEN",
    "MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES",
    "BadDataError",
    "BadStateError",
    "Burst",
    "Compilation",
    "CompiledModel",
    "DeadObjectError",
    "Device",
    "DeviceType",
    "DurationCode",
    "Event",
    "Execution",
    "FeatureLevel",
    "FuseCode",
    "IncompleteError",
    "Memory",
    "MemoryDesc",
    "MissedDeadlineError",
    "MissedDeadlinePersistentError",
    "MissedDeadlineTransientError",
    "Model",
    "NNError",
    "OpFailedError",
    "OperandType",
    "OperationType",
    "OutOfMemoryError",
    "OutputInsufficientSizeError",
    "PaddingCode",
    "Preference",
    "Priority",
    "ResourceExhaustedError",
    "ResourceExhaustedPersistentError",
    "ResourceExhaustedTransientError",
    "ResultCode",
    "TensorDetails",
    "UnavailableDeviceError",
    "UnexpectedNullError",
    "UnmappableError",
    "UnsupportedOperationError",
    "UnsupportedOperatorsError",
    "compile",
    "compile_artifact",
    "get_default_loop_timeout",
    "get_device",
    "get_device_count",
    "get_devices",
    "get_maximum_loop_timeout",
    "get_runtime_feature_level",
    "import_tflite",
    "load_model",
    "translate_tflite",
]
