"""Hashing operations: LSH_PROJECTION, with farmhash's ``Fingerprint64`` in
generated code.

LSH_PROJECTION follows Android's reference (``LSHProjection.cpp`` in
``nn/common/operations``): it hashes ``seed ++ input row bytes`` with
farmhash's ``Fingerprint64`` (``farmhashna::Hash64``); the seed comes from the
hash tensor and the rows from the input, either of which may be a model
input.  The key length is static, so the length-dependent branches of Hash64
are chosen at compile time and every fetch offset is a constant (or, past the
first 64-byte block of a long key, a loop-carried one).

(Its rule lives with HASHTABLE_LOOKUP and EMBEDDING_LOOKUP in
:mod:`nnc.dialects.rules.recurrent`.)
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import f32, f64, i8, i32, i64

from nnc.dialects.rules.hashing import LSH_DENSE, LSH_SPARSE
from nnc.enums import OperationType as Op
from nnc.passes.lowering.base import Emitter, LoweringContext, Value, affine_map, element_bytes, lowering, memref_elem
from nnc.passes.lowering.quant import wrap32

# -- LSH_PROJECTION ----------------------------------------------------------------------------


_MASK64 = (1 << 64) - 1
K0 = 0xC3A5C85C97CB3127
K1 = 0xB492B66FBE98F273
K2 = 0x9AE16A3B2F90404F


def _s64(v: int) -> int:
    """A uint64 constant as the signed value an i64 attribute holds."""
    v &= _MASK64
    return v - (1 << 64) if v >> 63 else v


class _U64:
    """uint64 arithmetic (wrapping) on i64 values."""

    def __init__(self, e: Emitter):
        self.e = e

    def c(self, v: int) -> Value:
        return self.e.const(_s64(v), i64)

    def add(self, a: Value, b: Value) -> Value:
        return self.e.op(arith.AddiOp(a, b))

    def sub(self, a: Value, b: Value) -> Value:
        return self.e.op(arith.SubiOp(a, b))

    def mul(self, a: Value, b: Value) -> Value:
        return self.e.op(arith.MuliOp(a, b))

    def xor(self, a: Value, b: Value) -> Value:
        return self.e.op(arith.XOrIOp(a, b))

    def or_(self, a: Value, b: Value) -> Value:
        return self.e.op(arith.OrIOp(a, b))

    def shr(self, a: Value, n: int) -> Value:
        return self.e.op(arith.ShRUIOp(a, self.c(n)))

    def shl(self, a: Value, n: int) -> Value:
        return self.e.op(arith.ShLIOp(a, self.c(n)))

    def rotate(self, a: Value, n: int) -> Value:
        """Rotate64 (right); a shift of 0 is the identity."""
        if n == 0:
            return a
        return self.or_(self.shr(a, n), self.shl(a, 64 - n))

    def shift_mix(self, a: Value) -> Value:
        return self.xor(a, self.shr(a, 47))

    def hash_len16(self, u: Value, v: Value, mul: Value) -> Value:
        a = self.mul(self.xor(u, v), mul)
        a = self.xor(a, self.shr(a, 47))
        b = self.mul(self.xor(v, a), mul)
        b = self.xor(b, self.shr(b, 47))
        return self.mul(b, mul)

    def weak_hash_len32(
        self, w: Value, x: Value, y: Value, z: Value, a: Value, b: Value
    ) -> tuple[Value, Value]:
        a = self.add(a, w)
        b = self.rotate(self.add(self.add(b, a), z), 21)
        c = a
        a = self.add(a, x)
        a = self.add(a, y)
        b = self.add(b, self.rotate(a, 44))
        return self.add(a, z), self.add(b, c)


class _Key:
    """Byte access to ``seed (4 bytes) ++ row`` without materialising it.

    ``byte(k)`` with a constant ``k`` picks the seed or the input at compile
    time; ``fetch64(off)`` assembles a little-endian word."""

    def __init__(self, u: _U64, seed_bits: Value, data: Value, row_start: Value, length: int):
        self.u, self.e = u, u.e
        self.seed = seed_bits  # i64 holding the 32 seed bits
        self.data = data  # memref<N x i8>: the input's bytes
        self.row = row_start  # index of the row's first byte
        self.len = length

    def byte(self, k: int | Value) -> Value:
        e = self.e
        if isinstance(k, int):
            assert 0 <= k < self.len
            if k < 4:
                return e.op(arith.AndIOp(self.u.shr(self.seed, 8 * k), self.u.c(0xFF)))
            pos: Value = e.op(arith.AddiOp(self.row, e.index(k - 4)))
        else:  # a dynamic offset, always past the seed
            pos = e.op(arith.AddiOp(self.row, e.op(arith.SubiOp(k, e.index(4)))))
        return e.op(arith.ExtUIOp(e.load(self.data, [pos]), i64))

    def fetch(self, off: int | Value, size: int) -> Value:
        word = None
        for j in range(size):
            if isinstance(off, int):
                b = self.byte(off + j)
            else:
                b = self.byte(self.e.op(arith.AddiOp(off, self.e.index(j))))
            b = self.u.shl(b, 8 * j) if j else b
            word = b if word is None else self.u.or_(word, b)
        assert word is not None
        return word

    def fetch64(self, off: int | Value) -> Value:
        return self.fetch(off, 8)

    def fetch32(self, off: int) -> Value:
        return self.fetch(off, 4)


def fingerprint64(key: _Key) -> Value:
    """farmhashna::Hash64(key, len) for the static ``key.len``."""
    u, n = key.u, key.len
    F = key.fetch64
    if n <= 16:
        if n >= 8:
            mul = u.c(K2 + n * 2)
            a = u.add(F(0), u.c(K2))
            b = F(n - 8)
            c = u.add(u.mul(u.rotate(b, 37), mul), a)
            d = u.mul(u.add(u.rotate(a, 25), b), mul)
            return u.hash_len16(c, d, mul)
        if n >= 4:
            mul = u.c(K2 + n * 2)
            a = key.fetch32(0)
            return u.hash_len16(u.add(u.c(n), u.shl(a, 3)), key.fetch32(n - 4), mul)
        a, b, c = key.byte(0), key.byte(n >> 1), key.byte(n - 1)
        y = u.add(a, u.shl(b, 8))  # uint32 arithmetic; no overflow for bytes
        z = u.add(u.c(n), u.shl(c, 2))
        return u.mul(u.shift_mix(u.xor(u.mul(y, u.c(K2)), u.mul(z, u.c(K0)))), u.c(K2))
    if n <= 32:
        mul = u.c(K2 + n * 2)
        a = u.mul(F(0), u.c(K1))
        b = F(8)
        c = u.mul(F(n - 8), mul)
        d = u.mul(F(n - 16), u.c(K2))
        return u.hash_len16(
            u.add(u.add(u.rotate(u.add(a, b), 43), u.rotate(c, 30)), d),
            u.add(u.add(a, u.rotate(u.add(b, u.c(K2)), 18)), c),
            mul,
        )
    if n <= 64:
        mul = u.c(K2 + n * 2)
        a = u.mul(F(0), u.c(K2))
        b = F(8)
        c = u.mul(F(n - 8), mul)
        d = u.mul(F(n - 16), u.c(K2))
        y = u.add(u.add(u.rotate(u.add(a, b), 43), u.rotate(c, 30)), d)
        z = u.hash_len16(y, u.add(u.add(a, u.rotate(u.add(b, u.c(K2)), 18)), c), mul)
        e_ = u.mul(F(16), mul)
        f = F(24)
        g = u.mul(u.add(y, F(n - 32)), mul)
        h = u.mul(u.add(z, F(n - 24)), mul)
        return u.hash_len16(
            u.add(u.add(u.rotate(u.add(e_, f), 43), u.rotate(g, 30)), h),
            u.add(u.add(e_, u.rotate(u.add(f, a), 18)), g),
            mul,
        )
    return _hash64_long(key)


def _hash64_long(key: _Key) -> Value:
    """Hash64 for more than 64 bytes: 64-byte blocks, then the last 64 bytes."""
    u, n, e = key.u, key.len, key.e
    seed = 81
    x = u.c(seed)
    y0 = (seed * K1 + 113) & _MASK64
    y = u.c(y0)
    z0 = ((y0 * K2 + 113) & _MASK64)
    z = u.c(((z0 ^ (z0 >> 47)) * K2) & _MASK64)
    v1 = v2 = w1 = w2 = u.c(0)
    x = u.add(u.mul(x, u.c(K2)), key.fetch64(0))
    blocks = (n - 1) // 64

    def block(uu: _U64, k: _Key, s: int | Value, st: Sequence[Value]) -> list[Value]:
        x, y, z, v1, v2, w1, w2 = st

        def at(c: int) -> Value:
            if isinstance(s, int):
                return k.fetch64(s + c)
            return k.fetch64(uu.e.op(arith.AddiOp(s, uu.e.index(c))))

        x = uu.mul(uu.rotate(uu.add(uu.add(uu.add(x, y), v1), at(8)), 37), uu.c(K1))
        y = uu.mul(uu.rotate(uu.add(uu.add(y, v2), at(48)), 42), uu.c(K1))
        x = uu.xor(x, w2)
        y = uu.add(y, uu.add(v1, at(40)))
        z = uu.mul(uu.rotate(uu.add(z, w1), 33), uu.c(K1))
        v1, v2 = uu.weak_hash_len32(at(0), at(8), at(16), at(24), uu.mul(v2, uu.c(K1)), uu.add(x, w1))
        w1, w2 = uu.weak_hash_len32(at(32), at(40), at(48), at(56), uu.add(z, w2), uu.add(y, at(16)))
        return [z, y, x, v1, v2, w1, w2]  # std::swap(z, x)

    # The first block touches the seed bytes: unrolled with constant offsets.
    state = block(u, key, 0, [x, y, z, v1, v2, w1, w2])
    if blocks > 1:

        def loop(le: Emitter, t: Value, st: Sequence[Value]) -> list[Value]:
            uu = _U64(le)
            k = _Key(uu, key.seed, key.data, key.row, key.len)
            s = le.op(arith.MuliOp(t, le.index(64)))
            return block(uu, k, s, st)

        state = e.for_(1, blocks, loop, iter_args=state)
    x, y, z, v1, v2, w1, w2 = state
    mul = u.add(u.c(K1), u.shl(e.op(arith.AndIOp(z, u.c(0xFF))), 1))
    s = n - 64
    w1 = u.add(w1, u.c((n - 1) & 63))
    v1 = u.add(v1, w1)
    w1 = u.add(w1, v1)
    F = key.fetch64
    x = u.mul(u.rotate(u.add(u.add(u.add(x, y), v1), F(s + 8)), 37), mul)
    y = u.mul(u.rotate(u.add(u.add(y, v2), F(s + 48)), 42), mul)
    x = u.xor(x, u.mul(w2, u.c(9)))
    y = u.add(y, u.add(u.mul(v1, u.c(9)), F(s + 40)))
    z = u.mul(u.rotate(u.add(z, w1), 33), mul)
    v1, v2 = u.weak_hash_len32(F(s), F(s + 8), F(s + 16), F(s + 24), u.mul(v2, mul), u.add(x, w1))
    w1, w2 = u.weak_hash_len32(F(s + 32), F(s + 40), F(s + 48), F(s + 56), u.add(z, w2), u.add(y, F(s + 16)))
    z, x = x, z
    return u.hash_len16(
        u.add(u.add(u.hash_len16(v1, w1, mul), u.mul(u.shift_mix(y), u.c(K0))), z),
        u.add(u.hash_len16(v2, w2, mul), x),
        mul,
    )


@lowering(Op.LSH_PROJECTION)
def lsh_projection(ctx: LoweringContext) -> None:
    """LSHProjection::Eval: each bit is the sign of sum_i weight[i] *
    double(int64(Fingerprint64(seed ++ input row i))); without a weight each
    row counts once."""
    hashes, inp = ctx.input(0), ctx.input(1)
    weight = ctx.input(2) if ctx.has_input(2) else None
    kind = ctx.scalar(3)
    out = ctx.output()
    num_hash, num_bits = ctx.shape(hashes)
    in_shape = ctx.shape(inp)
    n_rows = in_shape[0]
    row_bytes = element_bytes(memref_elem(inp))
    for d in in_shape[1:]:
        row_bytes *= d
    key_len = 4 + row_bytes
    data = ctx.reinterpreted(inp, i8, [max(n_rows * row_bytes, 1)])
    # The seed's bytes: stored as f32 and read back as i32.
    seed_buf = ctx.alloc([1], f32)
    seed_bits = ctx.reinterpreted(seed_buf, i32, [1])

    def sign_bit(e: Emitter, seed: Value) -> Value:
        """runningSignBit: 1 if the weighted sum of row hashes is > 0 (i32)."""
        e.store(seed, seed_buf, [0])
        bits = e.op(arith.ExtUIOp(e.load(seed_bits, [0]), i64))

        def row(le: Emitter, i: Value, st: Sequence[Value]) -> list[Value]:
            start = le.op(arith.MuliOp(i, le.index(row_bytes)))
            h = fingerprint64(_Key(_U64(le), bits, data, start, key_len))
            value = le.op(arith.SIToFPOp(h, f64))
            if weight is not None:
                w = le.op(arith.ExtFOp(le.load(weight, [i]), f64))
                value = le.op(arith.MulfOp(w, value))
            return [le.op(arith.AddfOp(st[0], value))]

        score = e.for_(0, n_rows, row, iter_args=[e.const(0.0, f64)])[0]
        positive = e.op(arith.CmpfOp(score, e.const(0.0, f64), "ogt"))
        return e.op(arith.ExtUIOp(positive, i32))

    if kind == LSH_DENSE:
        flat = ctx.flat(hashes)
        ident = affine_map(1, lambda k: (k,))
        ctx.generic((num_hash * num_bits,), [(flat, ident)], [(out, ident)],
                    lambda e, a, idx: [sign_bit(e, a[0])])  # fmt: skip
        return

    def sparse(e: Emitter, a: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        i = idx[0]

        def bit(le: Emitter, j: Value, st: Sequence[Value]) -> list[Value]:
            b = sign_bit(le, le.load(hashes, [i, j]))
            return [le.op(arith.OrIOp(le.op(arith.ShLIOp(st[0], le.i32(1))), b))]

        sig = e.for_(0, num_bits, bit, iter_args=[e.i32(0)])[0]
        if kind == LSH_SPARSE:
            offset = e.op(arith.MuliOp(e.index_cast(i, i32), e.i32(wrap32(1 << num_bits))))
            sig = e.op(arith.AddiOp(sig, offset))
        return [sig]

    ctx.generic((num_hash,), [], [(out, affine_map(1, lambda k: (k,)))], sparse)
