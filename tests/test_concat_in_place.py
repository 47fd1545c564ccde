"""CONCATENATION inputs written in place by their producers
(``nnc-concat-in-place``).

Models concatenate the results of CONV_2D, ADD and MAX_POOL_2D (one of them
also read by another operation, the concatenation's output read on), in
float32 and int8 (inputs with the output's scale and zero point, and one
without, which the concatenation requantises), along an axis whose windows
are contiguous (only ones before it) and along the channel axis (not
marked).  Outputs are bit-identical to the same model compiled without the
pass, at 1 and 2 threads; the marks and the lowered IR say what was written
in place.
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
from nnc.passes.concat_in_place import IN_PLACE_ATTR
from test_row_kernels import compile_without
from test_tflite import execute

RNG = np.random.default_rng(11)
S8 = T.TENSOR_QUANT8_ASYMM_SIGNED


class _Net:
    """A small NHWC model of float32 or int8 (``quant``: scale, zero point
    of the activations) tensors."""

    def __init__(self, quant: tuple[float, int] | None) -> None:
        self.m = nnc.Model()
        self.quant = quant

    def scalar(self, v: int) -> int:
        k = self.m.add_operand(T.INT32)
        self.m.set_operand_value(k, np.int32(v))
        return k

    def tensor(self, shape: list[int], scale: float | None = None) -> int:
        if self.quant is None:
            return self.m.add_operand(T.TENSOR_FLOAT32, shape)
        s, zp = self.quant
        return self.m.add_operand(S8, shape, s if scale is None else scale, zp)

    def conv(self, x: int, cin: int, cout: int, shape: list[int], scale: float | None = None) -> int:
        """A 3x3 SAME CONV_2D with a RELU."""
        if self.quant is None:
            w = self.m.add_operand(T.TENSOR_FLOAT32, [cout, 3, 3, cin])
            self.m.set_operand_value(w, RNG.standard_normal((cout, 3, 3, cin)).astype(np.float32))
            b = self.m.add_operand(T.TENSOR_FLOAT32, [cout])
            self.m.set_operand_value(b, RNG.standard_normal(cout).astype(np.float32))
        else:
            w = self.m.add_operand(S8, [cout, 3, 3, cin], 0.02, 0)
            self.m.set_operand_value(w, RNG.integers(-127, 128, (cout, 3, 3, cin)).astype(np.int8))
            b = self.m.add_operand(T.TENSOR_INT32, [cout], self.quant[0] * 0.02, 0)
            self.m.set_operand_value(b, RNG.integers(-500, 500, cout).astype(np.int32))
        y = self.tensor(shape, scale)
        args = [x, w, b, self.scalar(1), self.scalar(1), self.scalar(1), self.scalar(1)]
        self.m.add_operation(Op.CONV_2D, args, [y])
        return y

    def add(self, a: int, b: int, shape: list[int]) -> int:
        y = self.tensor(shape)
        self.m.add_operation(Op.ADD, [a, b, self.scalar(0)], [y])
        return y

    def max_pool(self, x: int, shape: list[int]) -> int:
        y = self.tensor(shape)
        args = [x, self.scalar(1), self.scalar(2), self.scalar(2), self.scalar(2), self.scalar(2), self.scalar(0)]
        self.m.add_operation(Op.MAX_POOL_2D, args, [y])
        return y

    def concat(self, xs: list[int], axis: int, shape: list[int]) -> int:
        y = self.tensor(shape)
        self.m.add_operation(Op.CONCATENATION, [*xs, self.scalar(axis)], [y])
        return y


def _model(quant: tuple[float, int] | None, axis: int, rescaled: bool = False) -> nnc.Model:
    """Inputs x [1, 8, 8, 3] and z [1, 16, 16, 4]; CONV_2D, ADD and
    MAX_POOL_2D results of [1, 8, 8, 4] concatenated along ``axis``, the
    ADD's also read by a second ADD, the concatenation's output by a
    MAX_POOL_2D; both are outputs.  ``rescaled``: the CONV_2D's output has
    another scale than the concatenation's."""
    n = _Net(quant)
    x, z = n.tensor([1, 8, 8, 3]), n.tensor([1, 16, 16, 4])
    part = [1, 8, 8, 4]
    c = n.conv(x, 3, 4, part, scale=(quant[0] * 1.5 if quant and rescaled else None))
    a = n.add(n.conv(x, 3, 4, part), n.conv(x, 3, 4, part), part)
    p = n.max_pool(z, part)
    shape = [1, 8, 8, 4]
    shape[axis] *= 3
    cat = n.concat([c, a, p], axis, shape)
    pooled = [shape[0], shape[1] // 2, shape[2] // 2, shape[3]]
    out = n.max_pool(cat, pooled)
    other = n.add(a, a, part)
    n.m.identify_inputs_and_outputs([x, z], [out, other])
    n.m.finish()
    return n.m


def _inputs(m: nnc.Model) -> list[np.ndarray]:
    arrays = []
    for i in m.inputs:
        op = m.operands[i]
        if op.type == T.TENSOR_FLOAT32:
            arrays.append(RNG.standard_normal(op.dims).astype(np.float32))
        else:
            arrays.append(RNG.integers(-128, 128, op.dims).astype(np.int8))
    return arrays


def _marked(m: nnc.Model) -> list[int]:
    """The positions ``nnc-concat-in-place`` marks on ``m``'s concatenation."""
    module, _ = driver.shaped_module(m, driver.static_input_infos(m))
    passes_pipeline.run_passes(module, ["nnc-concat-in-place"])
    found = re.findall(IN_PLACE_ATTR + r" = array<i64(?:: ([0-9, ]+))?>", str(module))
    return [int(k) for k in found[0].split(",")] if found else []


CASES = [
    # (quant, axis, rescaled, marked)
    (None, 1, False, [0, 1, 2]),
    (None, 0, False, [0, 1, 2]),
    (None, 3, False, []),
    ((0.05, -3), 1, False, [0, 1, 2]),
    ((0.05, -3), 2, True, []),
    ((0.05, -3), 1, True, [1, 2]),
    ((0.05, -3), 3, False, []),
]


@pytest.mark.parametrize(("quant", "axis", "rescaled", "marked"), CASES)
def test_in_place_is_bit_identical(quant: tuple[float, int] | None, axis: int, rescaled: bool, marked: list[int]) -> None:
    m = _model(quant, axis, rescaled)
    assert _marked(m) == marked
    inputs = _inputs(m)
    want = [y.tobytes() for y in execute(m, compile_without(m, "nnc-concat-in-place"), inputs, 1)]
    comp = compile_without(m)
    for threads in (1, 2):
        assert [y.tobytes() for y in execute(m, comp, inputs, threads)] == want


def test_written_inputs_are_not_copied() -> None:
    """With every input in place the concatenation lowers to nothing: each
    producer writes a ``memref.view`` of the output at its window's byte
    offset (0, 256 and 512 float32 elements)."""
    m = _model(None, 1)
    module, _ = driver.shaped_module(m, driver.static_input_infos(m))
    passes_pipeline.run_passes(module, ["nnc-concat-in-place", "convert-nnapi-to-linalg"])
    text = str(module)
    views = re.findall(r"memref\.view %\w+\[%\w+\]\[\] : memref<3072xi8> to memref<1x8x8x4xf32>", text)
    assert len(views) == 3
    offsets = {int(v) for v in re.findall(r"arith\.constant (\d+) : index", text)}
    assert {0, 1024, 2048} <= offsets
