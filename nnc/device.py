"""Devices and global runtime queries (ANeuralNetworks_getDevice*, ANeuralNetworksDevice_*).

nnc offers one device, ``nnc-cpu``: the ahead-of-time compiler and the native
code it produces, run in the calling process.  Its handle is created once, when
nnc is imported, and :func:`get_device` returns that same object every time
(the NDK's device handles are never freed and stay valid for the process).

What the device declares, and why
---------------------------------
* ``name`` ``"nnc-cpu"``: NNAPI's ``{VENDOR}-{DEVICE}`` form.
* ``type`` :attr:`DeviceType.CPU`: the code runs on the host CPU.
* ``version``: :func:`nnc.runtime.cache.compiler_id` (nnc's version, a digest
  of its sources, the xDSL/llvmlite/LLVM versions).  NNAPI asks that the
  version string "uniquely distinguishes this implementation from all previous
  implementations"; the compiler id does exactly that, and it is also what the
  compilation cache keys on.  (Android reports "UNKNOWN" for HAL 1.0/1.1
  drivers only because those HALs had no version query; nnc has one.)
* ``feature_level``: the highest level nnc implements completely, computed
  from the operation records (:func:`nnc.dialects.optable.complete_feature_level`):
  every operation of that level and below has a lowering for every operand
  type those levels declare.  A feature level means "implements everything up
  to this level", so one missing type (say TENSOR_FLOAT16 of one level-3
  operation) holds the device at the level below; the supported-operations
  query still answers per operation, so a model using only what nnc lowers
  compiles whatever the level.  Relaxed float32 is computed in float32, which
  the relaxation permits.  The device still accepts the later API features
  nnc does implement (compilation caching, deadlines, priorities): those are
  runtime features, not operation coverage.
* Cache files: 1 model-cache file and 1 data-cache file per entry
  (:mod:`nnc.runtime.cache`), as the HAL's ``getNumberOfCacheFilesNeeded``.
* Preferred memory alignment and padding: 64 bytes each, the values Android's
  CPU device reports (a cache line; the widest vector register).  nnc itself
  accepts any alignment and exact sizes.

The runtime's feature level (:func:`get_runtime_feature_level`) is
:attr:`FeatureLevel.LEVEL_8`.  nnc implements the NDK API surface of feature
level 5 (Android 12: reusable executions, padding, preferred alignment,
``getRuntimeFeatureLevel`` itself) and follows its behaviour where Android 11
and 12 differ; levels 6 to 8 added operations and operand types only (the NDK
reference marks no function "available since NNAPI feature level 6" or
later), and nnc implements every one of them, so the runtime is at level 8.
It is at least every device's feature level, as NNAPI requires: the
device's level is computed from the operation records and reaches 8 only
when every operation is implemented in every type.
"""

from __future__ import annotations

import logging
import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import ModuleType

from nnc.dialects.optable import complete_feature_level
from nnc.dialects.rules import OpCall, RuleError, Unsupported
from nnc.enums import (
    DEFAULT_LOOP_TIMEOUT_NS,
    MAX_NUMBER_OF_CACHE_FILES,
    MAXIMUM_LOOP_TIMEOUT_NS,
    DeviceType,
    FeatureLevel,
)
from nnc.errors import BadDataError, BadStateError, OpFailedError, UnexpectedNullError, ndk
from nnc.runtime import cache

_log = logging.getLogger("nnc.device")

#: What :func:`get_runtime_feature_level` reports (see the module docstring).
RUNTIME_FEATURE_LEVEL = FeatureLevel.LEVEL_8


@dataclass(frozen=True)
class DeviceInfo:
    """What a back-end declares about itself when it is registered.

    ``cache_files`` is the HAL's ``getNumberOfCacheFilesNeeded`` query:
    (model-cache files, data-cache files).  A back-end whose query fails or
    answers more than ``MAX_NUMBER_OF_CACHE_FILES`` is not offered.
    ``unsupported_reason`` says why an operation cannot run (None: it can).
    """

    name: str
    type: int
    feature_level: int
    version: Callable[[], str]
    cache_files: Callable[[], tuple[int, int]]
    unsupported_reason: Callable[[OpCall], str | None]
    preferred_memory_alignment: int = 64
    preferred_memory_padding: int = 64


class Device:
    """ANeuralNetworksDevice: one back-end nnc can compile for.

    Obtain devices with :func:`get_devices` / :func:`get_device`; a Device
    built any other way does not belong to the runtime and is rejected with
    BAD_DATA wherever a device is expected.  As everywhere in nnc, the NDK's
    NULL device is ``None`` in the place of ``self``:
    ``nnc.Device.name.fget(None)`` or ``nnc.Device.wait(None)`` raise
    UnexpectedNullError.
    """

    def __init__(self, info: DeviceInfo, cache_files: tuple[int, int]):
        self._info = info
        self._cache_files = cache_files
        self._version: str | None = None

    @property
    @ndk("ANeuralNetworksDevice_getName")
    def name(self) -> str:
        """ANeuralNetworksDevice_getName: ``{VENDOR}-{DEVICE}``, unique among devices."""
        return self._info.name

    @property
    @ndk("ANeuralNetworksDevice_getVersion")
    def version(self) -> str:
        """ANeuralNetworksDevice_getVersion (computed once, then the same string)."""
        if self._version is None:
            self._version = str(self._info.version())
        return self._version

    @property
    @ndk("ANeuralNetworksDevice_getType")
    def type(self) -> DeviceType | int:
        """ANeuralNetworksDevice_getType.  A negative type is an internal fault
        of the back-end and is reported as OP_FAILED, never passed on."""
        t = int(self._info.type)
        if t < 0:
            raise OpFailedError("ANeuralNetworksDevice_getType", f"device {self.name} reports type {t}")
        try:
            return DeviceType(t)
        except ValueError:
            return t

    @property
    @ndk("ANeuralNetworksDevice_getFeatureLevel")
    def feature_level(self) -> FeatureLevel | int:
        """ANeuralNetworksDevice_getFeatureLevel (a FeatureLevelCode, not an API
        level).  A negative level is an internal fault: BAD_STATE."""
        level = int(self._info.feature_level)
        if level < 0:
            raise BadStateError(
                "ANeuralNetworksDevice_getFeatureLevel", f"device {self.name} reports feature level {level}"
            )
        try:
            return FeatureLevel(level)
        except ValueError:
            return level

    @property
    def number_of_cache_files_needed(self) -> tuple[int, int]:
        """(model-cache files, data-cache files) one cache entry uses, as the
        HAL's getNumberOfCacheFilesNeeded; (0, 0) would mean no caching."""
        return self._cache_files

    @property
    def preferred_memory_alignment(self) -> int:
        return self._info.preferred_memory_alignment

    @property
    def preferred_memory_padding(self) -> int:
        return self._info.preferred_memory_padding

    @ndk("ANeuralNetworksDevice_wait")
    def wait(self) -> None:
        """ANeuralNetworksDevice_wait: block until the device is live.  The
        in-process CPU device cannot die (it is this process), so it is
        always live and this returns at once."""

    @ndk("ANeuralNetworksDevice_getExtensionSupport")
    def get_extension_support(self, extension_name: str) -> bool:
        """ANeuralNetworksDevice_getExtensionSupport: nnc supports no extensions."""
        fn = "ANeuralNetworksDevice_getExtensionSupport"
        if extension_name is None:
            raise UnexpectedNullError(fn, "extension name is null")
        if not isinstance(extension_name, str):
            raise BadDataError(fn, f"extension name must be a str, got {type(extension_name).__name__}")
        return False

    def unsupported_reason(self, call: OpCall) -> str | None:
        """Why this device cannot run ``call`` (None if it can).  A rule that
        cannot judge the operation with what is known counts as a reason."""
        try:
            return self._info.unsupported_reason(call)
        except (RuleError, Unsupported, ValueError) as e:
            return str(e) or type(e).__name__

    def __repr__(self) -> str:
        return f"<nnc.Device {self.name}>"


# -- the registry -------------------------------------------------------------------------------


def _registration_problem(info: DeviceInfo, names: set[str]) -> tuple[str, tuple[int, int]]:
    """Why ``info`` cannot be offered ("" if it can), and its cache file counts."""
    try:
        model_files, data_files = (int(n) for n in info.cache_files())
    except Exception as e:  # noqa: BLE001 - a failing query excludes the device, as in Android
        return f"its cache-file query failed: {type(e).__name__}: {e}", (0, 0)
    counts = (model_files, data_files)
    if not all(0 <= n <= MAX_NUMBER_OF_CACHE_FILES for n in counts):
        return f"it needs {counts} cache files, more than {MAX_NUMBER_OF_CACHE_FILES} or negative", counts
    if info.name in names:
        return "another device has the same name", counts
    return "", counts


def admit(infos: Iterable[DeviceInfo]) -> tuple[Device, ...]:
    """The devices offered to the application: every back-end whose
    registration checks pass, in order (the others are logged and left out)."""
    devices: list[Device] = []
    names: set[str] = set()
    for info in infos:
        problem, counts = _registration_problem(info, names)
        if problem:
            _log.warning("device %s is not offered: %s", info.name, problem)
            continue
        devices.append(Device(info, counts))
        names.add(info.name)
    return tuple(devices)


def _cpu_version() -> str:
    return cache.compiler_id()


def compiler() -> ModuleType:
    """nnc's compiler (:mod:`nnc.driver`: xDSL, the passes, LLVM), the CPU
    device's back end, imported on first use.  Importing it costs about a
    second of CPU, and a process whose models all come from the compilation
    cache never needs it (nor does one that only reads the enums or builds
    models), so neither this module nor ``nnc.compilation`` imports it at
    load time; they call this instead."""
    import nnc.driver  # lazily: see the docstring (not to dodge a cycle: the driver never imports this layer)

    return nnc.driver


def _compiler_support(call: OpCall) -> str | None:
    return compiler().unsupported_reason(call)


CPU = DeviceInfo(
    name="nnc-cpu",
    type=DeviceType.CPU,
    feature_level=complete_feature_level(),
    version=_cpu_version,
    cache_files=lambda: (1, 1),
    unsupported_reason=_compiler_support,
)

_DEVICES: tuple[Device, ...] = admit([CPU])


# -- NDK global functions ---------------------------------------------------------------------------


def get_devices() -> tuple[Device, ...]:
    """Every device, in index order (the same handles every time)."""
    return _DEVICES


def get_device_count() -> int:
    """ANeuralNetworks_getDeviceCount."""
    return len(_DEVICES)


def get_device(index: int) -> Device:
    """ANeuralNetworks_getDevice: BAD_DATA for an index outside [0, count)."""
    fn = "ANeuralNetworks_getDevice"
    try:
        if isinstance(index, bool):
            raise TypeError
        i = operator.index(index)  # an int or a numpy integer; not an array (its __index__ raises)
    except TypeError:
        raise BadDataError(fn, f"device index must be an int, got {type(index).__name__}") from None
    if not 0 <= i < len(_DEVICES):
        raise BadDataError(fn, f"device index {i} out of range [0, {len(_DEVICES)})")
    return _DEVICES[i]


def get_runtime_feature_level() -> FeatureLevel:
    """ANeuralNetworks_getRuntimeFeatureLevel (see the module docstring)."""
    return RUNTIME_FEATURE_LEVEL


def get_default_loop_timeout() -> int:
    """ANeuralNetworks_getDefaultLoopTimeout: 2 s in nanoseconds."""
    return DEFAULT_LOOP_TIMEOUT_NS


def get_maximum_loop_timeout() -> int:
    """ANeuralNetworks_getMaximumLoopTimeout: 15 s in nanoseconds."""
    return MAXIMUM_LOOP_TIMEOUT_NS


def is_runtime_device(device: object) -> bool:
    """Whether ``device`` is one of the handles this runtime offers."""
    return any(device is d for d in _DEVICES)


def device_list(fn: str, devices: object) -> list:
    """The caller's device sequence as a list: None -> UNEXPECTED_NULL, not a
    sequence -> BAD_DATA, empty -> BAD_DATA (numDevices == 0)."""
    if devices is None:
        raise UnexpectedNullError(fn, "the device list is null")
    if isinstance(devices, Device) or isinstance(devices, str | bytes):
        raise BadDataError(fn, "devices must be a sequence of nnc.Device")
    try:
        items = list(devices)  # type: ignore[call-overload]
    except TypeError:
        raise BadDataError(fn, f"devices must be a sequence, got {type(devices).__name__}") from None
    if not items:
        raise BadDataError(fn, "the device list is empty")
    return items


def check_device_entries(fn: str, items: list) -> tuple[Device, ...]:
    """Each entry: None -> UNEXPECTED_NULL, listed twice -> BAD_DATA, not one
    of this runtime's devices -> BAD_DATA."""
    for i, d in enumerate(items):
        if d is None:
            raise UnexpectedNullError(fn, f"device {i} of the list is null")
        if any(d is e for e in items[i + 1 :]):
            raise BadDataError(fn, f"device {getattr(d, 'name', d)!r} is listed twice")
    for d in items:
        if not is_runtime_device(d):
            raise BadDataError(fn, f"{d!r} is not a device of this runtime (use nnc.get_devices())")
    return tuple(items)
