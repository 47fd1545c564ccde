"""The building blocks of the recurrent family: one LSTM or RNN cell step
(:func:`lstm_step`, :func:`rnn_step`) and the loop over the time steps of a
sequence (:func:`lstm_sequence`, :func:`rnn_sequence`), shared by the
lowerings in :mod:`nnc.passes.lowering.recurrent` (this module registers
none).  Each follows Android's ``LSTMCell::LSTMStep`` / ``RNN::RNNStep`` and
the tensor-utils helpers they call (``MatrixBatchVectorMultiplyAccumulate``,
``MeanStddevNormalization``, ...), whose names the helpers here cite.

LSTM's gate products (input, auxiliary input and recurrent, each
``[batch x depth] * [units x depth]^T``) use FULLY_CONNECTED's float32 vector
kernels (:func:`nnc.passes.lowering.conv.fully_connected.fully_connected_f32`: dot products
for few rows, else the GEMM) when the depth is at least one vector
(``ctx.tiles.lanes`` floats, 16 today); each stage starts from the previous
one's sums as its bias, one call per batch row.  Shallower products, and
the other recurrent ops' products, are reductions ``out[b, r] += w[r, k] *
x[b, k]`` accumulated straight into the destination (Android sums each dot
product first and then adds it; the difference is within float rounding).

A sequence runs the one-step cells inside one ``scf.for`` over the time
steps.  As in Android, a batch-major sequence is first transposed to
time-major (a view when the batch is 1), so that every step is a contiguous
[batch, size] block, taken with ``memref.view`` at a loop-dependent byte
offset; the cell's generics then use only static maps.  An LSTM sequence
computes the input products of all its steps before the loop (they do not
depend on the state), one GEMM per gate over time * batch rows; each step
then only adds the recurrent products.  The state is carried in place in
the state outputs (or temporaries) and each step's output is copied into the
hidden state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType, f32, i8
from xdsl.ir import Attribute

from nnc.dialects.rules.recurrent import CellLayout
from nnc.enums import FuseCode
from nnc.passes.lowering.base import (
    Emitter,
    LoweringContext,
    Value,
    activation,
    affine_map,
    element_bytes,
    memref_elem,
)
from nnc.passes.lowering.conv.fully_connected import fully_connected_f32

# -- shared helpers ----------------------------------------------------------------------------

#: TfLiteFusedActivation codes used by LSTM and SVDF.
_ACT_NONE, _ACT_RELU, _ACT_RELU1, _ACT_RELU6, _ACT_TANH, _ACT_SIGMOID = 0, 1, 2, 3, 4, 6

#: A sequence's input products are read by the serial recurrence on the
#: calling thread, a time step at a time; the rows another thread computed
#: then cross cores, about a cache line (16 floats) per 50-100 ns, against
#: 16 x depth multiply-adds that a core does in about 0.02 ns each.
#: Splitting the products pays from about this depth; below it they run on
#: the calling thread (an LSTM of depth 64 ran 10% slower at 2 threads than
#: at 1 with its input products on the pool, 2-vCPU Zen 3).
PARALLEL_INPUT_DEPTH = 256


def tflite_activation(e: Emitter, x: Value, code: int) -> Value:
    """``ApplyActivationToVector`` for one element."""
    if code == _ACT_NONE:
        return x
    if code == _ACT_RELU:
        return e.clamp(x, 0.0, None)
    if code == _ACT_RELU1:
        return e.clamp(x, -1.0, 1.0)
    if code == _ACT_RELU6:
        return e.clamp(x, 0.0, 6.0)
    if code == _ACT_TANH:
        return e.tanh(x)
    if code == _ACT_SIGMOID:
        return e.sigmoid(x)
    raise ValueError(f"unsupported activation {code}")


def _clip(e: Emitter, x: Value, limit: float) -> Value:
    """``ClipVector``: bound to [-limit, limit]; 0 disables clipping."""
    return e.clamp(x, -limit, limit) if limit > 0.0 else x


def element_type(buf: Value) -> Attribute:
    """The element type of a memref value."""
    return memref_elem(buf)


def _view(ctx: LoweringContext, buf: Value, offset: Value | int, shape: Sequence[int]) -> Value:
    """A ``shape`` view of the contiguous ``buf`` starting ``offset`` elements
    in (an ``index`` value or a constant): a plain contiguous memref, which the
    shared vector kernels take as a flat buffer."""
    elem = element_type(buf)
    size = element_bytes(elem)
    n = 1
    for d in ctx.shape(buf):
        n *= d
    raw = ctx.reinterpreted(buf, i8, [max(n * size, 1)])
    e = ctx.e
    byte = e.index(offset * size) if isinstance(offset, int) else e.mul(offset, e.index(size))
    view = memref.ViewOp(raw, byte, [], MemRefType(elem, list(shape)))
    ctx.builder.insert(view)
    return view.result


def _vectorised(ctx: LoweringContext, x: Value) -> bool:
    """Whether products with ``x`` [rows, depth] use the shared vector
    kernels: their inner loops run over the depth in full vectors
    (``ctx.tiles.lanes`` floats), so a shallower product would be all scalar
    tails, which the generic does as well with less code."""
    return ctx.shape(x)[1] >= ctx.tiles.lanes


def _matmul(ctx: LoweringContext, x: Value, w: Value, bias: Value | None, out: Value, parallel: bool = True) -> None:
    """out [rows, units] = bias [units] (0 if None) + x [rows, depth] * w [units, depth]^T
    with FULLY_CONNECTED's float32 vector kernels (dot products for few rows,
    else the GEMM; ``parallel=False``: on the calling thread), or a generic
    for a shallow product."""
    rows, depth = ctx.shape(x)
    units = ctx.shape(w)[0]
    if not _vectorised(ctx, x):
        assign_rows(ctx, Slab(out), bias)
        matvec_acc(ctx, Slab(out), w, x)
        return
    if bias is None:
        bias = ctx.alloc([units], f32)
        ctx.fill(bias, 0.0)
    fully_connected_f32(ctx, x, w, bias, out, rows, units, depth, FuseCode.NONE, parallel)


def _matmul_acc(ctx: LoweringContext, x: Value, w: Value, acc: Value, out: Value) -> None:
    """out [batch, units] = acc [batch, units] + x [batch, depth] * w^T
    (``MatrixBatchVectorMultiplyAccumulate`` into another buffer) with the
    vector kernels; only for :func:`_vectorised` products.

    The kernels start every row from one bias vector, so each batch row is
    its own call with that row of ``acc`` as the bias.  ``out`` must not
    overlap ``acc`` or ``x``: the kernels' buffers are ``noalias``.  The
    products run on the calling thread: they are a time step's, which the
    serial recurrence reads right after (see :data:`PARALLEL_INPUT_DEPTH`)."""
    batch, depth = ctx.shape(x)
    units = ctx.shape(w)[0]
    for b in range(batch):
        row_x = _view(ctx, x, b * depth, [1, depth])
        row_acc = _view(ctx, acc, b * units, [units])
        row_out = _view(ctx, out, b * units, [1, units])
        fully_connected_f32(ctx, row_x, w, row_acc, row_out, 1, units, depth, FuseCode.NONE, parallel=False)


class Slab:
    """A [batch, n] matrix stored as slice ``k`` of a [G, batch, n] buffer (or a
    plain [batch, n] buffer when ``k`` is None): LSTM's gates live side by side
    in the scratch buffer, as in Android's implementation."""

    def __init__(self, buf: Value, k: int | None = None):
        self.buf, self.k = buf, k

    def map(self, rank: int = 2):
        """Map from a domain whose first two dims are (batch, n)."""
        if self.k is None:
            return affine_map(rank, lambda b, n, *_: (b, n))
        k = self.k
        return affine_map(rank, lambda b, n, *_: (k, b, n))

    def shape(self, ctx: LoweringContext) -> tuple[int, int]:
        s = ctx.shape(self.buf)
        return (s[-2], s[-1])


def assign_rows(ctx: LoweringContext, out: Slab, vec: Value | None) -> None:
    """``VectorBatchVectorAssign``: every row of ``out`` = ``vec`` (0 if None)."""
    shape = out.shape(ctx)
    if vec is None:
        ctx.generic(shape, [], [(out.buf, out.map())], lambda e, a, idx: [e.like(0.0, a[0])])
        return
    ctx.generic(
        shape,
        [(vec, affine_map(2, lambda b, n: (n,)))],
        [(out.buf, out.map())],
        lambda e, a, idx: [a[0]],
    )


def matvec_acc(ctx: LoweringContext, out: Slab, w: Value, x: Value) -> None:
    """``MatrixBatchVectorMultiplyAccumulate``: out[b, r] += sum_k w[r, k] * x[b, k]."""
    batch, rows = out.shape(ctx)
    depth = ctx.shape(w)[1]
    ctx.generic(
        (batch, rows, depth),
        [(x, affine_map(3, lambda b, r, k: (b, k))), (w, affine_map(3, lambda b, r, k: (r, k)))],
        [(out.buf, out.map(3))],
        lambda e, a, idx: [e.add(a[2], e.mul(a[1], a[0]))],
        reduction_dims=(2,),
    )


def _update(
    ctx: LoweringContext,
    out: Slab,
    ins: Sequence[Slab | tuple[Value, str]],
    fn: Callable[[Emitter, Value, list[Value]], Value],
) -> None:
    """out[b, n] = fn(out[b, n], ins...) where each input is a slab, or a
    [batch, n] matrix ("bn") or a vector broadcast over the batch ("n")."""
    shape = out.shape(ctx)
    operands = []
    for item in ins:
        if isinstance(item, Slab):
            operands.append((item.buf, item.map()))
            continue
        v, kind = item
        if kind == "n":
            operands.append((v, affine_map(2, lambda b, n: (n,))))
        else:
            operands.append((v, affine_map(2, lambda b, n: (b, n))))
    k = len(operands)
    ctx.generic(
        shape,
        operands,
        [(out.buf, out.map())],
        lambda e, a, idx: [fn(e, a[k], list(a[:k]))],
    )


#: 1.0f / sqrt(kLayerNormEpsilon) in float32, the scale of a constant row.
_INV_SQRT_EPSILON = float(np.float32(1.0) / np.sqrt(np.float32(1e-8)))


def _layer_norm(ctx: LoweringContext, g: Slab, weights: Value, bias: Value) -> None:
    """``MeanStddevNormalization`` over each row, then ``* weights + bias``."""
    batch, n = g.shape(ctx)
    sums = ctx.alloc([batch], f32)
    sq = ctx.alloc([batch], f32)
    ctx.fill(sums, 0.0)
    ctx.fill(sq, 0.0)
    row = affine_map(2, lambda b, c: (b,))
    ctx.generic(
        (batch, n),
        [(g.buf, g.map())],
        [(sums, row), (sq, row)],
        lambda e, a, idx: [e.add(a[1], a[0]), e.add(a[2], e.mul(a[0], a[0]))],
        reduction_dims=(1,),
    )

    def body(e: Emitter, x: Value, a: list[Value]) -> Value:
        s, ss, w, b = a
        size = e.f32(float(n))
        mean = e.div(s, size)
        variance = e.sub(e.div(ss, size), e.mul(mean, mean))
        inv_eps = e.f32(_INV_SQRT_EPSILON)
        inv = e.select(e.cmp("eq", variance, e.f32(0.0)), inv_eps, e.div(e.f32(1.0), e.sqrt(variance)))
        return e.add(e.mul(w, e.mul(e.sub(x, mean), inv)), b)

    _update_rows(ctx, g, [sums, sq], [weights, bias], body)


def _update_rows(
    ctx: LoweringContext,
    out: Slab,
    per_row: Sequence[Value],
    per_col: Sequence[Value],
    fn: Callable[[Emitter, Value, list[Value]], Value],
) -> None:
    """out[b, n] = fn(out[b, n], [r[b] for r in per_row] + [c[n] for c in per_col])."""
    shape = out.shape(ctx)
    operands = [(r, affine_map(2, lambda b, n: (b,))) for r in per_row]
    operands += [(c, affine_map(2, lambda b, n: (n,))) for c in per_col]
    k = len(operands)
    ctx.generic(shape, operands, [(out.buf, out.map())], lambda e, a, idx: [fn(e, a[k], list(a[:k]))])


# -- LSTM cell ---------------------------------------------------------------------------------

#: Gate names in the order of the operands (input, forget, cell, output).
_GATE_ORDER = ("input", "forget", "cell", "output")


@dataclass
class LstmCell:
    """One LSTM cell's tensors (memrefs; a gate is missing from a dict when its
    operand is omitted) and parameters, as ``LSTMCell::LSTMStep`` takes them.

    LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM and both directions of
    BIDIRECTIONAL_SEQUENCE_LSTM build one from a :class:`CellLayout` and run
    :func:`lstm_step` once (LSTM) or once per time step."""

    w_in: dict[str, Value]
    w_rec: dict[str, Value]
    peephole: dict[str, Value]
    bias: dict[str, Value]
    layer_norm: dict[str, Value]
    aux: dict[str, Value]
    proj_w: Value | None
    proj_b: Value | None
    act: int
    cell_clip: float
    proj_clip: float

    @classmethod
    def from_inputs(
        cls,
        ctx: LoweringContext,
        layout: CellLayout,
        act: int,
        cell_clip: float,
        proj_clip: float,
        layer_norm: bool | None = None,
    ) -> LstmCell:
        """``layer_norm`` overrides Android's test for layer normalisation
        (the output layer-norm weights are given)."""
        def pick(first: int | None, names: Sequence[str]) -> dict[str, Value]:
            if first is None:
                return {}
            return {n: ctx.input(first + k) for k, n in enumerate(names) if ctx.has_input(first + k)}

        w = layout.w
        has_ln = layout.layer_norm is not None and ctx.has_input(layout.layer_norm + 3)
        if layer_norm is not None:
            has_ln = layer_norm
        peep = pick(w(8), ("input", "forget", "output"))
        return cls(
            w_in=pick(w(0), _GATE_ORDER),
            w_rec=pick(w(4), _GATE_ORDER),
            # Android: peephole iff cell-to-output weights, layer norm iff
            # output layer-norm weights are given.
            peephole=peep if "output" in peep else {},
            bias=pick(w(11), _GATE_ORDER),
            layer_norm=pick(layout.layer_norm, _GATE_ORDER) if has_ln else {},
            aux=pick(layout.aux, _GATE_ORDER),
            proj_w=ctx.input(w(15)) if ctx.has_input(w(15)) else None,
            proj_b=ctx.input(w(16)) if ctx.has_input(w(16)) else None,
            act=act,
            cell_clip=cell_clip,
            proj_clip=proj_clip,
        )

    @property
    def cifg(self) -> bool:
        return "input" not in self.w_in

    @property
    def gates(self) -> tuple[str, ...]:
        """Gate blocks of the scratch buffer, in Android's order."""
        return ("cell", "forget", "output") if self.cifg else ("input", "cell", "forget", "output")

    @property
    def num_units(self) -> int:
        t = self.w_in["output"].type
        assert isinstance(t, MemRefType)
        return t.get_shape()[0]


def _gate_block(ctx: LoweringContext, buf: Value, k: int) -> Value:
    """Gate ``k`` of a [n_gates, rows, num_units] buffer, as a [rows, num_units] view."""
    _, rows, units = ctx.shape(buf)
    return _view(ctx, buf, k * rows * units, [rows, units])


def lstm_input_products(ctx: LoweringContext, cell: LstmCell, x: Value, dst: Sequence[Value]) -> None:
    """``dst[k]`` [rows, num_units] = init + x [rows, input] * W_in^T for the
    gates in ``cell.gates`` order; init is the gate's bias, or zero under
    layer normalisation (which adds the bias after normalising).

    The input products do not depend on the state: a sequence computes them
    for all its time steps at once (rows = time * batch), one GEMM per gate,
    on the thread pool only from :data:`PARALLEL_INPUT_DEPTH` (see there)."""
    zero = None
    if cell.layer_norm and _vectorised(ctx, x):
        zero = ctx.alloc([cell.num_units], f32)
        ctx.fill(zero, 0.0)
    parallel = ctx.shape(x)[1] >= PARALLEL_INPUT_DEPTH
    for name, out in zip(cell.gates, dst):
        _matmul(ctx, x, cell.w_in[name], zero if cell.layer_norm else cell.bias[name], out, parallel)


def _lstm_gate_products(
    ctx: LoweringContext,
    cell: LstmCell,
    x: Value | None,
    h_in: Value,
    gates_buf: Value,
    aux_x: Value | None,
    x_products: Sequence[Value] | None,
) -> None:
    """Fill ``gates_buf`` with bias + input, auxiliary input and recurrent
    products, added in Android's order.

    A generic accumulates in place; a kernel stage writes another buffer (the
    kernels' buffers must not alias), so kernel stages alternate between the
    gates and a temporary, arranged so that the last one writes the gates."""
    n_gates = len(cell.gates)
    gates = [_gate_block(ctx, gates_buf, k) for k in range(n_gates)]
    stages = ([(aux_x, cell.aux)] if aux_x is not None else []) + [(h_in, cell.w_rec)]
    remaining = sum(_vectorised(ctx, inp) for inp, _ in stages)
    temp: list[Value] = []

    def spare() -> list[Value]:
        if not temp:
            buf = ctx.alloc(ctx.shape(gates_buf), f32)
            temp.extend(_gate_block(ctx, buf, k) for k in range(n_gates))
        return temp

    if x_products is None:
        assert x is not None
        acc = spare() if remaining % 2 else gates
        lstm_input_products(ctx, cell, x, acc)
    else:
        acc = list(x_products)
    for inp, weights in stages:
        if not _vectorised(ctx, inp):
            for name, a in zip(cell.gates, acc):
                if name in weights:
                    matvec_acc(ctx, Slab(a), weights[name], inp)
            continue
        dst = gates if remaining % 2 else spare()
        for name, a, d in zip(cell.gates, acc, dst):
            if name in weights:
                _matmul_acc(ctx, inp, weights[name], a, d)
            else:
                ctx.copy(a, d)
        acc, remaining = dst, remaining - 1
    if acc is not gates:
        for a, d in zip(acc, gates):
            ctx.copy(a, d)


def lstm_step(
    ctx: LoweringContext,
    cell: LstmCell,
    x: Value | None,
    h_in: Value,
    c_in: Value,
    gates_buf: Value,
    out: Value,
    c_out: Value,
    aux_x: Value | None = None,
    x_products: Sequence[Value] | None = None,
) -> None:
    """``LSTMCell::LSTMStep`` (float32) for one [batch, ...] step.

    ``gates_buf`` is [n_gates, batch, num_units] with the gates in
    ``cell.gates`` order.  ``x_products`` (one [batch, num_units] block per
    gate, from :func:`lstm_input_products`) replaces ``x`` when the input
    products were computed ahead.  ``c_out`` may be ``c_in`` and ``out`` may be
    ``h_in``: c_in is last read before c_out is first written (both
    element-wise) and h_in only by the recurrent products, before ``out`` is
    written, so a sequence updates its state in place."""
    gate = {name: Slab(gates_buf, k) for k, name in enumerate(cell.gates)}
    layer_norm = bool(cell.layer_norm)
    act = cell.act

    # Bias (zero under layer normalisation) + input, auxiliary input and
    # recurrent products.
    _lstm_gate_products(ctx, cell, x, h_in, gates_buf, aux_x, x_products)

    def finish_gate(name: str, peep_state: Value) -> None:
        g = gate[name]
        if cell.peephole:
            _update(ctx, g, [(cell.peephole[name], "n"), (peep_state, "bn")],
                    lambda e, v, a: e.add(v, e.mul(a[0], a[1])))  # fmt: skip
        if layer_norm:
            _layer_norm(ctx, g, cell.layer_norm[name], cell.bias[name])
        _update(ctx, g, [], lambda e, v, a: e.sigmoid(v))

    if not cell.cifg:
        finish_gate("input", c_in)
    finish_gate("forget", c_in)

    # Cell: c_out = f * c_in + act(cell) * (i or 1 - f), clipped.
    cg = gate["cell"]
    if layer_norm:
        _layer_norm(ctx, cg, cell.layer_norm["cell"], cell.bias["cell"])
    c_slab = Slab(c_out)
    _update(ctx, c_slab, [gate["forget"], (c_in, "bn")], lambda e, v, a: e.mul(a[0], a[1]))
    _update(ctx, cg, [], lambda e, v, a: tflite_activation(e, v, act))
    if cell.cifg:
        _update(ctx, gate["forget"], [], lambda e, v, a: e.sub(e.f32(1.0), v))
        _update(ctx, c_slab, [cg, gate["forget"]], lambda e, v, a: e.add(v, e.mul(a[0], a[1])))
    else:
        _update(ctx, c_slab, [cg, gate["input"]], lambda e, v, a: e.add(v, e.mul(a[0], a[1])))
    if cell.cell_clip > 0.0:
        _update(ctx, c_slab, [], lambda e, v, a: _clip(e, v, cell.cell_clip))

    # Output gate (peephole on the new cell state), then o * act(c_out).
    finish_gate("output", c_out)
    _update(ctx, cg, [(c_out, "bn")], lambda e, v, a: tflite_activation(e, a[0], act))
    og = gate["output"]
    _update(ctx, og, [cg], lambda e, v, a: e.mul(v, a[0]))
    og_k = og.k
    assert og_k is not None  # a slice of the gates' buffer

    # Projection (or a copy when output_size == num_units).
    if cell.proj_w is not None:
        out_slab = Slab(out)
        assign_rows(ctx, out_slab, cell.proj_b)
        w = cell.proj_w
        batch = ctx.shape(out)[0]
        n_out, n_cell = ctx.shape(w)
        ctx.generic(
            (batch, n_out, n_cell),
            [
                (og.buf, affine_map(3, lambda b, r, k: (og_k, b, k))),
                (w, affine_map(3, lambda b, r, k: (r, k))),
            ],
            [(out, affine_map(3, lambda b, r, k: (b, r)))],
            lambda e, a, idx: [e.add(a[2], e.mul(a[1], a[0]))],
            reduction_dims=(2,),
        )
        if cell.proj_clip > 0.0:
            _update(ctx, out_slab, [], lambda e, v, a: _clip(e, v, cell.proj_clip))
    else:
        _update(ctx, Slab(out), [og], lambda e, v, a: a[0])


# -- sequences -----------------------------------------------------------------------------------


class _Steps:
    """The time steps of a time-major [time, batch, size] buffer as [batch, size]
    views: ``memref.view`` of its bytes at ``t * batch * size`` elements, so a
    step is a plain contiguous memref and the cell code needs no dynamic maps."""

    def __init__(self, ctx: LoweringContext, buf: Value):
        self.time, batch, size = ctx.shape(buf)
        self.elem = element_type(buf)
        self.shape = (batch, size)
        self.stride = batch * size * element_bytes(self.elem)
        self.bytes = ctx.reinterpreted(buf, i8, [max(self.time * self.stride, 1)])

    def at(self, ctx: LoweringContext, t: Value) -> Value:
        e = ctx.e
        offset = e.mul(t, e.index(self.stride))
        view = memref.ViewOp(self.bytes, offset, [], MemRefType(self.elem, list(self.shape)))
        ctx.builder.insert(view)
        return view.result


def _transpose_map(rank: int = 3):
    """(d0, d1, d2) -> (d1, d0, d2): time-major <-> batch-major."""
    return affine_map(rank, lambda a, b, c: (b, a, c))


def time_major_input(ctx: LoweringContext, x: Value, time_major: bool) -> Value:
    """``x`` as [time, batch, size]: itself, a reshaped view when the batch is 1
    (the same bytes), or a transposed copy (Android transposes too)."""
    d0, d1, size = ctx.shape(x)
    if time_major:
        return x
    if d0 == 1:
        return ctx.reshaped(x, [d1, d0, size])
    buf = ctx.alloc([d1, d0, size], element_type(x))
    ctx.generic((d1, d0, size), [(x, _transpose_map())], [(buf, affine_map(3, lambda t, b, k: (t, b, k)))],
                lambda e, a, idx: [a[0]])  # fmt: skip
    return buf


def write_sequence(ctx: LoweringContext, ys: Value, out: Value, time_major: bool, offset: int = 0) -> None:
    """Copy the time-major [time, batch, size] ``ys`` into ``out`` (time- or
    batch-major) at feature offset ``offset`` (merged bidirectional outputs)."""
    shape = ctx.shape(ys)
    if time_major:
        dst = affine_map(3, lambda t, b, k: (t, b, k + offset))
    else:
        dst = affine_map(3, lambda t, b, k: (b, t, k + offset))
    ctx.generic(shape, [(ys, affine_map(3, lambda t, b, k: (t, b, k)))], [(out, dst)], lambda e, a, idx: [a[0]])


def sequence_output(
    ctx: LoweringContext, out: Value, time_major: bool, size: int | None = None
) -> tuple[Value, bool]:
    """A time-major buffer for the steps' outputs: ``out`` itself (or a view)
    when it already has that layout and ``size`` features, else a temporary
    that :func:`write_sequence` copies out.  Returns (buffer, needs_copy)."""
    d0, d1, full = ctx.shape(out)
    size = full if size is None else size
    if size == full and (time_major or d0 == 1):
        return (out if time_major else ctx.reshaped(out, [d1, d0, full])), False
    t, b = (d0, d1) if time_major else (d1, d0)
    return ctx.alloc([t, b, size], element_type(out)), True


def for_each_step(
    ctx: LoweringContext, steps: int, reverse: bool, body: Callable[[LoweringContext, Value], None]
) -> None:
    """An ``scf.for`` over the time steps; ``body(step_ctx, t)`` emits one step
    into the loop (``t`` runs backwards when ``reverse``).  Temporaries the body
    allocates are placed before the loop and live across it."""
    if steps == 0:
        return

    def loop(e: Emitter, i: Value, carried: Sequence[Value]) -> list[Value]:
        t = e.sub(e.index(steps - 1), i) if reverse else i
        body(replace(ctx, builder=e.b), t)
        return []

    ctx.e.for_(0, steps, loop)


def lstm_sequence(
    ctx: LoweringContext,
    cell: LstmCell,
    xs: Value,
    h0: Value,
    c0: Value,
    ys: Value,
    h: Value,
    c: Value,
    reverse: bool = False,
    aux_xs: Value | None = None,
) -> None:
    """``LSTMEvalFloat32``'s loop: run :func:`lstm_step` over the time-major
    ``xs`` [time, batch, input] into the time-major ``ys``, carrying the state
    in ``h`` [batch, output] and ``c`` [batch, num_units], which hold the last
    step's state afterwards."""
    steps, batch, size = ctx.shape(xs)
    n_gates, units = len(cell.gates), cell.num_units
    ctx.copy(h0, h)
    ctx.copy(c0, c)
    gates = ctx.alloc([n_gates, batch, units], f32)
    y_steps = _Steps(ctx, ys)
    aux_steps = _Steps(ctx, aux_xs) if aux_xs is not None else None
    # Input products of every step up front: [gate, time * batch, units].
    rows = steps * batch
    pre = ctx.alloc([n_gates, rows, units], f32)
    if rows:
        x_rows = ctx.reshaped(xs, [rows, size])
        lstm_input_products(ctx, cell, x_rows, [_gate_block(ctx, pre, k) for k in range(n_gates)])

    def step(sc: LoweringContext, t: Value) -> None:
        y = y_steps.at(sc, t)
        aux = aux_steps.at(sc, t) if aux_steps is not None else None
        e = sc.e
        first = e.mul(t, e.index(batch * units))
        x_products = [_view(sc, pre, e.add(first, e.index(k * rows * units)), [batch, units]) for k in range(n_gates)]
        lstm_step(sc, cell, None, h, c, gates, y, c, aux, x_products)
        sc.copy(y, h)

    for_each_step(ctx, steps, reverse, step)


def rnn_sequence(
    ctx: LoweringContext,
    xs: Value,
    weights: Sequence[Value],
    h0: Value,
    ys: Value,
    h: Value,
    act: int,
    reverse: bool = False,
    aux: tuple[Value, Value] | None = None,
) -> None:
    """The loop of Android's sequence RNNs: :func:`rnn_step` over the
    time-major ``xs`` into ``ys``; ``weights`` = (W, R, bias); the hidden state
    is carried in ``h`` (the last step's output afterwards).  ``aux`` is
    (time-major aux input, aux weights)."""
    w, r, bias = weights
    steps = ctx.shape(xs)[0]
    ctx.copy(h0, h)
    x_steps, y_steps = _Steps(ctx, xs), _Steps(ctx, ys)
    aux_steps = _Steps(ctx, aux[0]) if aux is not None else None

    def step(sc: LoweringContext, t: Value) -> None:
        y = y_steps.at(sc, t)
        aux_t = (aux_steps.at(sc, t), aux[1]) if aux is not None and aux_steps is not None else None
        rnn_step(sc, x_steps.at(sc, t), w, r, bias, h, y, act, aux_t)
        sc.copy(y, h)

    for_each_step(ctx, steps, reverse, step)


# -- RNN -------------------------------------------------------------------------------------


def rnn_step(
    ctx: LoweringContext,
    x: Value,
    w: Value,
    r: Value,
    bias: Value,
    h: Value,
    out: Value,
    act: int,
    aux: tuple[Value, Value] | None = None,
) -> None:
    """RNN::RNNStep: out = act(bias + W x (+ W_aux x_aux) + R h).  ``out``
    must not be ``h`` (the recurrent product reads h while accumulating)."""
    o = Slab(out)
    assign_rows(ctx, o, bias)
    matvec_acc(ctx, o, w, x)
    if aux is not None:
        matvec_acc(ctx, o, aux[1], aux[0])
    matvec_acc(ctx, o, r, h)
    _update(ctx, o, [], lambda e, v, a: activation(e, v, act))
