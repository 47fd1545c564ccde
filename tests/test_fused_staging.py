"""Fused element-wise groups lowered in tiles (passes/lowering/staged.py).

A long group (the tanh and erf forms of GELU) is cut into segments, each a
loop over a tile of elements, the values crossing a cut in stack buffers:
the same operations in the same order per element, so the results are
bit-identical to the same model compiled without ``nnc-fuse-elementwise``
(every operation its own loop), at 1, 2 and 4 threads.  Sizes: one that is
not a multiple of the tile and stays on one thread, and one large enough
for the thread pool whose last tile is partial too.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc import driver
from nnc.passes import pipeline as passes_pipeline
from nnc.passes.outline_parallel import PARALLEL_FOR
from test_row_kernels import compile_without
from test_tflite import execute

RNG = np.random.default_rng(5)
#: group shapes: 1961 elements (3 full tiles and 425), 33410 (65 and 130)
SHAPES = [(1, 37, 53), (1, 130, 257)]
#: the erf form's rational polynomial (the coefficients of no particular erf)
NUMERATOR = [-2.7261424e-10, 2.7706815e-08, -2.101024e-06, -5.6925062e-05, -7.3499495e-04, -2.954600e-03, -1.6096165e-02]
DENOMINATOR = [-1.4566071e-05, -2.1337046e-04, -1.6822874e-03, -7.3733705e-03, -1.4264738e-02]


class _Builder:
    """A float32 model of element-wise operations on tensors of one shape,
    constants of shape [1] (broadcast scalars)."""

    def __init__(self) -> None:
        self.m = nnc.Model()
        self.none = self.m.add_operand(T.INT32)
        self.m.set_operand_value(self.none, np.int32(0))

    def tensor(self, shape: tuple[int, ...]) -> int:
        return self.m.add_operand(T.TENSOR_FLOAT32, shape)

    def const(self, v: float) -> int:
        k = self.m.add_operand(T.TENSOR_FLOAT32, (1,))
        self.m.set_operand_value(k, np.float32([v]))
        return k

    def op(self, kind: Op, args: list[int], shape: tuple[int, ...]) -> int:
        out = self.tensor(shape)
        fused = [self.none] if kind in (Op.ADD, Op.MUL, Op.DIV) else []
        self.m.add_operation(kind, args + fused, [out])
        return out


def _gelu_tanh(b: _Builder, x: int, shape: tuple[int, ...]) -> int:
    """x * logistic(1.5957691 * (x + 0.044715 * x^3)), as TFLite converts it."""
    sq = b.op(Op.MUL, [x, x], shape)
    cube = b.op(Op.MUL, [sq, x], shape)
    t = b.op(Op.MUL, [cube, b.const(0.044715)], shape)
    u = b.op(Op.ADD, [x, t], shape)
    v = b.op(Op.MUL, [u, b.const(1.5957691)], shape)
    s = b.op(Op.LOGISTIC, [v], shape)
    return b.op(Op.MUL, [x, s], shape)


def _gelu_erf(b: _Builder, x: int, shape: tuple[int, ...]) -> int:
    """0.5 * x * (1 + erf(x / sqrt(2))) with erf a clamped rational polynomial."""
    c = b.op(Op.MINIMUM, [x, b.const(4.0)], shape)
    c = b.op(Op.MAXIMUM, [c, b.const(-4.0)], shape)
    z = b.op(Op.MUL, [c, c], shape)
    p = b.op(Op.MUL, [z, b.const(NUMERATOR[0])], shape)
    for a in NUMERATOR[1:]:
        p = b.op(Op.MUL, [b.op(Op.ADD, [p, b.const(a)], shape), z], shape)
    q = b.op(Op.MUL, [z, b.const(DENOMINATOR[0])], shape)
    for a in DENOMINATOR[1:]:
        q = b.op(Op.MUL, [b.op(Op.ADD, [q, b.const(a)], shape), z], shape)
    erf = b.op(Op.DIV, [b.op(Op.MUL, [p, c], shape), b.op(Op.ADD, [q, b.const(-1.4264738e-02)], shape)], shape)
    half = b.op(Op.MUL, [x, b.const(0.5)], shape)
    return b.op(Op.MUL, [half, b.op(Op.ADD, [erf, b.const(1.0)], shape)], shape)


@pytest.fixture(scope="module")
def model() -> nnc.Model:
    """Both forms at both sizes, each its own fused group."""
    b = _Builder()
    ins, outs = [], []
    for shape in SHAPES:
        for form in (_gelu_tanh, _gelu_erf):
            x = b.tensor(shape)
            ins.append(x)
            outs.append(form(b, x, shape))
    b.m.identify_inputs_and_outputs(ins, outs)
    b.m.finish()
    return b.m


def _compile(m: nnc.Model, fuse: bool = True) -> nnc.Compilation:
    return compile_without(m) if fuse else compile_without(m, "nnc-fuse-elementwise")


def _inputs(m: nnc.Model) -> list[np.ndarray]:
    """Values over the clamp and the logistic's saturation, and zeros."""
    out = []
    for i in m.inputs:
        x = (4 * RNG.standard_normal(m.operands[i].dims)).astype(np.float32)
        x.flat[::97] = 0.0
        out.append(x)
    return out


def test_every_group_is_staged(model: nnc.Model) -> None:
    """The four groups are cut (so the comparison below compares staged
    code): one tile buffer for the tanh form's one cut, the erf form's two
    cuts carry more; every group reaches the thread pool (the small ones,
    1,961 elements of 10 to 30 operations, are over a microsecond of work)."""
    module, _ = driver.shaped_module(model, driver.static_input_infos(model))
    passes_pipeline.run_passes(module, ["nnc-fuse-elementwise", "convert-nnapi-to-linalg"])
    text = str(module)
    assert "linalg.generic" not in text
    assert len(re.findall(r"memref\.alloca\(\) \{alignment = 64 : i64\} : memref<512xf32>", text)) >= 2
    code = driver.lower_to_llvm(model, driver.static_input_infos(model)).llvm_ir
    assert len(re.findall(rf'call (ccc )?void @"?{PARALLEL_FOR}"?\(', code)) == 4


def test_staged_groups_bit_identical_to_unfused(model: nnc.Model) -> None:
    inputs = _inputs(model)
    want = [y.tobytes() for y in execute(model, _compile(model, fuse=False), inputs, 1)]
    fused = _compile(model)
    for threads in (1, 2, 4):
        assert [y.tobytes() for y in execute(model, fused, inputs, threads)] == want


def _swish(b: _Builder, x: int, shape: tuple[int, ...]) -> int:
    return b.op(Op.MUL, [x, b.op(Op.LOGISTIC, [x], shape)], shape)


def _lowered(form, shape: tuple[int, ...]) -> str:
    """The module of one group of ``form`` after ``convert-nnapi-to-linalg``."""
    b = _Builder()
    x = b.tensor(shape)
    b.m.identify_inputs_and_outputs([x], [form(b, x, shape)])
    b.m.finish()
    module, _ = driver.shaped_module(b.m, driver.static_input_infos(b.m))
    passes_pipeline.run_passes(module, ["nnc-fuse-elementwise", "convert-nnapi-to-linalg"])
    return str(module)


def _tile_buffers(text: str) -> list[str]:
    return re.findall(r"memref\.alloca\(\) \{alignment = 64 : i64\} : memref<(\d+)xf32>", text)


@pytest.mark.parametrize(
    ("form", "shape", "buffers"),
    [
        # one cut, before LOGISTIC: one buffer per tile (a full one, the last one)
        (_gelu_tanh, (1, 37, 53), ["512", "425"]),
        # swish: nothing worth a cut before or after LOGISTIC
        (_swish, (1, 130, 257), []),
        # fewer elements than two tiles: one loop
        (_gelu_tanh, (1, 20, 51), []),
    ],
)
def test_where_groups_are_cut(form, shape: tuple[int, ...], buffers: list[str]) -> None:
    text = _lowered(form, shape)
    assert _tile_buffers(text) == buffers
    assert ("linalg.generic" in text) == (not buffers)


def test_erf_form_is_cut_every_ten_operations() -> None:
    """28 bodies of about one operation each: cut twice, each cut carrying
    the clamped argument, its square and the polynomials' partial values."""
    buffers = _tile_buffers(_lowered(_gelu_erf, (1, 37, 53)))
    assert set(buffers) == {"512", "425"} and buffers.count("512") == buffers.count("425") >= 4
