"""IF and WHILE: referenced models inlined into ``scf.if`` / ``scf.while``.

After shape inference every use of a referenced model is a function of its
own with static shapes (see :mod:`nnc.importer`).  ``convert-nnapi-to-linalg``
lowers an IF or WHILE by lowering that function's operations *in place*,
inside the regions of an ``scf`` op (NNAPI forbids reference cycles, so
inlining ends), with the outer operands' buffers as the function's arguments:

IF      ``scf.if`` on element 0 of the condition; each branch writes its
        results straight into the IF's output buffers (or copies them there
        when a result is an input or a constant).

WHILE   The m + k loop state operands live in buffers (the m outputs' own
        buffers, k temporaries), initialised from the WHILE's inputs::

            start = nnc_monotonic_ns()
            scf.while {
              <condition model>                  // reads state + input-only
              late = nnc_monotonic_ns() - start > loop_timeout
              go = cond[0] and status == 0
              if go and late: status = LOOP_TIMEOUT_STATUS
              scf.condition(go and not late)
            } do {
              <body model>                       // into temporaries
              state = body results
            }

        The loop timeout (``ANeuralNetworksExecution_setLoopTimeout``, per
        loop) is main's ``i64`` argument after ``%status`` (present only
        when the model has a WHILE; module attribute ``nnc.loop_timeout_arg``),
        passed by ``nnc_run``; the clock is ``nnc_monotonic_ns`` (declared here,
        defined by ``nnc-add-entry-point`` on ``clock_gettime(CLOCK_MONOTONIC)``).
        A loop also stops when any operation has set the status (invalid
        run-time data), so a failing body cannot spin until the timeout.

Unrolled WHILE (its state changes shape between iterations; shape inference
        listed one body function per iteration in ``nnc.unrolled``, see
        :mod:`nnc.passes.shape_inference`): the bodies run in sequence, each
        reading the previous one's results (the first reads the WHILE's
        inputs) and writing into new buffers of its own shapes (the last one
        into the WHILE's outputs).  The condition is not computed: its value
        at each iteration was known at compile time.  Each iteration still
        checks the loop timeout and the status first, as a loop iteration does::

            start = nnc_monotonic_ns()
            scf.if (status == 0 and not late) { <body 0> }   // else record LOOP_TIMEOUT_STATUS if late
            scf.if (status == 0 and not late) { <body 1> }
            ...

Buffers an inlined operation allocates are created in front of the outermost
IF/WHILE, in the function body, so that ``nnc-plan-buffers`` (which places the
allocations of the function's top-level block) sees them; they are live for
the whole control-flow operation.

xDSL's ``convert-scf-to-cf`` does not lower ``scf.while``: the pass
``nnc-lower-scf-while`` (:mod:`nnc.passes.lower_scf_while`) does, before it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from xdsl.builder import Builder
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import ArrayAttr, IndexType, IntegerAttr, SymbolRefAttr, i8, i32, i64
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

from nnc.dialects.nnapi import SUBGRAPH_ATTR, UNROLLED_ATTR, memref_type
from nnc.dialects.rules.base import OpCall
from nnc.enums import OperationType
from nnc.passes.lowering.base import LoweringContext, lowering
from nnc.runtime.abi import LOOP_TIMEOUT_STATUS

if TYPE_CHECKING:
    from nnc.dialects.nnapi import NNAPIOperation
    from nnc.passes.convert_nnapi_to_linalg import FunctionLowering

#: The monotonic clock in nanoseconds: ``int64_t nnc_monotonic_ns(void)``.
CLOCK_FUNCTION = "nnc_monotonic_ns"
#: Module attribute: index of main's loop-timeout argument (-1: none).
LOOP_TIMEOUT_ARG_ATTR = "nnc.loop_timeout_arg"


# -- the registry entries: what the support check sees ----------------------------------------


def _scalar_outputs(call: OpCall) -> str | None:
    """Scalars are compile-time values in nnc: one computed by a referenced
    model at run time cannot be compiled."""
    if any(not o.type.is_tensor for o in call.outputs):
        return f"{call.type.name} outputs that are scalars are not supported (nnc compiles scalars into the code)"
    return None


def _lowered_by_the_function_lowering(ctx: LoweringContext) -> None:
    """IF/WHILE need the whole function lowering (their referenced models'
    operations are lowered in place): see :data:`FUNCTION_LOWERINGS`."""
    raise PassFailedException(
        f"operation {ctx.call.index} ({ctx.call.type.name}) is lowered by convert-nnapi-to-linalg itself"
    )


lowering(OperationType.IF, OperationType.WHILE, check=_scalar_outputs)(_lowered_by_the_function_lowering)


# -- helpers -------------------------------------------------------------------------------------


def _emit(b: Builder, op: Operation) -> SSAValue:
    b.insert(op)
    return op.results[0] if op.results else None  # type: ignore[return-value]


def _index(b: Builder, n: int) -> SSAValue:
    return _emit(b, arith.ConstantOp(IntegerAttr(n, IndexType())))


def _truth(b: Builder, buf: SSAValue) -> SSAValue:
    """Element 0 of a TENSOR_BOOL8 [1] buffer as an i1."""
    value = _emit(b, memref.LoadOp.get(buf, [_index(b, 0)]))
    zero = _emit(b, arith.ConstantOp(IntegerAttr(0, i8)))
    return _emit(b, arith.CmpiOp(value, zero, "ne"))


def _now(b: Builder) -> SSAValue:
    return _emit(b, func.CallOp(CLOCK_FUNCTION, [], [i64]))


class _Nested:
    """While lowering into a region of ``outer``: the function lowering's
    builder is the region's (:meth:`into`), and allocations go in front of
    the outermost IF/WHILE (see the module docstring); both restored on exit."""

    def __init__(self, fl: FunctionLowering, outer: Operation):
        self.fl = fl
        self.outer = outer

    def __enter__(self) -> _Nested:
        self.saved = (self.fl.builder, self.fl.hoist)
        if self.fl.hoist is None:
            self.fl.hoist = InsertPoint.before(self.outer)
        return self

    def __exit__(self, *exc) -> None:
        self.fl.builder, self.fl.hoist = self.saved

    def into(self, block: Block) -> Builder:
        self.fl.builder = Builder(InsertPoint.at_end(block))
        return self.fl.builder


def _copy(fl: FunctionLowering, src: SSAValue | None, dst: SSAValue, what: str) -> None:
    if src is None:
        raise PassFailedException(f"{what} has no value (an omitted operand)")
    if src is not dst:
        fl.context(OpCall(OperationType.IF, [], []), [], []).copy(src, dst)


def _data(fl: FunctionLowering, op: NNAPIOperation, first: int) -> list[SSAValue | None]:
    return [fl.buffers.get(a) for a in op.args[first:]]


def _buffer(fl: FunctionLowering, tensor_type) -> SSAValue:
    """A new buffer for a value of ``tensor_type`` (placed by the planner)."""
    t = memref_type(tensor_type)
    return fl.alloc(t.get_shape(), t.element_type)


def _outputs(fl: FunctionLowering, op: NNAPIOperation) -> list[SSAValue]:
    """The op's output buffers: in place into the function's outputs, else new."""
    outs = []
    for r in op.outs:
        dst = fl.destinations.get(r)
        if dst is None:
            dst = _buffer(fl, r.type)
        fl.buffers[r] = dst
        outs.append(dst)
    return outs


# -- IF ------------------------------------------------------------------------------------------


def lower_if(fl: FunctionLowering, op: NNAPIOperation, index: int) -> None:
    outs = _outputs(fl, op)
    cond = fl.buffers.get(op.args[0])
    if cond is None:
        raise PassFailedException(f"operation {index} (IF): the condition has no value")
    pred = _truth(fl.builder, cond)
    if_op = scf.IfOp(pred, [], Region(Block()), Region(Block()))
    fl.builder.insert(if_op)
    data = _data(fl, op, 3)
    with _Nested(fl, if_op) as nested:
        for region, ref in ((if_op.true_region, op.args[1]), (if_op.false_region, op.args[2])):
            b = nested.into(region.block)
            results = fl.lower_body(fl.subgraph(ref), data, index, outs)
            for k, (src, dst) in enumerate(zip(results, outs, strict=True)):
                _copy(fl, src, dst, f"operation {index} (IF) output {k}")
            b.insert(scf.YieldOp())


# -- WHILE ---------------------------------------------------------------------------------------


def lower_while(fl: FunctionLowering, op: NNAPIOperation, index: int) -> None:
    if fl.loop_timeout is None:
        raise PassFailedException("WHILE needs the loop-timeout argument of the function")
    if UNROLLED_ATTR in op.attributes:
        lower_unrolled_while(fl, op, index, _unrolled_bodies(fl, op, index))
        return
    cond_fn, body_fn = fl.subgraph(op.args[0]), fl.subgraph(op.args[1])
    data = _data(fl, op, 2)
    n_state = len(body_fn.function_type.outputs.data)
    outs = _outputs(fl, op)
    # m outputs, then k state-only operands; then the n input-only ones
    state = [*outs, *(_buffer(fl, a.type) for a in op.args[2 + len(outs) : 2 + n_state])]
    for k, (src, dst) in enumerate(zip(data, state)):
        _copy(fl, src, dst, f"operation {index} (WHILE) loop input {k}")
    loop_args = [*state, *data[n_state:]]
    start = _now(fl.builder)
    while_op = scf.WhileOp([], [], Region(Block()), Region(Block()))
    fl.builder.insert(while_op)
    with _Nested(fl, while_op) as nested:
        b = nested.into(while_op.before_region.block)
        (cond,) = fl.lower_body(cond_fn, loop_args, index)
        assert cond is not None
        b.insert(scf.ConditionOp(_go_on(b, fl, _truth(b, cond), start)))
        b = nested.into(while_op.after_region.block)
        results = fl.lower_body(body_fn, loop_args, index)
        _assign_state(fl, results, state, index)
        b.insert(scf.YieldOp())


def lower_unrolled_while(fl: FunctionLowering, op: NNAPIOperation, index: int, bodies: Sequence[func.FuncOp]) -> None:
    """The WHILE as its per-iteration bodies in sequence (module docstring)."""
    data = _data(fl, op, 2)
    outs = _outputs(fl, op)
    n_state = len(bodies[0].function_type.outputs.data) if bodies else len(outs)
    state: Sequence[SSAValue | None] = data[:n_state]
    fixed = data[n_state:]
    start = _now(fl.builder)
    for k, body in enumerate(bodies):
        last = k == len(bodies) - 1
        types = body.function_type.outputs.data
        dests = [outs[j] if last and j < len(outs) else _buffer(fl, t) for j, t in enumerate(types)]
        go = _go_on(fl.builder, fl, _emit(fl.builder, arith.ConstantOp(IntegerAttr(1, 1))), start)
        if_op = scf.IfOp(go, [], Region(Block()))
        fl.builder.insert(if_op)
        with _Nested(fl, if_op) as nested:
            b = nested.into(if_op.true_region.block)
            results = fl.lower_body(body, [*state, *fixed], index, dests)
            for j, (src, dst) in enumerate(zip(results, dests)):
                _copy(fl, src, dst, f"operation {index} (WHILE) body output {j} at iteration {k}")
            b.insert(scf.YieldOp())
        state = dests
    if not bodies:  # the condition was false at once: the outputs are the inputs
        for k, (src, dst) in enumerate(zip(data, outs)):
            _copy(fl, src, dst, f"operation {index} (WHILE) loop input {k}")


def _unrolled_bodies(fl: FunctionLowering, op: NNAPIOperation, index: int) -> list[func.FuncOp]:
    """The body functions ``nnc.unrolled`` names, checked: each a referenced
    model taking the WHILE's inputs and giving as many state outputs."""
    attr = op.attributes[UNROLLED_ATTR]
    where = f"operation {index} (WHILE)"
    if not isinstance(attr, ArrayAttr) or not all(isinstance(a, SymbolRefAttr) for a in attr.data):
        raise PassFailedException(f"{where}: {UNROLLED_ATTR} must be an array of function symbols, got {attr}")
    bodies = []
    for a in attr.data:
        fn = fl.functions.get(a.root_reference.data)
        if not isinstance(fn, func.FuncOp) or SUBGRAPH_ATTR not in fn.attributes:
            raise PassFailedException(f"{where}: {UNROLLED_ATTR} names {a}, which is not a referenced model")
        if len(fn.body.block.args) != len(op.args) - 2 or not len(op.outs) <= len(fn.function_type.outputs.data):
            raise PassFailedException(f"{where}: the unrolled body {a} does not take the WHILE's inputs "
                                      "and give its state")  # fmt: skip
        bodies.append(fn)
    return bodies


def _go_on(b: Builder, fl: FunctionLowering, cond: SSAValue, start: SSAValue) -> SSAValue:
    """i1: run the body again: the condition holds, the loop is within its
    timeout and no operation has failed.  A loop that would go on past its
    timeout records LOOP_TIMEOUT_STATUS (unless an error came first); one
    whose condition turned false in time ends normally."""
    elapsed = _emit(b, arith.SubiOp(_now(b), start))
    assert fl.loop_timeout is not None  # a WHILE's function takes the timeout
    in_time = _emit(b, arith.CmpiOp(elapsed, fl.loop_timeout, "ule"))
    zero = _index(b, 0)
    status = _emit(b, memref.LoadOp.get(fl.status, [zero]))
    ok = _emit(b, arith.CmpiOp(status, _emit(b, arith.ConstantOp(IntegerAttr(0, i32))), "eq"))
    wanted = _emit(b, arith.AndIOp(cond, ok))
    late = _emit(b, arith.XOrIOp(in_time, _emit(b, arith.ConstantOp(IntegerAttr(1, 1)))))
    record = _emit(b, arith.AndIOp(wanted, late))
    timeout = _emit(b, arith.ConstantOp(IntegerAttr(LOOP_TIMEOUT_STATUS, i32)))
    b.insert(memref.StoreOp.get(_emit(b, arith.SelectOp(record, timeout, status)), fl.status, [zero]))
    return _emit(b, arith.AndIOp(wanted, in_time))


def _assign_state(fl: FunctionLowering, results: Sequence[SSAValue | None], state: list[SSAValue], index: int) -> None:
    """state[j] = results[j], after the whole body ran.  A result is never a
    state buffer itself (a model cannot list an operand as both input and
    output), only a temporary, a constant or an input-only operand, so the
    copies cannot overwrite a value another copy still reads."""
    for j, (src, dst) in enumerate(zip(results, state)):
        if src is not None and any(src is s for s in state):
            raise PassFailedException(f"operation {index} (WHILE): body output {j} is a loop state input")
        _copy(fl, src, dst, f"operation {index} (WHILE) body output {j}")


#: IF/WHILE lowerings, which need the function lowering (not a LoweringContext).
FUNCTION_LOWERINGS = {OperationType.IF: lower_if, OperationType.WHILE: lower_while}


def clock_declaration() -> func.FuncOp:
    """``func.func @nnc_monotonic_ns() -> i64`` (public: an external declaration
    until ``nnc-add-entry-point`` defines it)."""
    return func.FuncOp(CLOCK_FUNCTION, ([], [i64]), Region())
