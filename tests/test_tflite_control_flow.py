"""TFLite models of several subgraphs: WHILE and IF import to NNAPI's WHILE
and IF with the called subgraphs as referenced models, checked against
numpy and, where it is installed, LiteRT."""

from __future__ import annotations

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc.tflite import UnsupportedOperatorsError, import_tflite
from test_tflite_mapping import litert
from tflite_builder import BOOL, FLOAT32, INT32, TFLiteBuilder

STEPS = 5


def _loop_subgraphs(b: TFLiteBuilder) -> tuple[int, int]:
    """cond(i, x, c) = i < STEPS; body(i, x, c) = (i + 1, x * 0.5 + c, c):
    ``c`` is passed through unchanged (a subgraph output no operator writes)."""
    cond = b.child()
    i, x, c = cond.tensor("i", [], INT32), cond.tensor("x", [2, 3], FLOAT32), cond.tensor("c", [2, 3], FLOAT32)
    n = cond.tensor("n", [], INT32, np.array(STEPS, np.int32))
    go = cond.tensor("go", [], BOOL)
    cond.op("LESS", [i, n], [go])
    body = b.child()
    bi, bx, bc = body.tensor("i", [], INT32), body.tensor("x", [2, 3], FLOAT32), body.tensor("c", [2, 3], FLOAT32)
    one = body.tensor("one", [], INT32, np.array(1, np.int32))
    half = body.tensor("half", [], FLOAT32, np.array(0.5, np.float32))
    i1, xh, x1 = body.tensor("i1", [], INT32), body.tensor("xh", [2, 3], FLOAT32), body.tensor("x1", [2, 3], FLOAT32)
    body.op("ADD", [bi, one], [i1])
    body.op("MUL", [bx, half], [xh])
    body.op("ADD", [xh, bc], [x1])
    return b.add_subgraph(cond, [i, x, c], [go]), b.add_subgraph(body, [bi, bx, bc], [i1, x1, bc])


def _loop_model(calls: int = 1) -> bytes:
    """A WHILE (``calls`` of them, chained, calling the same two subgraphs)
    over (counter, x, c) from a zero counter: the loop's x is the output."""
    b = TFLiteBuilder()
    x0, c = b.tensor("x", [2, 3], FLOAT32), b.tensor("c", [2, 3], FLOAT32)
    x = x0
    zero = b.tensor("zero", [], INT32, np.array(0, np.int32))
    cond, body = _loop_subgraphs(b)
    for k in range(calls):
        outs = [b.tensor(f"i_out{k}", [], INT32), b.tensor(f"x_out{k}", [2, 3], FLOAT32),
                b.tensor(f"c_out{k}", [2, 3], FLOAT32)]  # fmt: skip
        b.op("WHILE", [zero, x, c], outs, ("WhileOptions", {"CondSubgraphIndex": cond, "BodySubgraphIndex": body}))
        x = outs[1]
    return b.build([x0, c], [x])


def _loop_reference(x: np.ndarray, c: np.ndarray, calls: int) -> np.ndarray:
    for _ in range(calls * STEPS):
        x = x * np.float32(0.5) + c
    return x


@pytest.mark.parametrize("calls", [1, 2])
def test_while_against_numpy_and_litert(calls):
    data = _loop_model(calls)
    m = import_tflite(data)
    assert [Op(o.type) for o in m.operations] == [Op.WHILE] * calls
    rng = np.random.default_rng(3)
    x, c = (rng.uniform(-2, 2, (2, 3)).astype(np.float32) for _ in range(2))
    got = nnc.compile(m).run(x, c)[0]
    np.testing.assert_allclose(got, _loop_reference(x, c, calls), rtol=1e-6, atol=1e-6)
    lite = litert(data, [x, c])
    if lite is not None:
        np.testing.assert_allclose(got, lite[0], rtol=1e-6, atol=1e-6)


def test_a_subgraph_called_twice_is_one_model():
    m = import_tflite(_loop_model(calls=2))
    first, second = (m.operations[k].inputs[:2] for k in range(2))
    subgraphs = [[m.operands[i].subgraph for i in pair] for pair in (first, second)]
    assert all(a is b for a, b in zip(*subgraphs))
    cond, body = subgraphs[0]
    # the counter and the condition are one-element tensors, as WHILE wants
    assert cond.operands[cond.outputs[0]].type == T.TENSOR_BOOL8 and cond.operands[cond.outputs[0]].dims == (1,)
    # the passed-through loop variable is copied, never both input and output
    assert body.outputs[2] != body.inputs[2]
    assert Op(body.operations[-1].type) == Op.RESHAPE


def _if_model() -> bytes:
    """IF(flag, a, b): then a + b, else a * b."""
    b = TFLiteBuilder()
    flag, x, y = b.tensor("flag", [], BOOL), b.tensor("a", [4], FLOAT32), b.tensor("b", [4], FLOAT32)
    out = b.tensor("out", [4], FLOAT32)
    branches = []
    for name in ("ADD", "MUL"):
        g = b.child()
        p, q, r = g.tensor("p", [4], FLOAT32), g.tensor("q", [4], FLOAT32), g.tensor("r", [4], FLOAT32)
        g.op(name, [p, q], [r])
        branches.append(b.add_subgraph(g, [p, q], [r]))
    b.op("IF", [flag, x, y], [out], ("IfOptions", {"ThenSubgraphIndex": branches[0], "ElseSubgraphIndex": branches[1]}))
    return b.build([flag, x, y], [out])


@pytest.mark.parametrize("flag", [True, False])
def test_if_against_numpy_and_litert(flag):
    data = _if_model()
    m = import_tflite(data)
    assert [Op(o.type) for o in m.operations] == [Op.IF]
    a, b = np.arange(4, dtype=np.float32) + 1, np.full(4, 3, np.float32)
    cond = np.array([flag])
    got = nnc.compile(m).run(cond, a, b)[0]
    np.testing.assert_array_equal(got, a + b if flag else a * b)
    lite = litert(data, [np.array(flag), a, b])
    if lite is not None:
        np.testing.assert_array_equal(got, lite[0])


def _while_with_body(make_body) -> bytes:
    """A WHILE over one float loop variable whose body ``make_body(b)`` builds
    and returns (body subgraph index, cond subgraph index)."""
    b = TFLiteBuilder()
    x, y = b.tensor("x", [3], FLOAT32), b.tensor("y", [3], FLOAT32)
    body, cond = make_body(b)
    b.op("WHILE", [x], [y], ("WhileOptions", {"CondSubgraphIndex": cond, "BodySubgraphIndex": body}))
    return b.build([x], [y])


def _false_cond(b: TFLiteBuilder) -> int:
    g = b.child()
    v, z, go = g.tensor("v", [3], FLOAT32), g.tensor("z", [3], FLOAT32, np.zeros(3)), g.tensor("go", [3], BOOL)
    g.op("LESS", [v, z], [go])
    return b.add_subgraph(g, [v], [go])


def test_a_problem_inside_a_body_is_reported_on_the_while():
    def body(b):
        g = b.child()
        v, w = g.tensor("v", [3], FLOAT32), g.tensor("w", [3], FLOAT32)
        g.op("", [v], [w], custom="MadeUpOp")
        return b.add_subgraph(g, [v], [w]), _false_cond(b)

    with pytest.raises(UnsupportedOperatorsError) as e:
        import_tflite(_while_with_body(body))
    [(index, name, why)] = e.value.problems
    assert (index, name) == (0, "WHILE")
    assert "body subgraph 1" in why and "operator 0 (CUSTOM:MadeUpOp)" in why


def test_recursion_and_missing_subgraphs_are_reported():
    def recursive(b):
        g = b.child()
        v, w = g.tensor("v", [3], FLOAT32), g.tensor("w", [3], FLOAT32)
        g.op("WHILE", [v], [w], ("WhileOptions", {"CondSubgraphIndex": 2, "BodySubgraphIndex": 1}))
        return b.add_subgraph(g, [v], [w]), _false_cond(b)

    with pytest.raises(UnsupportedOperatorsError) as e:
        import_tflite(_while_with_body(recursive))
    assert "calls itself" in e.value.problems[0][2]
    with pytest.raises(UnsupportedOperatorsError) as e:
        import_tflite(_while_with_body(lambda b: (7, 8)))
    assert "subgraph 8 does not exist" in e.value.problems[0][2]
