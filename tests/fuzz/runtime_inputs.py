"""Fuzz kind (e): run-time inputs out of range.

Models whose inputs decide indices or shapes -- GATHER and
EMBEDDING_LOOKUP indices, HASHTABLE_LOOKUP keys, a RESHAPE shape, SLICE
begin/size, TILE multiples, and the dimensions of inputs left unspecified in
the model (ADD with broadcasting) -- run with random values, about half of
them invalid.  A numpy reference says which: an invalid one must be refused
with an NNError (at ``set_input`` or at the computation), a valid one must
give the reference's output.  Values the NNAPI documents leave ambiguous are
never drawn.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op

from .common import Finding, guarded, nnerror_or_ok


class Invalid(Exception):
    """The reference's verdict: these inputs must be refused."""


@dataclass
class Case:
    name: str
    model: nnc.Model
    feeds: list[tuple[np.ndarray, list[int] | None]]  # (array, dimensions given to set_input)
    reference: Callable[[], np.ndarray]  # raises Invalid


def _model(build: Callable[[nnc.Model], tuple[list[int], list[int]]]) -> nnc.Model:
    m = nnc.Model()
    ins, outs = build(m)
    m.identify_inputs_and_outputs(ins, outs)
    m.finish()
    return m


def _scalar(m: nnc.Model, value: int) -> int:
    k = m.add_operand(T.INT32)
    m.set_operand_value(k, value)
    return k


def _indices(rng: random.Random, size: int, k: int) -> np.ndarray:
    """``k`` indices of a dimension of ``size``; in half the trials one is
    out of range (just outside or far out)."""
    idx = [rng.randrange(size) for _ in range(k)]
    if rng.random() < 0.5:
        idx[rng.randrange(k)] = rng.choice([size, -1, rng.randint(size, 2**31 - 1), -(2**31)])
    return np.array(idx, np.int32)


def _gather(rng: random.Random) -> Case:
    shape = [rng.randint(1, 5) for _ in range(rng.randint(1, 3))]
    axis = rng.randrange(len(shape))
    k = rng.randint(1, 4)
    x = np.random.default_rng(rng.randrange(2**32)).normal(size=shape).astype(np.float32)
    idx = _indices(rng, shape[axis], k)
    out_shape = shape[:axis] + [k] + shape[axis + 1 :]

    def build(m: nnc.Model) -> tuple[list[int], list[int]]:
        a = m.add_operand(T.TENSOR_FLOAT32, shape)
        i = m.add_operand(T.TENSOR_INT32, [k])
        o = m.add_operand(T.TENSOR_FLOAT32, out_shape)
        m.add_operation(Op.GATHER, [a, _scalar(m, axis), i], [o])
        return [a, i], [o]

    def ref() -> np.ndarray:
        if ((idx < 0) | (idx >= shape[axis])).any():
            raise Invalid
        return np.take(x, idx, axis=axis)

    return Case(f"GATHER axis {axis} of {shape} at {idx.tolist()}", _model(build), [(x, None), (idx, None)], ref)


def _embedding_lookup(rng: random.Random) -> Case:
    rows, width, k = rng.randint(1, 6), rng.randint(1, 4), rng.randint(1, 4)
    values = np.random.default_rng(rng.randrange(2**32)).normal(size=(rows, width)).astype(np.float32)
    lookups = _indices(rng, rows, k)

    def build(m: nnc.Model) -> tuple[list[int], list[int]]:
        lk = m.add_operand(T.TENSOR_INT32, [k])
        v = m.add_operand(T.TENSOR_FLOAT32, [rows, width])
        o = m.add_operand(T.TENSOR_FLOAT32, [k, width])
        m.add_operation(Op.EMBEDDING_LOOKUP, [lk, v], [o])
        return [lk, v], [o]

    def ref() -> np.ndarray:
        if ((lookups < 0) | (lookups >= rows)).any():
            raise Invalid
        return values[lookups]

    name = f"EMBEDDING_LOOKUP of {rows} rows at {lookups.tolist()}"
    return Case(name, _model(build), [(lookups, None), (values, None)], ref)


def _hashtable_lookup(rng: random.Random) -> Case:
    n, width, k = rng.randint(1, 5), rng.randint(1, 3), rng.randint(1, 4)
    keys = np.array(sorted(rng.sample(range(-50, 50), n)), np.int32)
    values = np.random.default_rng(rng.randrange(2**32)).normal(size=(n, width)).astype(np.float32)
    lookups = np.array([rng.choice([*keys.tolist(), 2**31 - 1, -(2**31), rng.randint(-60, 60)]) for _ in range(k)],
                       np.int32)  # fmt: skip

    def build(m: nnc.Model) -> tuple[list[int], list[int]]:
        lk = m.add_operand(T.TENSOR_INT32, [k])
        ky = m.add_operand(T.TENSOR_INT32, [n])
        m.set_operand_value(ky, keys)
        v = m.add_operand(T.TENSOR_FLOAT32, [n, width])
        o = m.add_operand(T.TENSOR_FLOAT32, [k, width])
        hits = m.add_operand(T.TENSOR_QUANT8_ASYMM, [k], 1.0, 0)
        m.add_operation(Op.HASHTABLE_LOOKUP, [lk, ky, v], [o, hits])
        return [lk, v], [o]

    def ref() -> np.ndarray:
        out = np.zeros((k, width), np.float32)
        for i, key in enumerate(lookups):
            where = np.flatnonzero(keys == key)
            if where.size:
                out[i] = values[where[0]]
        return out

    return Case(f"HASHTABLE_LOOKUP of {lookups.tolist()}", _model(build), [(lookups, None), (values, None)], ref)


def _reshape(rng: random.Random) -> Case:
    shape = [rng.randint(1, 4) for _ in range(rng.randint(1, 3))]
    n = int(np.prod(shape))
    rank = rng.randint(1, 4)
    new = [rng.choice([1, 2, 3, n, -1, 0, -2, 2**31 - 1]) for _ in range(rank)]
    if rng.random() < 0.4:  # a valid one
        new = [n] + [1] * (rank - 1)
        if rng.random() < 0.5:
            new[rng.randrange(rank)] = -1
    x = np.random.default_rng(rng.randrange(2**32)).normal(size=shape).astype(np.float32)
    target = np.array(new, np.int32)

    def build(m: nnc.Model) -> tuple[list[int], list[int]]:
        a = m.add_operand(T.TENSOR_FLOAT32, shape)
        s = m.add_operand(T.TENSOR_INT32, [rank])
        o = m.add_operand(T.TENSOR_FLOAT32, [0] * rank)
        m.add_operation(Op.RESHAPE, [a, s], [o])
        return [a, s], [o]

    def ref() -> np.ndarray:
        if any(d == 0 or d < -1 for d in new) or new.count(-1) > 1:
            raise Invalid
        known = int(np.prod([d for d in new if d != -1]))
        if (-1 in new and n % known) or (-1 not in new and known != n):
            raise Invalid
        return x.reshape(new)

    return Case(f"RESHAPE {shape} to {new}", _model(build), [(x, None), (target, None)], ref)


def _slice(rng: random.Random) -> Case:
    shape = [rng.randint(1, 5) for _ in range(rng.randint(1, 3))]
    begin = [rng.randrange(d) for d in shape]
    size = [rng.choice([rng.randint(1, d - b), -1]) for d, b in zip(shape, begin)]
    if rng.random() < 0.5:  # one value out of range
        i = rng.randrange(len(shape))
        if rng.random() < 0.5:
            begin[i] = rng.choice([-1, shape[i], shape[i] + 1, 2**31 - 1, -(2**31)])
        else:
            size[i] = rng.choice([shape[i] - begin[i] + 1, -2, 0, 2**31 - 1, -(2**31)])
    x = np.random.default_rng(rng.randrange(2**32)).normal(size=shape).astype(np.float32)

    def build(m: nnc.Model) -> tuple[list[int], list[int]]:
        a = m.add_operand(T.TENSOR_FLOAT32, shape)
        bk = m.add_operand(T.TENSOR_INT32, [len(shape)])
        sk = m.add_operand(T.TENSOR_INT32, [len(shape)])
        o = m.add_operand(T.TENSOR_FLOAT32, [0] * len(shape))
        m.add_operation(Op.SLICE, [a, bk, sk], [o])
        return [a, bk, sk], [o]

    def ref() -> np.ndarray:
        index = []
        for d, b, s in zip(shape, begin, size):
            if not 0 <= b < d or s == 0 or s < -1 or (s > 0 and b + s > d):
                raise Invalid
            index.append(slice(b, d if s == -1 else b + s))
        return x[tuple(index)]

    feeds = [(x, None), (np.array(begin, np.int32), None), (np.array(size, np.int32), None)]
    return Case(f"SLICE {shape} at {begin} size {size}", _model(build), feeds, ref)


def _tile(rng: random.Random) -> Case:
    shape = [rng.randint(1, 3) for _ in range(rng.randint(1, 3))]
    mult = [rng.choice([1, 2, 3, 0, -1, 2**31 - 1, 1 << 20]) for _ in shape]
    x = np.random.default_rng(rng.randrange(2**32)).normal(size=shape).astype(np.float32)

    def build(m: nnc.Model) -> tuple[list[int], list[int]]:
        a = m.add_operand(T.TENSOR_FLOAT32, shape)
        mk = m.add_operand(T.TENSOR_INT32, [len(shape)])
        o = m.add_operand(T.TENSOR_FLOAT32, [0] * len(shape))
        m.add_operation(Op.TILE, [a, mk], [o])
        return [a, mk], [o]

    def ref() -> np.ndarray:
        if any(k < 1 for k in mult) or np.prod([d * k for d, k in zip(shape, mult)], dtype=np.float64) > 1 << 22:
            raise Invalid  # or too large: refused (OUT_OF_MEMORY or BAD_DATA) or computed; never drawn valid
        return np.tile(x, mult)

    return Case(f"TILE {shape} by {mult}", _model(build), [(x, None), (np.array(mult, np.int32), None)], ref)


def _broadcast_shapes(rng: random.Random) -> Case:
    """ADD of two inputs whose dimensions the model leaves unspecified."""
    rank = rng.randint(1, 3)
    base = [rng.randint(1, 4) for _ in range(rank)]

    def dims() -> list[int]:
        return [rng.choice([d, d, 1, d + 1, 0]) for d in base]

    sa, sb = dims(), dims()
    nprng = np.random.default_rng(rng.randrange(2**32))
    a, b = nprng.normal(size=sa).astype(np.float32), nprng.normal(size=sb).astype(np.float32)
    given = [None, None]
    if rng.random() < 0.2:  # dimensions that disagree with the array
        given[rng.randrange(2)] = [d + 1 for d in sa]

    def build(m: nnc.Model) -> tuple[list[int], list[int]]:
        ka, kb = (m.add_operand(T.TENSOR_FLOAT32, [0] * rank) for _ in range(2))
        o = m.add_operand(T.TENSOR_FLOAT32, [0] * rank)
        m.add_operation(Op.ADD, [ka, kb, _scalar(m, 0)], [o])
        return [ka, kb], [o]

    def ref() -> np.ndarray:
        if given != [None, None] or 0 in sa or 0 in sb:
            raise Invalid
        try:
            return a + b
        except ValueError:
            raise Invalid from None

    return Case(f"ADD of {sa} and {sb} (dimensions {given})", _model(build), [(a, given[0]), (b, given[1])], ref)


CASES: list[Callable[[random.Random], Case]] = [
    _gather, _embedding_lookup, _hashtable_lookup, _reshape, _slice, _tile, _broadcast_shapes,
]  # fmt: skip


def _run(case: Case, want: np.ndarray | None) -> object:
    c = nnc.Compilation(case.model)
    c.finish()
    ex = nnc.Execution(c)
    for i, (arr, dims) in enumerate(case.feeds):
        ex.set_input(i, arr, dims)
    declared = case.model.operands[case.model.outputs[0]].dims
    if declared is not None and all(declared):
        out = np.zeros(declared, np.float32)
    else:  # shaped by the computation: any buffer large enough
        out = np.zeros(want.shape if want is not None else (1 << 16,), np.float32)
    ex.set_output(0, out)
    ex.compute()
    return out


def _out_of_range_input(seed: int) -> None:
    rng = random.Random(seed)
    case = rng.choice(CASES)(rng)
    try:
        want: np.ndarray | None = case.reference()
    except Invalid:
        want = None
    ok, got = nnerror_or_ok(case.name, lambda: _run(case, want))
    if want is None and ok:
        raise Finding("wrong", f"{case.name}: invalid run-time input accepted (gave {np.asarray(got).ravel()[:8]})")
    if want is not None and not ok:
        raise Finding("unexpected", f"{case.name}: valid run-time input refused: {got}")
    if want is not None and not np.allclose(got, want, rtol=1e-6, atol=1e-6):  # type: ignore[arg-type]
        raise Finding("wrong", f"{case.name}: got {got}, want {want}")


runtime_input_trial = guarded(_out_of_range_input)
