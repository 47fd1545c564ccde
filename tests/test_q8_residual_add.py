"""A quantised ADD of a residual computed in the int8 GEMM's epilogue
(``nnc-fuse-epilogues`` on TENSOR_QUANT8_ASYMM and _SIGNED).

* Bit-identical to the same model compiled without the pass, at 1 and 2
  threads, and equal to a reference written from the definitions (the
  convolution's int32 sums requantised, then ``quant.add_element``, the
  compile-time form of Android's ``AddElementwise``): FULLY_CONNECTED,
  1x1 and 3x3 (padded, strided) CONV_2D producers, per-tensor and
  per-channel filters, with and without either operation's activation,
  the residual as the ADD's first or second input, random scales and zero
  points; the GEMM's kernels carry the ADD (``..._add_s`` / ``_add_u``).
* The fallback: an NCHW CONV_2D (not on the GEMM, the ADD applied after
  the generic reduction in place), and a FULLY_CONNECTED whose weights
  arrive at run time (not fused), still bit-identical.

One model per int8 type holding every case, compiled once per form.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc import driver
from nnc.enums import FuseCode
from nnc.passes import pipeline as passes_pipeline
from nnc.passes.fuse_epilogues import CONSUMER_ATTR, PRODUCER_ATTR
from nnc.passes.kernels import q8
from nnc.passes.lowering import quant as q
from test_q8_kernels import PER_CHANNEL, SIGNED, UNSIGNED, Case, _rand, _requant
from test_row_kernels import compile_without
from test_tflite import execute


@dataclass(frozen=True)
class Producer:
    """One producer and its ADD: ``kind`` "fc" (``size`` inputs), else a
    CONV_2D of a ``fh`` x ``fh`` filter (stride ``stride``, SAME padding)
    on an ``hw`` x ``hw`` image of ``size`` channels."""

    kind: str
    size: int
    units: int
    per_channel: bool
    conv_act: int
    add_act: int
    residual_first: bool
    fh: int = 1
    hw: int = 1
    stride: int = 1
    nchw: bool = False


PRODUCERS = [
    Producer("fc", 37, 20, False, FuseCode.NONE, FuseCode.RELU, False),
    Producer("fc", 64, 9, False, FuseCode.RELU6, FuseCode.NONE, True),
    Producer("conv", 24, 16, True, FuseCode.NONE, FuseCode.NONE, True, hw=8),
    Producer("conv", 8, 13, False, FuseCode.RELU, FuseCode.RELU6, False, hw=7),
    Producer("conv", 5, 24, True, FuseCode.RELU6, FuseCode.RELU1, False, fh=3, hw=9),
    Producer("conv", 6, 11, False, FuseCode.NONE, FuseCode.NONE, True, fh=3, hw=10, stride=2),
]
#: an NCHW CONV_2D: fused, but lowered by the generic reduction (no GEMM),
#: the ADD applied after it
FALLBACK = Producer("conv", 6, 10, False, FuseCode.RELU, FuseCode.NONE, False, fh=3, hw=6, nchw=True)


@dataclass
class Built:
    """A model's inputs (values) and the reference of each output."""

    model: nnc.Model
    inputs: list[np.ndarray]
    refs: list[np.ndarray]


def _conv_ref(x: np.ndarray, w: np.ndarray, b: np.ndarray, p: Producer) -> np.ndarray:
    """NHWC int64 sums of ``x`` (zero point subtracted) and ``w`` with SAME padding."""
    n, h, _, c = x.shape
    out = -(-h // p.stride)
    pad = max((out - 1) * p.stride + p.fh - h, 0)
    xp = np.zeros((n, h + pad, h + pad, c), np.int64)
    xp[:, pad // 2 : pad // 2 + h, pad // 2 : pad // 2 + h] = x
    acc = np.zeros((n, out, out, w.shape[0]), np.int64) + b
    for kh in range(p.fh):
        for kw in range(p.fh):
            win = xp[:, kh : kh + (out - 1) * p.stride + 1 : p.stride, kw : kw + (out - 1) * p.stride + 1 : p.stride]
            acc += np.einsum("nhwc,oc->nhwo", win, w[:, kh, kw])
    return acc


def _add_ref(a: np.ndarray, r: np.ndarray, sa: tuple[float, int], sr: tuple[float, int], so: tuple[float, int],
             t: T, act: int, residual_first: bool) -> np.ndarray:  # fmt: skip
    """The quantised ADD of the values ``a`` (the producer's) and ``r`` element by element."""
    first, second = (r, a) if residual_first else (a, r)
    s1, s2 = (sr, sa) if residual_first else (sa, sr)
    p = q.add_params(t, s1, s2, so, act)
    out = [q.py_int(q.add_element(q.PY, p, int(u), int(v))) for u, v in zip(first.ravel(), second.ravel())]
    return np.array(out, np.int64).reshape(a.shape)


def _add_pair(m: nnc.Model, t: T, p: Producer, rng: np.random.Generator) -> tuple[list[int], list[np.ndarray], int, np.ndarray]:
    """``p`` and its ADD in ``m``: (its inputs, their values, its output, the reference)."""
    c = Case(t, p.per_channel, p.units, p.conv_act, rng)
    base = 128 if t == UNSIGNED else 0
    fc = p.kind == "fc"
    shape = [3, p.size] if fc else [1, p.hw, p.hw, p.size]
    x = _rand(rng, t, shape)
    wt = _rand(rng, PER_CHANNEL if p.per_channel else t, [p.units, p.size] if fc else [p.units, p.fh, p.fh, p.size])
    b = rng.integers(-3000, 3000, p.units).astype(np.int32)
    xi = m.add_operand(t, shape, c.in_scale, c.in_zp)
    if fc:
        out_shape = [3, p.units]
        acc = (x.astype(np.int64) - c.in_zp) @ (wt.astype(np.int64) - c.w_zp).T + b
        args = [xi, c.filter(m, wt, 0), c.bias(m, b), *c.ints(m, p.conv_act)]
    else:
        o = -(-p.hw // p.stride)
        out_shape = [1, o, o, p.units]
        acc = _conv_ref(x.astype(np.int64) - c.in_zp, wt.astype(np.int64) - c.w_zp, b, p)
        args = [xi, c.filter(m, wt, 0), c.bias(m, b), *c.ints(m, 1, p.stride, p.stride, p.conv_act)]
    y = _requant(acc, c.mults, c.out_zp, c.lo, c.hi, len(out_shape) - 1)
    r_q = (float(rng.uniform(0.05, 0.4)), int(rng.integers(-20, 20)) + base)
    o_q = (float(rng.uniform(0.1, 0.5)), int(rng.integers(-10, 10)) + base)
    ri = m.add_operand(t, out_shape, *r_q)
    r = _rand(rng, t, out_shape)
    yi = m.add_operand(t, out_shape, c.out_scale, c.out_zp)
    m.add_operation(Op.CONV_2D if not fc else Op.FULLY_CONNECTED, args, [yi])
    zi = m.add_operand(t, out_shape, *o_q)
    add_in = [ri, yi] if p.residual_first else [yi, ri]
    m.add_operation(Op.ADD, [*add_in, *c.ints(m, p.add_act)], [zi])
    ref = _add_ref(y, r.astype(np.int64), (c.out_scale, c.out_zp), r_q, o_q, t, p.add_act, p.residual_first)
    return [xi, ri], [x, r], zi, ref


def _nchw_pair(m: nnc.Model, t: T, p: Producer, rng: np.random.Generator) -> tuple[list[int], list[np.ndarray], int, None]:
    """``p`` as an NCHW CONV_2D (explicit padding 1, a layout flag) and its ADD, no reference."""
    c = Case(t, False, p.units, p.conv_act, rng)
    base = 128 if t == UNSIGNED else 0
    x = _rand(rng, t, (1, p.size, p.hw, p.hw))
    wt = _rand(rng, t, (p.units, p.fh, p.fh, p.size))
    xi = m.add_operand(t, [1, p.size, p.hw, p.hw], c.in_scale, c.in_zp)
    layout = m.add_operand(T.BOOL)
    m.set_operand_value(layout, True)
    shape = [1, p.units, p.hw, p.hw]
    yi = m.add_operand(t, shape, c.out_scale, c.out_zp)
    b = rng.integers(-3000, 3000, p.units).astype(np.int32)
    m.add_operation(Op.CONV_2D, [xi, c.filter(m, wt, 0), c.bias(m, b), *c.ints(m, 1, 1, 1, 1, 1, 1, p.conv_act), layout], [yi])
    ri = m.add_operand(t, shape, 0.2, base + 3)
    zi = m.add_operand(t, shape, 0.3, base - 2)
    m.add_operation(Op.ADD, [yi, ri, *c.ints(m, p.add_act)], [zi])
    return [xi, ri], [x, _rand(rng, t, shape)], zi, None


def _model(t: T, producers: list[Producer]) -> Built:
    rng = np.random.default_rng(5 if t == SIGNED else 6)
    m = nnc.Model()
    ins: list[int] = []
    outs: list[int] = []
    values: list[np.ndarray] = []
    refs: list[np.ndarray] = []
    for p in producers:
        i, v, o, ref = (_nchw_pair if p.nchw else _add_pair)(m, t, p, rng)
        ins += i
        values += v
        outs.append(o)
        refs += [] if ref is None else [ref]
    m.identify_inputs_and_outputs(ins, outs)
    m.finish()
    return Built(m, values, refs)


#: the pass with its quantised rule (off by default)
FUSE_ALL = "nnc-fuse-epilogues{fuse-quant-adds=true}"


@contextmanager
def fusing_small_adds() -> Iterator[None]:
    """The default pipeline with :data:`FUSE_ALL` for its nnc-fuse-epilogues."""
    saved = passes_pipeline.DEFAULT_PIPELINE
    passes_pipeline.DEFAULT_PIPELINE = tuple(FUSE_ALL if p == "nnc-fuse-epilogues" else p for p in saved)
    try:
        yield
    finally:
        passes_pipeline.DEFAULT_PIPELINE = saved


@pytest.fixture(scope="module", params=[SIGNED, UNSIGNED], ids=["int8", "uint8"])
def built(request) -> tuple[Built, nnc.Compilation, nnc.Compilation]:
    b = _model(request.param, [*PRODUCERS, FALLBACK])
    with fusing_small_adds():
        fused = compile_without(b.model)
    return b, fused, compile_without(b.model, "nnc-fuse-epilogues")


def test_fused_add_bit_identical_to_unfused(built) -> None:
    b, fused, unfused = built
    want = [y.tobytes() for y in execute(b.model, unfused, b.inputs, 1)]
    for threads in (1, 2):
        assert [y.tobytes() for y in execute(b.model, fused, b.inputs, threads)] == want


def test_fused_add_matches_the_reference(built) -> None:
    b, fused, _ = built
    got = execute(b.model, fused, b.inputs, 1)
    for k, ref in enumerate(b.refs):
        assert np.array_equal(got[k].astype(np.int64), ref), PRODUCERS[k]


def test_every_pair_is_marked_and_the_gemm_computes_the_add(built) -> None:
    """Each producer and its ADD carry the marks; the GEMM's kernels carry
    the ADD (so the comparisons above compare fused code), the NCHW one
    runs off the GEMM."""
    b, _, _ = built
    module, _ = driver.shaped_module(b.model, driver.static_input_infos(b.model))
    passes_pipeline.run_passes(module, [FUSE_ALL])
    text = str(module)
    n = len(PRODUCERS) + 1
    assert text.count(f"{{{PRODUCER_ATTR}}}") == n and text.count(f"{{{CONSUMER_ATTR}}}") == n
    with fusing_small_adds():
        ir = driver.lower(b.model, driver.static_input_infos(b.model)).llvm_ir
    kernels = set(re.findall(r"define [^@]*@\"?(nnc_q8_\w*gemm\w*)", ir))
    signed = b.model.operands[b.model.inputs[0]].type == SIGNED
    assert any(re.search(f"_add_{'s' if signed else 'u'}(_p1?2?)?$", k) for k in kernels)


def test_quantised_pairs_stay_apart_by_default(built) -> None:
    """Without ``fuse-quant-adds`` the pass marks no quantised pair: the
    standalone vector ADD runs them."""
    b, _, _ = built
    module, _ = driver.shaped_module(b.model, driver.static_input_infos(b.model))
    passes_pipeline.run_passes(module, ["nnc-fuse-epilogues"])
    assert PRODUCER_ATTR not in str(module)


def _input_cases() -> list[tuple[int, int]]:
    """(multiplier, shift) of ADD inputs: the extremes of the multiplier and
    of the right shift (0 for the input of the larger scale), and those
    of random scale ratios."""
    rng = np.random.default_rng(9)
    cases = [(1 << 30, 0), ((1 << 31) - 1, -1), (1 << 30, -31), ((1 << 31) - 1, -12), (1 << 30, -1)]
    ratios = np.concatenate([rng.uniform(1e-4, 0.5, 40), [0.5, 0.25, 1 / 3, 1e-6]])
    return cases + [q.quantize_multiplier_smaller_than_one_exp(float(r)) for r in ratios]


@pytest.mark.parametrize("multiplier,shift", _input_cases())
def test_input_rescale_equals_the_reference_for_every_input(multiplier: int, shift: int) -> None:
    """:func:`q8.input_lanes`'s operations (and its plain form's, for the
    input of the larger scale), run on Python integers (``q.PY`` has the
    same methods as the vector builder), give gemmlowp's
    ``MultiplyByQuantizedMultiplierSmallerThanOneExp((x + offset) << 20)``
    for every 8-bit value and offset: the end-to-end tests cannot show a
    rounding of these 2^-20-fine sums (it rarely reaches the output)."""
    p = replace(q.add_params(SIGNED, (0.1, 0), (0.1, 0), (0.1, 0), 0), input1_multiplier=multiplier, input1_shift=shift)
    row = [int(v) for v in q8.add_table(p)[:8]]
    for offset in (-255, -128, 0, 127, 128, 255):
        lanes = q8.InputLanes(offset, *row[1:], 31)
        for a in range(-128, 256):
            if not -255 <= a + offset <= 255:
                continue
            want = q.mbqm_smaller_than_one_exp(q.PY, q.PY.shl(a + offset, 20), multiplier, shift)
            assert q8.input_lanes(q.PY, a, lanes) == want, (a, offset)
            if q8.AddForm.of(p, False).plain[0]:
                assert q8.input_lanes(q.PY, a, lanes, plain=True) == want, (a, offset)


def test_weights_given_at_run_time_are_not_fused() -> None:
    """A FULLY_CONNECTED whose weights are an input (not the GEMM's
    constant panel) keeps its ADD apart."""
    m = nnc.Model()
    x = m.add_operand(SIGNED, [2, 8], 0.1, 1)
    w = m.add_operand(SIGNED, [4, 8], 0.05, 0)
    bias = m.add_operand(T.TENSOR_INT32, [4], 0.005, 0)
    m.set_operand_value(bias, np.arange(4, dtype=np.int32))
    act = m.add_operand(T.INT32)
    m.set_operand_value(act, np.int32(0))
    y = m.add_operand(SIGNED, [2, 4], 0.2, 0)
    m.add_operation(Op.FULLY_CONNECTED, [x, w, bias, act], [y])
    r = m.add_operand(SIGNED, [2, 4], 0.2, 0)
    z = m.add_operand(SIGNED, [2, 4], 0.3, 0)
    m.add_operation(Op.ADD, [y, r, act], [z])
    m.identify_inputs_and_outputs([x, w, r], [z])
    m.finish()
    module, _ = driver.shaped_module(m, driver.static_input_infos(m))
    passes_pipeline.run_passes(module, ["nnc-fuse-epilogues"])
    assert PRODUCER_ATTR not in str(module)
