"""nnc: an ahead-of-time compiler and runtime for Android NNAPI models.

Build a model with :class:`Model` (the NDK's ANeuralNetworksModel), compile it
with :class:`Compilation` and run it with :class:`Execution`; or use the
convenience layer :func:`compile` -> :class:`CompiledModel`.
"""

from nnc.api import CompiledModel, compile, load_model
from nnc.compilation import Compilation
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
from nnc.burst import Burst
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
from nnc.version import __version__  # noqa: F401

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
    "UnavailableDeviceError",
    "UnexpectedNullError",
    "UnmappableError",
    "UnsupportedOperationError",
    "UnsupportedOperatorsError",
    "compile",
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
