"""The driving loop and the public entry points: read the file, convert
every operator through ``CONVERTERS``, check what nnc can compile at the
target feature level, and report every problem at once."""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass, field
from typing import Any

from nnc.dialects.optable import SPECS
from nnc.enums import FeatureLevel, OperationType
from nnc.errors import BadDataError, NNError, OpFailedError
from nnc.model import Model
from nnc.runtime.chunks import release_pages
from nnc.tflite.converters import CONVERTERS
from nnc.tflite.reader import FN, _load, _operator_code, _parse, _read_tensors, _signature_names
from nnc.tflite.state import _Call, _Importer, _Unsupported

_LEVELS = list(FeatureLevel)


class UnsupportedOperatorsError(OpFailedError):
    """Some operators of the TFLite model cannot be imported or compiled.

    ``problems`` lists ``(operator index, operator name, reason)`` for every
    such operator of the subgraph, not just the first.
    """

    def __init__(self, problems: list[tuple[int, str, str]], function: str = FN, what: str = "imported"):
        self.problems = problems
        lines = "\n".join(f"  operator {i} ({name}): {why}" for i, name, why in problems)
        super().__init__(function, f"{len(problems)} operator(s) cannot be {what}:\n{lines}")


def _feature_level(level: int) -> int:
    """1..8 from either that number or a :class:`FeatureLevel` value."""
    levels = list(FeatureLevel)
    if level in levels:
        return levels.index(FeatureLevel(level)) + 1
    if isinstance(level, int) and 1 <= level <= len(levels):
        return level
    raise BadDataError(FN, f"unknown feature level {level!r} (1..{len(levels)} or an nnc.FeatureLevel)")


@dataclass
class OperatorImport:
    """How one TFLite operator was imported (what ``nnc info`` prints)."""

    index: int
    name: str
    #: the NNAPI operations it became, in order ([] when folded or failed)
    nnapi: list[str]
    #: how it was imported without an operation (a folded constant), else ""
    note: str = ""
    #: why it cannot be imported or compiled, else None
    problem: str | None = None


@dataclass
class TFLiteTranslation:
    """The result of :func:`translate_tflite`: every operator's mapping, and
    the model when every operator converted (it may still hold operations nnc
    cannot compile yet: ``problems`` lists them too)."""

    operators: list[OperatorImport]
    model: Model | None
    #: the main subgraph's TFLite tensor index -> the NNAPI operand holding it
    tensor_operands: dict[int, int] = field(default_factory=dict)

    @property
    def problems(self) -> list[tuple[int, str, str]]:
        return [(o.index, o.name, o.problem) for o in self.operators if o.problem is not None]


def translate_tflite(source: str | os.PathLike | bytes, *, feature_level: int = 8) -> TFLiteTranslation:
    """Map every operator of a ``.tflite`` file onto NNAPI and report each.

    Unlike :func:`import_tflite` this does not stop at operators that cannot
    be imported: it lists them with the others (BadDataError still for a file
    that is not a valid TFLite model)."""
    return _translate(source, feature_level, check_compiler=True)


def _translate(source: str | os.PathLike | bytes, feature_level: int, check_compiler: bool) -> TFLiteTranslation:
    """translate_tflite; ``check_compiler`` False leaves out asking the
    compiler which operations it can compile (its import costs xDSL's)."""
    level = _feature_level(feature_level)
    data, where, identity = _load(source)
    try:
        result = _import(data, where, level, check_compiler)
    except NNError:
        raise
    except Exception as e:  # noqa: BLE001 - a corrupt flatbuffer fails in any reader
        raise BadDataError(FN, f"{where} is not a valid TFLite model: {type(e).__name__}: {e}") from None
    # Reading the tables faulted in pages around every buffer (large page-cache
    # folios: about half of a ResNet-50's weights); the weights are read
    # again, from the page cache, only by what needs them.
    release_pages(data)
    if result.model is not None and identity is not None:
        result.model.source_key = ("tflite", identity, level)
    return result


def _import(data: bytes | mmap.mmap, where: str, level: int, check_compiler: bool = True) -> TFLiteTranslation:
    """translate_tflite after reading; any non-NNError is a malformed file."""
    fb = _parse(data, where)
    graphs = _Subgraphs(fb, where, level, check_compiler)
    imp, names, failed = graphs.convert(0)
    model = None
    if not failed:
        _identify(imp, fb, 0, fb.Subgraphs(0))
        model = imp.model
    problems = dict(failed) | _nnc_support(imp, set(failed), check_compiler)
    if model is not None and not check_compiler:
        model.support_report = _SupportReport(model, list(imp.op_index), names)
    ops = [OperatorImport(k, name, [], imp.notes.get(k, ""), problems.get(k)) for k, name in enumerate(names)]
    for (k, _), op in zip(imp.op_index, _added(imp.model)):
        ops[k].nnapi.append(OperationType(op.type).name)
    return TFLiteTranslation(ops, model, dict(imp.operands))


@dataclass
class _Subgraphs:
    """The file's subgraphs: the main one (0), and those WHILE and IF call,
    each imported once, on first reference, as an NNAPI model that the
    calling operations reference (a subgraph called from several places is
    one model)."""

    fb: Any
    where: str
    level: int
    #: whether to ask the compiler what it can compile (see _translate)
    check_compiler: bool = True
    models: dict[int, Model] = field(default_factory=dict)
    #: subgraphs being imported (a subgraph that reaches itself is recursion)
    active: set[int] = field(default_factory=set)

    def convert(self, index: int) -> tuple[_Importer, list[str], dict[int, str]]:
        """Every operator of subgraph ``index`` converted: (the importer,
        the operators' names, {operator: reason} of those that failed)."""
        sub = self.fb.Subgraphs(index)
        try:
            tensors = _read_tensors(self.fb, sub)
        except NNError:
            raise
        except Exception as e:  # noqa: BLE001
            raise BadDataError(FN, f"{self.where}: malformed tensor table of subgraph {index}: {e}") from None
        outputs = frozenset(int(i) for i in sub.OutputsAsNumpy()) if not sub.OutputsIsNone() else frozenset()
        imp = _Importer(Model(), tensors, self.level, graph_outputs=outputs, subgraph=self.model)
        names, failed = _convert(imp, self.fb, sub)
        return imp, names, failed

    def model(self, index: int, role: str) -> Model:
        """Subgraph ``index`` as a finished model for a WHILE or IF operand
        (``role``: what the operation calls it); _Unsupported naming the
        subgraph's own problems when it cannot be imported."""
        if index in self.models:
            return self.models[index]
        count = self.fb.SubgraphsLength()
        if not 0 < index < count:
            raise _Unsupported(f"{role} subgraph {index} does not exist (the file has {count})")
        if index in self.active:
            raise _Unsupported(f"{role} subgraph {index} calls itself; NNAPI has no recursion")
        self.active.add(index)
        try:
            imp, names, failed = self.convert(index)
            problems = dict(failed) | _nnc_support(imp, set(failed), self.check_compiler)
        finally:
            self.active.discard(index)
        label = f"{role} subgraph {index} ({_subgraph_name(self.fb.Subgraphs(index))})"
        if problems:
            listed = "; ".join(f"operator {k} ({names[k]}): {why}" for k, why in sorted(problems.items()))
            raise _Unsupported(f"{label}: {listed}")
        if imp.state_inputs:
            raise _Unsupported(f"{label} reads variable tensors; only the main subgraph may")
        _identify(imp, self.fb, index, self.fb.Subgraphs(index))
        self.models[index] = imp.model
        return imp.model


def _subgraph_name(sub) -> str:
    return sub.Name().decode("utf-8", "replace") if sub.Name() else "unnamed"


def import_tflite(source: str | os.PathLike | bytes, *, feature_level: int = 8, check_compiler: bool = False) -> Model:
    """Read a ``.tflite`` file (path or bytes) into a finished :class:`Model`.

    ``feature_level`` is the NNAPI level the model must fit (1..8 or an
    :class:`~nnc.FeatureLevel`; default 8, the newest): an operator that maps
    to an operation of a later level is reported.  From level 4 (Android 11)
    int8 maps to TENSOR_QUANT8_ASYMM_SIGNED; below it int8 tensors are
    shifted to TENSOR_QUANT8_ASYMM.  Raises BadDataError for a file that is
    not a valid TFLite model and :class:`UnsupportedOperatorsError` listing
    every operator that cannot be imported.  Operators that map to NNAPI
    operations nnc cannot compile yet are listed the same way by the
    compilation that would compile them (``Compilation.finish``, on a cache
    miss), so that an import does not load the compiler (xDSL: most of an
    import's time, and none of a process that only runs cached models);
    ``check_compiler=True`` asks at import, as :func:`translate_tflite` and
    ``nnc info`` do.

    A path is mapped read-only, not read, and the constants' values are
    read-only views of it (of ``source`` itself, for bytes): the weights are
    never copied.  So the file must not be rewritten or truncated in place
    while the model lives (docs/tflite.md).
    """
    result = _translate(source, feature_level, check_compiler)
    if result.problems or result.model is None:
        raise UnsupportedOperatorsError(result.problems)
    return result.model


@dataclass
class _SupportReport:
    """What a compilation of an imported model asks before compiling it:
    UnsupportedOperatorsError (OP_FAILED, naming ``function``) listing
    every TFLite operator mapped to an operation nnc cannot compile."""

    model: Model
    #: NNAPI operation (in the order added) -> (TFLite operator, its name)
    op_index: list[tuple[int, str]]
    names: list[str]

    def __call__(self, function: str) -> None:
        problems = _compiler_problems(self.model, self.op_index, set())
        if problems:
            listed = [(k, self.names[k], why) for k, why in sorted(problems.items())]
            raise UnsupportedOperatorsError(listed, function, "compiled")


def _convert(imp: _Importer, fb, sub) -> tuple[list[str], dict[int, str]]:
    """Convert every operator: (the operators' names, {index: reason} of those that fail)."""
    names, problems = [], {}
    for k in range(sub.OperatorsLength()):
        op = sub.Operators(k)
        _, name = _operator_code(fb, op)
        names.append(name)
        conv = CONVERTERS.get(name)
        if conv is None:
            problems[k] = (
                "custom operator with no converter: register one with nnc.tflite.register_custom"
                if name.startswith("CUSTOM:") else "no NNAPI equivalent in nnc's importer"
            )  # fmt: skip
            continue
        call = _Call(imp, k, op, name, [int(i) for i in op.InputsAsNumpy()] if not op.InputsIsNone() else [],
                     [int(i) for i in op.OutputsAsNumpy()] if not op.OutputsIsNone() else [])  # fmt: skip
        before = len(imp.model.operations)
        if name not in ("DEQUANTIZE", "QUANTIZE"):
            hybrid = imp.dequantize_hybrid(call.ins, call.outs)
            if hybrid:
                imp.notes[k] = "hybrid: weights dequantised to float32 at import (" + ", ".join(hybrid) + ")"
        try:
            conv(call)
        except _Unsupported as e:
            problems[k] = str(e)
        except NNError as e:
            problems[k] = f"NNAPI rejects the mapped operation: {e.message}"
        imp.op_index += [(k, name)] * (len(imp.model.operations) - before)
    return names, problems


def _nnc_support(imp: _Importer, failed: set[int], check_compiler: bool = True) -> dict[int, str]:
    """Operators that map to NNAPI operations of a later feature level than
    the target, or (``check_compiler``) that nnc cannot compile yet:
    {index: reason}."""
    problems: dict[int, str] = {}
    for j, op in enumerate(_added(imp.model)):
        k, _ = imp.op_index[j]
        nn = OperationType(op.type)
        needs = _LEVELS.index(SPECS[nn].since) + 1
        if k not in failed and k not in problems and needs > imp.feature_level:
            problems[k] = f"NNAPI {nn.name} needs feature level {needs}, the target is {imp.feature_level}"
    if check_compiler:
        problems |= _compiler_problems(imp.model, imp.op_index, failed | problems.keys())
    return problems


def _added(model: Model) -> list:
    """The model's operations in the order they were added (the order of
    ``op_index``; ``finish`` puts ``operations`` in execution order)."""
    return model.operations_as_added or model.operations


def _compiler_problems(model: Model, op_index: list[tuple[int, str]], skip: set[int]) -> dict[int, str]:
    """{TFLite operator: reason} of those (not in ``skip``) mapped to an
    operation nnc cannot compile yet.  Imports the compiler (xDSL, about 0.8 s)."""
    from nnc.driver import unsupported_reason

    problems: dict[int, str] = {}
    for j, op in enumerate(_added(model)):
        k, _ = op_index[j]
        if k in skip or k in problems:
            continue
        reason = unsupported_reason(model.call_for(j, op))
        if reason is not None:
            problems[k] = f"mapped to NNAPI {OperationType(op.type).name}, which nnc cannot compile yet: {reason}"
    return problems


def _identify(imp: _Importer, fb, index: int, sub) -> None:
    """Declare the subgraph's inputs/outputs (subgraph order, then state)
    and finish.  An output that is no operation's result (an input passed
    through, a constant, one named twice) gets a copy: an NNAPI operand is
    one model input, output or constant, never two of them."""
    sig_in, sig_out = _signature_names(fb, index, sub)
    in_t = [int(i) for i in sub.InputsAsNumpy()] if not sub.InputsIsNone() else []
    out_t = [int(i) for i in sub.OutputsAsNumpy()] if not sub.OutputsIsNone() else []
    inputs = [imp.operand(t) for t in in_t] + [i for i, _ in imp.state_inputs]
    written = {o for op in imp.model.operations for o in op.outputs}
    outputs: list[int] = []
    for t in out_t:
        idx = imp.operand(t)
        if idx not in written or idx in outputs:
            idx = imp.copy_of(t)
        outputs.append(idx)
    outputs += [i for i, _ in imp.state_outputs]
    m = imp.model
    m.identify_inputs_and_outputs(inputs, outputs)
    m.finish()
    m.input_names = [sig_in.get(t, imp.tensors[t].name) for t in in_t] + [n for _, n in imp.state_inputs]
    m.output_names = [sig_out.get(t, imp.tensors[t].name) for t in out_t] + [n for _, n in imp.state_outputs]
    if imp.state_inputs:
        out_at = {name: len(out_t) + j for j, (_, name) in enumerate(imp.state_outputs)}
        m.state = [(len(in_t) + k, out_at.get(name + ":out")) for k, (_, name) in enumerate(imp.state_inputs)]
