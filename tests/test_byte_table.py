"""Element-wise operations from one int8 tensor to another as 256-entry
tables (passes/lowering/byte_table.py).

* Every quantised unary operation the table path takes gives, on a tensor
  holding every byte value, the same bytes as its scalar body (the same
  model compiled with the table path off), for several quantisations of
  QUANT8_ASYMM and QUANT8_ASYMM_SIGNED.
* The evaluator's integer semantics against hand-computed values: wrapping,
  division toward zero, shifts, unsigned compares and extensions; what it
  refuses (a float, a load, a division by zero).
* The lowering takes the table path (a lookup, no body arithmetic) from
  TABLE_MIN_ELEMENTS elements, and a model's HARD_SWISH layers share one
  lookup function; a clamp between the same quantisations stays code.
* The byte shuffle kernel (passes/kernels/lut.py): its table rows, emulated
  with pshufb's semantics on every byte, and its code for each x86 target
  (SSSE3, AVX2, AVX512BW, none), run against the body where the host can.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import f32, i8, i32
from xdsl.ir import SSAValue

import nnc
from fuzz.edges import compiling_for
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc import driver
from nnc.passes.kernels import lut
from nnc.passes.lowering import base
from nnc.passes.lowering.base import Emitter
from nnc.passes.lowering.byte_table import BYTES, NotTabulable, byte_table
from targets import X86_CPUS, description, runnable_cpus, runnable_target, x86_target

#: every stored byte, repeated past the table threshold
ALL_BYTES = np.tile(np.arange(256, dtype=np.uint8), 4)
#: every byte over the shuffle kernel's pieces for the thread pool
#: (vector.parallel_pieces), the last one ending in single bytes
CHUNKED = np.resize(np.arange(256, dtype=np.uint8), 32768 + 3 * 64 + 37)
#: (input scale, input zero point, output scale, output zero point) of QUANT8_ASYMM
QUANTS = [(0.05, 128, 0.03, 120), (0.2, 30, 0.1, 200), (0.011, 250, 0.02, 3)]
UNARY = [Op.HARD_SWISH, Op.RELU, Op.RELU1, Op.RELU6, Op.LOGISTIC, Op.TANH]


def _model(op: Op, t: T, q: tuple[float, int, float, int], size: int = ALL_BYTES.size) -> nnc.Model:
    s_in, zp_in, s_out, zp_out = q
    shift = 0 if t == T.TENSOR_QUANT8_ASYMM else 128
    if op == Op.LOGISTIC:  # fixed output quantisation
        s_out, zp_out = 1.0 / 256, 0
    elif op == Op.TANH:
        s_out, zp_out = 1.0 / 128, 128
    m = nnc.Model()
    x = m.add_operand(t, [size], scale=s_in, zero_point=zp_in - shift)
    y = m.add_operand(t, [size], scale=s_out, zero_point=zp_out - shift)
    m.add_operation(op, [x], [y])
    m.identify_inputs_and_outputs([x], [y])
    m.finish()
    return m


def _run(m: nnc.Model, t: T, min_elements: int, data: np.ndarray = ALL_BYTES, target=None) -> np.ndarray:
    saved = base.TABLE_MIN_ELEMENTS
    base.TABLE_MIN_ELEMENTS = min_elements
    try:
        driver._CACHE.clear()
        with compiling_for(target):
            comp = nnc.Compilation(m)
            comp.finish()
    finally:
        base.TABLE_MIN_ELEMENTS = saved
        driver._CACHE.clear()
    dtype = np.uint8 if t == T.TENSOR_QUANT8_ASYMM else np.int8
    out = np.empty(data.size, dtype)
    ex = nnc.Execution(comp)
    ex.set_input(0, data.view(dtype))
    ex.set_output(0, out)
    ex.compute()
    return out


@pytest.mark.parametrize("t", [T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED], ids=lambda t: t.name)
@pytest.mark.parametrize("op", UNARY, ids=lambda op: op.name)
def test_table_is_the_body_on_every_byte(op: Op, t: T) -> None:
    m = _model(op, t, QUANTS[0])
    with_table = driver.lower_to_llvm(m, driver.static_input_infos(m)).llvm_ir
    assert with_table != _lowered_without_table(m) and "sdiv" not in with_table  # the table path is taken
    for q in QUANTS:
        m = _model(op, t, q)
        table, body = _run(m, t, base.TABLE_MIN_ELEMENTS), _run(m, t, 10**12)
        assert table.tobytes() == body.tobytes(), (op.name, t.name, q)


def _lowered_without_table(m: nnc.Model) -> str:
    saved = base.TABLE_MIN_ELEMENTS
    base.TABLE_MIN_ELEMENTS = 10**12
    try:
        return driver.lower_to_llvm(m, driver.static_input_infos(m)).llvm_ir
    finally:
        base.TABLE_MIN_ELEMENTS = saved


def _table_of(build) -> np.ndarray:
    """byte_table of a body ``build(e, x32)`` -> i32, truncated to i8."""

    def body(e: Emitter, a: list) -> SSAValue:
        x = e.op(arith.ExtSIOp(a[0], i32))
        return e.op(arith.TruncIOp(build(e, x), i8))

    return byte_table(body, Emitter).astype(np.int64)


def _wrap8(v: np.ndarray) -> np.ndarray:
    return ((v + 128) & 255) - 128


def test_evaluator_integer_semantics() -> None:
    x = BYTES
    c = lambda e, v: e.op(arith.ConstantOp.from_int_and_width(v, 32))
    # division truncates toward zero, remainder has the dividend's sign
    got = _table_of(lambda e, v: e.op(arith.DivSIOp(e.op(arith.MuliOp(v, c(e, 3))), c(e, -7))))
    assert (got == _wrap8(np.trunc(x * 3 / -7).astype(np.int64))).all()
    got = _table_of(lambda e, v: e.op(arith.RemSIOp(v, c(e, 5))))
    assert (got == np.fmod(x, 5)).all()
    # a logical shift sees the 32-bit two's complement
    got = _table_of(lambda e, v: e.op(arith.ShRUIOp(v, c(e, 28))))
    assert (got == ((x & 0xFFFFFFFF) >> 28)).all()
    got = _table_of(lambda e, v: e.op(arith.ShRSIOp(e.op(arith.ShLIOp(v, c(e, 26))), c(e, 29))))
    assert (got == _wrap8(((x << 26) + 2**31) % 2**32 - 2**31 >> 29)).all()
    # an unsigned compare and a select
    got = _table_of(lambda e, v: e.op(arith.SelectOp(e.op(arith.CmpiOp(v, c(e, 10), "ult")), c(e, 1), c(e, 2))))
    assert (got == np.where((x >= 0) & (x < 10), 1, 2)).all()
    # zero extension of the stored byte
    got = byte_table(lambda e, a: e.op(arith.TruncIOp(e.op(arith.ShRSIOp(e.op(arith.ExtUIOp(a[0], i32)), e.op(arith.ConstantOp.from_int_and_width(1, 32)))), i8)), Emitter)
    assert (got.astype(np.int64) == _wrap8(np.arange(256) >> 1)).all()


def test_evaluator_refuses_what_it_cannot_compute() -> None:
    with pytest.raises(NotTabulable):  # a float
        byte_table(lambda e, a: e.op(arith.FPToSIOp(e.op(arith.SIToFPOp(a[0], f32)), i8)), Emitter)
    with pytest.raises(NotTabulable):  # a division by zero for one input
        _table_of(lambda e, v: e.op(arith.DivSIOp(e.op(arith.ConstantOp.from_int_and_width(1, 32)), v)))
    with pytest.raises(NotTabulable):  # a shift by the width
        _table_of(lambda e, v: e.op(arith.ShLIOp(v, e.op(arith.ConstantOp.from_int_and_width(32, 32)))))


def test_hard_swish_layers_share_one_lookup() -> None:
    m = nnc.Model()
    t = T.TENSOR_QUANT8_ASYMM_SIGNED
    x = m.add_operand(t, [64, 1024], scale=0.05, zero_point=3)
    cur = x
    for k in range(3):
        y = m.add_operand(t, [64, 1024], scale=0.04 + 0.01 * k, zero_point=k - 5)
        m.add_operation(Op.HARD_SWISH, [cur], [y])
        cur = y
    m.identify_inputs_and_outputs([x], [cur])
    m.finish()
    ir = driver.lower_to_llvm(m, driver.static_input_infos(m)).llvm_ir
    bodies = [chunk for chunk in ir.split("\ndefine ")[1:] if chunk.startswith('void @"nnc_par_')]
    assert len(bodies) == 1 and " sdiv " not in ir
    assert ir.count('call ccc void @"nnc_parallel_for"(ptr @"nnc_par_0"') == 3


def test_shuffle_tables_select_every_byte() -> None:
    """The byte shuffle kernel's algorithm (passes/kernels/lut.py), emulated
    with pshufb's semantics on every byte: the XOR of the shuffled rows is
    the table's entry."""
    rng = np.random.default_rng(3)
    for _ in range(10):
        table = rng.integers(0, 256, 256).astype(np.uint8)
        rows = lut.shuffle_tables(table)
        idx = BYTES.copy()
        y = np.where(idx < 0, 0, rows[0][idx & 15])
        for k in range(1, 16):
            idx = (idx - 16 + 128) % 256 - 128 if k <= 8 else np.maximum(idx - 16, -128)
            y ^= np.where(idx < 0, 0, rows[k][idx & 15])
        assert (y == table).all()


@pytest.mark.parametrize("cpu", X86_CPUS)
def test_lookup_for_each_shuffle_width_is_the_body(cpu: str) -> None:
    """The table path with each x86 target's byte shuffle (none on
    baseline x86-64: a load per byte; SSSE3's 16 bytes; AVX2's 32;
    AVX512BW's 64), compiled for each and run where the host can, on a
    size with whole chunks, vectors and single bytes left over."""
    t = T.TENSOR_QUANT8_ASYMM_SIGNED
    m = _model(Op.HARD_SWISH, t, QUANTS[1], size=CHUNKED.size)
    bits = description(x86_target(cpu)).byte_shuffle_bits
    ir = driver.lower_to_llvm(m, driver.static_input_infos(m), x86_target(cpu)).llvm_ir
    assert ("pshufb" in ir) == (bits > 0) and (not bits or f"nnc_lut_pshufb_{bits}" in ir)
    if cpu in runnable_cpus():
        want = _run(m, t, 10**12, CHUNKED)
        assert _run(m, t, base.TABLE_MIN_ELEMENTS, CHUNKED, runnable_target(cpu)).tobytes() == want.tobytes()


def test_cheap_bodies_stay_code() -> None:
    """RELU6 between the same quantisations is a clamp: LLVM vectorises it,
    which beats a lookup per element."""
    m = _model(Op.RELU6, T.TENSOR_QUANT8_ASYMM, (0.05, 128, 0.05, 128))
    assert driver.lower_to_llvm(m, driver.static_input_infos(m)).llvm_ir == _lowered_without_table(m)
