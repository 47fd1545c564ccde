"""Fuzz kind (b): random valid graphs over float32 and quant8 operations,
checked against numpy.

A graph starts from one model input (NHWC ``[1, H, W, C]`` or ``[B, K]``)
and appends 1..6 operations, each picked among those that apply to a tensor
made so far: element-wise unary and binary operations (with a fused
activation, a second model input, a broadcast operand or the same tensor
twice), CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D, MAX_POOL_2D,
FULLY_CONNECTED, RESHAPE, CONCATENATION, PAD, TRANSPOSE, SOFTMAX,
SPACE_TO_DEPTH, DEPTH_TO_SPACE, MEAN.  Weights are
random constants, window sizes, strides, padding schemes and activations are
random.

Every operation carries its numpy reference: a function of its inputs'
real values (float64).

* float32 graphs: the reference runs along the graph on the same inputs; the
  last tensor (and some intermediate ones, as extra model outputs) must match
  within a relative 1e-3 of the largest magnitude.
* quant8 graphs (TENSOR_QUANT8_ASYMM or _SIGNED): every operation's output
  is a model output, and each is checked on its own: the reference
  dequantises the *computed* values of the operation's inputs, applies the
  float function and quantises with the output's scale and zero point
  (Android's quantised kernels are integer transcriptions of exactly that);
  nnc must be within 1 quantum.  Output scales are chosen from the range the
  reference produces on the graph's own input, so outputs use the 8 bits.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op

from .common import Finding, guarded, nnerror_or_ok

Fn = Callable[..., np.ndarray]

_ACT: dict[int, Callable[[np.ndarray], np.ndarray]] = {
    0: lambda v: v,
    1: lambda v: np.maximum(v, 0),
    2: lambda v: np.clip(v, -1, 1),
    3: lambda v: np.clip(v, 0, 6),
}


def _logistic(v: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-v))


_UNARY: dict[Op, Fn] = {
    Op.RELU: _ACT[1],
    Op.RELU1: _ACT[2],
    Op.RELU6: _ACT[3],
    Op.LOGISTIC: _logistic,
    Op.TANH: np.tanh,
}
_FLOAT_UNARY: dict[Op, Fn] = {Op.ABS: np.abs, Op.NEG: np.negative}
#: binary operations (with a fused activation input when True)
_BINARY: dict[Op, tuple[Fn, bool]] = {
    Op.ADD: (np.add, True),
    Op.SUB: (np.subtract, True),
    Op.MUL: (np.multiply, True),
    Op.MAXIMUM: (np.maximum, False),
    Op.MINIMUM: (np.minimum, False),
}
#: fixed (scale, zero point offset from the type's minimum) of quantised outputs
_FIXED_QUANT: dict[Op, tuple[float, int]] = {Op.LOGISTIC: (1 / 256, 0), Op.TANH: (1 / 128, 128), Op.SOFTMAX: (1 / 256, 0)}


@dataclass
class Tensor:
    """An operand of the graph being built: its sample value (real numbers,
    float64) is what the reference computes on the graph's own inputs."""

    index: int
    value: np.ndarray
    scale: float = 0.0
    zero_point: int = 0

    @property
    def shape(self) -> tuple[int, ...]:
        return self.value.shape


@dataclass
class Check:
    """One operation's reference: ``fn`` of its inputs' real values."""

    name: str
    out: Tensor
    inputs: list[Tensor]
    fn: Fn


@dataclass
class Graph:
    rng: random.Random
    qtype: T | None  # None: float32
    model: nnc.Model = field(default_factory=nnc.Model)
    feeds: list[tuple[Tensor, np.ndarray]] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    tensors: list[Tensor] = field(default_factory=list)
    outputs: list[Tensor] = field(default_factory=list)

    # -- quantisation -------------------------------------------------------------------
    @property
    def qrange(self) -> tuple[int, int]:
        return (-128, 127) if self.qtype == T.TENSOR_QUANT8_ASYMM_SIGNED else (0, 255)

    @property
    def dtype(self) -> type:
        return {None: np.float32, T.TENSOR_QUANT8_ASYMM: np.uint8}.get(self.qtype, np.int8)  # type: ignore[arg-type]

    def quantize(self, v: np.ndarray, scale: float, zp: int) -> np.ndarray:
        lo, hi = self.qrange
        return np.clip(np.floor(v / scale + 0.5) + zp, lo, hi)

    def real(self, t: Tensor, q: np.ndarray) -> np.ndarray:
        """Real values of the stored values ``q`` of ``t``."""
        return (q.astype(np.float64) - t.zero_point) * t.scale if self.qtype else q.astype(np.float64)

    def params_for(self, v: np.ndarray) -> tuple[float, int]:
        """A scale and zero point that cover the values ``v`` (with some slack either way)."""
        lo, hi = min(0.0, float(v.min())), max(0.0, float(v.max()))
        span = max(hi - lo, 1e-3) * self.rng.uniform(0.8, 1.5)
        scale = span / 255
        zp = self.qrange[0] + int(round(-lo / scale))
        return scale, int(np.clip(zp, *self.qrange))

    # -- operands -----------------------------------------------------------------------
    def scalar(self, t: T, value: float) -> int:
        k = self.model.add_operand(t)
        self.model.set_operand_value(k, value)
        return k

    def const(self, t: T, array: np.ndarray, scale: float = 0.0, zp: int = 0) -> int:
        k = self.model.add_operand(t, list(array.shape), scale, zp)
        self.model.set_operand_value(k, array)
        return k

    def input(self, shape: Sequence[int]) -> Tensor:
        """A new model input with a random value (its feed)."""
        shape = tuple(shape)
        nprng = np.random.default_rng(self.rng.randrange(2**32))
        if self.qtype is None:
            feed = nprng.normal(size=shape).astype(np.float32)
            t = Tensor(self.model.add_operand(T.TENSOR_FLOAT32, list(shape)), feed.astype(np.float64))
        else:
            scale = math.exp(self.rng.uniform(math.log(0.005), math.log(0.2)))
            zp = self.rng.randint(*self.qrange)
            feed = nprng.integers(*self.qrange, size=shape, endpoint=True).astype(self.dtype)
            k = self.model.add_operand(self.qtype, list(shape), scale, zp)
            t = Tensor(k, np.zeros(0), scale, zp)
            t.value = self.real(t, feed)
        self.feeds.append((t, feed))
        self.tensors.append(t)
        return t

    def weights(self, shape: Sequence[int], signed_quant: bool = False) -> tuple[int, np.ndarray, float]:
        """A constant weight tensor: (operand, real values, scale)."""
        nprng = np.random.default_rng(self.rng.randrange(2**32))
        if self.qtype is None:
            w = nprng.normal(size=shape).astype(np.float32)
            return self.const(T.TENSOR_FLOAT32, w), w.astype(np.float64), 0.0
        scale = math.exp(self.rng.uniform(math.log(0.002), math.log(0.05)))
        zp = self.rng.randint(*self.qrange)
        q = nprng.integers(*self.qrange, size=shape, endpoint=True).astype(self.dtype)
        k = self.const(self.qtype, q, scale, zp)
        return k, (q.astype(np.float64) - zp) * scale, scale

    def bias(self, n: int, in_scale: float, w_scale: float) -> tuple[int, np.ndarray]:
        nprng = np.random.default_rng(self.rng.randrange(2**32))
        if self.qtype is None:
            b = nprng.normal(size=n).astype(np.float32)
            return self.const(T.TENSOR_FLOAT32, b), b.astype(np.float64)
        scale = float(np.float32(in_scale) * np.float32(w_scale))
        q = nprng.integers(-2000, 2000, size=n).astype(np.int32)
        return self.const(T.TENSOR_INT32, q, scale, 0), q.astype(np.float64) * scale

    def result(self, name: str, inputs: list[Tensor], fn: Fn, fixed: tuple[float, int] | None = None,
               min_scale: float = 0.0, same: Tensor | None = None) -> tuple[int, Tensor]:  # fmt: skip
        """The output operand of a new operation whose reference is ``fn``:
        its quantisation is ``fixed`` (scale, offset from the type's minimum),
        ``same``'s, or chosen from the range of the sample values."""
        v = fn(*[t.value for t in inputs])
        if self.qtype is None:
            t = Tensor(self.model.add_operand(T.TENSOR_FLOAT32, list(v.shape)), v)
        else:
            if same is not None:
                scale, zp = same.scale, same.zero_point
            elif fixed is not None:
                scale, zp = fixed[0], self.qrange[0] + fixed[1]
            else:
                scale, zp = self.params_for(v)
                scale = max(scale, min_scale * 1.01)
            t = Tensor(self.model.add_operand(self.qtype, list(v.shape), scale, zp), np.zeros(0), scale, zp)
            t.value = self.real(t, self.quantize(v, scale, zp))
        self.checks.append(Check(name, t, inputs, fn))
        self.tensors.append(t)
        return t.index, t

    def operation(self, op: Op, operands: list[int], out: int) -> None:
        self.model.add_operation(op, operands, [out])


# -- references -------------------------------------------------------------------------------------


def _same_pads(size: int, k: int, s: int) -> tuple[int, int]:
    out = -(-size // s)
    total = max((out - 1) * s + k - size, 0)
    return total // 2, total - total // 2


def _pads(scheme: int, h: int, w: int, kh: int, kw: int, sh: int, sw: int) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) of NNAPI's implicit padding (1 SAME, 2 VALID)."""
    if scheme == 2:
        return 0, 0, 0, 0
    return (*_same_pads(h, kh, sh), *_same_pads(w, kw, sw))


def _windows(x: np.ndarray, kh: int, kw: int, sh: int, sw: int, pads: tuple[int, int, int, int],
             fill: float = 0.0) -> tuple[np.ndarray, int, int]:  # fmt: skip
    """The padded input and the output size of a window sweep."""
    top, bottom, left, right = pads
    xp = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=fill)
    oh = (xp.shape[1] - kh) // sh + 1
    ow = (xp.shape[2] - kw) // sw + 1
    return xp, oh, ow


def _patch(xp: np.ndarray, i: int, j: int, oh: int, ow: int, sh: int, sw: int) -> np.ndarray:
    return xp[:, i : i + sh * (oh - 1) + 1 : sh, j : j + sw * (ow - 1) + 1 : sw, :]


def conv_ref(x, w, b, pads, sh, sw, act):
    kh, kw = w.shape[1:3]
    xp, oh, ow = _windows(x, kh, kw, sh, sw, pads)
    out = np.zeros((x.shape[0], oh, ow, w.shape[0]))
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nhwc,oc->nhwo", _patch(xp, i, j, oh, ow, sh, sw), w[:, i, j, :])
    return _ACT[act](out + b)


def depthwise_ref(x, w, b, pads, sh, sw, mult, act):
    kh, kw = w.shape[1:3]
    xp, oh, ow = _windows(np.repeat(x, mult, axis=3), kh, kw, sh, sw, pads)
    out = np.zeros((x.shape[0], oh, ow, w.shape[3]))
    for i in range(kh):
        for j in range(kw):
            out += _patch(xp, i, j, oh, ow, sh, sw) * w[0, i, j, :]
    return _ACT[act](out + b)


def pool_ref(x, kind, kh, kw, pads, sh, sw, act):
    """MAX over the window, or the mean of its in-bounds elements (Android's AVERAGE_POOL)."""
    if kind == "max":
        xp, oh, ow = _windows(x, kh, kw, sh, sw, pads, fill=-np.inf)
        out = np.full((x.shape[0], oh, ow, x.shape[3]), -np.inf)
        for i in range(kh):
            for j in range(kw):
                out = np.maximum(out, _patch(xp, i, j, oh, ow, sh, sw))
        return _ACT[act](out)
    xp, oh, ow = _windows(x, kh, kw, sh, sw, pads)
    ones, _, _ = _windows(np.ones_like(x), kh, kw, sh, sw, pads)
    total = np.zeros((x.shape[0], oh, ow, x.shape[3]))
    count = np.zeros_like(total)
    for i in range(kh):
        for j in range(kw):
            total += _patch(xp, i, j, oh, ow, sh, sw)
            count += _patch(ones, i, j, oh, ow, sh, sw)
    return _ACT[act](total / count)


def softmax_ref(x, beta):
    e = np.exp(beta * (x - x.max(axis=-1, keepdims=True)))
    return e / e.sum(axis=-1, keepdims=True)


# -- operations: each adds itself to the graph after tensor ``x`` ---------------------------------------


def _unary(g: Graph, x: Tensor) -> Tensor:
    table = dict(_UNARY) if g.qtype else {**_UNARY, **_FLOAT_UNARY}
    op = g.rng.choice(sorted(table))
    fixed = _FIXED_QUANT.get(op)
    out, t = g.result(op.name, [x], table[op], fixed=fixed, same=None if fixed else x)
    g.operation(op, [x.index], out)
    return t


def _second_operand(g: Graph, x: Tensor) -> Tensor:
    """Another operand for a binary operation: x itself, another tensor of
    its shape, a new model input of its shape or of a broadcast shape."""
    same_shape = [t for t in g.tensors if t.shape == x.shape and t is not x]
    choice = g.rng.randrange(4)
    if choice == 0:
        return x
    if choice == 1 and same_shape:
        return g.rng.choice(same_shape)
    if choice == 2:
        return g.input([x.shape[-1]] if g.rng.random() < 0.5 else [1] * (len(x.shape) - 1) + [x.shape[-1]])
    return g.input(x.shape)


def _binary(g: Graph, x: Tensor) -> Tensor:
    op = g.rng.choice(sorted(_BINARY))
    fn, has_act = _BINARY[op]
    y = _second_operand(g, x)
    if g.rng.random() < 0.5:
        x, y = y, x
    act = g.rng.randrange(4) if has_act else 0
    min_scale = x.scale * y.scale if op == Op.MUL else 0.0
    out, t = g.result(op.name, [x, y], lambda a, b: _ACT[act](fn(a, b)), min_scale=min_scale)
    g.operation(op, [x.index, y.index] + ([g.scalar(T.INT32, act)] if has_act else []), out)
    return t


def _window(g: Graph, x: Tensor) -> tuple[int, int, int, int, int, tuple[int, int, int, int], list[int]]:
    """Random kernel size, strides and padding for a window over ``x``:
    (kh, kw, sh, sw, scheme, pads, padding operands)."""
    _, h, w, _ = x.shape
    kh, kw = g.rng.randint(1, min(3, h)), g.rng.randint(1, min(3, w))
    sh, sw = g.rng.randint(1, 2), g.rng.randint(1, 2)
    scheme = g.rng.choice([1, 2])
    pads = _pads(scheme, h, w, kh, kw, sh, sw)
    if g.rng.random() < 0.3:  # explicit padding: (left, right, top, bottom)
        pads = (g.rng.randint(0, kh - 1), g.rng.randint(0, kh - 1), g.rng.randint(0, kw - 1), g.rng.randint(0, kw - 1))
        operands = [g.scalar(T.INT32, p) for p in (pads[2], pads[3], pads[0], pads[1])]
    else:
        operands = [g.scalar(T.INT32, scheme)]
    return kh, kw, sh, sw, scheme, pads, operands


def _conv(g: Graph, x: Tensor) -> Tensor:
    kh, kw, sh, sw, _, pads, padding = _window(g, x)
    cout, cin = g.rng.randint(1, 6), x.shape[3]
    wk, w, wscale = g.weights([cout, kh, kw, cin])
    bk, b = g.bias(cout, x.scale, wscale)
    act = g.rng.randrange(4)
    out, t = g.result("CONV_2D", [x], lambda v: conv_ref(v, w, b, pads, sh, sw, act), min_scale=x.scale * wscale)
    g.operation(Op.CONV_2D, [x.index, wk, bk, *padding, g.scalar(T.INT32, sw), g.scalar(T.INT32, sh),
                             g.scalar(T.INT32, act)], out)  # fmt: skip
    return t


def _depthwise(g: Graph, x: Tensor) -> Tensor:
    kh, kw, sh, sw, _, pads, padding = _window(g, x)
    mult = g.rng.randint(1, 2)
    wk, w, wscale = g.weights([1, kh, kw, x.shape[3] * mult])
    bk, b = g.bias(x.shape[3] * mult, x.scale, wscale)
    act = g.rng.randrange(4)
    out, t = g.result("DEPTHWISE_CONV_2D", [x], lambda v: depthwise_ref(v, w, b, pads, sh, sw, mult, act),
                      min_scale=x.scale * wscale)  # fmt: skip
    g.operation(Op.DEPTHWISE_CONV_2D, [x.index, wk, bk, *padding, g.scalar(T.INT32, sw), g.scalar(T.INT32, sh),
                                       g.scalar(T.INT32, mult), g.scalar(T.INT32, act)], out)  # fmt: skip
    return t


def _pool(g: Graph, x: Tensor) -> Tensor:
    kh, kw, sh, sw, _, pads, padding = _window(g, x)
    kind, op = g.rng.choice([("max", Op.MAX_POOL_2D), ("avg", Op.AVERAGE_POOL_2D)])
    act = g.rng.randrange(4)
    out, t = g.result(op.name, [x], lambda v: pool_ref(v, kind, kh, kw, pads, sh, sw, act), same=x)
    g.operation(op, [x.index, *padding, g.scalar(T.INT32, sw), g.scalar(T.INT32, sh), g.scalar(T.INT32, kw),
                     g.scalar(T.INT32, kh), g.scalar(T.INT32, act)], out)  # fmt: skip
    return t


def _fully_connected(g: Graph, x: Tensor) -> Tensor:
    k = x.shape[-1] if len(x.shape) == 2 else int(np.prod(x.shape[1:]))
    units = g.rng.randint(1, 8)
    wk, w, wscale = g.weights([units, k])
    bk, b = g.bias(units, x.scale, wscale)
    act = g.rng.randrange(4)
    out, t = g.result("FULLY_CONNECTED", [x], lambda v: _ACT[act](v.reshape(-1, k) @ w.T + b),
                      min_scale=x.scale * wscale)  # fmt: skip
    g.operation(Op.FULLY_CONNECTED, [x.index, wk, bk, g.scalar(T.INT32, act)], out)
    return t


def _factor_shape(g: Graph, shape: tuple[int, ...]) -> list[int]:
    """A random shape of rank 2 or 4 with as many elements as ``shape``."""
    n = int(np.prod(shape))
    if g.rng.random() < 0.3:
        return [shape[0], n // shape[0]]
    divisors = [d for d in range(1, n + 1) if n % d == 0]
    a = g.rng.choice(divisors)
    b = g.rng.choice([d for d in divisors if (n // a) % d == 0])
    return [1, a, b, n // a // b]


def _reshape(g: Graph, x: Tensor) -> Tensor:
    new = _factor_shape(g, x.shape)
    shape_operand = g.const(T.TENSOR_INT32, np.array(new if g.rng.random() < 0.8 else [*new[:-1], -1], np.int32))
    out, t = g.result("RESHAPE", [x], lambda v: v.reshape(new), same=x)
    g.operation(Op.RESHAPE, [x.index, shape_operand], out)
    return t


def _concatenation(g: Graph, x: Tensor) -> Tensor:
    axis = g.rng.randrange(len(x.shape))
    other_shape = list(x.shape)
    other_shape[axis] = g.rng.randint(1, 3)
    others = [g.input(other_shape) for _ in range(g.rng.randint(1, 2))]
    parts = [x, *others]
    g.rng.shuffle(parts)
    written_axis = axis - len(x.shape) if g.rng.random() < 0.3 else axis
    out, t = g.result("CONCATENATION", parts, lambda *vs: np.concatenate(vs, axis=axis))
    g.operation(Op.CONCATENATION, [p.index for p in parts] + [g.scalar(T.INT32, written_axis)], out)
    return t


def _pad(g: Graph, x: Tensor) -> Tensor:
    widths = np.array([[g.rng.randint(0, 2), g.rng.randint(0, 2)] for _ in x.shape], np.int32)
    out, t = g.result("PAD", [x], lambda v: np.pad(v, widths), same=x)  # quantised: pads with the zero point
    g.operation(Op.PAD, [x.index, g.const(T.TENSOR_INT32, widths)], out)
    return t


def _transpose(g: Graph, x: Tensor) -> Tensor:
    perm = list(range(len(x.shape)))
    g.rng.shuffle(perm)
    out, t = g.result("TRANSPOSE", [x], lambda v: v.transpose(perm), same=x)
    g.operation(Op.TRANSPOSE, [x.index, g.const(T.TENSOR_INT32, np.array(perm, np.int32))], out)
    return t


def _softmax(g: Graph, x: Tensor) -> Tensor:
    beta = g.rng.choice([1.0, 0.5, 2.0, 0.1])
    out, t = g.result("SOFTMAX", [x], lambda v: softmax_ref(v, beta), fixed=_FIXED_QUANT[Op.SOFTMAX])
    g.operation(Op.SOFTMAX, [x.index, g.scalar(T.FLOAT32, beta)], out)
    return t


def _space_to_depth(g: Graph, x: Tensor) -> Tensor:
    n, h, w, c = x.shape
    if h % 2 or w % 2:
        return _unary(g, x)

    def ref(v: np.ndarray) -> np.ndarray:
        return v.reshape(n, h // 2, 2, w // 2, 2, c).transpose(0, 1, 3, 2, 4, 5).reshape(n, h // 2, w // 2, 4 * c)

    out, t = g.result("SPACE_TO_DEPTH", [x], ref, same=x)
    g.operation(Op.SPACE_TO_DEPTH, [x.index, g.scalar(T.INT32, 2)], out)
    return t


def _depth_to_space(g: Graph, x: Tensor) -> Tensor:
    n, h, w, c = x.shape
    if c % 4:
        return _unary(g, x)

    def ref(v: np.ndarray) -> np.ndarray:
        return v.reshape(n, h, w, 2, 2, c // 4).transpose(0, 1, 3, 2, 4, 5).reshape(n, 2 * h, 2 * w, c // 4)

    out, t = g.result("DEPTH_TO_SPACE", [x], ref, same=x)
    g.operation(Op.DEPTH_TO_SPACE, [x.index, g.scalar(T.INT32, 2)], out)
    return t


def _mean(g: Graph, x: Tensor) -> Tensor:
    """MEAN keeping the rank, or (rank 4) dropping two axes."""
    rank = len(x.shape)
    keep = rank == 2 or g.rng.random() < 0.5
    axes = sorted(g.rng.sample(range(rank), g.rng.randint(1, rank) if keep else 2))
    written = [a - rank if g.rng.random() < 0.3 else a for a in axes]
    out, t = g.result("MEAN", [x], lambda v: v.mean(axis=tuple(axes), keepdims=keep), same=x)
    g.operation(Op.MEAN, [x.index, g.const(T.TENSOR_INT32, np.array(written, np.int32)), g.scalar(T.INT32, int(keep))],
                out)  # fmt: skip
    return t


#: operation builders and the input ranks they accept
_BUILDERS: list[tuple[Callable[[Graph, Tensor], Tensor], tuple[int, ...]]] = [
    (_unary, (2, 4)),
    (_binary, (2, 4)),
    (_binary, (2, 4)),
    (_conv, (4,)),
    (_conv, (4,)),
    (_depthwise, (4,)),
    (_pool, (4,)),
    (_fully_connected, (2, 4)),
    (_reshape, (2, 4)),
    (_concatenation, (2, 4)),
    (_pad, (2, 4)),
    (_transpose, (2, 4)),
    (_softmax, (2, 4)),
    (_space_to_depth, (4,)),
    (_depth_to_space, (4,)),
    (_mean, (2, 4)),
]


def build(seed: int, quant: bool | None = None) -> Graph:
    """A random valid graph (``quant``: force quant8 or float32)."""
    rng = random.Random(seed)
    if quant is None:
        quant = rng.random() < 0.5
    qtype = rng.choice([T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED]) if quant else None
    g = Graph(rng, qtype)
    if rng.random() < 0.75:
        x = g.input([1, rng.randint(1, 7), rng.randint(1, 7), rng.randint(1, 5)])
    else:
        x = g.input([rng.randint(1, 3), rng.randint(1, 40)])
    for _ in range(rng.randint(1, 6)):
        builder = rng.choice([b for b, ranks in _BUILDERS if len(x.shape) in ranks])
        x = builder(g, x)
    outputs = [c.out for c in g.checks] if quant else [x, *[c.out for c in g.checks[:-1] if rng.random() < 0.2]]
    g.outputs = outputs
    g.model.identify_inputs_and_outputs([t.index for t, _ in g.feeds], [t.index for t in outputs])
    g.model.finish()
    return g


def describe(g: Graph) -> str:
    return " -> ".join(f"{c.name}{list(c.out.shape)}" for c in g.checks)


def check(g: Graph, seed: int, cache_dir: str | None = None) -> None:
    """Compile (through the compilation cache in ``cache_dir`` if given) and
    run ``g``; a Finding if nnc is wrong."""
    what = f"{'float32' if g.qtype is None else g.qtype.name} graph {describe(g)} (seed {seed})"
    ok, cm = nnerror_or_ok(what, lambda: nnc.compile(g.model, cache_dir))
    if not ok:
        raise Finding("unexpected", f"{what}: a valid graph failed to compile: {cm}")
    ok, got = nnerror_or_ok(what, lambda: cm.run(*[feed for _, feed in g.feeds]))  # type: ignore[union-attr]
    if not ok:
        raise Finding("unexpected", f"{what}: a valid graph failed to run: {got}")
    computed = {t.index: g.real(t, v) for t, v in zip(g.outputs, got)}
    computed.update({t.index: g.real(t, feed) for t, feed in g.feeds})
    if g.qtype is None:
        for t, v in zip(g.outputs, got):
            scale = max(1.0, float(np.abs(t.value).max(initial=0)))
            if v.shape != t.shape or not np.allclose(v, t.value, rtol=1e-3, atol=1e-3 * scale):
                err = np.abs(v - t.value).max() if v.shape == t.shape else f"shape {v.shape} != {t.shape}"
                raise Finding("wrong", f"{what}: output {t.index}: max error {err}")
        return
    for c in g.checks:
        want = g.quantize(c.fn(*[computed[t.index] for t in c.inputs]), c.out.scale, c.out.zero_point)
        have = np.rint(computed[c.out.index] / c.out.scale) + c.out.zero_point
        if have.shape != want.shape or np.abs(have - want).max(initial=0) > 1:
            err = np.abs(have - want).max() if have.shape == want.shape else f"shape {have.shape} != {want.shape}"
            raise Finding("wrong", f"{what}: {c.name} (operand {c.out.index}) off by {err} quanta")


def _random_graph(seed: int) -> None:
    g = build(seed)
    check(g, seed)


graph_trial = guarded(_random_graph)
