"""Checklist section 9 (devices and global queries, C201-C213) and the device
part of section 1.  The NDK's NULL device is ``None`` in the place of
``self``: ``nnc.Device.name.fget(None)`` is ``ANeuralNetworksDevice_getName(NULL, &name)``.
The out-pointers of the C API are the return values here, so "NULL
out-pointer" cannot be written (see tests/checklist_na.py for the items that
consist only of that)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import nnc
from nnc import DeviceType, FeatureLevel
from nnc import ResultCode as RC
from nnc import device as device_mod
from test_checklist_model import Case, add_model, check_error, raises, run_case

GET_DEVICE = "ANeuralNetworks_getDevice"


def cpu() -> nnc.Device:
    return nnc.get_device(0)


@pytest.mark.checklist(201, 202)
def test_every_index_below_the_count_gives_a_device() -> None:
    n = nnc.get_device_count()
    assert isinstance(n, int) and n >= 1
    devices = [nnc.get_device(i) for i in range(n)]
    assert all(isinstance(d, nnc.Device) for d in devices)
    assert tuple(devices) == nnc.get_devices()


GET_DEVICE_CASES = [
    Case("index-equals-count", (202,), lambda: nnc.get_device(nnc.get_device_count()), RC.BAD_DATA, GET_DEVICE),
    Case("index-minus-1", (202, 5), lambda: nnc.get_device(-1), RC.BAD_DATA, GET_DEVICE),
    Case("index-None", (202,), lambda: nnc.get_device(None), RC.BAD_DATA, GET_DEVICE),
    Case("index-bool", (202,), lambda: nnc.get_device(False), RC.BAD_DATA, GET_DEVICE),
    Case("index-str", (202,), lambda: nnc.get_device("0"), RC.BAD_DATA, GET_DEVICE),
]

NULL_DEVICE_CASES = [
    Case("getName(NULL)", (204, 2), lambda: nnc.Device.name.fget(None), RC.UNEXPECTED_NULL,
         "ANeuralNetworksDevice_getName"),
    Case("getVersion(NULL)", (204, 2), lambda: nnc.Device.version.fget(None), RC.UNEXPECTED_NULL,
         "ANeuralNetworksDevice_getVersion"),
    Case("getFeatureLevel(NULL)", (207, 2), lambda: nnc.Device.feature_level.fget(None), RC.UNEXPECTED_NULL,
         "ANeuralNetworksDevice_getFeatureLevel"),
    Case("getType(NULL)", (208, 2), lambda: nnc.Device.type.fget(None), RC.UNEXPECTED_NULL,
         "ANeuralNetworksDevice_getType"),
    Case("wait(NULL)", (209, 2), lambda: nnc.Device.wait(None), RC.UNEXPECTED_NULL, "ANeuralNetworksDevice_wait"),
    Case("getExtensionSupport(NULL, name)", (212, 2), lambda: nnc.Device.get_extension_support(None, "x"),
         RC.UNEXPECTED_NULL, "ANeuralNetworksDevice_getExtensionSupport"),
    Case("getExtensionSupport(device, NULL)", (212,), lambda: cpu().get_extension_support(None),
         RC.UNEXPECTED_NULL, "ANeuralNetworksDevice_getExtensionSupport"),
    Case("getExtensionSupport(device, 42)", (212,), lambda: cpu().get_extension_support(42),
         RC.BAD_DATA, "ANeuralNetworksDevice_getExtensionSupport"),
]  # fmt: skip


@pytest.mark.parametrize("case", [c.param() for c in GET_DEVICE_CASES + NULL_DEVICE_CASES])
def test_device_errors(case: Case) -> None:
    run_case(case)


@pytest.mark.checklist(203)
def test_same_handle_every_time() -> None:
    for i in range(nnc.get_device_count()):
        assert nnc.get_device(i) is nnc.get_device(i) is nnc.get_devices()[i]
    # a handle stays valid: it still works after everything else was dropped
    d = nnc.get_device(0)
    import gc

    gc.collect()
    assert d is nnc.get_device(0) and d.name == "nnc-cpu"


@pytest.mark.checklist(204, 205, 206)
def test_names_and_versions() -> None:
    """Names are unique, UTF-8, ``{VENDOR}-{DEVICE}``; the strings are the
    same every time.  nnc's version string is its compiler id (it
    distinguishes every implementation, as NNAPI asks); Android reports
    "UNKNOWN" only for HAL 1.0/1.1 drivers, which had no version query."""
    names = [d.name for d in nnc.get_devices()]
    assert len(set(names)) == len(names)
    for d in nnc.get_devices():
        assert re.fullmatch(r"[A-Za-z0-9_]+-[A-Za-z0-9_]+", d.name), d.name
        d.name.encode("utf-8")
        assert isinstance(d.version, str) and d.version and d.version is d.version
    from nnc.runtime.cache import compiler_id

    assert cpu().version == compiler_id()
    assert cpu().version.startswith(f"nnc {nnc.__version__} ")


@pytest.mark.checklist(207, 211)
def test_feature_levels() -> None:
    """FeatureLevelCode values, never API levels above 31; the runtime's level
    is at least every device's."""
    codes = {int(v) for v in FeatureLevel}
    runtime = nnc.get_runtime_feature_level()
    assert runtime in codes and runtime == FeatureLevel.LEVEL_8
    for d in nnc.get_devices():
        assert int(d.feature_level) in codes
        assert d.feature_level <= runtime


SPEC_DIR = Path(__file__).resolve().parents[2] / "shared" / "spec"


def hal_operation_types(path: Path) -> dict[str, list[str]]:
    """Operation name -> the tensor operand types its HAL documentation lists
    under "Supported tensor {@link OperandType}" (empty where the text lists
    them per input instead, e.g. EMBEDDING_LOOKUP)."""
    text = path.read_text()
    body = text[text.index("enum OperationType") :]
    result: dict[str, list[str]] = {}
    block: list[str] = []
    for line in body.splitlines():
        if line.startswith("};"):
            break
        entry = re.match(r"\s*([A-Z_0-9]+) = (\d+),", line)
        if not entry:
            block.append(line)
            continue
        types, listing = [], False
        for b in block:
            if "Supported tensor {@link OperandType}" in b:
                listing = True
            elif listing:
                t = re.search(r"\* \* \{@link OperandType::([A-Z_0-9]+)\}", b)
                if t:
                    types.append(t.group(1))
                elif b.strip() != "*":
                    listing = False
        result[entry.group(1)] = types
        block = []
    return result


@pytest.mark.checklist(207)
def test_cpu_feature_level_matches_what_nnc_compiles() -> None:
    """nnc-cpu claims the highest feature level whose every operation nnc
    lowers for every type the levels up to it declare, and no more: the
    level is at least 2 (every operation of the 1.0 and 1.1 HALs is lowered
    for every tensor type the HAL lists), each operation of each level up to
    it has a lowering for its declared types, and the next level has a gap."""
    from nnc.dialects.optable import SPECS, complete_feature_level
    from nnc.passes.lowering import LOWERINGS

    level = cpu().feature_level
    assert level == complete_feature_level() >= FeatureLevel.LEVEL_2
    ops = {**hal_operation_types(SPEC_DIR / "types-1.0.hal"), **hal_operation_types(SPEC_DIR / "types-1.1.hal")}
    assert len(ops) == 29 + 1 + 9  # ADD..TANH, OEM_OPERATION, BATCH_TO_SPACE_ND..TRANSPOSE
    assert {name for name in ops if name != "OEM_OPERATION"} == {
        op.name for op, spec in SPECS.items() if spec.since <= FeatureLevel.LEVEL_2 and op != nnc.OperationType.OEM_OPERATION
    }
    for name, types in ops.items():
        if name == "OEM_OPERATION":
            continue
        lowering = LOWERINGS.get(nnc.OperationType[name])
        assert lowering is not None, f"{name} has no lowering"
        for t in types:
            assert nnc.OperandType[t] in SPECS[nnc.OperationType[name]].implemented, f"{name} is not lowered for {t}"
    claimed = [spec for op, spec in SPECS.items() if spec.since <= level and op != nnc.OperationType.OEM_OPERATION]
    for spec in claimed:
        assert spec.type in LOWERINGS, f"{spec.type.name} has no lowering"
        assert {t for t, since in spec.types.items() if since <= level} <= spec.implemented, spec.type.name
    levels = sorted(FeatureLevel)
    if level != levels[-1]:
        above = levels[levels.index(level) + 1]
        gaps = [
            spec.type.name
            for op, spec in SPECS.items()
            if spec.since <= above and op != nnc.OperationType.OEM_OPERATION
            and not {t for t, since in spec.types.items() if since <= above} <= spec.implemented
        ]
        assert gaps, f"feature level {above.name} is complete but the device claims {level.name}"


@pytest.mark.checklist(208)
def test_device_type() -> None:
    for d in nnc.get_devices():
        assert d.type in set(DeviceType)
    assert cpu().type == DeviceType.CPU


@pytest.mark.checklist(209)
def test_wait_on_a_live_device() -> None:
    assert cpu().wait() is None


@pytest.mark.checklist(212)
def test_extension_support() -> None:
    assert cpu().get_extension_support("com.example.ext") is False
    assert cpu().get_extension_support("") is False


def _faulty(**changes) -> nnc.Device:
    info = device_mod.DeviceInfo(**{**device_mod.CPU.__dict__, **changes})
    return device_mod.admit([info])[0]


@pytest.mark.checklist(213)
def test_internal_faults_are_reported() -> None:
    """A back-end reporting a negative type is OP_FAILED from getType, a
    negative feature level BAD_STATE from getFeatureLevel: never passed on."""
    with raises(RC.OP_FAILED, "ANeuralNetworksDevice_getType"):
        _faulty(type=-1).type  # noqa: B018
    with raises(RC.BAD_STATE, "ANeuralNetworksDevice_getFeatureLevel"):
        _faulty(feature_level=-5).feature_level  # noqa: B018


@pytest.mark.checklist(150)
def test_loop_timeouts() -> None:
    assert nnc.get_default_loop_timeout() == 2_000_000_000
    assert nnc.get_maximum_loop_timeout() == 15_000_000_000


@pytest.mark.checklist(1)
def test_every_error_is_a_failure_of_its_class() -> None:
    for case in GET_DEVICE_CASES + NULL_DEVICE_CASES:
        with pytest.raises(nnc.NNError) as info:
            case.act()
        check_error(info.value, case.code, case.function)


def test_devices_serve_compilations() -> None:
    """Every offered device can be used for a compilation of a supported model."""
    for d in nnc.get_devices():
        c = nnc.Compilation.for_devices(add_model(), [d])
        c.finish()
        assert c.devices == (d,)
