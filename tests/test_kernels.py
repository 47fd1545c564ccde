"""The vector kernels' tile policy, lowering state that is per compilation,
and weights laid out at compile time.

The policy (nnc.passes.kernels.tiles) is a pure function of the target; for
the one target compiled for today (AVX-512) it must keep every kernel's
accumulators and operands within the 32 vector registers.  The lowering
keeps what it has emitted in the LoweringContext, so compilations running
in threads at the same time produce the same IR as one alone.
"""

from __future__ import annotations

import io
import threading
from pathlib import Path

import numpy as np
from xdsl.parser import Parser
from xdsl.printer import Printer

import nnc
from nnc import FuseCode
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc import driver
from nnc.passes.convert_nnapi_to_linalg import ConstantPool
from nnc.passes.kernels.tiles import AVX512, TilePolicy, VectorTarget, live_vectors, tile_policy
from nnc.passes.pipeline import context, run_passes

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
    assert live == {"gemm": 29, "gemm_tail": 32, "dot": 19, "depthwise": 10, "transpose": 18}
    assert max(live.values()) <= AVX512.registers


def test_policy_is_a_pure_function_of_the_target() -> None:
    avx2 = VectorTarget(vector_bits=256, registers=16, fma=True)
    assert tile_policy(avx2) == tile_policy(VectorTarget(256, 16, True))
    assert tile_policy(avx2).lanes == 8
    assert tile_policy(avx2).gemm_rows(2) == 6


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
