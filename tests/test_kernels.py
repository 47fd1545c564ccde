"""The vector kernels' tile policy, and lowering state that is per compilation.

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

from xdsl.parser import Parser
from xdsl.printer import Printer

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
