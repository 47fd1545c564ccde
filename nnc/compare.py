"""``nnc compare``: a TFLite model's every tensor, nnc against LiteRT.

nnc runs the model compiled with every intermediate kept
(:mod:`nnc.intermediates`); LiteRT, where installed, runs it with
``experimental_preserve_all_tensors`` under two kernel sets: its reference
kernels (``BUILTIN_REF``, the arithmetic NNAPI's own reference kernels
follow) and its optimised builtin kernels without delegates.  XNNPACK
(LiteRT's default) keeps no intermediates, so it is compared on the model's
outputs only.  Each tensor's largest difference is absolute for float
tensors and in quantisation units for quantised and integer ones.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from nnc.errors import BadDataError
from nnc.tflite import translate_tflite
from nnc.tflite.importer import UnsupportedOperatorsError
from nnc.tflite.reader import _TFL_DTYPES, _load, _operator_code, _parse, _read_tensors

FN = "nnc compare"

#: LiteRT's kernel sets, by the name the table gives them
KERNELS = {"reference": "BUILTIN_REF", "builtin": "BUILTIN_WITHOUT_DEFAULT_DELEGATES", "xnnpack": "AUTO"}
#: float tensors: a difference above this fraction of the tensor's largest
#: reference value leaves the reference arithmetic (summation order and
#: fused multiply-adds differ by a few ulps of the largest term)
FLOAT_RELATIVE = 1e-5


@dataclass
class TensorRow:
    """One TFLite tensor an operator writes, in execution order."""

    tensor: int
    name: str
    operator: int
    operator_name: str
    dtype: str
    quantized: bool
    shape: tuple[int, ...]
    #: kernel set -> largest difference (absolute, or in units); absent: not compared
    diff: dict[str, float] = field(default_factory=dict)
    #: kernel set -> how many elements differ at all
    differing: dict[str, int] = field(default_factory=dict)
    #: why nnc has no value for it (folded at import, a constant), else ""
    note: str = ""
    #: a float tensor's largest difference that still follows the reference
    #: arithmetic (:data:`FLOAT_RELATIVE` of its largest reference value)
    float_tolerance: float = 0.0

    def leaves(self, kernels: str = "reference") -> bool:
        """Whether nnc's value is off that kernel set's arithmetic: any
        difference in an integer tensor, more than ``float_tolerance`` in a
        float one."""
        if kernels not in self.diff:
            return False
        if self.dtype.startswith("float"):
            return self.diff[kernels] > self.float_tolerance
        return self.diff[kernels] > 0


def compare_tflite(source: str | os.PathLike | bytes, inputs: Sequence[np.ndarray],
                   kernels: Sequence[str] = tuple(KERNELS)) -> tuple[list[TensorRow], list[str]]:  # fmt: skip
    """(every tensor's row, notes): nnc's value of each tensor an operator
    of the main subgraph writes against each LiteRT kernel set in
    ``kernels`` (none without LiteRT), on ``inputs`` (in input order)."""
    mapped, where, _ = _load(source)
    data = bytes(mapped)  # LiteRT takes bytes; a debugging run may hold a copy
    translation = translate_tflite(data)
    if translation.model is None or translation.problems:
        raise UnsupportedOperatorsError(translation.problems)
    fb = _parse(data, where)
    sub = fb.Subgraphs(0)
    tensors = _read_tensors(fb, sub)
    model = translation.model
    if len(inputs) != len(model.inputs):
        raise BadDataError(FN, f"the model has {len(model.inputs)} inputs, got {len(inputs)}")
    import nnc

    compiled = nnc.compile(model, keep_intermediates=True)
    compiled.run(*inputs)
    notes: list[str] = []
    references = _litert(data, list(inputs), kernels, notes)
    graph_outputs = {int(i) for i in sub.OutputsAsNumpy()} if not sub.OutputsIsNone() else set()
    rows = []
    for k in range(sub.OperatorsLength()):
        op = sub.Operators(k)
        _, op_name = _operator_code(fb, op)
        for t in (int(i) for i in op.OutputsAsNumpy()) if not op.OutputsIsNone() else ():
            rows.append(_row(tensors[t], k, op_name, translation.tensor_operands.get(t), compiled, references,
                             t in graph_outputs))  # fmt: skip
    return rows, notes


def _litert(data: bytes, inputs: list[np.ndarray], kernels: Sequence[str], notes: list[str]) -> dict[str, object]:
    """Kernel set -> a LiteRT interpreter that has run ``inputs``."""
    try:
        from ai_edge_litert import interpreter
    except ImportError:
        notes.append("LiteRT (ai-edge-litert) is not installed: only nnc's side is shown")
        return {}
    done = {}
    import warnings

    for name in kernels:
        kind = getattr(interpreter.OpResolverType, KERNELS[name])
        with warnings.catch_warnings():  # "preserve_all_tensors is for debugging": so is this
            warnings.simplefilter("ignore", UserWarning)
            it = interpreter.Interpreter(model_content=data, experimental_op_resolver_type=kind, num_threads=1,
                                         experimental_preserve_all_tensors=True)  # fmt: skip
        it.allocate_tensors()
        for d, x in zip(it.get_input_details(), inputs):
            it.set_tensor(d["index"], x)
        it.invoke()
        done[name] = it
    if "xnnpack" in done:
        notes.append("xnnpack: LiteRT's default kernels keep no intermediates; compared on the model's outputs only")
    return done


def _row(t, k: int, op_name: str, operand: int | None, compiled, references: dict, is_output: bool) -> TensorRow:
    # nnc's dtype of the tensor: the file's, int64 narrowed to int32
    dtype = np.dtype(np.int32 if t.tfl_type == 4 else _TFL_DTYPES.get(t.tfl_type, np.float32)).name
    row = TensorRow(t.index, t.name, k, op_name, dtype, t.quantized, t.shape)
    if operand is None or operand not in compiled.intermediates:
        row.note = "folded at import" if operand is None else "a constant"
        return row
    mine = compiled.intermediates[operand]
    for name, it in references.items():
        if name == "xnnpack" and not is_output:
            continue
        try:
            theirs = it.get_tensor(t.index)
        except ValueError:  # a tensor LiteRT did not keep
            continue
        if theirs.shape != mine.shape and theirs.size == mine.size:
            theirs = theirs.reshape(mine.shape)
        if theirs.shape != mine.shape:
            row.note = f"shape {list(mine.shape)} in nnc, {list(theirs.shape)} in LiteRT"
            continue
        diff = np.abs(mine.astype(np.float64) - theirs.astype(np.float64))
        row.diff[name] = float(diff.max(initial=0.0))
        row.differing[name] = int(np.count_nonzero(diff))
        if name == "reference" and dtype.startswith("float"):
            row.float_tolerance = FLOAT_RELATIVE * float(np.abs(theirs).max(initial=0.0))
    return row


def format_table(rows: list[TensorRow], notes: list[str]) -> str:
    """The per-tensor table ``nnc compare`` prints, the first tensor that
    leaves the reference kernels' arithmetic marked ``<-``."""
    kernels = [k for k in KERNELS if any(k in r.diff for r in rows)]
    head = ["op", "operator", "tensor", "type", "shape", *(f"{k} max (n)" for k in kernels)]
    lines = [head]
    first = next((r for r in rows if r.leaves()), None)
    for r in rows:
        kind = ("q" if r.quantized else "") + r.dtype
        cells = [str(r.operator), r.operator_name, f"{r.tensor}:{r.name[:40]}", kind, "x".join(map(str, r.shape))]
        for k in kernels:
            cells.append(_cell(r, k) if k in r.diff else (r.note or "-"))
        if r is first:
            cells[-1] += "  <- first to leave the reference arithmetic"
        lines.append(cells)
    widths = [max(len(line[j]) for line in lines if j < len(line)) for j in range(len(head))]
    out = ["  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in lines]
    if first is None and "reference" in kernels:
        out.append("every tensor follows the reference kernels' arithmetic")
    return "\n".join(out + notes)


def _cell(r: TensorRow, kernels: str) -> str:
    d = r.diff[kernels]
    value = f"{d:.3g}" if r.dtype.startswith("float") else f"{int(d)}u"
    return f"{value} ({r.differing[kernels]})"


def row_json(r: TensorRow) -> dict:
    """A row as ``nnc compare --json`` prints it."""
    return {"tensor": r.tensor, "name": r.name, "operator": r.operator, "operator_name": r.operator_name,
            "dtype": r.dtype, "quantized": r.quantized, "shape": list(r.shape), "max_diff": r.diff,
            "differing": r.differing, "leaves_reference": r.leaves(), "note": r.note}  # fmt: skip
