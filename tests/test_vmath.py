"""The vector math functions (passes/kernels/vmath.py) within their stated
error bounds, through the operations that use them (EXP, LOG, TANH,
LOGISTIC), compiled for every x86-64 kernel path this machine runs (with
and without FMA), against numpy's float64 functions rounded to float32.

The inputs cover every binade of the float range of both signs (the
smallest subnormals to the largest finite float), a dense sample of each
function's interesting region (the polynomial's interval, the switch points,
the saturation and overflow thresholds), signed zeros, infinities and NaN.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import nnc
from fuzz.edges import compiling_for
from nnc import OperationType as Op
from nnc.passes.kernels import vmath
from targets import runnable_cpus, runnable_target

# the benchmark's one-operation models are the ones checked here
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import vmath_bench

#: the smallest normal float32: results below it may be flushed to 0
TINY = float(np.finfo(np.float32).tiny)


def _binades(rng: np.random.Generator) -> np.ndarray:
    """Eight random mantissas in every binade, positive and negative,
    subnormals included."""
    exps = np.arange(-149, 128)
    mant = rng.uniform(1.0, 2.0, size=(exps.size, 8))
    vals = (mant * np.exp2(exps)[:, None]).astype(np.float32).ravel()
    return np.concatenate([vals, -vals])


def _dense(lo: float, hi: float, n: int = 4000) -> np.ndarray:
    return np.linspace(lo, hi, n, dtype=np.float32)


SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, TINY, -TINY, 1e-45, -1e-45,
                     float(np.finfo(np.float32).max), -float(np.finfo(np.float32).max)], np.float32)  # fmt: skip

#: per operation: the reference, the stated bound in ulp, and its interesting region
CASES = {
    Op.EXP: (np.exp, vmath.EXP_ULP, [_dense(-105, 90), _dense(-1, 1), _dense(88.0, 89.0), _dense(-88.0, -87.0)]),
    Op.LOG: (np.log, vmath.LOG_ULP, [_dense(0.5, 2.0), _dense(1e-3, 10.0), _dense(0.99, 1.01), _dense(-1, 1, 101)]),
    Op.TANH: (np.tanh, vmath.TANH_ULP, [_dense(-10, 10), _dense(-0.7, 0.7), _dense(0.6, 0.65), _dense(9.0, 9.2)]),
    Op.LOGISTIC: (lambda x: 1.0 / (1.0 + np.exp(-x)), vmath.LOGISTIC_ULP, [_dense(-100, 30), _dense(-5, 5)]),
}


def _inputs(op: Op) -> np.ndarray:
    rng = np.random.default_rng(int(op))
    return np.concatenate([SPECIALS, _binades(rng), *CASES[op][2]]).astype(np.float32)


def _compute(op: Op, x: np.ndarray, cpu: str) -> np.ndarray:
    with compiling_for(runnable_target(cpu)):
        comp = nnc.Compilation(vmath_bench.unary_model(op, x.size))
        comp.finish()
    out = np.zeros_like(x)
    with nnc.Execution(comp) as ex:
        ex.set_input(0, x)
        ex.set_output(0, out)
        ex.compute()
    return out


def ulp_errors(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| in units of the last place of ``want`` rounded to
    float32; 0 where both are the same infinity or both NaN, or where the
    exact result is below the smallest normal float and ``got`` is 0 or
    below it too (flushed)."""
    with np.errstate(invalid="ignore", over="ignore"):
        want32 = want.astype(np.float32)
        ulp = np.spacing(np.abs(want32)).astype(np.float64)
        err = np.abs(got.astype(np.float64) - want) / ulp
    same = (np.isnan(got) & np.isnan(want)) | (np.isinf(want32) & (got == want32))
    flushed = (np.abs(want) < TINY) & (np.abs(got) <= TINY)
    err[same | flushed] = 0.0
    err[np.isnan(err)] = np.inf  # a NaN where a number was due, or the reverse
    return err


@pytest.mark.parametrize("cpu", runnable_cpus())
@pytest.mark.parametrize("op", sorted(CASES), ids=lambda op: op.name)
def test_within_the_stated_ulp_bound(op: Op, cpu: str) -> None:
    ref, bound, _ = CASES[op]
    x = _inputs(op)
    got = _compute(op, x, cpu)
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64))
    err = ulp_errors(got, want)
    worst = int(np.argmax(err))
    assert err[worst] <= bound, (
        f"{op.name} on {cpu or 'the host'}: {err[worst]:.2f} ulp at x = {x[worst]!r} "
        f"(got {got[worst]!r}, want {want[worst]!r}); stated bound {bound}"
    )


@pytest.mark.parametrize("op", sorted(CASES), ids=lambda op: op.name)
def test_special_values(op: Op) -> None:
    """Signs of zero and infinities as the C library gives them, NaN where it
    gives NaN.  A NaN's sign is left out: neither NNAPI nor C defines it,
    and numpy's own result differs between its SIMD paths (LOG(-inf) is -NaN
    on AVX-512 hosts, +NaN on others)."""
    x = SPECIALS[:5]  # 0, -0, inf, -inf, nan
    got = _compute(op, x, runnable_cpus()[-1])
    with np.errstate(all="ignore"):
        want = CASES[op][0](x.astype(np.float64)).astype(np.float32)
    number = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[number]), np.signbit(want[number]))
    np.testing.assert_array_equal(got, want)


def test_ulp_errors_counts_what_it_should() -> None:
    """The measure itself: one float32 step is 1 ulp, a flushed tiny result
    is 0, a missing NaN is infinite."""
    want = np.array([1.0, 1e-40, np.nan, 2.0])
    got = np.array([np.nextafter(np.float32(1), np.float32(2)), 0.0, 1.0, 2.0], np.float32)
    np.testing.assert_array_equal(ulp_errors(got, want), [1.0, 0.0, np.inf, 0.0])
