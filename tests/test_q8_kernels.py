"""The int8 vector kernels (nnc.passes.kernels.q8) against a reference
written from the definitions: quantised CONV_2D, DEPTHWISE_CONV_2D and
FULLY_CONNECTED through nnc's public API, bit for bit.

The reference accumulates ``(x - input_zp) * (w - filter_zp)`` over the
window in Python integers (taps in the padding skipped) from the int32
bias, then requantises with the compile-time helpers of
``nnc.passes.lowering.quant`` (TFLite's ``MultiplyByQuantizedMultiplier``),
adds the output zero point and clamps to the activation's range.

Filters larger than the 128 bytes a model stores inline live in the
constant pool, which the lowering reads (``conv.filter_value``); the tests
check that the kernel path is taken (a model of each size).
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc import driver
from nnc.driver import lower, static_input_infos, target_description
from nnc.enums import FuseCode
from nnc.passes.choose_kernels import ChooseKernelsPass
from nnc.passes.kernels import q8 as q8_kernels
from nnc.passes.lowering import quant as q
from nnc.passes.lowering.conv_q8 import _conv_multiplier
from nnc.passes.pipeline import context
from nnc.passes.target import Int8Dot
from nnc.runtime.executable import Executable, generate_code
from nnc.runtime.jit import Target, emit_assembly, optimize
from targets import x86_target
from test_control_flow import _scalar
from test_kernels import check_tile_orders

SIGNED = T.TENSOR_QUANT8_ASYMM_SIGNED
UNSIGNED = T.TENSOR_QUANT8_ASYMM
PER_CHANNEL = T.TENSOR_QUANT8_SYMM_PER_CHANNEL


def _dtype(t: T):
    return np.uint8 if t == UNSIGNED else np.int8


def _rand(rng, t: T, shape) -> np.ndarray:
    info = np.iinfo(_dtype(t))
    lo = -127 if t == PER_CHANNEL else info.min
    return rng.integers(lo, info.max, shape, endpoint=True).astype(_dtype(t))


def _requant(acc: np.ndarray, mults, out_zp: int, lo: int, hi: int, channel_axis: int) -> np.ndarray:
    out = np.empty(acc.shape, dtype=np.int64)
    for idx, a in np.ndenumerate(acc):
        m, s = mults[idx[channel_axis] if len(mults) > 1 else 0]
        v = q.multiply_by_quantized_multiplier(int(a), m, s) + out_zp
        out[idx] = min(max(v, lo), hi)
    return out


class Case:
    """Quantisation parameters of one call, and the model builder's helpers."""

    def __init__(self, t: T, per_channel: bool, oc: int, act: int, rng, w_zp: int | None = None) -> None:
        self.t, self.per_channel, self.act = t, per_channel, act
        self.in_scale, self.out_scale = 0.05, 0.2
        self.in_zp = int(rng.integers(-20, 20)) + (128 if t == UNSIGNED else 0)
        self.out_zp = int(rng.integers(-10, 10)) + (128 if t == UNSIGNED else 0)
        self.w_zp = 0 if per_channel else int(rng.integers(-5, 5)) + (128 if t == UNSIGNED else 0)
        if w_zp is not None:
            self.w_zp = w_zp
        self.w_scales = [float(s) for s in rng.uniform(0.005, 0.03, oc)] if per_channel else [0.02]
        self.mults = [_conv_multiplier(self.in_scale, s, self.out_scale) for s in self.w_scales]
        self.lo, self.hi = q.calculate_activation_range(t, act, self.out_scale, self.out_zp)

    def filter(self, m: nnc.Model, value: np.ndarray, channel_dim: int) -> int:
        if self.per_channel:
            i = m.add_operand(PER_CHANNEL, list(value.shape))
            m.set_operand_symm_per_channel_quant_params(i, self.w_scales, channel_dim)
        else:
            i = m.add_operand(self.t, list(value.shape), self.w_scales[0], self.w_zp)
        m.set_operand_value(i, value)
        return i

    def bias(self, m: nnc.Model, value: np.ndarray) -> int:
        scale = 0.0 if self.per_channel else self.in_scale * self.w_scales[0]
        i = m.add_operand(T.TENSOR_INT32, list(value.shape), scale, 0)
        m.set_operand_value(i, value)
        return i

    def ints(self, m: nnc.Model, *values: int) -> list[int]:
        return [_scalar(m, T.INT32, v) for v in values]


#: the GEMM forms every test runs on this host: the target's (``None``, through
#: the public API), the quad layout in widening arithmetic (any host), and
#: vpdpbusd where the host has VNNI (else skipped, saying so)
HOST = target_description(Target.host())
FORMS = [None, "quad", pytest.param("vpdpbusd", marks=pytest.mark.skipif(
    HOST.int8_dot not in (Int8Dot.AVX512_VNNI, Int8Dot.AVX_VNNI),
    reason=f"the host has no VNNI ({HOST.summary()}): vpdpbusd is checked in assembly only"))]  # fmt: skip


def _forced(m: nnc.Model, x: np.ndarray, **forms: str) -> tuple[np.ndarray, str]:
    """``m`` compiled with the forms ``nnc-choose-kernels`` is told
    (``int8_form``, ``dw_form``, ``dw_strides``) and run on ``x``: (output, LLVM IR)."""
    infos = static_input_infos(m)
    module, weights = driver.shaped_module(m, infos)
    replace(ChooseKernelsPass.for_target(HOST), **forms).apply(context(), module)
    ir = driver.lower_shaped(module, weights, infos)
    out = m.operands[m.outputs[0]]
    y = np.zeros(out.dims, np.uint8 if out.type == UNSIGNED else np.int8)
    assert Executable(generate_code(ir, Target.host())).run([x], [y]) == 0
    return y, ir.llvm_ir


def _run(m: nnc.Model, x: np.ndarray, form: str | None = None) -> np.ndarray:
    """Compile and run ``m``, checking that its convolution took the q8 GEMM:
    the target's form through the public API, or ``form`` forced by
    ``nnc-choose-kernels`` (then the kernel's name shows it)."""
    infos = static_input_infos(m)
    if form is None:
        assert re.search(r"nnc_q8_(\w+_)?gemm", lower(m, infos).llvm_ir)
        return nnc.compile(m).run(x)[0]
    y, llvm_ir = _forced(m, x, int8_form=form)
    # quads need w - filter_zp in int8; else the pair form runs
    fits = all(int(v.min()) - o.zero_point >= -128 and int(v.max()) - o.zero_point <= 127
               for o in m.operands if o.value is not None and o.dims and len(o.dims) >= 2 for v in [o.value.astype(np.int64)])  # fmt: skip
    assert (f"nnc_q8_{form}_gemm" in llvm_ir) == fits
    return y


CONV_CASES = [
    # (t, per_channel (or the filter zero point), n, h, w, ic, oc, fh, fw, stride, dilation, pad (l, r, t, b), act)
    (SIGNED, False, 1, 9, 11, 16, 32, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), FuseCode.RELU6),
    (SIGNED, True, 1, 8, 7, 3, 19, 3, 3, (2, 2), (1, 1), (1, 1, 1, 1), FuseCode.NONE),
    (UNSIGNED, False, 2, 7, 9, 5, 24, 3, 2, (1, 2), (1, 1), (1, 0, 2, 1), FuseCode.RELU),
    (UNSIGNED, False, 1, 9, 9, 4, 8, 3, 3, (1, 1), (2, 2), (2, 2, 2, 2), FuseCode.RELU1),
    (SIGNED, True, 1, 6, 6, 40, 70, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), FuseCode.NONE),
    # uint8 weights centred on 128 (w - 128 fits int8: the quad forms read the
    # stored uint8 input directly, 1x1 over 8 channels, and a 3x3 with padding)
    (UNSIGNED, 128, 1, 5, 7, 8, 20, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), FuseCode.RELU6),
    (UNSIGNED, 128, 2, 6, 5, 4, 9, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), FuseCode.NONE),
]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("case", CONV_CASES)
def test_conv_2d(case, form) -> None:
    t, pc, n, h, w, ic, oc, fh, fw, stride, dil, pad, act = case
    rng = np.random.default_rng(1)
    c = Case(t, pc is True, oc, act, rng, w_zp=None if isinstance(pc, bool) else pc)
    pc = pc is True
    x = _rand(rng, t, (n, h, w, ic))
    wt = _rand(rng, PER_CHANNEL if pc else t, (oc, fh, fw, ic))
    b = rng.integers(-3000, 3000, oc).astype(np.int32)
    oh = (h + pad[2] + pad[3] - ((fh - 1) * dil[1] + 1)) // stride[1] + 1
    ow = (w + pad[0] + pad[1] - ((fw - 1) * dil[0] + 1)) // stride[0] + 1
    m = nnc.Model()
    xi = m.add_operand(t, [n, h, w, ic], c.in_scale, c.in_zp)
    scalars = c.ints(m, *pad, *stride, act)
    layout = m.add_operand(T.BOOL)
    m.set_operand_value(layout, False)
    dils = c.ints(m, *dil)
    out = m.add_operand(t, [n, oh, ow, oc], c.out_scale, c.out_zp)
    m.add_operation(Op.CONV_2D, [xi, c.filter(m, wt, 0), c.bias(m, b), *scalars, layout, *dils], [out])
    m.identify_inputs_and_outputs([xi], [out])
    m.finish()
    got = _run(m, x, form)
    xv, wv = x.astype(np.int64) - c.in_zp, wt.astype(np.int64) - c.w_zp
    xp = np.zeros((n, h + pad[2] + pad[3] + fh * dil[1], w + pad[0] + pad[1] + fw * dil[0], ic), np.int64)
    xp[:, pad[2] : pad[2] + h, pad[0] : pad[0] + w] = xv
    acc = np.zeros((n, oh, ow, oc), np.int64) + b
    for kh in range(fh):
        for kw in range(fw):
            r0, c0 = kh * dil[1], kw * dil[0]
            win = xp[:, r0 : r0 + oh * stride[1] : stride[1], c0 : c0 + ow * stride[0] : stride[0]]
            acc += np.einsum("nhwc,oc->nhwo", win[:, :oh, :ow], wv[:, kh, kw])
    want = _requant(acc, c.mults, c.out_zp, c.lo, c.hi, 3)
    assert np.array_equal(got.astype(np.int64), want)


DW_CASES = [
    # (t, per_channel, h, w, c, fh, fw, stride, pad (l, r, t, b), act); every
    # image has a run of at least 7 interior pixels (a block on any target)
    (SIGNED, True, 9, 10, 16, 3, 3, (1, 1), (1, 1, 1, 1), FuseCode.RELU6),
    (SIGNED, False, 9, 17, 27, 3, 3, (2, 2), (0, 1, 0, 1), FuseCode.NONE),
    (UNSIGNED, False, 7, 10, 40, 2, 3, (1, 2), (1, 1, 0, 1), FuseCode.RELU),
]


def _vnni(form: str, strides: str) -> object:
    """A depthwise form with VNNI instructions: run where the host has them."""
    return pytest.param(form, strides, marks=pytest.mark.skipif(
        HOST.int8_dot not in (Int8Dot.AVX512_VNNI, Int8Dot.AVX_VNNI),
        reason=f"the host has no VNNI ({HOST.summary()}): {form} is checked in assembly only"))  # fmt: skip


@pytest.mark.parametrize("form,strides", [(None, None), ("widen", "constant"), ("widen", "parameters"),
                                          ("pair", "constant"), ("pair", "parameters"),
                                          _vnni("vpdpwssd", "constant"), _vnni("vpdpbusd", "constant"),
                                          _vnni("vpdpbusd", "parameters")])  # fmt: skip
@pytest.mark.parametrize("case", DW_CASES)
def test_depthwise_conv_2d(case, form, strides) -> None:
    """Every depthwise form (the target's through the public API, each tap
    alone, tap pairs, VNNI's pairs and quads where the host has VNNI), with
    the interior kernel's strides as constants and as parameters, against
    the reference, bit for bit.  The quad form needs weights that fit int8:
    the uint8 case's filter (zero point near 128) takes VNNI's pairs."""
    t, pc, h, w, ch, fh, fw, stride, pad, act = case
    rng = np.random.default_rng(2)
    c = Case(t, pc, ch, act, rng)
    x = _rand(rng, t, (1, h, w, ch))
    wt = _rand(rng, PER_CHANNEL if pc else t, (1, fh, fw, ch))
    b = rng.integers(-3000, 3000, ch).astype(np.int32)
    oh = (h + pad[2] + pad[3] - fh) // stride[1] + 1
    ow = (w + pad[0] + pad[1] - fw) // stride[0] + 1
    m = nnc.Model()
    xi = m.add_operand(t, [1, h, w, ch], c.in_scale, c.in_zp)
    if pc:
        fi = m.add_operand(PER_CHANNEL, [1, fh, fw, ch])
        m.set_operand_symm_per_channel_quant_params(fi, c.w_scales, 3)
        m.set_operand_value(fi, wt)
    else:
        fi = c.filter(m, wt, 3)
    scalars = c.ints(m, *pad, *stride, 1, act)
    out = m.add_operand(t, [1, oh, ow, ch], c.out_scale, c.out_zp)
    m.add_operation(Op.DEPTHWISE_CONV_2D, [xi, fi, c.bias(m, b), *scalars], [out])
    m.identify_inputs_and_outputs([xi], [out])
    m.finish()
    if form is None:
        got = nnc.compile(m).run(x)[0]
    else:
        got, llvm_ir = _forced(m, x, dw_form=form, dw_strides=strides)
        assert ("_pair_" in llvm_ir) == (form == "pair")
        if form == "vpdpbusd":
            fits = pc or np.abs(wt.astype(np.int64) - c.w_zp).max() <= 127
            assert ("_vpdpbusd" in llvm_ir) == fits and ("_vpdpwssd" in llvm_ir) != fits
        # the interior kernel's name ends in the layer's geometry when
        # specialised to it; the quads also unroll the borders' windows
        # (the taps inside the input given at run time, ``_clip``)
        kernels = re.findall(r'define [^@]*@"(nnc_q8_dw_\d+p_\d+x\d+_\w+)"', llvm_ir)
        interior = [n for n in kernels if "_clip" not in n]
        assert interior and all(("_g" in n) == (strides == "constant") for n in interior), interior
        cols, rows = np.arange(ow) * stride[0] - pad[0], np.arange(oh) * stride[1] - pad[2]
        clipped = (cols < 0).any() or (cols + fw > w).any() or (rows < 0).any() or (rows + fh > h).any()
        quads = "_vpdpbusd_" in llvm_ir
        assert any("_vpdpbusd_clip" in n for n in kernels) == (quads and bool(clipped)), kernels
    xv, wv = x.astype(np.int64) - c.in_zp, wt.astype(np.int64)[0] - c.w_zp
    xp = np.zeros((h + pad[2] + pad[3] + fh, w + pad[0] + pad[1] + fw, ch), np.int64)
    xp[pad[2] : pad[2] + h, pad[0] : pad[0] + w] = xv[0]
    acc = np.zeros((oh, ow, ch), np.int64) + b
    for kh in range(fh):
        for kw in range(fw):
            acc += xp[kh : kh + oh * stride[1] : stride[1], kw : kw + ow * stride[0] : stride[0]][:oh, :ow] * wv[kh, kw]
    want = _requant(acc, c.mults, c.out_zp, c.lo, c.hi, 2)
    assert np.array_equal(got[0].astype(np.int64), want)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("t,batch,size,units,w_zp", [
    (SIGNED, 1, 37, 50, None), (UNSIGNED, 5, 64, 24, None), (SIGNED, 3, 8, 3, None),
    (SIGNED, 2, 36, 20, 0), (UNSIGNED, 3, 30, 9, 128),  # weights that fit the quads
])  # fmt: skip
def test_fully_connected(t, batch, size, units, w_zp, form) -> None:
    rng = np.random.default_rng(3)
    c = Case(t, False, units, FuseCode.RELU, rng, w_zp)
    x = _rand(rng, t, (batch, size))
    wt = _rand(rng, t, (units, size))
    b = rng.integers(-3000, 3000, units).astype(np.int32)
    m = nnc.Model()
    xi = m.add_operand(t, [batch, size], c.in_scale, c.in_zp)
    (act,) = c.ints(m, FuseCode.RELU)
    out = m.add_operand(t, [batch, units], c.out_scale, c.out_zp)
    m.add_operation(Op.FULLY_CONNECTED, [xi, c.filter(m, wt, 0), c.bias(m, b), act], [out])
    m.identify_inputs_and_outputs([xi], [out])
    m.finish()
    got = _run(m, x, form)
    acc = (x.astype(np.int64) - c.in_zp) @ (wt.astype(np.int64) - c.w_zp).T + b
    want = _requant(acc, c.mults, c.out_zp, c.lo, c.hi, 1)
    assert np.array_equal(got.astype(np.int64), want)


def _first_loop(body: str) -> re.Match[str] | None:
    """A function's first loop in its assembly: from a block label to the
    first jump back to it."""
    return re.search(r"\n(\.LBB\w+):.*?\n\tj\w+\t\1\n", body, re.S)


def _per_channel_conv_1x1(rng: np.random.Generator, hw: int, ic: int, oc: int, act: int = FuseCode.RELU6) -> nnc.Model:
    """A per-channel int8 1x1 CONV_2D (RELU6 unless ``act``) on an ``hw`` x
    ``hw`` image, ``ic`` -> ``oc`` channels."""
    c = Case(SIGNED, True, oc, act, rng)
    m = nnc.Model()
    xi = m.add_operand(SIGNED, [1, hw, hw, ic], c.in_scale, c.in_zp)
    wt = _rand(rng, PER_CHANNEL, (oc, 1, 1, ic))
    scalars = c.ints(m, 1, 1, 1, act)
    out = m.add_operand(SIGNED, [1, hw, hw, oc], c.out_scale, c.out_zp)
    m.add_operation(Op.CONV_2D, [xi, c.filter(m, wt, 0), c.bias(m, np.zeros(oc, np.int32)), *scalars], [out])
    m.identify_inputs_and_outputs([xi], [out])
    m.finish()
    return m


@pytest.mark.parametrize("cpu,instruction", [("x86-64", "pmaddwd"), ("haswell", "vpmaddwd"), ("icelake-server", "vpdpwssd")])
def test_pair_products_become_the_targets_dot_instruction(cpu: str, instruction: str) -> None:
    """The GEMM's pair products (IVec.pairs_dot) reach LLVM in a shape its X86
    backend selects as one multiply-add of int16 pairs: pmaddwd (SSE2 and
    AVX2), vpdpwssd with AVX512-VNNI; never a 32-bit multiply (pmulld)."""
    rng = np.random.default_rng(4)
    c = Case(SIGNED, False, 8, FuseCode.NONE, rng)
    m = nnc.Model()
    xi = m.add_operand(SIGNED, [1, 4, 4, 16], c.in_scale, c.in_zp)
    wt = _rand(rng, SIGNED, (8, 1, 1, 16))  # 128 bytes: stored inline, known to the lowering
    scalars = c.ints(m, 1, 1, 1, FuseCode.NONE)
    out = m.add_operand(SIGNED, [1, 4, 4, 8], c.out_scale, c.out_zp)
    m.add_operation(Op.CONV_2D, [xi, c.filter(m, wt, 0), c.bias(m, np.zeros(8, np.int32)), *scalars], [out])
    m.identify_inputs_and_outputs([xi], [out])
    m.finish()
    target = x86_target(cpu)
    asm = emit_assembly(optimize(lower(m, static_input_infos(m), target=target).llvm_ir, target), target)
    start = asm.index("nnc_q8_gemm")
    body = asm[start : asm.index(".Lfunc_end", start)]
    # the reduction loop: from its label to the first jump back
    loop = _first_loop(body)
    assert loop is not None, body
    assert instruction in loop.group(0)
    assert "pmulld" not in loop.group(0)


def conv_then_depthwise(rng: np.random.Generator, chans: int = 48) -> tuple[nnc.Model, np.ndarray]:
    """A per-channel int8 1x1 CONV_2D (16 -> ``chans`` channels) into a 3x3
    DEPTHWISE_CONV_2D on a 12 x 12 image, and an input for it: the q8 GEMM
    and the q8 depthwise kernel, both on the thread pool."""
    t = SIGNED
    c = Case(t, True, chans, FuseCode.RELU6, rng)
    m = nnc.Model()
    xi = m.add_operand(t, [1, 12, 12, 16], c.in_scale, c.in_zp)
    wt = _rand(rng, PER_CHANNEL, (chans, 1, 1, 16))
    scalars = c.ints(m, 1, 1, 1, FuseCode.RELU6)
    mid = m.add_operand(t, [1, 12, 12, chans], c.out_scale, c.out_zp)
    m.add_operation(Op.CONV_2D, [xi, c.filter(m, wt, 0), c.bias(m, np.zeros(chans, np.int32)), *scalars], [mid])
    dw = m.add_operand(PER_CHANNEL, [1, 3, 3, chans])
    m.set_operand_symm_per_channel_quant_params(dw, [0.01] * chans, 3)
    m.set_operand_value(dw, _rand(rng, PER_CHANNEL, (1, 3, 3, chans)))
    db = m.add_operand(T.TENSOR_INT32, [chans], 0.0, 0)
    m.set_operand_value(db, np.zeros(chans, np.int32))
    out = m.add_operand(t, [1, 12, 12, chans], 0.3, 1)
    m.add_operation(Op.DEPTHWISE_CONV_2D, [mid, dw, db, *c.ints(m, 1, 1, 1, 1, 0)], [out])
    m.identify_inputs_and_outputs([xi], [out])
    m.finish()
    return m, _rand(rng, t, (1, 12, 12, 16))


def test_results_do_not_depend_on_the_thread_count() -> None:
    """The GEMM's tiles (blocks of pixels, its panel being small) and the
    rows of the depthwise kernel run on the thread pool: each output
    element is computed by one iteration, so 1, 2 and 3 threads give the
    same bits."""
    m, x = conv_then_depthwise(np.random.default_rng(5))
    # both loops go to the pool (not vacuous): two outlined parallel bodies
    assert len(set(re.findall(r"nnc_par_\d+", lower(m, static_input_infos(m)).llvm_ir))) >= 2
    comp = nnc.Compilation(m)
    comp.finish()
    results = []
    for n in (1, 2, 3):
        y = np.zeros((1, 12, 12, 48), np.int8)
        ex = nnc.Execution(comp)
        ex.set_num_threads(n)
        ex.set_input(0, x)
        ex.set_output(0, y)
        ex.compute()
        results.append(y)
    assert all(np.array_equal(results[0], r) for r in results[1:])


def test_tile_order_does_not_change_the_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    """The int8 GEMM's tiles by blocks of pixels (a small panel,
    q8.PIXEL_MAJOR_PANEL_BYTES) and by channel blocks compute every output
    with the same kernel call: the same bits, at 2 threads.  160 output
    channels are several channel blocks on every target (a single block
    has one order only)."""
    m, x = conv_then_depthwise(np.random.default_rng(6), chans=160)
    check_tile_orders(monkeypatch, m, [x], q8_kernels, "PIXEL_MAJOR_PANEL_BYTES")


#: a vector register moved to or from the stack frame: a spill or a reload
_STACK_VECTOR = re.compile(r"%[xyz]mm\d+.*\((%rsp|%rbp)\)|\((%rsp|%rbp)\).*%[xyz]mm\d+")


@pytest.mark.parametrize("cpu,register", [("znver4", "zmm"), ("sapphirerapids", "zmm"), ("alderlake", "ymm")])
def test_quads_become_vpdpbusd_without_spills(cpu: str, register: str) -> None:
    """On VNNI targets (AVX512-VNNI: Zen 4, Sapphire Rapids; AVX-VNNI:
    Alder Lake) the int8 GEMM of a per-channel 1x1 CONV_2D (48 -> 40
    channels: full blocks and the 8-lane tail) is the quad form: every
    kernel's reduction loop is ``vpdpbusd`` on the target's widest vectors,
    reading the stored int8 input (no copy: the kernel flips the bytes) and
    no vector touches the stack inside the loop."""
    m = _per_channel_conv_1x1(np.random.default_rng(7), 6, 48, 40)
    target = x86_target(cpu)
    ir = lower(m, static_input_infos(m), target=target).llvm_ir
    assert "nnc_q8_gemm" not in ir and "nnc_q8_widen" not in ir
    asm = emit_assembly(optimize(ir, target), target)
    kernels = re.findall(r"\n(nnc_q8_vpdpbusd_gemm_\w+):(.*?)\.Lfunc_end", asm, re.S)
    assert kernels and all("_l0_f" in name for name, _ in kernels)
    widest = []
    for name, body in kernels:
        loop = _first_loop(body)
        assert loop is not None, name
        assert "vpdpbusd" in loop.group(0), (name, loop.group(0))
        assert not _STACK_VECTOR.search(loop.group(0)), (name, loop.group(0))
        widest.append(re.search(rf"vpdpbusd\t[^\n]*%{register}\d+", loop.group(0)) is not None)
    assert any(widest)  # the full blocks on the widest vectors, the tail narrower


@pytest.mark.parametrize("cpu,narrow", [("znver4", "vpmovsdb"), ("haswell", "vpackssdw")])
def test_a_clamp_to_the_whole_range_narrows_with_saturation(cpu: str, narrow: str) -> None:
    """With no activation the requantised output's clamp is the int8 range
    itself: the kernel (``_sat``) takes it as constants, and LLVM narrows
    with signed saturation (AVX-512's ``vpmovsdb``, else the packs) in
    place of a minimum, a maximum and a truncation.  A RELU6 whose range is
    narrower keeps its clamp from the table.  Both give the reference's
    bits (``test_conv_2d``)."""
    target = x86_target(cpu)
    for act, full in ((FuseCode.NONE, True), (FuseCode.RELU6, False)):
        m = _per_channel_conv_1x1(np.random.default_rng(7), 6, 48, 40, act)
        asm = emit_assembly(optimize(lower(m, static_input_infos(m), target=target).llvm_ir, target), target)
        kernels = re.findall(r"\n(nnc_q8_\w*gemm_\w+):(.*?)\.Lfunc_end", asm, re.S)
        assert kernels and all(name.endswith("_sat") == full for name, _ in kernels), [name for name, _ in kernels]
        assert all((narrow in body) == full for _, body in kernels), (act, cpu)


@pytest.mark.parametrize("strides", ["constant", "parameters"])
@pytest.mark.parametrize("cpu,instruction,registers", [("znver4", "vpdpbusd", 32), ("sapphirerapids", "vpdpbusd", 32),
                                                       ("alderlake", "{vex}\tvpdpbusd", 16), ("haswell", "vpmulld", 16)])  # fmt: skip
def test_depthwise_interior_takes_the_targets_instruction(cpu: str, instruction: str, registers: int, strides: str) -> None:
    """The interior int8 depthwise kernel (3x3, 32 channels on a 10 x 10
    image) multiplies tap quads with VNNI's ``vpdpbusd`` (four products
    and their sum in one) on VNNI targets, each tap with ``vpmulld``
    elsewhere, in its loop over channel vectors; on VNNI targets the
    borders' kernels (``_clip``) are quads too, and held to the same.  With 32 vector registers (AVX-512) no
    vector touches the stack in that loop; with 16 (AVX2, AVX-VNNI) LLVM
    keeps the requantisation's loop-invariant splats and some partial sums
    on the stack (the loop holds a whole window of taps and the
    requantisation: reloads, not a spill per tap).  The same with the
    layer's strides as constants and as parameters."""
    rng = np.random.default_rng(8)
    c = Case(SIGNED, True, 32, FuseCode.RELU6, rng)
    m = nnc.Model()
    xi = m.add_operand(SIGNED, [1, 10, 10, 32], c.in_scale, c.in_zp)
    fi = m.add_operand(PER_CHANNEL, [1, 3, 3, 32])
    m.set_operand_symm_per_channel_quant_params(fi, c.w_scales, 3)
    m.set_operand_value(fi, _rand(rng, PER_CHANNEL, (1, 3, 3, 32)))
    out = m.add_operand(SIGNED, [1, 10, 10, 32], c.out_scale, c.out_zp)
    m.add_operation(Op.DEPTHWISE_CONV_2D, [xi, fi, c.bias(m, np.zeros(32, np.int32)), *c.ints(m, 1, 1, 1, 1, FuseCode.RELU6)], [out])
    m.identify_inputs_and_outputs([xi], [out])
    m.finish()
    target = x86_target(cpu)
    infos = static_input_infos(m)
    module, weights = driver.shaped_module(m, infos)
    replace(ChooseKernelsPass.for_target(target_description(target)), dw_strides=strides).apply(context(), module)
    asm = emit_assembly(optimize(driver.lower_shaped(module, weights, infos, target).llvm_ir, target), target)
    kernels = re.findall(r"\n(nnc_q8_dw_\d+p_3x3_\w+):(.*?)\.Lfunc_end", asm, re.S)
    interior = [name for name, _ in kernels if "_clip" not in name]
    assert all(("_g" in name) == (strides == "constant") for name in interior), [name for name, _ in kernels]
    assert any("_clip" in name for name, _ in kernels) == (instruction != "vpmulld")  # the quads' borders
    assert kernels, asm[:2000]
    for name, body in kernels:
        assert ("_vpdpbusd_" in name) == (instruction != "vpmulld"), name
        loop = _first_loop(body)
        code = loop.group(0) if loop else body
        assert instruction in code, (name, code[:3000])
        if registers == 32:
            assert not _STACK_VECTOR.search(code), (name, [ln for ln in code.splitlines() if _STACK_VECTOR.search(ln)])


@pytest.mark.parametrize("form", ["quad", pytest.param("vpdpbusd", marks=FORMS[2].marks)])
@pytest.mark.parametrize("t,per_channel", [(SIGNED, True), (UNSIGNED, False)])
def test_transpose_conv_in_quads_gives_the_pairs_bits(t: T, per_channel: bool, form: str) -> None:
    """A quantised TRANSPOSE_CONV_2D (3x3, stride 2, SAME: four phases of
    1, 2 and 4 taps, over a zero-point padded input) in a quad form (its
    byte copy of the input, each phase's own bias) gives the pair form's
    bits; the uint8 filter (zero point near 128) fits int8 here too."""
    rng = np.random.default_rng(11)
    c = Case(t, per_channel, 24, FuseCode.RELU6, rng)
    m = nnc.Model()
    xi = m.add_operand(t, [1, 7, 9, 16], c.in_scale, c.in_zp)
    wt = _rand(rng, PER_CHANNEL if per_channel else t, (24, 3, 3, 16))
    if not per_channel:
        wt = np.clip(wt.astype(np.int32), c.w_zp - 100, c.w_zp + 100).astype(wt.dtype)
    shape = m.add_operand(T.TENSOR_INT32, [4])
    m.set_operand_value(shape, np.array([1, 14, 18, 24], np.int32))
    out = m.add_operand(t, [1, 14, 18, 24], c.out_scale, c.out_zp)
    scalars = c.ints(m, 1, 2, 2, FuseCode.RELU6)  # SAME, strides 2, RELU6
    layout = _scalar(m, T.BOOL, False)
    bias = c.bias(m, rng.integers(-3000, 3000, 24).astype(np.int32))
    m.add_operation(Op.TRANSPOSE_CONV_2D, [xi, c.filter(m, wt, 0), bias, shape, *scalars, layout], [out])
    m.identify_inputs_and_outputs([xi], [out])
    m.finish()
    x = _rand(rng, t, (1, 7, 9, 16))
    pairs, pair_ir = _forced(m, x, int8_form="pair")
    quads, quad_ir = _forced(m, x, int8_form=form)
    assert f"nnc_q8_{form}_gemm" in quad_ir and "_gemm" in pair_ir and f"nnc_q8_{form}_gemm" not in pair_ir
    assert np.array_equal(pairs, quads)
    assert np.array_equal(pairs, nnc.compile(m).run(x)[0])
