"""The vector kernels' tile policy, lowering state that is per compilation,
and weights laid out at compile time.

The policy (nnc.passes.kernels.tiles) is a pure function of the target
description (nnc.passes.target); for every target it must keep each kernel's
accumulators and operands within the vector register file: counted
(live_vectors) for AVX-512, AVX2, SSE4.2, x86-64 and NEON, and checked in the
assembly LLVM generates for real CPU names (no vector spill or reload).  The lowering
keeps what it has emitted in the LoweringContext, so compilations running
in threads at the same time produce the same IR as one alone.
"""

from __future__ import annotations

import io
import re
import threading
from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser
from xdsl.printer import Printer

import nnc
from nnc import FuseCode, driver
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc.passes.convert_nnapi_to_linalg import ConstantPool
from nnc.passes.kernels import f32 as f32_kernels
from nnc.passes.kernels.tiles import AVX512, TilePolicy, VectorTarget, live_vectors, tile_policy
from nnc.passes.pipeline import context, run_passes
from nnc.passes.target import TargetDescription
from nnc.runtime import jit
from test_tflite import execute

LIT_CONV = Path(__file__).resolve().parent.parent / "lit" / "lowering" / "conv.mlir"


def test_avx512_policy_is_the_tuned_blocking() -> None:
    """The values the float32 kernels were tuned with (the generated code
    must not change while the policy only moves)."""
    assert tile_policy(AVX512) == TilePolicy(
        lanes=16, accumulators=24, max_col_vectors=4, max_rows=12, dw_pixels=8, dot_max_rows=4, dot_units=4
    )


def test_avx512_policy_fits_the_register_file() -> None:
    """Accumulators + operands of every kernel fit in AVX-512's 32 registers
    (the GEMM's channel tail, 8 + 4 + 2 + 1 lanes, uses all 32)."""
    live = live_vectors(tile_policy(AVX512))
    assert live == {"gemm": 29, "gemm_tail": 32, "dot": 25, "depthwise": 10, "transpose": 18}
    assert max(live.values()) <= AVX512.registers


def test_policy_is_a_pure_function_of_the_target() -> None:
    avx2 = VectorTarget(vector_bits=256, registers=16, fma=True)
    assert tile_policy(avx2) == tile_policy(VectorTarget(256, 16, True))
    assert tile_policy(avx2).lanes == 8
    assert tile_policy(avx2).gemm_rows(2) == 6


#: one description per register-file shape the policy must fit
TARGETS = {
    "avx512": TargetDescription.parse("x86_64-unknown-linux-gnu", "", "+avx512f"),
    "avx2": TargetDescription.parse("x86_64-unknown-linux-gnu", "", "+avx2,+fma"),
    "sse4.2": TargetDescription.parse("x86_64-unknown-linux-gnu", "", "+sse4.2"),
    "x86-64": TargetDescription.parse("x86_64-unknown-linux-gnu", "", ""),
    "neon": TargetDescription.parse("aarch64-unknown-linux-gnu", "", "+neon"),
}


@pytest.mark.parametrize("name", TARGETS)
def test_policy_fits_every_register_file(name: str) -> None:
    """Every kernel, the GEMM's channel tail included (one vector of each
    halving width, each with its own broadcast), fits the register file."""
    target = TARGETS[name]
    policy = tile_policy(target)
    assert policy.lanes == target.lanes("f32")
    assert policy == tile_policy(target.vector)
    live = live_vectors(policy)
    assert max(live.values()) <= target.registers, live


def test_avx2_policy_is_xnnpack_shaped() -> None:
    """16 registers of 8 floats: GEMM blocks of 6 pixels x 2 vectors (12
    accumulators), the channel tail (4 + 2 + 1 lanes) 3 pixels, depthwise 6."""
    p = tile_policy(TARGETS["avx2"])
    assert (p.lanes, p.gemm_rows(p.max_col_vectors), p.max_col_vectors, p.gemm_rows(3), p.dw_pixels) == (8, 6, 2, 3, 6)


def _kernel_model(filter_is_input: bool = False) -> nnc.Model:
    """CONV_2D 3x3 (47 -> 79 channels), DEPTHWISE_CONV_2D 3x3 and a batch-1
    FULLY_CONNECTED on rows of 12 pixels: full GEMM blocks, channel tails of
    every width (79 = 4 x 16 + 15 = 9 x 8 + 7 = 19 x 4 + 3) and the dot
    product kernel.  ``filter_is_input``: the CONV_2D's filter is an input
    of the model, so its panels are transposed at run time (a constant
    filter is packed by the compiler and needs no transposition kernel)."""
    m = nnc.Model()
    rng = np.random.default_rng(0)

    def const(*shape: int) -> int:
        i = m.add_operand(T.TENSOR_FLOAT32, list(shape))
        m.set_operand_value(i, rng.standard_normal(shape).astype(np.float32))
        return i

    def scalar(v: int) -> int:
        i = m.add_operand(T.INT32)
        m.set_operand_value(i, np.int32(v))
        return i

    x = m.add_operand(T.TENSOR_FLOAT32, [1, 3, 12, 47])
    c = m.add_operand(T.TENSOR_FLOAT32, [1, 3, 12, 79])
    d = m.add_operand(T.TENSOR_FLOAT32, [1, 3, 12, 79])
    f = m.add_operand(T.TENSOR_FLOAT32, [1, 10])
    same, one, none = scalar(1), scalar(1), scalar(0)
    w = m.add_operand(T.TENSOR_FLOAT32, [79, 3, 3, 47]) if filter_is_input else const(79, 3, 3, 47)
    m.add_operation(Op.CONV_2D, [x, w, const(79), same, one, one, none], [c])
    m.add_operation(Op.DEPTHWISE_CONV_2D, [c, const(1, 3, 3, 79), const(79), same, one, one, one, none], [d])
    m.add_operation(Op.FULLY_CONNECTED, [d, const(10, 3 * 12 * 79), const(10), none], [f])
    m.identify_inputs_and_outputs([x, w] if filter_is_input else [x], [f])
    m.finish()
    return m


def _functions(asm: str) -> dict[str, list[str]]:
    """Assembly lines of each function (by its label)."""
    fns: dict[str, list[str]] = {}
    lines: list[str] = []
    for line in asm.splitlines():
        m = re.match(r"^([A-Za-z_][\w.$]*):", line)
        if m:
            lines = fns.setdefault(m.group(1), [])
        else:
            lines.append(line)
    return fns


#: a vector register moved to or from the stack frame: a spill or a reload
_STACK_VECTOR = re.compile(r"%[xyz]mm\d+.*\((%rsp|%rbp)\)|\((%rsp|%rbp)\).*%[xyz]mm\d+")


@pytest.mark.parametrize("cpu", ["skylake-avx512", "haswell", "x86-64-v2", "x86-64"])
def test_kernels_do_not_spill(cpu: str) -> None:
    """The kernels compiled for ``cpu`` (its features found by LLVM) keep
    every accumulator in a register: no vector register touches the stack
    anywhere in a GEMM, depthwise, dot-product or transposition kernel."""
    target = jit.Target.for_cpu(cpu)
    model = _kernel_model(filter_is_input=True)
    code = driver.lower(model, driver.static_input_infos(model), target=target)
    asm = jit.emit_assembly(jit.optimize(code.llvm_ir, target), target)
    kernels = {n: ls for n, ls in _functions(asm).items() if re.match(r"nnc_(gemm|dw|dot|transpose)_", n)}
    assert {n.split("_")[1] for n in kernels} == {"gemm", "dw", "dot", "transpose"}
    spills = {n: [ln.strip() for ln in ls if _STACK_VECTOR.search(ln)] for n, ls in kernels.items()}
    assert not {n: s for n, s in spills.items() if s}, spills


def _lower(text: str) -> str:
    ctx = context()
    module = Parser(ctx, text, "conv.mlir").parse_module()
    run_passes(module, ["convert-nnapi-to-linalg", "nnc-outline-kernels"], ctx)
    out = io.StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue()


def test_concurrent_compilations_emit_the_same_ir() -> None:
    """Kernel bodies and shared constants are remembered per compilation: two
    threads lowering the same module at once each get the IR of a lone run."""
    text = LIT_CONV.read_text()
    alone = _lower(text)
    results: list[str] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(2):
                results.append(_lower(text))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(results) == 4
    assert all(r == alone for r in results)


# -- weights laid out at compile time -------------------------------------------------------


def test_constant_pool_appends_aligned_once_and_compacts() -> None:
    """Appended arrays start on 64-byte boundaries and equal ones are stored
    once; compaction keeps only the used ranges, aligned, and says where
    each moved."""
    pool = ConstantPool(b"x" * 100)
    assert pool.append(b"abc") == 128
    assert pool.append(b"abc") == 128
    assert pool.append(b"de") == 192
    moved = pool.compact([(0, 10), (192, 2)])
    assert moved == {0: 0, 192: 64}
    assert pool.contents() == b"x" * 10 + b"\0" * 54 + b"de"


def _conv_model(filter_is_input: bool) -> tuple[nnc.Model, list[np.ndarray]]:
    """A 3x3 CONV_2D, 10 -> 37 channels (two whole vector blocks and a tail
    on any lane count), whose filter is a constant or an input."""
    rng = np.random.default_rng(5)
    wv = rng.normal(0, 0.5, (37, 3, 3, 10)).astype(np.float32)
    xv = rng.normal(0, 1, (1, 9, 9, 10)).astype(np.float32)
    m = nnc.Model()
    x = m.add_operand(T.TENSOR_FLOAT32, [1, 9, 9, 10])
    w = m.add_operand(T.TENSOR_FLOAT32, [37, 3, 3, 10])
    if not filter_is_input:
        m.set_operand_value(w, wv)
    b = m.add_operand(T.TENSOR_FLOAT32, [37])
    m.set_operand_value(b, rng.normal(0, 0.1, 37).astype(np.float32))
    scalars = []
    for v in (1, 1, 1, FuseCode.RELU):  # SAME padding, strides 1, RELU
        s = m.add_operand(T.INT32)
        m.set_operand_value(s, v)
        scalars.append(s)
    out = m.add_operand(T.TENSOR_FLOAT32, [1, 9, 9, 37])
    m.add_operation(Op.CONV_2D, [x, w, b, *scalars], [out])
    m.identify_inputs_and_outputs([x, w] if filter_is_input else [x], [out])
    m.finish()
    return m, [xv, wv] if filter_is_input else [xv]


def _run(m: nnc.Model, inputs: list[np.ndarray]) -> np.ndarray:
    comp = nnc.Compilation(m)
    comp.finish()
    ex = nnc.Execution(comp)
    for k, v in enumerate(inputs):
        ex.set_input(k, v)
    out = np.zeros((1, 9, 9, 37), np.float32)
    ex.set_output(0, out)
    ex.compute()
    return out


def test_packed_weights_equal_the_run_time_transposition() -> None:
    """A constant filter is packed by the compiler, one given as an input is
    transposed at run time into the same panels: the outputs are
    bit-identical.  The packed copy replaces the filter in the constant pool
    (only read packed), so the pool does not grow by the filter's size."""
    const_model, const_inputs = _conv_model(filter_is_input=False)
    input_model, input_inputs = _conv_model(filter_is_input=True)
    assert _run(const_model, const_inputs).tobytes() == _run(input_model, input_inputs).tobytes()
    infos = [const_model.operands[i].info(with_value=False) for i in const_model.inputs]
    module, weights = driver.shaped_module(const_model, infos)
    compiled = driver.lower_shaped(module, weights, infos)
    filter_bytes = 37 * 3 * 3 * 10 * 4
    assert len(weights) >= filter_bytes
    assert len(compiled.weights) < len(weights) + 64
    assert compiled.weights != weights  # laid out for the kernel, not as given


def test_row_major_tiles_visit_every_tile_once_by_rows() -> None:
    """row_major_tiles orders a GEMM's tiles run x block of pixels x channel
    block (every kind of block in turn), each tile once: a thread's
    contiguous share of them is whole blocks of pixels."""
    seen: list[tuple[int, int, int, int]] = []

    def call_of(kind: int) -> f32_kernels.TileCall:
        def call(e: object, rows: int, n0: object, a_off: object, o_off: object, run: object) -> None:
            assert isinstance(n0, int) and isinstance(o_off, int) and isinstance(run, int)
            seen.append((run, o_off, kind, n0))
        return call

    blocks = [(0, 96, 48, call_of(0)), (96, 104, 8, call_of(1))]  # two blocks of 48 channels, a tail of 8
    rblocks = f32_kernels.row_blocks(13, 6)  # 13 pixels: blocks of 5, 4, 4
    n, tile = f32_kernels.row_major_tiles(blocks, 2, lambda e, r: (r * 1000, r * 1000), rblocks, 10, 104)
    for t in range(n):
        tile(None, t)  # type: ignore[arg-type]  # every index a Python int: nothing is emitted
    expected = [(run, run * 1000 + m0 * 104, kind, n0)
                for run in range(2) for m0 in (0, 5, 9) for kind, n0 in ((0, 0), (0, 48), (1, 96))]  # fmt: skip
    assert seen == expected


def _fc_model(rows: int, inputs: int, outputs: int) -> tuple[nnc.Model, np.ndarray]:
    rng = np.random.default_rng(9)
    m = nnc.Model()
    x = m.add_operand(T.TENSOR_FLOAT32, [rows, inputs])
    w = m.add_operand(T.TENSOR_FLOAT32, [outputs, inputs])
    m.set_operand_value(w, rng.normal(0, 0.5, (outputs, inputs)).astype(np.float32))
    b = m.add_operand(T.TENSOR_FLOAT32, [outputs])
    m.set_operand_value(b, rng.normal(0, 0.1, outputs).astype(np.float32))
    act = m.add_operand(T.INT32)
    m.set_operand_value(act, FuseCode.NONE)
    out = m.add_operand(T.TENSOR_FLOAT32, [rows, outputs])
    m.add_operation(Op.FULLY_CONNECTED, [x, w, b, act], [out])
    m.identify_inputs_and_outputs([x], [out])
    m.finish()
    return m, rng.normal(0, 1, (rows, inputs)).astype(np.float32)


def test_gemm_tile_order_does_not_change_the_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    """A float32 GEMM with a small panel runs its tiles in row-major order
    (f32.ROW_MAJOR_PANEL_BYTES), a large one by channel blocks: each tile
    is the same kernel call, so the bits are the same, at 2 threads.  384
    output channels are several blocks of one kind on every target."""
    m, x = _fc_model(40, 32, 384)
    check_tile_orders(monkeypatch, m, [x], f32_kernels, "ROW_MAJOR_PANEL_BYTES")


def check_tile_orders(monkeypatch: pytest.MonkeyPatch, m: nnc.Model, inputs: list[np.ndarray], module: object, bound: str) -> None:
    """``m`` compiled with the tile-order bound ``module.bound`` as it is and
    as 0 gets two different loops and the same bits at 2 threads."""

    def run() -> tuple[str, list[np.ndarray]]:
        driver._CACHE.clear()  # the in-process cache would return the first build
        comp = nnc.Compilation(m)
        comp.finish()
        return driver.lower(m, driver.static_input_infos(m)).llvm_ir, execute(m, comp, inputs, 2)

    as_is = run()
    monkeypatch.setattr(module, bound, 0)
    zero = run()
    driver._CACHE.clear()
    assert as_is[0] != zero[0]  # two different loops (not vacuous)
    assert all(np.array_equal(a, b) for a, b in zip(as_is[1], zero[1]))
