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

The int8 peak (:func:`measure_int8`) times the same kind of loop with the
target's best exact int8 multiply-accumulate, the one nnc's int8 GEMM uses
(:func:`nnc.passes.kernels.tiles.target_form`): ``vpdpbusd`` with VNNI
(four byte products added into each int32 lane), else int16 pair products
(``vpmaddwd`` and an add, two products per lane; ``vpdpwssd`` where VNNI
fuses them).  GOP/s counts a multiply and an add per product, as GFLOP/s
does, so the two peaks compare directly.
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


@dataclass(frozen=True)
class Int8Peak:
    gops: float  # per core
    form: str  # "vpdpbusd" / "pair"
    lanes: int  # int32 lanes per vector


def int8_loop_ir(lanes: int, vnni: bool, accumulators: int = ACCUMULATORS) -> str:
    """``void int8_loop(i64 n, i32 *buf)``: ``n`` iterations of one int8
    multiply-accumulate per accumulator (``lanes`` int32 lanes each): a
    ``vpdpbusd`` of bytes, or the int16 pair product written as nnc's
    kernels write it (:meth:`~nnc.passes.kernels.vector.IVec.pairs_dot`)."""
    i8, i16, i32, i64 = ir.IntType(8), ir.IntType(16), ir.IntType(32), ir.IntType(64)
    acc_t = ir.VectorType(i32, lanes)
    op_t = ir.VectorType(i8, 4 * lanes) if vnni else ir.VectorType(i16, 2 * lanes)
    mod = ir.Module(name="int8_peak")
    fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), [i64, i32.as_pointer()]), "int8_loop")
    n, out = fn.args
    entry, loop, done = fn.append_basic_block("entry"), fn.append_basic_block("loop"), fn.append_basic_block("done")
    b = ir.IRBuilder(entry)
    a = b.load(b.bitcast(out, op_t.as_pointer()), align=4)  # vpdpbusd's unsigned operand
    w = b.load(b.bitcast(b.gep(out, [ir.Constant(i64, lanes)]), op_t.as_pointer()), align=4)
    b.branch(loop)
    b = ir.IRBuilder(loop)
    i = b.phi(i64)
    accs = [b.phi(acc_t) for _ in range(accumulators)]
    if vnni:
        dot = ir.Function(mod, ir.FunctionType(acc_t, [acc_t, op_t, op_t]), f"llvm.x86.avx512.vpdpbusd.{32 * lanes}")
        new = [b.call(dot, [acc, a, w]) for acc in accs]
    else:
        # the pairs read the accumulator's own bits, so each product depends
        # on the previous step, as the FMA loop's does (a loop-invariant
        # product would be hoisted out of the loop)
        wide = ir.VectorType(i32, 2 * lanes)
        even_mask = ir.Constant(ir.VectorType(i32, lanes), list(range(0, 2 * lanes, 2)))
        odd_mask = ir.Constant(ir.VectorType(i32, lanes), list(range(1, 2 * lanes, 2)))
        new = []
        for acc in accs:
            prod = b.mul(b.sext(b.bitcast(acc, op_t), wide), b.sext(w, wide))
            pairs = b.add(b.shuffle_vector(prod, prod, even_mask), b.shuffle_vector(prod, prod, odd_mask))
            new.append(b.add(acc, pairs))
    i_next = b.add(i, ir.Constant(i64, 1))
    b.cbranch(b.icmp_unsigned("<", i_next, n), loop, done)
    i.add_incoming(ir.Constant(i64, 0), entry)
    i.add_incoming(i_next, loop)
    for k, (acc, acc_next) in enumerate(zip(accs, new)):
        acc.add_incoming(ir.Constant(acc_t, [k] * lanes), entry)
        acc.add_incoming(acc_next, loop)
    b = ir.IRBuilder(done)
    total = new[0]
    for acc in new[1:]:
        total = b.add(total, acc)
    b.store(total, b.bitcast(out, acc_t.as_pointer()), align=4)
    b.ret_void()
    return str(mod)


def measure_int8(iterations: int = 200_000, repeats: int = 50) -> Int8Peak:
    """The host's per-core int8 peak with the instruction nnc's int8 GEMM
    uses on it (runs on the calling thread)."""
    target = Target.host()
    lanes, _, _ = vector_isa(target.features)
    have = {f[1:] for f in target.features.split(",") if f.startswith("+")}
    vnni = "avx512vnni" in have or ("avxvnni" in have and lanes == 8)
    mod = llvm.parse_assembly(int8_loop_ir(lanes, vnni))
    mod.verify()
    engine = llvm.create_mcjit_compiler(mod, target.machine())
    engine.finalize_object()
    loop = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p)(engine.get_function_address("int8_loop"))
    buf = (ctypes.c_int32 * (2 * lanes))(*([0x01010101] * (2 * lanes)))
    loop(1000, ctypes.addressof(buf))
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        loop(iterations, ctypes.addressof(buf))
        best = min(best, time.perf_counter() - t)
    products = (4 if vnni else 2) * lanes * ACCUMULATORS * iterations
    return Int8Peak(2.0 * products / best / 1e9, "vpdpbusd" if vnni else "pair", lanes)


def main() -> int:
    p = measure()
    print(f"fp32 peak per core: {p.gflops:.1f} GFLOP/s ({p.isa}, {p.lanes} lanes, "
          f"{'FMA' if p.fma else 'no FMA: separate multiply and add'}, {ACCUMULATORS} accumulators)")  # fmt: skip
    q = measure_int8()
    print(f"int8 peak per core: {q.gops:.1f} GOP/s ({q.form}, {q.lanes} int32 lanes, {ACCUMULATORS} accumulators)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
