"""Byte table lookups on the vector unit: ``out[i] = table[in[i]]`` for a
256-entry table of bytes (the tabulated int8 element-wise operations,
:mod:`nnc.passes.lowering.byte_table`).

A lookup per element is a load per element, about as slow as the
arithmetic it replaces.  x86's byte shuffle (``pshufb``: SSSE3 on 16
bytes, AVX2 on 32, AVX512BW on 64) looks up 16-entry tables in every lane
at once, zeroing the lanes whose index has its top bit set; sixteen of them
cover 256 entries (the technique of XNNPACK's ``x8-lut`` kernels).  The
index of shuffle ``k`` is the byte minus ``16 k``: wrapping subtractions up
to ``k = 8``, then saturating ones, so that each byte ``u`` in
``[16 j, 16 j + 16)`` selects in exactly the shuffles ``k`` of
:func:`contributing` -- all of them at its position ``u mod 16`` -- and
the results are combined with XOR.  The shuffled tables are therefore
differences (:func:`shuffle_tables`) whose XOR over those ``k`` is row
``j`` of the table.  The last bytes of a call (fewer than a vector) are
looked up one at a time.

Targets without a byte shuffle keep the scalar lookup loop.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import i8, i32

from nnc.passes.kernels.vector import IndexOrInt, IVec, Vec, kernel, parallel_pieces
from nnc.passes.lowering.base import Emitter, LoweringContext, Value

#: the intrinsic of each shuffle width in bits
_PSHUFB = {128: "llvm.x86.ssse3.pshuf.b.128", 256: "llvm.x86.avx2.pshuf.b", 512: "llvm.x86.avx512.pshuf.b.512"}


def contributing(u: int) -> list[int]:
    """The shuffles that select byte value ``u`` (0..255): the index
    ``u - 16 k`` (wrapping for ``k <= 8``, saturating at -128 after) has its
    top bit clear."""
    out = []
    x = u - 256 if u > 127 else u  # the byte as the signed lane value
    for k in range(16):
        if k:
            x = (x - 16 + 128) % 256 - 128 if k <= 8 else max(x - 16, -128)
        if x >= 0:
            out.append(k)
    return out


def shuffle_tables(table: np.ndarray) -> np.ndarray:
    """The 16 rows of 16 bytes to shuffle (``[16, 16]`` uint8) for the
    256-entry ``table``: row ``k`` solves ``XOR(row k for k in
    contributing(u)) == table[u]`` for every ``u``, from the first row up
    (the shuffles that select a byte of row ``j`` of the table are a run
    ending at ``j``)."""
    t = np.asarray(table, dtype=np.uint8).reshape(16, 16)
    rows = np.zeros((16, 16), dtype=np.uint8)
    for j in range(16):
        ks = contributing(16 * j)
        acc = np.zeros(16, dtype=np.uint8)
        for k in ks[:-1]:
            acc ^= rows[k]
        rows[ks[-1]] = t[j] ^ acc
    return rows


def lut_kernel(bits: int):
    """``out[base + i] = table[x[base + i]]`` for ``i < n``: the first
    ``nfull`` (a multiple of the ``bits / 8`` lanes) in vectors through the
    16 shuffles of :func:`shuffle_tables` (``tables[k * lanes:]``: row
    ``k`` repeated across the vector's 128-bit lanes), the rest one byte at
    a time through the plain table at ``tables[16 * lanes:]``.  ``nfull``
    is an argument, a constant at every call, so that the thread pool's
    work estimate knows the loop's trip count."""
    lanes = bits // 8
    name = f"nnc_lut_pshufb_{bits}"

    def body(e: Emitter, p: list[Value]) -> None:
        x, out, tables, base, nfull, n = p
        iv = IVec(e)
        rows = [iv.load(tables, k * lanes, i8, lanes) for k in range(16)]
        sixteen = iv.const(16, i8, lanes)

        def vectors(e2: Emitter, i: IndexOrInt, carried: list[Value]) -> list[Value]:
            iv2 = IVec(e2)
            at = Vec(e2).ix(base, i)
            idx = iv2.load(x, at, i8, lanes)
            y = _pshufb(e2, rows[0], idx)
            for k in range(1, 16):
                idx = iv2.sub(idx, sixteen) if k <= 8 else _subs(e2, idx, sixteen)
                y = iv2.xor(y, _pshufb(e2, rows[k], idx))
            iv2.store(y, out, at)
            return carried

        e.for_(0, nfull, vectors, [], lanes)

        def bytes_left(e2: Emitter, i: IndexOrInt, carried: list[Value]) -> list[Value]:
            at = e2.index(Vec(e2).ix(base, i))
            k = e2.index_cast(e2.op(arith.ExtUIOp(e2.load(x, [at]), i32)))
            e2.store(e2.load(tables, [Vec(e2).ix(k, 16 * lanes)]), out, [at])
            return carried

        e.for_(nfull, n, bytes_left, [])

    return name, body


def _pshufb(e: Emitter, table: Value, idx: Value) -> Value:
    """x86 ``pshufb``: lane ``i`` is ``table[idx[i] mod 16]`` within its
    128-bit lane, or 0 where ``idx[i]`` has its top bit set."""
    bits = 8 * IVec.width(idx)
    return e.op(llvm.CallIntrinsicOp(_PSHUFB[bits], [table, idx], [idx.type]))


def _subs(e: Emitter, a: Value, b: Value) -> Value:
    """Signed saturating byte subtraction (``psubsb``)."""
    return e.op(llvm.CallIntrinsicOp(f"llvm.ssub.sat.v{IVec.width(a)}i8", [a, b], [a.type]))


def lookup(ctx: LoweringContext, x: Value, out: Value, table: np.ndarray, n: int, bits: int) -> None:
    """``out = table[x]`` over the ``n`` bytes of the flat buffers ``x`` and
    ``out`` with the shuffle kernel of width ``bits``, in pieces for the
    thread pool (:func:`~nnc.passes.kernels.vector.parallel_pieces`)."""
    lanes = bits // 8
    rows = np.repeat(shuffle_tables(table)[:, None, :], lanes // 16, axis=1).reshape(-1)
    tables = ctx.flat(ctx.packed_constant(np.concatenate([rows, np.asarray(table, np.uint8)]).view(np.int8), i8))
    name, body = lut_kernel(bits)

    def piece(e: Emitter, start: IndexOrInt, length: IndexOrInt) -> None:
        nfull = length // lanes * lanes if isinstance(length, int) else e.sub(length, e.rem(length, e.index(lanes)))
        kernel(ctx, e, name, [x, out, tables, start, nfull, length], body)

    parallel_pieces(ctx.e, n, lanes, piece)
