"""The host's float32 FMA peak per core, measured with a tiny llvmlite loop.

Run from the repository root: ``python benchmarks/fma_peak.py``.

A loop of fused multiply-adds on ``ACCUMULATORS`` independent vector
accumulators (``acc = acc * b + c``; independent chains so that the FMA
units never wait for the previous result: 12 chains cover 2 units x 4-5
cycles of latency, with room left in a 16-register file for the operands),
at the widest float vector the host's features allow: 16 lanes with
AVX-512F, 8 with AVX, 4 otherwise (SSE).  Without FMA the loop multiplies
and adds separately, still two FLOPs per lane.  Peak = 2 x lanes x
accumulators x iterations / time, the best of 50 short runs (about a
millisecond each, wall clock): a capability, not a typical time, and on a
loaded machine some short runs still go undisturbed.  (Not the thread's CPU
time: in a virtual machine it may be counted in whole scheduler ticks.)
:func:`model_bench <model_bench>` divides GFLOP/s by it.
"""

from __future__ import annotations

import ctypes
import sys
import time
from dataclasses import dataclass

import llvmlite.binding as llvm
from llvmlite import ir

from nnc.runtime.jit import Target

ACCUMULATORS = 12


@dataclass(frozen=True)
class Peak:
    gflops: float  # per core
    lanes: int  # float32 lanes per vector
    isa: str  # "AVX-512" / "AVX2" / "AVX" / "SSE"
    fma: bool


def vector_isa(features: str) -> tuple[int, str, bool]:
    """(float32 lanes, ISA name, has FMA) from LLVM's feature string."""
    have = {f[1:] for f in features.split(",") if f.startswith("+")}
    fma = "fma" in have
    if "avx512f" in have:
        return 16, "AVX-512", fma
    if "avx2" in have:
        return 8, "AVX2", fma
    if "avx" in have:
        return 8, "AVX", fma
    return 4, "SSE", fma


def fma_loop_ir(lanes: int, fma: bool, accumulators: int = ACCUMULATORS) -> str:
    """``void fma_loop(i64 n, float *out)``: ``n`` iterations of one FMA per
    accumulator, the accumulators summed into ``out[0:lanes]`` at the end
    (so nothing is dead code).  ``b`` and ``c`` are read from ``out`` so LLVM
    cannot fold them."""
    f32, i64 = ir.FloatType(), ir.IntType(64)
    vec = ir.VectorType(f32, lanes)
    mod = ir.Module(name="fma_peak")
    fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), [i64, f32.as_pointer()]), "fma_loop")
    n, out = fn.args
    entry, loop, done = fn.append_basic_block("entry"), fn.append_basic_block("loop"), fn.append_basic_block("done")
    b = ir.IRBuilder(entry)
    vptr = b.bitcast(out, vec.as_pointer())
    mul = b.load(vptr, align=4)
    add = b.load(b.gep(vptr, [ir.Constant(i64, 1)]), align=4)
    b.branch(loop)
    b = ir.IRBuilder(loop)
    i = b.phi(i64)
    accs = [b.phi(vec) for _ in range(accumulators)]
    fma_fn = ir.Function(mod, ir.FunctionType(vec, [vec] * 3), f"llvm.fma.v{lanes}f32") if fma else None
    new = [b.call(fma_fn, [a, mul, add]) if fma_fn else b.fadd(b.fmul(a, mul), add) for a in accs]
    i_next = b.add(i, ir.Constant(i64, 1))
    b.cbranch(b.icmp_unsigned("<", i_next, n), loop, done)
    i.add_incoming(ir.Constant(i64, 0), entry)
    i.add_incoming(i_next, loop)
    for k, (a, a_next) in enumerate(zip(accs, new)):
        a.add_incoming(ir.Constant(vec, [float(k + 1) / 16] * lanes), entry)
        a.add_incoming(a_next, loop)
    b = ir.IRBuilder(done)
    total = new[0]
    for a in new[1:]:
        total = b.fadd(total, a)
    b.store(total, vptr, align=4)
    b.ret_void()
    return str(mod)


def measure(iterations: int = 200_000, repeats: int = 50) -> Peak:
    """The host's per-core float32 peak (runs on the calling thread)."""
    target = Target.host()
    lanes, isa, fma = vector_isa(target.features)
    mod = llvm.parse_assembly(fma_loop_ir(lanes, fma))
    mod.verify()
    tm = target.machine()
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    loop = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p)(engine.get_function_address("fma_loop"))
    buf = (ctypes.c_float * (2 * lanes))(*([0.999999] * lanes + [1e-7] * lanes))
    loop(1000, ctypes.addressof(buf))  # warm up (clock ramp, page faults)
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        loop(iterations, ctypes.addressof(buf))
        best = min(best, time.perf_counter() - t)
    flops = 2.0 * lanes * ACCUMULATORS * iterations
    return Peak(flops / best / 1e9, lanes, isa, fma)


def main() -> int:
    p = measure()
    print(f"fp32 peak per core: {p.gflops:.1f} GFLOP/s ({p.isa}, {p.lanes} lanes, "
          f"{'FMA' if p.fma else 'no FMA: separate multiply and add'}, {ACCUMULATORS} accumulators)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
