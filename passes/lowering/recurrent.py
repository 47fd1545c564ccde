"""Recurrent and hashing operations: LSTM, RNN, SVDF, LSH_PROJECTION and the
sequence operations UNIDIRECTIONAL_SEQUENCE_LSTM/RNN and
BIDIRECTIONAL_SEQUENCE_LSTM/RNN.

Each lowering follows Android's reference implementation (``LSTM.cpp``,
``RNN.cpp``, ``SVDF.cpp``, ``LSHProjection.cpp`` in ``nn/common/operations``)
step by step: LSTM gates are initialised with their bias (or zero under layer
normalisation) and accumulate the matrix products, then peephole terms, layer
normalisation, activations and clipping are applied in LSTMCell's order, and
the scratch buffer ends up holding the same gate blocks as Android's.

LSTM's gate products (input, auxiliary input and recurrent, each
``[batch x depth] * [units x depth]^T``) use FULLY_CONNECTED's float32 vector
kernels (:func:`nnc.passes.lowering.conv.fully_connected_f32`: dot products
for few rows, else the GEMM) when the depth is at least one vector (16
floats); each stage starts from the previous one's sums as its bias, one call
per batch row.  Shallower products, and the other recurrent ops' products,
are reductions ``out[b, r] += w[r, k] * x[b, k]`` accumulated straight into
the destination (Android sums each dot product first and then adds it; the
difference is within float rounding).
Activation codes of LSTM and SVDF are TfLite's fused activations
(0 none, 1 relu, 2 relu1, 3 relu6, 4 tanh, 6 sigmoid).

The sequence operations run the one-step cells (:func:`lstm_step`,
:func:`rnn_step`, also used by LSTM and RNN) inside one ``scf.for`` over the
time steps.  As in Android, a batch-major sequence is first transposed to
time-major (a view when the batch is 1), so that every step is a contiguous
[batch, size] block, taken with ``memref.view`` at a loop-dependent byte
offset; the cell's generics then use only static maps.  An LSTM sequence
computes the input products of all its steps before the loop (they do not
depend on the state), one GEMM per gate over time * batch rows; each step
then only adds the recurrent products.  The state is carried
in place in the state outputs (or temporaries) and each step's output is
copied into the hidden state.

LSH_PROJECTION hashes ``seed ++ input row bytes`` with farmhash's
``Fingerprint64`` (``farmhashna::Hash64``) in generated code: the seed comes
from the hash tensor and the rows from the input, either of which may be a
model input.  The key length is static, so the length-dependent branches of
Hash64 are chosen at compile time and every fetch offset is a constant
(or, past the first 64-byte block of a long key, a loop-carried one).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import MemRefType, UnrealizedConversionCastOp, f32, f64, i8, i32, i64
from xdsl.ir import Attribute

from nnc.dialects.rules.recurrent import (
    BIDI_ACTIVATION,
    BIDI_AUX_INPUT,
    BIDI_BW_CELL,
    BIDI_FW_CELL,
    BIDI_MERGE,
    BIDI_TIME_MAJOR,
    LSTM_CELL,
    SEQ_LSTM_CELL,
    SEQ_TIME_MAJOR,
    CellLayout,
)
from nnc.enums import FuseCode
from nnc.enums import OperandType as T
from nnc.enums import OperationType as Op
from nnc.passes.lowering import (
    Emitter,
    LoweringContext,
    Value,
    activation,
    affine_map,
    lowering,
)
from nnc.passes.lowering.conv import VW, fully_connected_f32

# -- shared helpers ----------------------------------------------------------------------------

#: TfLiteFusedActivation codes used by LSTM and SVDF.
_ACT_NONE, _ACT_RELU, _ACT_RELU1, _ACT_RELU6, _ACT_TANH, _ACT_SIGMOID = 0, 1, 2, 3, 4, 6


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


def _elem_bytes(t: Attribute) -> int:
    width = t.bitwidth if hasattr(t, "bitwidth") else 32  # type: ignore[attr-defined]
    return max(1, (width + 7) // 8)


def _elem(buf: Value) -> Attribute:
    """The element type of a memref value."""
    return buf.type.element_type  # type: ignore[attr-defined]


def _cast(ctx: LoweringContext, buf: Value, elem: Attribute, shape: Sequence[int]) -> Value:
    """Reinterpret a contiguous buffer's bytes with another element type and shape."""
    op = UnrealizedConversionCastOp.get([buf], [MemRefType(elem, list(shape))])
    ctx.builder.insert(op)
    return op.results[0]


def _view(ctx: LoweringContext, buf: Value, offset: Value | int, shape: Sequence[int]) -> Value:
    """A ``shape`` view of the contiguous ``buf`` starting ``offset`` elements
    in (an ``index`` value or a constant): a plain contiguous memref, which the
    shared vector kernels take as a flat buffer."""
    elem = _elem(buf)
    size = _elem_bytes(elem)
    n = 1
    for d in ctx.shape(buf):
        n *= d
    raw = _cast(ctx, buf, i8, [max(n * size, 1)])
    e = ctx.e
    byte = e.index(offset * size) if isinstance(offset, int) else e.mul(offset, e.index(size))
    view = memref.ViewOp(raw, byte, [], MemRefType(elem, list(shape)))
    ctx.builder.insert(view)
    return view.result


def _vectorised(ctx: LoweringContext, x: Value) -> bool:
    """Whether products with ``x`` [rows, depth] use the shared vector
    kernels: their inner loops run over the depth in vectors of VW floats, so
    a shallower product would be all scalar tails, which the generic does
    as well with less code."""
    return ctx.shape(x)[1] >= VW


def _matmul(ctx: LoweringContext, x: Value, w: Value, bias: Value | None, out: Value) -> None:
    """out [rows, units] = bias [units] (0 if None) + x [rows, depth] * w [units, depth]^T
    with FULLY_CONNECTED's float32 vector kernels (dot products for few rows,
    else the GEMM), or a generic for a shallow product."""
    rows, depth = ctx.shape(x)
    units = ctx.shape(w)[0]
    if not _vectorised(ctx, x):
        _assign_rows(ctx, _Slab(out), bias)
        _matvec_acc(ctx, _Slab(out), w, x)
        return
    if bias is None:
        bias = ctx.alloc([units], f32)
        ctx.fill(bias, 0.0)
    fully_connected_f32(ctx, x, w, bias, out, rows, units, depth, FuseCode.NONE)


def _matmul_acc(ctx: LoweringContext, x: Value, w: Value, acc: Value, out: Value) -> None:
    """out [batch, units] = acc [batch, units] + x [batch, depth] * w^T
    (``MatrixBatchVectorMultiplyAccumulate`` into another buffer) with the
    vector kernels; only for :func:`_vectorised` products.

    The kernels start every row from one bias vector, so each batch row is
    its own call with that row of ``acc`` as the bias.  ``out`` must not
    overlap ``acc`` or ``x``: the kernels' buffers are ``noalias``."""
    batch, depth = ctx.shape(x)
    units = ctx.shape(w)[0]
    for b in range(batch):
        row_x = _view(ctx, x, b * depth, [1, depth])
        row_acc = _view(ctx, acc, b * units, [units])
        row_out = _view(ctx, out, b * units, [1, units])
        fully_connected_f32(ctx, row_x, w, row_acc, row_out, 1, units, depth, FuseCode.NONE)


class _Slab:
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


def _assign_rows(ctx: LoweringContext, out: _Slab, vec: Value | None) -> None:
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


def _matvec_acc(ctx: LoweringContext, out: _Slab, w: Value, x: Value) -> None:
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
    out: _Slab,
    ins: Sequence[_Slab | tuple[Value, str]],
    fn: Callable[[Emitter, Value, list[Value]], Value],
) -> None:
    """out[b, n] = fn(out[b, n], ins...) where each input is a slab, or a
    [batch, n] matrix ("bn") or a vector broadcast over the batch ("n")."""
    shape = out.shape(ctx)
    operands = []
    for item in ins:
        if isinstance(item, _Slab):
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


def _layer_norm(ctx: LoweringContext, g: _Slab, weights: Value, bias: Value) -> None:
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
    out: _Slab,
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
        return self.w_in["output"].type.get_shape()[0]  # type: ignore[attr-defined]


def _gate_block(ctx: LoweringContext, buf: Value, k: int) -> Value:
    """Gate ``k`` of a [n_gates, rows, num_units] buffer, as a [rows, num_units] view."""
    _, rows, units = ctx.shape(buf)
    return _view(ctx, buf, k * rows * units, [rows, units])


def lstm_input_products(ctx: LoweringContext, cell: LstmCell, x: Value, dst: Sequence[Value]) -> None:
    """``dst[k]`` [rows, num_units] = init + x [rows, input] * W_in^T for the
    gates in ``cell.gates`` order; init is the gate's bias, or zero under
    layer normalisation (which adds the bias after normalising).

    The input products do not depend on the state: a sequence computes them
    for all its time steps at once (rows = time * batch), one GEMM per gate."""
    zero = None
    if cell.layer_norm and _vectorised(ctx, x):
        zero = ctx.alloc([cell.num_units], f32)
        ctx.fill(zero, 0.0)
    for name, out in zip(cell.gates, dst):
        _matmul(ctx, x, cell.w_in[name], zero if cell.layer_norm else cell.bias[name], out)


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
                    _matvec_acc(ctx, _Slab(a), weights[name], inp)
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
    gate = {name: _Slab(gates_buf, k) for k, name in enumerate(cell.gates)}
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
    c_slab = _Slab(c_out)
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

    # Projection (or a copy when output_size == num_units).
    if cell.proj_w is not None:
        out_slab = _Slab(out)
        _assign_rows(ctx, out_slab, cell.proj_b)
        w = cell.proj_w
        batch = ctx.shape(out)[0]
        n_out, n_cell = ctx.shape(w)
        ctx.generic(
            (batch, n_out, n_cell),
            [
                (og.buf, affine_map(3, lambda b, r, k: (og.k, b, k))),
                (w, affine_map(3, lambda b, r, k: (r, k))),
            ],
            [(out, affine_map(3, lambda b, r, k: (b, r)))],
            lambda e, a, idx: [e.add(a[2], e.mul(a[1], a[0]))],
            reduction_dims=(2,),
        )
        if cell.proj_clip > 0.0:
            _update(ctx, out_slab, [], lambda e, v, a: _clip(e, v, cell.proj_clip))
    else:
        _update(ctx, _Slab(out), [og], lambda e, v, a: a[0])


# -- LSTM ----------------------------------------------------------------------------------------

ACTIVATION, CELL_CLIP, PROJ_CLIP = 20, 21, 22


def _cell_params(ctx: LoweringContext, first: int = ACTIVATION) -> tuple[int, float, float]:
    """(activation, cell_clip, proj_clip) from three consecutive scalar inputs."""
    return ctx.scalar(first), ctx.scalar(first + 1), ctx.scalar(first + 2)


@lowering(Op.LSTM)
def lstm(ctx: LoweringContext) -> None:
    """One step of LSTMCell::LSTMStep (float32); the gates live in the scratch
    output, blocks of [batch, num_units] in Android's order (input,) cell,
    forget, output."""
    cell = LstmCell.from_inputs(ctx, LSTM_CELL, *_cell_params(ctx))
    x = ctx.input(LSTM_CELL.weights - 1)
    h_in, c_in = (ctx.input(i) for i in LSTM_CELL.states)
    scratch, h_out, c_out, out = (ctx.output(i) for i in range(4))
    batch = ctx.shape(x)[0]
    n_gates, n_cell = len(cell.gates), cell.num_units
    if ctx.shape(scratch) == (batch, n_gates * n_cell):
        gates_buf = ctx.reshaped(scratch, [n_gates, batch, n_cell])
        own_scratch = True
    else:
        # Declared with the other CIFG width (see the LSTM rule): keep the
        # gates in a temporary and zero the scratch output.
        gates_buf = ctx.alloc([n_gates, batch, n_cell], f32)
        own_scratch = False
    lstm_step(ctx, cell, x, h_in, c_in, gates_buf, out, c_out)
    ctx.copy(out, h_out)
    if not own_scratch:
        ctx.fill(scratch, 0.0)


# -- sequences -----------------------------------------------------------------------------------


class _Steps:
    """The time steps of a time-major [time, batch, size] buffer as [batch, size]
    views: ``memref.view`` of its bytes at ``t * batch * size`` elements, so a
    step is a plain contiguous memref and the cell code needs no dynamic maps."""

    def __init__(self, ctx: LoweringContext, buf: Value):
        self.time, batch, size = ctx.shape(buf)
        self.elem = _elem(buf)
        self.shape = (batch, size)
        self.stride = batch * size * _elem_bytes(self.elem)
        self.bytes = _cast(ctx, buf, i8, [max(self.time * self.stride, 1)])

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
    buf = ctx.alloc([d1, d0, size], _elem(x))
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
    return ctx.alloc([t, b, size], _elem(out)), True


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


def _state(ctx: LoweringContext, k: int, like: Value) -> Value:
    """Output ``k`` when the operation has it, else a temporary shaped like ``like``."""
    if k < len(ctx.outputs):
        return ctx.output(k)
    return ctx.alloc(ctx.shape(like), _elem(like))


@lowering(Op.UNIDIRECTIONAL_SEQUENCE_LSTM)
def unidirectional_sequence_lstm(ctx: LoweringContext) -> None:
    """UnidirectionalSequenceLSTM: LSTMStep over each time step (an ``scf.for``),
    batch-major sequences transposed to time-major and back as Android does;
    with 3 outputs the state is carried in output_state_out/cell_state_out."""
    cell = LstmCell.from_inputs(ctx, SEQ_LSTM_CELL, *_cell_params(ctx))
    time_major = bool(ctx.scalar(SEQ_TIME_MAJOR))
    h0, c0 = (ctx.input(i) for i in SEQ_LSTM_CELL.states)
    out = ctx.output(0)
    xs = time_major_input(ctx, ctx.input(0), time_major)
    ys, copy_out = sequence_output(ctx, out, time_major)
    lstm_sequence(ctx, cell, xs, h0, c0, ys, _state(ctx, 1, h0), _state(ctx, 2, c0))
    if copy_out:
        write_sequence(ctx, ys, out, time_major)


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


@lowering(Op.UNIDIRECTIONAL_SEQUENCE_RNN)
def unidirectional_sequence_rnn(ctx: LoweringContext) -> None:
    """UnidirectionalSequenceRNN: RNNStep over each time step (an ``scf.for``);
    with 2 outputs the hidden state is carried in hidden_state_out."""
    time_major = bool(ctx.scalar(6))
    h0, out = ctx.input(4), ctx.output(0)
    xs = time_major_input(ctx, ctx.input(0), time_major)
    ys, copy_out = sequence_output(ctx, out, time_major)
    weights = [ctx.input(i) for i in (1, 2, 3)]
    rnn_sequence(ctx, xs, weights, h0, ys, _state(ctx, 1, h0), ctx.scalar(5))
    if copy_out:
        write_sequence(ctx, ys, out, time_major)


# -- bidirectional sequences -----------------------------------------------------------------------


@dataclass
class _Direction:
    """One direction of a bidirectional op: its time-major input, where its
    sequence goes (output ``out`` at feature ``offset``) and which outputs
    hold its final state (None: temporaries)."""

    xs: Value
    out: int
    offset: int
    reverse: bool
    states: int | None


def _bidi_directions(
    ctx: LoweringContext, xs: Value, bw_xs: Value, fw_size: int, merge: bool, n_states: int
) -> list[_Direction]:
    """Android's layout of a bidirectional op's outputs: fw (and bw unless
    merged: then bw follows fw in the last dimension of output 0), then the
    optional state outputs, ``n_states`` per direction."""
    first_state = 1 if merge else 2
    with_states = len(ctx.outputs) > first_state
    return [
        _Direction(xs, 0, 0, False, first_state if with_states else None),
        _Direction(bw_xs, 0 if merge else 1, fw_size if merge else 0, True,
                   first_state + n_states if with_states else None),  # fmt: skip
    ]


def _run_direction(
    ctx: LoweringContext,
    d: _Direction,
    size: int,
    time_major: bool,
    run: Callable[[Value, Callable[[int, Value], Value]], None],
) -> None:
    """Give ``run(ys, state)`` a time-major buffer for the direction's steps
    (``state(k, like)``: the direction's k-th state output or a temporary),
    then write the steps into the direction's output."""
    out = ctx.output(d.out)
    ys, copy_out = sequence_output(ctx, out, time_major, size)

    def state(k: int, like: Value) -> Value:
        if d.states is None:
            return ctx.alloc(ctx.shape(like), _elem(like))
        return ctx.output(d.states + k)

    run(ys, state)
    if copy_out:
        write_sequence(ctx, ys, out, time_major, d.offset)


def _aux_sequence(ctx: LoweringContext, index: int, time_major: bool) -> Value | None:
    return time_major_input(ctx, ctx.input(index), time_major) if ctx.has_input(index) else None


@lowering(Op.BIDIRECTIONAL_SEQUENCE_LSTM)
def bidirectional_sequence_lstm(ctx: LoweringContext) -> None:
    """BidirectionalSequenceLSTM: a forward and a backward :func:`lstm_sequence`.

    Linking modes as Android: an aux input without aux weights is the
    backward direction's input (parallel linking); with aux weights it is
    multiplied into both directions' gates (cross linking).  Layer
    normalisation is on for both directions iff the forward input layer-norm
    weights are given (Android's single ``use_layer_norm``)."""
    params = _cell_params(ctx, BIDI_ACTIVATION)
    layer_norm = ctx.has_input(BIDI_FW_CELL.layer_norm)  # type: ignore[arg-type]
    cells = [
        LstmCell.from_inputs(ctx, c, *params, layer_norm=layer_norm) for c in (BIDI_FW_CELL, BIDI_BW_CELL)
    ]
    time_major = bool(ctx.scalar(BIDI_TIME_MAJOR))
    merge = bool(ctx.scalar(BIDI_MERGE))
    xs = time_major_input(ctx, ctx.input(0), time_major)
    aux = _aux_sequence(ctx, BIDI_AUX_INPUT, time_major)
    cross = aux is not None and bool(cells[0].aux)
    bw_xs = aux if aux is not None and not cross else xs
    fw_size = ctx.shape(ctx.input(BIDI_FW_CELL.states[0]))[1]
    directions = _bidi_directions(ctx, xs, bw_xs, fw_size, merge, 2)
    for cell, layout, d in zip(cells, (BIDI_FW_CELL, BIDI_BW_CELL), directions):
        h0, c0 = (ctx.input(i) for i in layout.states)

        def run(ys: Value, state: Callable[[int, Value], Value], cell=cell, d=d, h0=h0, c0=c0) -> None:
            h, c = state(0, h0), state(1, c0)
            lstm_sequence(ctx, cell, d.xs, h0, c0, ys, h, c, d.reverse, aux if cross else None)

        _run_direction(ctx, d, ctx.shape(h0)[1], time_major, run)


#: BIDIRECTIONAL_SEQUENCE_RNN: fw (weights, recurrent, bias, hidden) at 1, bw at
#: 5, aux input 9, fw/bw aux weights 10/11, activation 12, time_major 13, merge 14.
_BIDI_RNN_CELLS, _BIDI_RNN_AUX_WEIGHTS = (1, 5), (10, 11)


@lowering(Op.BIDIRECTIONAL_SEQUENCE_RNN)
def bidirectional_sequence_rnn(ctx: LoweringContext) -> None:
    """BidirectionalSequenceRNN: a forward and a backward :func:`rnn_sequence`,
    with Android's linking modes (see BIDIRECTIONAL_SEQUENCE_LSTM)."""
    act = ctx.scalar(12)
    time_major, merge = bool(ctx.scalar(13)), bool(ctx.scalar(14))
    xs = time_major_input(ctx, ctx.input(0), time_major)
    aux = _aux_sequence(ctx, 9, time_major)
    cross = aux is not None and ctx.has_input(10)
    bw_xs = aux if aux is not None and not cross else xs
    fw_size = ctx.shape(ctx.input(4))[1]
    directions = _bidi_directions(ctx, xs, bw_xs, fw_size, merge, 1)
    for first, aux_w, d in zip(_BIDI_RNN_CELLS, _BIDI_RNN_AUX_WEIGHTS, directions):
        weights = [ctx.input(first + k) for k in range(3)]
        h0 = ctx.input(first + 3)
        aux_pair = (aux, ctx.input(aux_w)) if cross and aux is not None else None

        def run(
            ys: Value, state: Callable[[int, Value], Value], d=d, weights=weights, h0=h0, aux_pair=aux_pair
        ) -> None:
            rnn_sequence(ctx, d.xs, weights, h0, ys, state(0, h0), act, d.reverse, aux_pair)

        _run_direction(ctx, d, ctx.shape(h0)[1], time_major, run)


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
    o = _Slab(out)
    _assign_rows(ctx, o, bias)
    _matvec_acc(ctx, o, w, x)
    if aux is not None:
        _matvec_acc(ctx, o, aux[1], aux[0])
    _matvec_acc(ctx, o, r, h)
    _update(ctx, o, [], lambda e, v, a: activation(e, v, act))


@lowering(Op.RNN)
def rnn(ctx: LoweringContext) -> None:
    """RNN::RNNStep: output = act(bias + W x + R h); hidden_state_out = output."""
    x, w, r, bias, h = (ctx.input(i) for i in range(5))
    hidden_out, out = ctx.output(0), ctx.output(1)
    rnn_step(ctx, x, w, r, bias, h, out, ctx.scalar(5))
    ctx.copy(out, hidden_out)


# -- SVDF ------------------------------------------------------------------------------------


@lowering(Op.SVDF)
def svdf(ctx: LoweringContext) -> None:
    """SVDF::EvalFloat32, with Android's state layout [batch, num_filters, memory]:
    the newest activation enters at memory - 1 and the state shifts left."""
    x, wf, wt, state_in = ctx.input(0), ctx.input(1), ctx.input(2), ctx.input(4)
    bias = ctx.input(3) if ctx.has_input(3) else None
    rank = ctx.scalar(5)
    act = ctx.scalar(6)
    state_out, out = ctx.output(0), ctx.output(1)
    batch = ctx.shape(x)[0]
    filters, memory = ctx.shape(wt)
    units = filters // rank

    # activation[b, f] = W_feature[f] . x[b]
    feat = ctx.alloc([batch, filters], f32)
    ctx.fill(feat, 0.0)
    _matvec_acc(ctx, _Slab(feat), wf, x)

    # state[b, f, m]: the old state with the newest column replaced.
    state = ctx.alloc([batch, filters, memory], f32)
    old = ctx.reshaped(state_in, [batch, filters, memory])
    last = memory - 1
    ctx.generic(
        (batch, filters, memory),
        [(old, affine_map(3, lambda b, f, m: (b, f, m))), (feat, affine_map(3, lambda b, f, m: (b, f)))],
        [(state, affine_map(3, lambda b, f, m: (b, f, m)))],
        lambda e, a, idx: [e.select(e.cmp("eq", idx[2], e.index(last)), a[1], a[0])],
    )

    # scratch[b, f] = W_time[f] . state[b, f]
    scr = ctx.alloc([batch, filters], f32)
    ctx.fill(scr, 0.0)
    ctx.generic(
        (batch, filters, memory),
        [(state, affine_map(3, lambda b, f, m: (b, f, m))), (wt, affine_map(3, lambda b, f, m: (f, m)))],
        [(scr, affine_map(3, lambda b, f, m: (b, f)))],
        lambda e, a, idx: [e.add(a[2], e.mul(a[1], a[0]))],
        reduction_dims=(2,),
    )

    # output[b, u] = act(bias[u] + sum_r scratch[b, u * rank + r])
    acc = ctx.alloc([batch, units], f32)
    _assign_rows(ctx, _Slab(acc), bias)
    scr3 = ctx.reshaped(scr, [batch, units, rank])
    ctx.generic(
        (batch, units, rank),
        [(scr3, affine_map(3, lambda b, u, r: (b, u, r)))],
        [(acc, affine_map(3, lambda b, u, r: (b, u)))],
        lambda e, a, idx: [e.add(a[1], a[0])],
        reduction_dims=(2,),
    )
    ctx.elementwise(out, [acc], lambda e, a: tflite_activation(e, a[0], act))

    # state_out: shift left by one, zero at the newest position.
    new = ctx.reshaped(state_out, [batch, filters, memory])

    def shift(e: Emitter, a: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        b, f, m = idx
        nxt = e.op(arith.MinSIOp(e.add(m, e.index(1)), e.index(last)))
        v = e.load(state, [b, f, nxt])
        return [e.select(e.cmp("eq", m, e.index(last)), e.f32(0.0), v)]

    ctx.generic((batch, filters, memory), [], [(new, affine_map(3, lambda b, f, m: (b, f, m)))], shift)


# -- LSH_PROJECTION ----------------------------------------------------------------------------

LSH_SPARSE_DEPRECATED, LSH_DENSE, LSH_SPARSE = 1, 2, 3

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


def _wrap32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v


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
    row_bytes = _elem_bytes(inp.type.element_type)  # type: ignore[attr-defined]
    for d in in_shape[1:]:
        row_bytes *= d
    key_len = 4 + row_bytes
    data = _cast(ctx, inp, i8, [max(n_rows * row_bytes, 1)])
    # The seed's bytes: stored as f32 and read back as i32.
    seed_buf = ctx.alloc([1], f32)
    seed_bits = _cast(ctx, seed_buf, i32, [1])

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
            offset = e.op(arith.MuliOp(e.index_cast(i, i32), e.i32(_wrap32(1 << num_bits))))
            sig = e.op(arith.AddiOp(sig, offset))
        return [sig]

    ctx.generic((num_hash,), [], [(out, affine_map(1, lambda k: (k,)))], sparse)

