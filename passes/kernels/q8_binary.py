"""Quantised ADD and MUL of whole tensors on the vector unit.

Android's reference arithmetic for one element (gemmlowp fixed point,
:func:`~nnc.passes.lowering.quant.add_element` and
:func:`~nnc.passes.lowering.quant.mul_element`) as a loop body is scalar
64-bit arithmetic that LLVM vectorises per operation: about 0.8 ns per
element, and each ADD's body, its numbers folded in, took LLVM about 30 ms
to vectorise (a MobileNetV3 has 18 of them).  Here the same integers come
from the int32 lane arithmetic of :mod:`nnc.passes.kernels.q8` (the fused
residual ADD's :func:`~nnc.passes.kernels.q8.add_lanes`, and the
requantisation's :func:`~nnc.passes.kernels.q8.rescale`), with the
operation's numbers read from a table at run time: one kernel per
operation kind, 8-bit type and (for ADD) which inputs need no rescaling,
shared by every such operation of a model.

A call computes ``rows`` rows of ``cols`` elements: row ``r`` of the output
at ``o_base + r * cols``, of the inputs at ``a_base + r * a_rs`` and
``b_base + r * b_rs``.  A row stride of 0 broadcasts one row (a per-channel
operand, as in squeeze-and-excitation's MUL); equal shapes are one row.
A step takes twice the target's float32 lanes (two registers' worth of
independent work per step); a row's last ``cols mod lanes`` elements take
at most one step of each narrower power of two.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import i8, i32

from nnc.passes.kernels.q8 import (
    AddForm,
    AddLanes,
    Rescale,
    add_lanes,
    add_params_of,
    add_table,
    rescale,
    table_scalars,
    uniform_rescale_params,
    value_lanes,
)
from nnc.passes.kernels.vector import MIN_PIECE, IndexOrInt, IVec, Vec, each, kernel, parallel_pieces
from nnc.passes.lowering.base import Emitter, LoweringContext, Value
from nnc.passes.lowering.quant import AddParams, MulParams, add_inputs_normal

#: smaller operations keep the inline loop: LLVM does not vectorise so
#: short a loop (so it costs little to compile), and the kernel's call and
#: parameter loads would cost more than its lanes save
MIN_ELEMENTS = 256


def vector_form(p: AddParams | MulParams) -> bool:
    """Whether the lane arithmetic computes ``p``'s operation: the input
    multipliers of an ADD normalised (:func:`add_inputs_normal`, which a
    SUB's negated multiplier is not), the output multiplier in [0, 2^31)
    and its right shift in [0, 31] (:func:`~nnc.passes.kernels.q8.rescale`)."""
    if isinstance(p, AddParams) and not add_inputs_normal(p):
        return False
    return 0 <= p.output_multiplier < (1 << 31) and 0 <= -p.output_shift <= 31


def mul_table(p: MulParams) -> np.ndarray:
    """The int32 table :func:`mul_params_of` reads."""
    return np.array(
        [p.input1_offset, p.input2_offset, p.output_multiplier, -p.output_shift, p.output_offset, p.act_min, p.act_max],
        dtype=np.int32,
    )


@dataclass(frozen=True)
class MulLanes:
    """A quantised MUL's parameters as equal lanes."""

    offset1: Value
    offset2: Value
    scale: Rescale
    zp: Value
    lo: Value
    hi: Value


def mul_params_of(iv: IVec, table: Value, w: int) -> MulLanes:
    """:func:`mul_table`'s entries at ``table``, each splat to ``w`` lanes."""
    scalars = table_scalars(iv.e, table, 7)
    off1, off2, _, _, zp, lo, hi = (iv.splat(v, w) for v in scalars)
    return MulLanes(off1, off2, uniform_rescale_params(iv, scalars[2], scalars[3], w), zp, lo, hi)


def mul_lanes(iv: IVec, a: Value, b: Value, p: MulLanes) -> Value:
    """Android's ``MulElementwise`` per lane of the widened 8-bit lanes ``a``
    and ``b``, clamped, as int32: the product of the centred values (at most
    255 * 255 in magnitude, exact) rescaled by the output multiplier."""
    product = iv.mul(iv.add(a, p.offset1), iv.add(b, p.offset2))
    return iv.max(iv.min(iv.add(rescale(iv, product, p.scale), p.zp), p.hi), p.lo)


def binary_kernel(p: AddParams | MulParams, unsigned: bool, lanes: int) -> tuple[str, Callable[[Emitter, list[Value]], None]]:
    """The shared kernel of ``p``'s kind: ``(a, b, out, table, a_base,
    b_base, o_base, rows, cols, a_rs, b_rs)`` (see the module doc)."""
    form = AddForm.of(p, unsigned) if isinstance(p, AddParams) else None
    if form is not None:
        name = f"nnc_q8_add{form.tag[len('_add'):]}_{lanes}"
    else:
        name = f"nnc_q8_mul_{'u' if unsigned else 's'}_{lanes}"

    def params(iv: IVec, table: Value, w: int) -> AddLanes | MulLanes:
        return add_params_of(iv, table, w) if form is not None else mul_params_of(iv, table, w)

    def compute(iv: IVec, x: Value, y: Value, q: AddLanes | MulLanes) -> Value:
        if isinstance(q, MulLanes):
            return mul_lanes(iv, x, y, q)
        assert form is not None
        return add_lanes(iv, x, y, q, form)

    def body(e: Emitter, args: list[Value]) -> None:
        a, b, out, table, a_base, b_base, o_base, rows, cols, a_rs, b_rs = args
        iv = IVec(e)
        steps = [lanes >> k for k in range(lanes.bit_length()) if lanes >> k]  # lanes, lanes / 2, ..., 1
        lanes_of = {w: params(iv, table, w) for w in steps}
        ends = [e.sub(cols, e.rem(cols, e.index(w))) for w in steps]  # each step's last element

        def row(e2: Emitter, r: IndexOrInt) -> None:
            v = Vec(e2)
            at = (v.ix(a_base, (r, a_rs)), v.ix(b_base, (r, b_rs)), v.ix(o_base, (r, cols)))

            def step(w: int) -> Callable[[Emitter, IndexOrInt], None]:
                def go(e3: Emitter, i: IndexOrInt) -> None:
                    iv3, v3 = IVec(e3), Vec(e3)
                    x = value_lanes(iv3, iv3.load(a, v3.ix(at[0], i), i8, w), unsigned)
                    y = value_lanes(iv3, iv3.load(b, v3.ix(at[1], i), i8, w), unsigned)
                    iv3.store(iv3.trunc(compute(iv3, x, y, lanes_of[w]), i8), out, v3.ix(at[2], i))

                return go

            start: IndexOrInt = 0
            for w, end in zip(steps, ends):  # after the whole vectors at most one of each narrower width
                each(e2, start, end, w, step(w))
                start = end

        each(e, 0, rows, 1, row)

    return name, body


def binary(ctx: LoweringContext, p: AddParams | MulParams, unsigned: bool, a: Value, b: Value, out: Value,
           rows: int, cols: int, a_rs: int, b_rs: int) -> None:  # fmt: skip
    """``out = a op b`` over the flat 8-bit buffers, ``rows`` x ``cols``
    (see the module doc), in pieces for the thread pool
    (:func:`~nnc.passes.kernels.vector.parallel_pieces`): of the elements
    when there is one row (both inputs whole), else of the rows."""
    name, body = binary_kernel(p, unsigned, 2 * ctx.tiles.lanes)
    table = ctx.flat(ctx.packed_constant(add_table(p) if isinstance(p, AddParams) else mul_table(p), i32))

    def kernel_call(e: Emitter, bases: list[IndexOrInt], rows: IndexOrInt, cols: IndexOrInt) -> None:
        kernel(ctx, e, name, [a, b, out, table, *bases, rows, cols, a_rs, b_rs], body)

    if rows == 1:  # both inputs whole: a piece is a row of its own at its first element
        parallel_pieces(ctx.e, cols, 2 * ctx.tiles.lanes, lambda e, start, n: kernel_call(e, [start] * 3, 1, n))
        return

    def row_piece(e: Emitter, r0: IndexOrInt, n: IndexOrInt) -> None:
        v = Vec(e)
        kernel_call(e, [v.ix(0, (r0, a_rs)), v.ix(0, (r0, b_rs)), v.ix(0, (r0, cols))], n, cols)

    parallel_pieces(ctx.e, rows, 1, row_piece, -(-MIN_PIECE // cols))
