"""A picture of the graph (issue 18, item 3): ``nnc info MODEL --dot`` / ``--svg``.

The DOT text is checked structurally (no Graphviz Python package is a
dependency): balanced braces outside quoted strings, one node per operation,
one per model input and output, and every edge between defined nodes.
"""

from __future__ import annotations

import glob
import os
import re
import shutil

import pytest

import nnc
from nnc import dot
from nnc.cli import main

MODELS_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "models")
MODELS = sorted(glob.glob(os.path.join(MODELS_DIR, "*.tflite")))
EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "tiny_cnn.nnc")

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NODE = re.compile(r"^\s*(\w+) \[(.*)\];$")
_EDGE = re.compile(r"^\s*(\w+) -> (\w+) \[label=(\"(?:[^\"\\]|\\.)*\")\];$")


def check_dot(text: str, model: nnc.Model) -> None:
    """The structural checks of the module docstring."""
    bare = _STRING.sub('""', text)  # braces inside labels do not count
    depth = 0
    for ch in bare:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0, "a '}' closes nothing"
    assert depth == 0, "unbalanced braces"
    assert text.startswith("digraph ") and text.rstrip().endswith("}")
    nodes, edges = set(), []
    for line in text.splitlines()[1:-1]:
        if re.match(r"^\s*(rankdir=\w+|node \[.*\]|edge \[.*\]);$", line):
            continue  # graph, node and edge defaults
        if m := _EDGE.match(line):
            edges.append((m[1], m[2]))
        else:
            m = _NODE.match(line)
            assert m, line
            assert m[1] not in nodes, f"node {m[1]} defined twice"
            nodes.add(m[1])
    expected = {f"op{k}" for k in range(len(model.operations))}
    expected |= {f"input{k}" for k in range(len(model.inputs))} | {f"output{k}" for k in range(len(model.outputs))}
    assert nodes == expected
    for a, b in edges:
        assert a in nodes and b in nodes, (a, b)
    # every non-constant operand an operation reads arrives on an edge
    consumed = sum(
        1 for op in model.operations for i in op.inputs
        if model.operands[i].lifetime.name in ("TEMPORARY_VARIABLE", "SUBGRAPH_INPUT")
    )  # fmt: skip
    assert len(edges) == consumed + len(model.outputs)


def test_the_model_zoo_is_there():
    assert MODELS, f"no .tflite in {MODELS_DIR}: the model zoo lives in ../shared/models beside the repository"


@pytest.mark.parametrize("path", [*MODELS, EXAMPLE], ids=os.path.basename)
def test_dot_of_every_model_is_well_formed(path, capsys):
    assert main(["info", path, "--dot"]) == 0
    text = capsys.readouterr().out
    check_dot(text, nnc.load_model(path))


def test_labels_fold_constants_and_escape_names():
    m = nnc.load_model(EXAMPLE)
    m.input_names = ['say "hi" \\ {x}']
    text = dot.to_dot(m, "t")
    assert r'input 0: say \"hi\" \\ {x}' in text
    assert "CONV_2D" in text and "TENSOR_FLOAT32[" in text  # the filter, folded into the conv's label
    check_dot(text, m)


NO_DOT = "Graphviz's dot program is not installed (apt-get install graphviz)"


@pytest.mark.skipif(shutil.which("dot") is None, reason=NO_DOT)
def test_svg_is_written(tmp_path, capsys):
    out = tmp_path / "g.svg"
    assert main(["info", EXAMPLE, "--svg", str(out)]) == 0
    assert "<svg" in out.read_text() and "CONV_2D" in out.read_text()


def test_svg_without_dot_says_how_to_install_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert main(["info", EXAMPLE, "--svg", str(tmp_path / "g.svg")]) == 1
    err = capsys.readouterr().err
    assert "apt-get install graphviz" in err and "--dot" in err
    assert not (tmp_path / "g.svg").exists()
