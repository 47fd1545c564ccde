"""A picture of a model: Graphviz DOT text, and SVG through the ``dot`` program.

``nnc info MODEL --dot`` / ``--svg FILE``.  The drawing follows what a reader
of the model wants to see, not NNAPI's operand list:

* each operation is a box: its position in execution order, its type, and
  the shape(s) it produces;
* each tensor passed between operations is an edge labelled with its shape
  and dtype;
* constants (weights, biases, scalar parameters) are not nodes: they are
  folded into their consumer's label (scalars and small integer tensors by
  value, larger tensors by type and shape), or the graph of a real model would
  be mostly weight nodes; an omitted optional input is left out;
* model inputs and outputs are coloured ovals with their names.

A referenced model (IF/WHILE) is folded like a constant, by name and size; its
own graph is not drawn.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable

import numpy as np

from nnc.details import TensorDetails, tensor_details
from nnc.enums import Lifetime, OperandType, OperationType
from nnc.model import Model, Operand

#: how many constant values a label shows before it abbreviates
_MAX_VALUES = 8
#: constants per label line (scalars are short)
_PER_LINE = 4

INSTALL_HINT = (
    "the Graphviz 'dot' program is needed to write SVG and is not installed "
    "(Debian/Ubuntu: apt-get install graphviz; Fedora: dnf install graphviz; macOS: brew install graphviz; "
    "others: https://graphviz.org/download/). Without it, 'nnc info MODEL --dot > model.dot' writes the DOT text."
)


class DotUnavailableError(Exception):
    """The ``dot`` program is missing or failed (the message says what to do)."""


def quote(text: str) -> str:
    """A DOT double-quoted string: backslashes and quotes escaped, each
    newline a ``\\n`` line break (DOT's centred line)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _dims(dims: Iterable[int] | None) -> str:
    return "?" if dims is None else "x".join(str(d) if d else "?" for d in dims) or "scalar"


def _tensor(op: Operand) -> str:
    """``1x112x112x32 float32`` (an edge label)."""
    dtype = op.type.facts.dtype
    return f"{_dims(op.dims)} {dtype if dtype is not None else op.type.name}"


def _constant(op: Operand) -> str:
    """A folded constant: its value when short, else its type and shape."""
    if op.type == OperandType.MODEL:
        n = len(op.subgraph.operations) if op.subgraph is not None else 0
        return f"model ({n} operations)"
    value = None if op.value is None else np.asarray(op.value)
    if value is not None and (op.type.is_scalar or (value.dtype.kind in "iub" and value.size <= _MAX_VALUES)):
        shown = value.reshape(-1).tolist() if value.ndim else value.item()
        return str(shown).replace(" ", "")
    return f"{op.type.name}[{_dims(op.dims)}]"


def _io_label(d: TensorDetails, kind: str) -> str:
    q = f"\nscale {d.scale:g}, zero point {d.zero_point}" if d.quantized and d.channel_scales is None else ""
    return f"{kind} {d.position}: {d.name}\n{_dims(d.nnapi_dims)} {d.dtype}{q}"


def to_dot(model: Model, title: str = "model") -> str:
    """The DOT text of ``model``'s main graph (see the module docstring)."""
    lines = [
        f"digraph {quote(title)} {{",
        "  rankdir=TB;",
        '  node [shape=box, style="rounded,filled", fillcolor=white, fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    producer: dict[int, str] = {}
    for d in tensor_details(model, "input"):
        node = f"input{d.position}"
        lines.append(f"  {node} [shape=oval, fillcolor=lightblue, label={quote(_io_label(d, 'input'))}];")
        producer[d.operand] = node
    for k, operation in enumerate(model.operations):
        node = f"op{k}"
        for o in operation.outputs:
            producer[o] = node
        folded = [
            f"in{pos}={_constant(model.operands[i])}"
            for pos, i in enumerate(operation.inputs)
            if i not in producer and model.operands[i].lifetime not in (Lifetime.TEMPORARY_VARIABLE, Lifetime.NO_VALUE)
        ]
        shapes = ", ".join(_dims(model.operands[o].dims) for o in operation.outputs)
        label = [f"{k}: {OperationType(operation.type).name}", f"-> {shapes}"]
        label += [" ".join(folded[j : j + _PER_LINE]) for j in range(0, len(folded), _PER_LINE)]
        lines.append(f"  {node} [label={quote(chr(10).join(label))}];")
        for i in operation.inputs:
            if i in producer:
                lines.append(f"  {producer[i]} -> {node} [label={quote(_tensor(model.operands[i]))}];")
    for d in tensor_details(model, "output"):
        node = f"output{d.position}"
        lines.append(f"  {node} [shape=oval, fillcolor=lightsalmon, label={quote(_io_label(d, 'output'))}];")
        source = producer.get(d.operand)
        if source is not None:  # an output that is a constant has no edge
            lines.append(f"  {source} -> {node} [label={quote(_tensor(model.operands[d.operand]))}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_svg(dot_text: str, path: str, timeout: float = 300) -> None:
    """Render ``dot_text`` to the SVG file ``path`` with Graphviz's ``dot``;
    :class:`DotUnavailableError` when it is not installed or fails."""
    exe = shutil.which("dot")
    if exe is None:
        raise DotUnavailableError(INSTALL_HINT)
    try:
        proc = subprocess.run([exe, "-Tsvg", "-o", path], input=dot_text, capture_output=True, text=True,
                              timeout=timeout, check=False)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as e:
        raise DotUnavailableError(f"running {exe} failed: {e}") from None
    if proc.returncode != 0:
        raise DotUnavailableError(f"{exe} failed (exit status {proc.returncode}): {proc.stderr.strip()}")
