"""RANDOM_MULTINOMIAL: draw for draw like Android's ``Multinomial::EvalFloat32``
(TensorFlow's Philox-4x32-10 stream from the two seeds, ``RandDouble``,
cumulative sums in double, ``upper_bound``), transcribed below; the seed
behaviour (fresh generator per execution; seeds (0, 0) random each time).
The corpus checks the distribution only (tests/cts.py)."""

from __future__ import annotations

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op

MASK = (1 << 32) - 1


def _philox(seed_lo: int, seed_hi: int, n: int) -> list[int]:
    """Block n of TensorFlow's ``PhiloxRandom(seed_lo, seed_hi)`` (uint64 seeds)."""
    c = [n & MASK, (n >> 32) & MASK, seed_hi & MASK, (seed_hi >> 32) & MASK]
    k = [seed_lo & MASK, (seed_lo >> 32) & MASK]
    for r in range(10):
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k[0], p1 & MASK, (p0 >> 32) ^ c[3] ^ k[1], p0 & MASK]
        if r < 9:
            k = [(k[0] + 0x9E3779B9) & MASK, (k[1] + 0xBB67AE85) & MASK]
    return c


def _reference(x: np.ndarray, samples: int, seed0: int, seed1: int) -> np.ndarray:
    lo, hi = seed0 & ((1 << 64) - 1), seed1 & ((1 << 64) - 1)  # int32 -> int64 -> uint64
    words = (w for n in range(10**9) for w in _philox(lo, hi, n))
    out = np.zeros((x.shape[0], samples), np.int32)
    for b, row in enumerate(x.astype(np.float64)):
        finite = np.isfinite(row)
        top = row[finite].max() if finite.any() else float(np.finfo(np.float32).min)
        cdf = np.cumsum(np.where(finite, np.exp(row - top), 0.0))
        for j in range(samples):
            x0, x1 = next(words), next(words)
            u = (((x0 & 0xFFFFF) << 32) | x1) * 2.0**-52
            out[b, j] = np.searchsorted(cdf, u * cdf[-1], side="right")
    return out


def _model(shape: tuple[int, int], samples: int, seeds: tuple[int, int] | None) -> nnc.Model:
    """Seeds a constant, or (None) a model input."""
    m = nnc.Model()
    x = m.add_operand(T.TENSOR_FLOAT32, list(shape))
    n = m.add_operand(T.INT32)
    m.set_operand_value(n, samples)
    s = m.add_operand(T.TENSOR_INT32, [2])
    if seeds is not None:
        m.set_operand_value(s, np.array(seeds, np.int32))
    out = m.add_operand(T.TENSOR_INT32, [shape[0], samples])
    m.add_operation(Op.RANDOM_MULTINOMIAL, [x, n, s], [out])
    m.identify_inputs_and_outputs([x] if seeds is not None else [x, s], [out])
    m.finish()
    return m


X = np.random.default_rng(3).standard_normal((3, 37)).astype(np.float32) * 2
X[1, 5] = np.inf  # non-finite logits take no probability, as in the reference
X[2, :] = -1e30


@pytest.mark.parametrize("seeds", [(37, 42), (-5, 123456789), (0, 1)])
def test_draws_like_the_reference(seeds: tuple[int, int]) -> None:
    [got] = nnc.compile(_model(X.shape, 33, seeds)).run(X)
    np.testing.assert_array_equal(got, _reference(X, 33, *seeds))


def test_seed_behaviour() -> None:
    """Equal seeds: equal samples in every execution; seeds (0, 0): a new
    random stream in each execution."""
    compiled = nnc.compile(_model((1, 1024), 64, None))
    x = np.zeros((1, 1024), np.float32)
    a = compiled.run(x, np.array([7, 8], np.int32))[0]
    b = compiled.run(x, np.array([7, 8], np.int32))[0]
    np.testing.assert_array_equal(a, b)
    r1 = compiled.run(x, np.array([0, 0], np.int32))[0]
    r2 = compiled.run(x, np.array([0, 0], np.int32))[0]
    assert not np.array_equal(r1, r2)
    assert 0 <= r1.min() and r1.max() < 1024
