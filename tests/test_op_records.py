"""Every NNAPI operation's record (dialects/optable.py) is complete and true.

For all 107 OperationType values (the 106 operations of the NDK header plus
OEM_OPERATION): the record names a family whose rules module holds the
operation's rule and whose lowering module holds its lowering, or it declares
the operation unsupported (no implemented types, no lowering); implemented
types are declared types; the declared operand types, and the feature level
of each, are those ``NeuralNetworksTypes.h`` lists; every TFLite converter's
builtin is in some record.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from nnc import tflite
from nnc.dialects.optable import OPS, SPECS
from nnc.dialects.rules import RULES
from nnc.enums import FeatureLevel, OperandType, OperationType
from nnc.passes.lowering import LOWERINGS

HEADER = Path(__file__).resolve().parents[1] / ".." / "shared" / "spec" / "NeuralNetworksTypes.h"

#: IF and WHILE are validated against their referenced models (Model._check_if /
#: _check_while, Android's validateIf/WhileOperation) and shape-inferred by the
#: shape-inference pass's control-flow path, not by an operand rule.
MODEL_LEVEL_RULES = {OperationType.IF, OperationType.WHILE}

# -- reading the NDK header ------------------------------------------------------------------------

_ENTRY = re.compile(
    r"/\*\*((?:(?!/\*\*).)*?)\*/\s*"
    r"(?://[^\n]*\n\s*)*"  # ARGMAX has a // comment between its doc and its enumerator
    r"ANEURALNETWORKS_(\w+) = \d+,",
    re.S,
)
_SECTION = re.compile(r"// Operations below are available since NNAPI feature level (\d)\.")
_HEADING = re.compile(
    r"^Supported (?:(input|output|value) )?tensor (?:\{@link OperandCode\}|types)( configurations)?:"
)
_BULLET = re.compile(r"^\* \{@link ANEURALNETWORKS_(\w+)\}")
_CONFIG_INPUT = re.compile(r"^\* \* \{@link ANEURALNETWORKS_(\w+)\} for input")
_SINCE = re.compile(r"since NNAPI feature level (\d)")


def _level(n: int) -> FeatureLevel:
    return FeatureLevel[f"LEVEL_{n}"]


def _doc_lines(body: str) -> list[str]:
    """The comment's lines without the leading `` * ``."""
    return [re.sub(r"^\s*\*", "", line).strip() for line in body.splitlines()]


def _list_types(lines: list[str], level: int) -> dict[str, int]:
    """A bullet list of types, each "(since NNAPI feature level N)" or ``level``."""
    types: dict[str, int] = {}
    for line in lines:
        if not line:
            break
        # CAST: "Since NNAPI feature level 4, casting tensors of the following
        # {@link OperandCode} to the same {@link OperandCode} is supported:"
        # introduces the bullets that follow it.
        m = re.match(r"Since NNAPI feature level (\d)", line)
        if m:
            level = int(m.group(1))
            continue
        m = _BULLET.match(line)
        if m is None:
            # a continuation line, e.g. CONCATENATION's "(full support since
            # NNAPI feature level 3, see the input section)": it qualifies
            # the type above, which NNAPI supported since the operation's level
            continue
        since = _SINCE.search(line)
        types.setdefault(m.group(1), int(since.group(1)) if since else level)
    return types


def _config_types(lines: list[str], level: int) -> dict[str, int]:
    """CONV_2D-style "configurations": the type "for input" of each, at the
    level of its "Available since NNAPI feature level N:" section, or of a
    "(since NNAPI feature level N)" in the configuration's title (which
    GROUPED_CONV_2D gives without a section, and sometimes on the title's
    second line)."""
    types: dict[str, int] = {}
    section, title = level, level
    for line in lines:
        if line.startswith("Supported tensor rank"):
            break
        m = re.match(r"Available since NNAPI feature level (\d):", line)
        if m:
            section = title = int(m.group(1))
            continue
        m = _CONFIG_INPUT.match(line)
        if m:
            types.setdefault(m.group(1), max(section, title))
            continue
        if line.startswith("* ") and not line.startswith("* * "):
            title = section  # a new configuration
        since = _SINCE.search(line)
        if since and not line.startswith("* * "):
            title = int(since.group(1))
    return types


def _input0_type(lines: list[str]) -> dict[str, int]:
    """Operations without a list (QUANTIZED_16BIT_LSTM, QUANTIZED_LSTM, IF,
    WHILE) name the type of input 0 in its description."""
    i = lines.index("Inputs:")
    text = " ".join(lines[i + 1 : i + 3])
    m = re.search(r"\{@link ANEURALNETWORKS_(\w+)\}", text)
    assert m, lines[i : i + 3]
    return {m.group(1): 0}


def parse_header(text: str) -> dict[str, tuple[int, str, dict[str, int]]]:
    """OPERATION -> (feature level, kind of the typed operand, {type: level}).

    The kind is "" (the operation's tensors), "input", "output" or "value"
    as the header's heading says; the input list is preferred where a header
    gives both (DEQUANTIZE, QUANTIZE)."""
    sections = [(m.start(), int(m.group(1))) for m in _SECTION.finditer(text)]
    result = {}
    for m in _ENTRY.finditer(text):
        body, name = m.group(1), m.group(2)
        if name not in OperationType.__members__:
            continue
        levels = re.findall(r"Available since NNAPI feature level (\d)\.", body)
        # QUANTIZED_16BIT_LSTM's comment has no "Available since" line: its
        # level is that of the "Operations below are available since ..."
        # section it is declared in.
        section = max((lvl for pos, lvl in sections if pos < m.start()), default=1)
        op_level = int(levels[-1]) if levels else section
        lines = _doc_lines(body)
        headings = {}
        for k, line in enumerate(lines):
            h = _HEADING.match(line)
            if h:
                headings.setdefault(h.group(1) or "", (k, bool(h.group(2))))
        kind = next((k for k in ("input", "value", "", "output") if k in headings), None)
        if kind is None:
            types = _input0_type(lines)
            kind = ""
        else:
            start, configurations = headings[kind]
            parse = _config_types if configurations else _list_types
            types = parse(lines[start + 1 :], op_level)
        types = {t: (lvl or op_level) for t, lvl in types.items()}
        result[name] = (op_level, kind, types)
    return result


@pytest.fixture(scope="module")
def header() -> dict[str, tuple[int, str, dict[str, int]]]:
    return parse_header(HEADER.read_text())


# -- the records ------------------------------------------------------------------------------------


def test_one_record_per_operation() -> None:
    assert [s.type for s in OPS] == list(OperationType)
    assert len(OPS) == 107


def test_parser_reads_every_operation_of_the_header(header) -> None:
    # OEM_OPERATION is not in the NDK header (it left it with NNAPI 1.2's
    # deprecation); its record declares no types.
    assert set(header) == {op.name for op in OperationType} - {"OEM_OPERATION"}
    assert not SPECS[OperationType.OEM_OPERATION].types


@pytest.mark.parametrize("op", list(OperationType), ids=lambda op: op.name)
def test_record_is_complete(op: OperationType) -> None:
    spec = SPECS[op]
    assert re.fullmatch(r"[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?", spec.family), f"{op.name}: family {spec.family!r}"
    assert spec.implemented <= set(spec.types), f"{op.name}: implements undeclared types"
    if not spec.supported:
        assert op not in LOWERINGS, f"{op.name} is declared unsupported but has a lowering"
        if op in RULES:
            assert RULES[op].__module__ == f"nnc.dialects.rules.{spec.family}"
        return
    assert op in LOWERINGS, f"{op.name} implements {spec.implemented} but has no lowering"
    assert LOWERINGS[op].fn.__module__ == f"nnc.passes.lowering.{spec.family}", (
        f"{op.name}: lowering in {LOWERINGS[op].fn.__module__}, record says {spec.family}"
    )
    if op in MODEL_LEVEL_RULES:
        assert op not in RULES
        return
    assert op in RULES, f"{op.name} has no rule"
    assert RULES[op].__module__ == f"nnc.dialects.rules.{spec.family}", (
        f"{op.name}: rule in {RULES[op].__module__}, record says {spec.family}"
    )


def test_families_line_up() -> None:
    """One convention: each family is a module of the same name in both folders."""
    for family in {s.family for s in OPS if s.supported}:
        importlib.import_module(f"nnc.passes.lowering.{family}")
        if any(s.family == family and s.type not in MODEL_LEVEL_RULES for s in OPS if s.supported):
            importlib.import_module(f"nnc.dialects.rules.{family}")


@pytest.mark.parametrize("op", [op for op in OperationType if op.name != "OEM_OPERATION"], ids=lambda op: op.name)
def test_declared_types_match_the_header(op: OperationType, header) -> None:
    level, kind, types = header[op.name]
    spec = SPECS[op]
    assert spec.since == _level(level), f"{op.name}: since {spec.since.name}, header {level}"
    declared = {t.name.removeprefix("TENSOR_") if t != OperandType.MODEL else "MODEL": lvl for t, lvl in spec.types.items()}
    expected = {t.removeprefix("TENSOR_"): _level(lvl) for t, lvl in types.items()}
    assert declared == expected, f"{op.name}: record {declared}, header {expected}"
    # The record's primary operand is the one the header's list describes.
    if kind == "output":
        assert spec.primary in spec.outputs
    elif kind == "value":
        assert spec.primary == "values"
    else:
        assert spec.primary in ("", *spec.inputs) and spec.primary not in spec.outputs


def test_primary_operand() -> None:
    spec = SPECS[OperationType.SELECT]
    assert spec.primary_operand(["c", "x", "y"], ["o"]) == "x"
    assert SPECS[OperationType.FILL].primary_operand(["dims", "v"], ["o"]) == "o"
    assert SPECS[OperationType.PACK].primary_operand(["axis", "t0", "t1"], ["o"]) == "t0"
    assert SPECS[OperationType.ADD].primary_operand([], []) is None


# -- the importer ---------------------------------------------------------------------------------


def test_every_converter_name_is_in_a_record() -> None:
    """...or is a decomposition: a builtin that becomes a graph of several NNAPI
    operations, so no one record lists it."""
    names = [n for s in OPS for n in s.tflite]
    assert len(names) == len(set(names)), "a TFLite builtin is listed by two records"
    assert not set(tflite.DECOMPOSITIONS) & set(names), "a decomposed builtin is also listed by a record"
    assert set(tflite.CUSTOM_CONVERTERS) <= set(names) | set(tflite.DECOMPOSITIONS)
    assert set(tflite.CONVERTERS) == set(names) | set(tflite.DECOMPOSITIONS)
