"""Builtins the delegate rejects, as exact NNAPI graphs (or, for SHAPE,
RANGE and DENSIFY, constants folded at import): no one NNAPI operation is
theirs, so no record lists them; ``DECOMPOSITIONS`` says what each becomes
(docs/tflite.md's table and the tests check against it)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from nnc.enums import FuseCode, OperandType, OperationType
from nnc.tflite.reader import _TFL_DTYPES, _options
from nnc.tflite.state import Converter, _Call, _Unsupported

T = OperandType
Op = OperationType

#: builtin -> the NNAPI graph it becomes (these have no record: no one NNAPI operation is theirs)
DECOMPOSITIONS: dict[str, str] = {}


#: builtin -> its converter (merged into ``CONVERTERS``)
DECOMPOSED: dict[str, Converter] = {}


def decomposes(name: str, graph: str) -> Callable[[Converter], Converter]:
    DECOMPOSITIONS[name] = graph

    def register(fn: Converter) -> Converter:
        DECOMPOSED[name] = fn
        return fn

    return register


def _float_only(c: _Call) -> None:
    if any(c.tensor(k).tfl_type != 0 for k in range(len(c.ins)) if c.has(k)):
        raise _Unsupported(f"only float32 {c.name} is decomposed (no exact integer expansion)")


def _f32(c: _Call, v: float) -> int:
    """A one-element float32 constant (broadcasts like a scalar)."""
    return c.imp.const(np.array([v], np.float32), T.TENSOR_FLOAT32)


class _Graph:
    """Emits an element-wise float32 expansion: each step a new intermediate
    of the output's shape (the last step writes the operator's output)."""

    def __init__(self, c: _Call):
        self.c = c
        self.shape = c.imp.tensors[c.outs[0]].shape
        self.none = c.imp.int32(FuseCode.NONE)

    def op(self, t: OperationType, *ins: int, fuse: int | None = None, out: bool = False) -> int:
        args = list(ins)
        if t in (Op.ADD, Op.SUB, Op.MUL, Op.DIV):
            args.append(self.none if fuse is None else self.c.imp.int32(fuse))
        y = self.c.output(0) if out else self.c.imp.temp_like(self.c.outs[0], self.shape)
        self.c.emit(t, args, [y])
        return y


@decomposes("SQUARED_DIFFERENCE", "SUB, then MUL of the difference by itself")
def _squared_difference(c: _Call) -> None:
    _float_only(c)
    g = _Graph(c)
    d = g.op(Op.SUB, c.input(0), c.input(1))
    g.op(Op.MUL, d, d, out=True)


@decomposes("ADD_N", "a chain of ADDs, in TFLite's order")
def _add_n(c: _Call) -> None:
    if any(c.tensor(k).tfl_type not in (0, 2) for k in range(len(c.ins))):
        raise _Unsupported("ADD_N is decomposed for float32 and int32 only")
    if len(c.ins) < 2:
        raise _Unsupported("ADD_N of one input")
    g = _Graph(c)
    acc = c.input(0)
    for k in range(1, len(c.ins)):
        acc = g.op(Op.ADD, acc, c.input(k), out=k == len(c.ins) - 1)


#: erf(x / sqrt 2) = xc * P(xc**2) / Q(xc**2), xc = x clamped to +-_ERF_CLAMP (where
#: erf rounds to +-1 in float32): a rational approximation (fitted by weighted least
#: squares driven to minimax, degree 5 over 5 in xc**2) within 2e-8 in exact
#: arithmetic; evaluated in float32 with one rounding per operation, erf is within
#: 3.9e-7 and GELU within 1.6e-6 absolute, 2.8e-7 relative to max(|x|, 1), of the
#: exact function (TFLite's own float32 formula with a correctly rounded erf: 4.5e-7).
_ERF_CLAMP = 5.6
_ERF_P = tuple(float.fromhex(h) for h in ("0x1.98845p-1", "0x1.199c74p-4", "0x1.347ef6p-7", "0x1.6c98c4p-12",
                                          "0x1.aa949ap-17", "0x1.7c731ap-25"))  # fmt: skip
_ERF_Q = tuple(float.fromhex(h) for h in ("0x1p+0", "0x1.02e70ap-2", "0x1.da2822p-6", "0x1.f57ac2p-10",
                                          "0x1.3b00eep-14", "0x1.3ccf28p-20"))  # fmt: skip


@decomposes("GELU", "exact: x*(1 + erf(x/sqrt 2))/2, erf a rational function of the clamped x (MINIMUM, MAXIMUM, "
                    "MUL, ADD, DIV; within 3.9e-7); approximate: x*logistic(2*sqrt(2/pi)*(x + 0.044715*x^3))")  # fmt: skip
def _gelu(c: _Call) -> None:
    """NNAPI has no ERF.  The exact form is TFLite's formula 0.5*x*(1 +
    erf(x/sqrt2)) with erf as ``xc * P(xc^2) / Q(xc^2)`` (:data:`_ERF_P`):
    multiplies, adds and one division, which the fused element-wise loop
    runs at about twice the speed of an erfc through EXP.  The tanh form,
    TFLite's approximate=True formula 0.5*x*(1 + tanh(z)), is
    x*logistic(2z): the same function (1 + tanh(z) = 2*logistic(2z)), one
    EXP and a division instead of a TANH, which costs twice an EXP, and no
    cancellation in 1 + tanh(z) where z << 0."""
    _float_only(c)
    o = _options(c.op, "GeluOptions")
    g, x = _Graph(c), c.input(0)
    if o is not None and o.Approximate():
        x3 = g.op(Op.MUL, g.op(Op.MUL, x, x), x)
        inner = g.op(Op.ADD, x, g.op(Op.MUL, x3, _f32(c, 0.044715)))
        gate = g.op(Op.LOGISTIC, g.op(Op.MUL, inner, _f32(c, float(2 * np.sqrt(2 / np.pi)))))
        g.op(Op.MUL, x, gate, out=True)
        return
    xc = g.op(Op.MAXIMUM, g.op(Op.MINIMUM, x, _f32(c, _ERF_CLAMP)), _f32(c, -_ERF_CLAMP))
    s = g.op(Op.MUL, xc, xc)
    num, den = _f32(c, _ERF_P[-1]), _f32(c, _ERF_Q[-1])
    for a in reversed(_ERF_P[:-1]):
        num = g.op(Op.ADD, g.op(Op.MUL, num, s), _f32(c, a))
    for b in reversed(_ERF_Q[:-1]):
        den = g.op(Op.ADD, g.op(Op.MUL, den, s), _f32(c, b))
    erf = g.op(Op.MUL, g.op(Op.DIV, num, den), xc)
    g.op(Op.MUL, g.op(Op.MUL, g.op(Op.ADD, erf, _f32(c, 1.0)), x), _f32(c, 0.5), out=True)


@decomposes("COS", "MUL by 1/2, SIN, MUL by 2, MUL, SUB from 1: 1 - 2*sin(x/2)^2")
def _cos(c: _Call) -> None:
    """NNAPI has SIN but no COS.  The half-angle form 1 - 2*sin(x/2)^2 keeps
    the argument exact (x/2 rounds nothing) where sin(x + pi/2) would lose
    the low bits of x to the addition; the rest is within a few units in
    the last place of 1."""
    _float_only(c)
    g = _Graph(c)
    s = g.op(Op.SIN, g.op(Op.MUL, c.input(0), _f32(c, 0.5)))
    twice_s2 = g.op(Op.MUL, g.op(Op.MUL, s, _f32(c, 2.0)), s)
    g.op(Op.SUB, _f32(c, 1.0), twice_s2, out=True)


@decomposes("SQUARE", "MUL(x, x)")
def _square(c: _Call) -> None:
    """x * x: one MUL, the same rounding as TFLite's."""
    x = c.input(0)
    c.emit(Op.MUL, [x, x, c.imp.int32(0)])


@decomposes("FLOOR_DIV", "int32: DIV (NNAPI's rounds toward negative infinity); float32: DIV, FLOOR")
def _floor_div(c: _Call) -> None:
    """int32: NNAPI's DIV already rounds toward negative infinity (x / 0 is 0
    where TFLite's is undefined); float32: DIV then FLOOR, TFLite's
    ``floor(x / y)``."""
    t = c.tensor(0).tfl_type
    if t == 2:
        c.emit(Op.DIV, [c.input(0), c.input(1), c.imp.int32(0)])
        return
    if t != 0:
        raise _Unsupported("FLOOR_DIV of float32 or int32 only")
    q = c.imp.new_like(c.outs[0])
    c.emit(Op.DIV, [c.input(0), c.input(1), c.imp.int32(0)], [q])
    c.emit(Op.FLOOR, [q])


@decomposes("FLOOR_MOD", "int32: DIV, MUL, SUB")
def _floor_mod(c: _Call) -> None:
    """int32: ``a - floor(a / b) * b`` with NNAPI's DIV (which rounds toward
    negative infinity): DIV, MUL, SUB, exact (x mod 0 is x where TFLite's is
    undefined).  float32 is refused: TFLite computes it from ``fmod``, which
    no NNAPI operation gives."""
    if c.tensor(0).tfl_type != 2:
        raise _Unsupported("FLOOR_MOD of int32 only (float32's is fmod-based)")
    a, b, none = c.input(0), c.input(1), c.imp.int32(0)
    q, p = c.imp.new_like(c.outs[0]), c.imp.new_like(c.outs[0])
    c.emit(Op.DIV, [a, b, none], [q])
    c.emit(Op.MUL, [q, b, none], [p])
    c.emit(Op.SUB, [a, p, none])


@decomposes("ONE_HOT", "RESHAPE, EQUAL with 0..depth-1, SELECT of constant on/off tensors")
def _one_hot(c: _Call) -> None:
    """int32 indices, constant depth / on / off, a new last axis: EQUAL of the
    indices (RESHAPEd to end in 1) with 0..depth-1, then SELECT between
    constant on and off tensors of the output's shape."""
    shape = list(c.tensor(0).shape)
    if c.options("OneHotOptions").Axis() not in (-1, len(shape)):
        raise _Unsupported("ONE_HOT on an axis other than the last")
    if c.tensor(0).tfl_type != 2:
        raise _Unsupported("ONE_HOT indices must be int32")
    out_t = {0: (T.TENSOR_FLOAT32, np.float32), 2: (T.TENSOR_INT32, np.int32)}.get(c.imp.tensors[c.outs[0]].tfl_type)
    if out_t is None:
        raise _Unsupported("ONE_HOT output of float32 or int32 only")
    depth, on, off = (c.imp.constant_value(c.ins[k], w).reshape(-1)[0] for k, w in enumerate(("depth", "on_value", "off_value"), 1))
    out_shape = [*shape, int(depth)]
    column = c.imp.temp_like(c.ins[0], (*shape, 1))
    c.emit(Op.RESHAPE, [c.input(0), c.imp.const(np.array([*shape, 1], np.int32))], [column])
    classes = c.imp.const(np.arange(int(depth), dtype=np.int32).reshape([1] * len(shape) + [int(depth)]))
    hit = c.imp.model.add_operand(T.TENSOR_BOOL8, out_shape)
    c.emit(Op.EQUAL, [column, classes], [hit])
    full = lambda v: c.imp.const(np.full(out_shape, v, out_t[1]), out_t[0])
    c.emit(Op.SELECT, [hit, full(on), full(off)])


@decomposes("BROADCAST_TO", "RESHAPE (a lower rank), TILE")
def _broadcast_to(c: _Call) -> None:
    """TILE by the ratio of the target shape to the input's (exact for every
    type), after a RESHAPE that prepends the missing dimensions."""
    shape = [int(v) for v in c.imp.constant_value(c.ins[1], "shape").reshape(-1)]
    src = list(c.tensor(0).shape)
    if len(src) > len(shape):
        raise _Unsupported(f"shape {shape} has fewer dimensions than the input {src}")
    full = [1] * (len(shape) - len(src)) + src
    if any(d not in (1, n) for d, n in zip(full, shape)):
        raise _Unsupported(f"input shape {src} does not broadcast to {shape}")
    x = c.input(0)
    if full != src:
        y = c.imp.temp_like(c.ins[0], tuple(full))
        c.emit(Op.RESHAPE, [x, c.imp.const(np.array(full, np.int32))], [y])
        x = y
    c.emit(Op.TILE, [x, c.imp.const(np.array([n // d for d, n in zip(full, shape)], np.int32))])


@decomposes("SPLIT_V", "a SLICE per output")
def _split_v(c: _Call) -> None:
    """One SLICE per output (NNAPI's SPLIT cuts equal parts only): sizes
    from the constant size_splits, one of them -1 for the rest."""
    shape = list(c.tensor(0).shape)
    rank = len(shape)
    axis = int(c.imp.constant_value(c.ins[2], "axis").reshape(-1)[0])
    if not -rank <= axis < rank:
        raise _Unsupported(f"axis {axis} out of range for rank {rank}")
    axis %= rank
    sizes = [int(v) for v in c.imp.constant_value(c.ins[1], "size_splits").reshape(-1)]
    if sizes.count(-1) > 1 or len(sizes) != len(c.outs):
        raise _Unsupported(f"size_splits {sizes} for {len(c.outs)} outputs")
    if -1 in sizes:
        sizes[sizes.index(-1)] = shape[axis] - (sum(sizes) + 1)
    if any(n < 0 for n in sizes) or sum(sizes) != shape[axis]:
        raise _Unsupported(f"size_splits {sizes} do not add up to dimension {shape[axis]}")
    start = 0
    for k, n in enumerate(sizes):
        begin, size = [0] * rank, list(shape)
        begin[axis], size[axis] = start, n
        c.emit(Op.SLICE, [c.input(0), c.imp.const(np.array(begin, np.int32)), c.imp.const(np.array(size, np.int32))],
               [c.output(k)])  # fmt: skip
        start += n


@decomposes("UNPACK", "SPLIT, then a RESHAPE per part")
def _unpack(c: _Call) -> None:
    """SPLIT into ``num`` parts along ``axis``, each RESHAPEd without it."""
    o = c.options("UnpackOptions")
    shape = list(c.tensor(0).shape)
    rank, num = len(shape), o.Num()
    axis = o.Axis() % rank if -rank <= o.Axis() < rank else None
    if rank < 2:
        raise _Unsupported("UNPACK of a rank-1 tensor (scalar outputs have no NNAPI operand)")
    if axis is None or shape[axis] != num or num != len(c.outs):
        raise _Unsupported(f"num {num} and axis {o.Axis()} do not match the input shape {shape}")
    part = [*shape[:axis], 1, *shape[axis + 1 :]]
    parts = [c.imp.temp_like(c.ins[0], tuple(part)) for _ in range(num)]
    c.emit(Op.SPLIT, [c.input(0), c.imp.int32(axis), c.imp.int32(num)], parts)
    squeezed = np.array([*shape[:axis], *shape[axis + 1 :]], np.int32)
    for k, p in enumerate(parts):
        c.emit(Op.RESHAPE, [p, c.imp.const(squeezed)], [c.output(k)])


@decomposes("GATHER_ND", "RESHAPE of params to [rows, rest...], GATHER of the linearised row indices on axis 0 "
                         "(constant indices: computed at import; int32 tensor: SLICE, MUL, ADD)")  # fmt: skip
def _gather_nd(c: _Call) -> None:
    """The first k dimensions of params (k: the indices' last dimension)
    become one of rows, so each index tuple is one row number: GATHER on
    axis 0, of any type GATHER takes.  A RESHAPE before it when k > 1, one
    after it when the indices are a single tuple (NNAPI's GATHER indices
    are a tensor, its output one dimension longer)."""
    params, ishape = list(c.tensor(0).shape), list(c.tensor(1).shape)
    if not ishape or not 1 <= ishape[-1] <= len(params):
        raise _Unsupported(f"indices of shape {ishape} for params of shape {params}")
    k, batch = ishape[-1], ishape[:-1]
    lead, rest = params[:k], params[k:]
    if not batch and not rest:
        raise _Unsupported("GATHER_ND of one element (a rank-0 output has no NNAPI operand)")
    rows = int(np.prod(lead))
    x = c.input(0)
    if k > 1:
        x = c.imp.reshaped(x, c.ins[0], (rows, *rest))
    lin_shape = batch or [1]
    idx = _row_numbers(c, lead, lin_shape)
    if lin_shape == batch:
        c.emit(Op.GATHER, [x, c.imp.int32(0), idx])
        return
    y = c.imp.temp_like(c.outs[0], (*lin_shape, *rest))
    c.emit(Op.GATHER, [x, c.imp.int32(0), idx], [y])
    c.emit(Op.RESHAPE, [y, c.imp.const(np.array([*batch, *rest], np.int32))])


def _row_numbers(c: _Call, lead: list[int], shape: list[int]) -> int:
    """The indices' tuples as row numbers of params' first ``len(lead)``
    dimensions, an int32 tensor of ``shape``: computed at import for
    constant indices (int64 ones too, range-checked); for an int32 tensor
    the sum of each column times its row stride (SLICE, MUL, ADD), which
    cannot see an index beyond its own dimension the way TFLite's check
    does (it lands on another row)."""
    strides = [int(np.prod(lead[j + 1 :])) for j in range(len(lead))]
    t = c.tensor(1)
    if t.data is not None:
        v = t.data.astype(np.int64)
        if (v < 0).any() or (v >= np.array(lead)).any():
            raise _Unsupported(f"constant indices out of range for dimensions {lead}")
        return c.imp.const((v * strides).sum(-1).astype(np.int32).reshape(shape))
    if t.tfl_type != 2:
        raise _Unsupported("indices computed at run time must be int32 (NNAPI has no int64 tensor)")
    ishape = list(t.shape)
    col_shape = (*ishape[:-1], 1)
    none = c.imp.int32(FuseCode.NONE)

    def term(j: int) -> int:
        """Column j of the indices times its stride."""
        if len(strides) == 1:
            return c.input(1)
        col = c.imp.temp_like(c.ins[1], col_shape)
        begin = np.zeros(len(ishape), np.int32)
        begin[-1] = j
        c.emit(Op.SLICE, [c.input(1), c.imp.const(begin), c.imp.const(np.array(col_shape, np.int32))], [col])
        if strides[j] == 1:
            return col
        scaled = c.imp.temp_like(c.ins[1], col_shape)
        c.emit(Op.MUL, [col, c.imp.const(np.array([strides[j]], np.int32)), none], [scaled])
        return scaled

    acc = term(0)
    for j in range(1, len(strides)):
        total = c.imp.temp_like(c.ins[1], col_shape)
        c.emit(Op.ADD, [acc, term(j), none], [total])
        acc = total
    if list(col_shape) == shape:
        return acc
    return c.imp.reshaped(acc, c.ins[1], shape)


#: the largest constant 0/1 matrix (elements) a CUMSUM is given: its axis's
#: square, repeated over the dimensions before the axis when some follow it too
_CUMSUM_MATRIX_LIMIT = 1 << 22


@decomposes("CUMSUM", "RESHAPE to [before, axis, after], BATCH_MATMUL by a constant triangular 0/1 matrix, "
                      "RESHAPE (float32, int32)")  # fmt: skip
def _cumsum(c: _Call) -> None:
    """Each output is a sum of a prefix (or, reversed, a suffix) of the
    axis, with or without its own element: a product by a constant 0/1
    matrix.  With the input as [before, n, after], that is [before, n] x
    M^T when nothing follows the axis, M x [n, after] when nothing precedes
    it, else M repeated over ``before`` (NNAPI's BATCH_MATMUL does not
    broadcast).  int32 is exact and wraps as TFLite's does; float32 sums
    the same terms in another order (and an infinity in the axis makes
    every sum NaN, 0 x inf, not only the later ones)."""
    t = c.tensor(0)
    types = {0: (T.TENSOR_FLOAT32, np.float32), 2: (T.TENSOR_INT32, np.int32)}
    if t.tfl_type not in types:
        raise _Unsupported("CUMSUM of float32 or int32 only")
    shape, o = list(t.shape), _options(c.op, "CumsumOptions")
    rank = len(shape)
    axis = int(c.imp.constant_value(c.ins[1], "axis").reshape(-1)[0])
    if not -rank <= axis < rank:
        raise _Unsupported(f"axis {axis} out of range for rank {rank}")
    axis %= rank
    before, n, after = int(np.prod(shape[:axis])), shape[axis], int(np.prod(shape[axis + 1 :]))
    m = _prefix_matrix(n, bool(o is not None and o.Exclusive()), bool(o is not None and o.Reverse()))
    nn_t, dtype = types[t.tfl_type]
    view: tuple[int, ...]
    if after == 1:
        view, mat, first = (before, n), m.T, False
    elif before == 1:
        view, mat, first = (n, after), m, True
    elif before * n * n <= _CUMSUM_MATRIX_LIMIT:
        view, mat, first = (before, n, after), np.broadcast_to(m, (before, n, n)), True
    else:
        raise _Unsupported(f"CUMSUM over {n} elements with {before} x {after} others: the matrix would hold "
                           f"{before * n * n} elements (at most {_CUMSUM_MATRIX_LIMIT})")  # fmt: skip
    const = c.imp.const(np.ascontiguousarray(mat, dtype), nn_t)
    x = c.input(0) if list(view) == shape else c.imp.reshaped(c.input(0), c.ins[0], view)
    product = c.output(0) if list(view) == shape else c.imp.temp_like(c.ins[0], view)
    operands = [const, x] if first else [x, const]
    c.emit(Op.BATCH_MATMUL, [*operands, c.imp.bool8(False), c.imp.bool8(False)], [product])
    if list(view) != shape:
        c.emit(Op.RESHAPE, [product, c.imp.const(np.array(shape, np.int32))])


def _prefix_matrix(n: int, exclusive: bool, reverse: bool) -> np.ndarray:
    """M[j, i] = 1 where output j sums input i: i <= j (i < j exclusive),
    i >= j reversed (i > j)."""
    j, i = np.indices((n, n))
    take = i >= j if reverse else i <= j
    if exclusive:
        take &= i != j
    return take.astype(np.int32)


def _fold(c: _Call, value: np.ndarray, what: str) -> None:
    """The operator's output is the constant ``value`` (known at import); a
    model output cannot be a constant, so one is refused."""
    if c.outs[0] in c.imp.graph_outputs:
        raise _Unsupported(f"{what} as a model output (it is a constant at import)")
    out = c.imp.tensors[c.outs[0]]
    dtype = np.int32 if out.tfl_type in (2, 4) else _TFL_DTYPES.get(out.tfl_type, np.float32)  # int64 -> int32
    if out.tfl_type == 4 and np.abs(value).max(initial=0) > np.iinfo(np.int32).max:
        raise _Unsupported(f"{what}: values beyond int32")
    out.data = np.asarray(value).astype(dtype).reshape(out.shape)
    c.note(f"folded: {what} -> constant")


@decomposes("SHAPE", "a constant (shapes are static at import)")
def _shape(c: _Call) -> None:
    """The input's shape is static: a constant."""
    _fold(c, np.array(c.tensor(0).shape, np.int64), "SHAPE")


@decomposes("RANGE", "a constant (start, limit, delta constant)")
def _range(c: _Call) -> None:
    """start, limit and delta constant: the sequence as a constant."""
    start, limit, delta = (c.imp.constant_value(c.ins[k], w).reshape(-1)[0] for k, w in enumerate(("start", "limit", "delta")))
    if delta == 0:
        raise _Unsupported("RANGE with delta 0")
    _fold(c, np.arange(start, limit, delta), "RANGE")


@decomposes("DENSIFY", "a constant (the reader makes sparse constants dense; not as a model output)")
def _densify(c: _Call) -> None:
    """The reader makes every sparse constant dense as TFLite's format
    converter does (``nnc.tflite.reader._densify``): DENSIFY's output is
    that array, a constant of its own type and quantisation."""
    _fold(c, c.imp.constant_value(c.ins[0], "DENSIFY's input"), "DENSIFY")
