"""Philox-4x32-10, the counter-based generator of TensorFlow's
``random::PhiloxRandom`` that Android's RANDOM_MULTINOMIAL draws from,
emitted as integer arithmetic (a helper of :mod:`nnc.passes.lowering.generate`;
it registers no lowering).

A generator is a 64-bit key and a 128-bit counter; each call encrypts the
counter in ten rounds and returns four 32-bit words, then the counter
advances by one.  ``PhiloxRandom(seed_lo, seed_hi)`` sets the key from
``seed_lo`` and the counter's high half from ``seed_hi`` (low half 0), so
block ``n`` of the stream is the encryption of ``(lo32(n), hi32(n),
lo32(seed_hi), hi32(seed_hi))``: any block can be computed directly, which
is what lets every sample be drawn independently of the others.

``SimplePhilox::RandDouble`` takes two consecutive words ``x0, x1`` of the
stream and returns ``((x0 & 0xfffff) << 32 | x1) * 2^-52`` in [0, 1)
(``Uint64ToDouble``: the mantissa of a double in [1, 2), minus 1; exact).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import f64, i32, i64

from nnc.passes.lowering.base import Emitter, Value

_M0, _M1 = 0xD2511F53, 0xCD9E8D57  # round multipliers
_W0, _W1 = 0x9E3779B9, 0xBB67AE85  # key increments (Weyl sequence)
ROUNDS = 10


def _i32(e: Emitter, unsigned: int) -> Value:
    """An i32 constant with the bits of ``unsigned``."""
    return e.i32(unsigned - (1 << 32) if unsigned >= 1 << 31 else unsigned)


def _lo_hi(e: Emitter, v64: Value) -> tuple[Value, Value]:
    """The low and high 32-bit halves of an i64."""
    lo = e.op(arith.TruncIOp(v64, i32))
    hi = e.op(arith.TruncIOp(e.op(arith.ShRUIOp(v64, e.const(32, i64))), i32))
    return lo, hi


def _mul_hi_lo(e: Emitter, m: int, x: Value) -> tuple[Value, Value]:
    """``m * x`` (unsigned 32-bit) as (low word, high word)."""
    wide = e.op(arith.MuliOp(e.op(arith.ExtUIOp(x, i64)), e.const(m, i64)))
    return _lo_hi(e, wide)


def block(e: Emitter, counter: Sequence[Value], key: Sequence[Value]) -> list[Value]:
    """The four words of one Philox-4x32-10 call (i32 values)."""
    c, k = list(counter), list(key)

    def xor(a: Value, b: Value) -> Value:
        return e.op(arith.XOrIOp(a, b))

    for r in range(ROUNDS):
        lo0, hi0 = _mul_hi_lo(e, _M0, c[0])
        lo1, hi1 = _mul_hi_lo(e, _M1, c[2])
        c = [xor(xor(hi1, c[1]), k[0]), lo1, xor(xor(hi0, c[3]), k[1]), lo0]
        if r + 1 < ROUNDS:
            k = [e.add(k[0], _i32(e, _W0)), e.add(k[1], _i32(e, _W1))]
    return c


def rand_double(e: Emitter, seed_lo: Value, seed_hi: Value, sample: Value) -> Value:
    """``RandDouble()`` number ``sample`` (an i64, from 0) of the generator
    ``PhiloxRandom(seed_lo, seed_hi)`` (i64 seeds): words ``2 * sample`` and
    ``2 * sample + 1`` of the stream, an f64 in [0, 1)."""
    n = e.op(arith.ShRUIOp(sample, e.const(1, i64)))  # block: 4 words = 2 doubles
    odd = e.cmp("ne", e.op(arith.AndIOp(sample, e.const(1, i64))), e.const(0, i64))
    words = block(e, [*_lo_hi(e, n), *_lo_hi(e, seed_hi)], list(_lo_hi(e, seed_lo)))
    x0, x1 = e.select(odd, words[2], words[0]), e.select(odd, words[3], words[1])
    hi = e.op(arith.AndIOp(e.op(arith.ExtUIOp(x0, i64)), e.const(0xFFFFF, i64)))
    mantissa = e.op(arith.OrIOp(e.op(arith.ShLIOp(hi, e.const(32, i64))), e.op(arith.ExtUIOp(x1, i64))))
    return e.mul(e.op(arith.UIToFPOp(mantissa, f64)), e.const(2.0**-52, f64))

