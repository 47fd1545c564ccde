"""``nnc-outline-parallel``: loops whose iterations are independent become
functions that a thread pool runs in chunks.

Lowerings mark such a loop with :func:`nnc.passes.kernels.vector.parallel_each`,
an ``scf.for`` without loop-carried values carrying the unit attribute
``nnc.parallel`` (:data:`PARALLEL_ATTR`).  The mark is a promise of the
lowering, which this pass cannot check:

* the iterations write disjoint memory and none reads what another writes;
* every output element is computed by one iteration, in the same order
  whatever the split, so results do not depend on the number of threads
  (bit-identical at 1, 2 or 8 threads);
* the body writes no shared status flag and calls nothing with side effects
  beyond its own outputs.

The pass outlines the outermost marked loop of each nest that is worth a
dispatch (:func:`worth_parallel`; a marked loop inside an outlined one stays a
plain loop) in two steps, one per level of the pipeline:

1. here, at the scf level, the loop ``for %i = lo to hi step s {body}``
   becomes a private function that runs iterations ``[begin, end)``::

     func.func private @nnc_par_K(%begin: index, %end: index, %v0: T0, ...)
         attributes {nnc.parallel_body} {
       scf.for %k = %begin to %end step 1 { %i = lo + %k * s; body }
     }

   whose parameters after ``begin, end`` are the values the body captures
   from outside (buffers, indices, scalars; constants are cloned instead),
   and the loop becomes a marked call of it over the whole range::

     func.call @nnc_par_K(%c0, %trip_count, %v0, ...) {nnc.parallel_dispatch}

   which is still a correct serial program;
2. ``convert-nnc-to-llvm`` (:mod:`nnc.passes.to_llvm`), where functions have
   addresses and memory is raw, gives the body the ABI signature
   ``void (i64 begin, i64 end, ptr ctx)`` (it loads its captures from ``ctx``,
   an array of 8-byte slots, slot j holding capture j: memrefs are bare
   pointers, scalars are stored in the slot's first bytes) and turns the
   marked call into filling such an array on the caller's stack and
   ``nnc_parallel_for(@nnc_par_K, ctx, trip_count)``.

Bodies that are the same but for float constants (scales, clamp bounds)
and the sizes of flat buffers share one function (:func:`share_bodies`), the constants
that differ passed like captures: LLVM then compiles each recurring
element-wise loop of a model once.

``nnc_parallel_for(void (*body)(int64_t, int64_t, void *), void *ctx, int64_t n)``
is the runtime's thread pool, declared external: it runs ``body`` over
contiguous chunks of ``[0, n)`` and returns when all are done.  A module
without a loop worth outlining never references it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    UnitAttr,
    UnrealizedConversionCastOp,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue, Use
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from nnc.passes.build import structural_key, walk_ops

#: unit attribute on an ``scf.for`` whose iterations are independent (see the
#: module doc for the contract); defined here, the lowest module that knows
#: the convention, and imported by the builder that emits it
PARALLEL_ATTR = "nnc.parallel"
#: unit attribute on an outlined body function (begin, end, captures...)
BODY_ATTR = "nnc.parallel_body"
#: unit attribute on the call that runs an outlined body over [0, n)
DISPATCH_ATTR = "nnc.parallel_dispatch"
#: unit attribute on a marked loop (and then on its body function) whose
#: integer constants are only sizes and offsets handed to kernel calls (an
#: element-wise kernel over pieces): bodies that differ in them share one
#: function too, those that differ passed as parameters (:func:`share_bodies`)
SIZES_ATTR = "nnc.parallel_sizes"
#: the thread pool's entry point (C ABI, provided by the runtime)
PARALLEL_FOR = "nnc_parallel_for"
#: prefix of the outlined functions' names
BODY_PREFIX = "nnc_par_"

#: A loop is outlined only if it has at least two iterations and about this
#: many operations in all (the static estimate of :func:`work`), roughly a
#: microsecond of scalar work: ten times what a dispatch to a spinning worker
#: costs (``benchmarks/threadpool_bench.py``: 111 ns a call at 2 threads on a
#: Zen 4 guest), and a sleeping worker never holds the caller up (the caller
#: runs the chunks no worker has claimed).  A layer too small for the pool
#: between parallel ones costs more than its own time: it reads on one core
#: the rows both threads wrote, and the next layer reads back what it wrote
#: (on the Zen 4 guest at 2 threads, the MLP-Mixer's LayerNorms and residual
#: ADDs took 9% less time once parallel, the text encoder's 11%).  The one
#: place the heuristic lives.
MIN_PARALLEL_WORK = 2048
#: the estimate of a loop whose trip count is not a compile-time constant
UNKNOWN_TRIP = 16
#: the estimate of a call to a function outside the module (libm, runtime)
EXTERNAL_CALL_WORK = 16


#: values known at compile time while estimating work: constants, and the
#: parameters of a called function whose arguments are constants
Known = dict[SSAValue, int]


#: integer arithmetic the work estimate evaluates on known operands: a
#: kernel's loop bounds are often computed from its size parameters (the
#: whole vectors of ``n`` elements end at ``n - n % lanes``), and an
#: unknown bound counts only :data:`UNKNOWN_TRIP` iterations.  Division and
#: remainder by zero stay unknown.
_FOLDS: dict[type[Operation], Callable[[int, int], int | None]] = {
    arith.AddiOp: lambda a, b: a + b,
    arith.SubiOp: lambda a, b: a - b,
    arith.MuliOp: lambda a, b: a * b,
    arith.MinSIOp: min,
    arith.MaxSIOp: max,
    arith.DivSIOp: lambda a, b: None if b == 0 else abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1),
    arith.FloorDivSIOp: lambda a, b: None if b == 0 else a // b,
    arith.CeilDivSIOp: lambda a, b: None if b == 0 else -(-a // b),
    arith.RemSIOp: lambda a, b: None if b == 0 else abs(a) % abs(b) * (1 if a >= 0 else -1),
}
#: how deep :func:`const_index` follows operands (a bound is a few operations)
_FOLD_DEPTH = 8


def const_index(v: SSAValue, known: Known | None = None, upper: bool = False, depth: int = _FOLD_DEPTH) -> int | None:
    """The value of an ``arith.constant`` index or integer (or of a value in
    ``known``), or of :data:`_FOLDS` arithmetic and index casts of such
    values, else None.  ``upper``: a bound for the work estimate, not the
    value: the minimum of a known and an unknown value is the known one (a
    piece of a kernel's range cut for the thread pool, ``min(size, n -
    start)``, counts as ``size``)."""
    if known and v in known:
        return known[v]
    op = v.owner
    if isinstance(op, arith.ConstantOp):
        return op.value.value.data if isinstance(op.value, IntegerAttr) else None
    if depth == 0 or not isinstance(op, Operation):
        return None
    if isinstance(op, arith.IndexCastOp):
        r = const_index(op.input, known, upper, depth - 1)
    else:
        fold = _FOLDS.get(type(op))
        if fold is None:
            return None
        a, b = (const_index(x, known, upper, depth - 1) for x in op.operands[:2])
        if upper and isinstance(op, arith.MinSIOp) and (a is None) != (b is None):
            return a if b is None else b
        r = None if a is None or b is None else fold(a, b)
    bits = 64 if isinstance(v.type, IndexType) else getattr(v.type, "bitwidth", 0)
    # (a result that would wrap, or be truncated by a cast, is left unknown)
    if r is None or bits < 1 or not -(1 << (bits - 1)) <= r < (1 << (bits - 1)):
        return None
    return r


def trip_count(loop: scf.ForOp, known: Known | None = None, upper: bool = False) -> int | None:
    """Iterations of ``loop`` if its bounds are known (``upper``: at most, see :func:`const_index`)."""
    lo, hi, step = (const_index(v, known, upper) for v in (loop.lb, loop.ub, loop.step))
    if lo is None or hi is None or step is None or step <= 0:
        return None
    return max(0, -(-(hi - lo) // step))


class _Work:
    """Static estimate of the operations a region executes: ops counted once,
    nested loops multiplied by their trip count, calls by the callee's
    estimate with the constant arguments known (so that a shared kernel's
    loops over its size parameters count what this use runs), memoised."""

    def __init__(self, module: ModuleOp):
        self.funcs = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
        self.memo: dict[tuple[str, tuple[int | None, ...]], int] = {}

    def of_ops(self, ops: Iterator[Operation], known: Known, cap: int | None = None) -> int:
        """The estimate of ``ops``; with ``cap``, counting stops once the
        total reaches it (the result is then at least ``cap``, not exact):
        a dispatch decision needs no more, and a layer's loop over
        thousands of tiles is not walked to the end."""
        total = 0
        for op in ops:
            if cap is not None and total >= cap:
                return total
            total += 1
            if isinstance(op, scf.ForOp):
                n = trip_count(op, known, upper=True)
                trips = UNKNOWN_TRIP if n is None else n
                if trips:
                    inner = None if cap is None else -(-(cap - total) // trips)
                    total += trips * self.of_ops(iter(op.body.block.ops), known, inner)
            elif isinstance(op, func.CallOp):
                args = tuple(const_index(a, known, upper=True) for a in op.arguments)
                total += self.of_call(op.callee.root_reference.data, args)
            else:
                for region in op.regions:
                    for block in region.blocks:
                        total += self.of_ops(iter(block.ops), known, None if cap is None else cap - total)
        return total

    def of_call(self, name: str, args: tuple[int | None, ...]) -> int:
        fn = self.funcs.get(name)
        if fn is None or fn.is_declaration:
            return EXTERNAL_CALL_WORK
        key = (name, args)
        if key not in self.memo:
            self.memo[key] = EXTERNAL_CALL_WORK  # guards against recursion
            known: Known = {p: a for p, a in zip(fn.body.blocks[0].args, args) if a is not None}
            self.memo[key] = sum(self.of_ops(iter(b.ops), known) for b in fn.body.blocks)
        return self.memo[key]


def worth_parallel(loop: scf.ForOp, work: _Work) -> bool:
    """The minimum-work heuristic: at least two iterations and
    :data:`MIN_PARALLEL_WORK` operations in all."""
    n = trip_count(loop)
    if n is not None and n < 2:
        return False
    trips = UNKNOWN_TRIP if n is None else n
    per_iteration = work.of_ops(iter(loop.body.block.ops), {}, cap=-(-MIN_PARALLEL_WORK // trips))
    return trips * per_iteration >= MIN_PARALLEL_WORK


def _check_capture_type(t: Attribute) -> None:
    """Captures travel in 8-byte slots: pointers (memrefs), index, integers
    and floats of at most 64 bits."""
    ok = isinstance(t, MemRefType | IndexType) or (
        isinstance(t, IntegerType | AnyFloat) and t.bitwidth <= 64
    )
    if not ok:
        raise PassFailedException(f"nnc-outline-parallel: a parallel loop captures a value of type {t}")


def captures(loop: scf.ForOp) -> list[SSAValue]:
    """Values the loop's body reads that are defined outside it, in the order
    of first use."""
    inside: set[SSAValue] = set()
    for op in loop.body.walk():
        inside.update(op.results)
        for region in op.regions:
            for block in region.blocks:
                inside.update(block.args)
    inside.update(loop.body.block.args)
    seen: dict[SSAValue, None] = {}
    for op in loop.body.walk():
        for v in op.operands:
            if v not in inside:
                seen.setdefault(v, None)
    return list(seen)


def _is_constant(v: SSAValue) -> bool:
    """Whether the body gets its own copy of ``v`` rather than a capture: a
    constant, or the address of a global table (more than one element).
    A table read through a capture is a pointer LLVM knows nothing about,
    so the loop's stores might change it, and a loop that gathers from it
    is not vectorised (there is no run-time check of data-dependent
    addresses).  A global scalar stays a capture, so that bodies that
    differ only in such numbers still share one function (:func:`share_bodies`)."""
    if isinstance(v.owner, arith.ConstantOp):
        return True
    t = v.type
    return isinstance(v.owner, memref.GetGlobalOp) and isinstance(t, MemRefType) and _elements(t) > 1


def _elements(t: MemRefType) -> int:
    """Elements of a static memref type (a dynamic one counts as many)."""
    n = 1
    for d in t.get_shape():
        n *= d if d >= 0 else 2
    return n


def outline(loop: scf.ForOp, name: str) -> tuple[func.FuncOp, func.CallOp]:
    """Replace ``loop`` by a dispatch call of a new function ``name`` (returned
    with the call, not yet in the module) running its iterations [begin, end)."""
    if loop.iter_args or loop.results:
        raise PassFailedException("nnc-outline-parallel: a parallel loop carries values")
    caps = captures(loop)
    passed = [v for v in caps if not _is_constant(v)]
    for v in (loop.lb, loop.step):  # the bounds the body needs, when not constants
        if not _is_constant(v) and v not in passed:
            passed.append(v)
    for v in passed:
        _check_capture_type(v.type)
    fn = _body_function(loop, name, caps, passed)
    return fn, _replace_by_dispatch(loop, name, passed)


def _body_function(loop: scf.ForOp, name: str, caps: list[SSAValue], passed: list[SSAValue]) -> func.FuncOp:
    """``func.func private @name(begin, end, passed...)`` running the loop's
    body for iterations k in [begin, end), i.e. ``i = lo + k * step``;
    captured constants are cloned into it, the body's operations move."""
    index = IndexType()
    lo, step = loop.lb, loop.step
    block = Block(arg_types=[index, index, *[v.type for v in passed]])
    begin, end = block.args[0], block.args[1]
    mapping: dict[SSAValue, SSAValue] = dict(zip(passed, block.args[2:]))
    for v in [*caps, lo, step]:
        if _is_constant(v) and v not in mapping:
            assert isinstance(v.owner, Operation)  # a constant's result
            clone = v.owner.clone()
            block.add_op(clone)
            mapping[v] = clone.results[0]
    one = arith.ConstantOp(IntegerAttr(1, index))
    block.add_op(one)
    inner = Block(arg_types=[index])
    iv: SSAValue = inner.args[0]
    if const_index(step) != 1:
        scaled = arith.MuliOp(iv, mapping[step])
        inner.add_op(scaled)
        iv = scaled.result
    if const_index(lo) != 0:
        shifted = arith.AddiOp(iv, mapping[lo])
        inner.add_op(shifted)
        iv = shifted.result
    mapping[loop.body.block.args[0]] = iv
    # The body's operations move (the loop is erased next), reading the
    # function's values where the clone xDSL's op.clone would make does.
    body = list(loop.body.block.ops)
    for top in body:
        for op in top.walk():
            if any(v in mapping for v in op.operands):
                op.operands = [mapping.get(v, v) for v in op.operands]
        top.detach()
    inner.add_ops(body)
    block.add_op(scf.ForOp(begin, end, one.result, [], Region(inner)))
    block.add_op(func.ReturnOp())
    fn = func.FuncOp(name, ([index, index, *[v.type for v in passed]], []), Region(block), visibility="private")
    fn.attributes[BODY_ATTR] = UnitAttr()
    if SIZES_ATTR in loop.attributes:
        fn.attributes[SIZES_ATTR] = UnitAttr()
    return fn


def _replace_by_dispatch(loop: scf.ForOp, name: str, passed: list[SSAValue]) -> func.CallOp:
    """The trip count, then ``func.call @name(0, trips, passed...)
    {nnc.parallel_dispatch}`` in place of ``loop``."""
    index = IndexType()
    parent = loop.parent_block()
    assert parent is not None
    zero = arith.ConstantOp(IntegerAttr(0, index))
    ops: list[Operation] = [zero]
    n = trip_count(loop)
    if n is not None:
        ops.append(arith.ConstantOp(IntegerAttr(n, index)))
    else:
        # max(0, ceildiv(hi - lo, step)); step > 0 in every scf.for nnc emits
        ops.append(arith.SubiOp(loop.ub, loop.lb))
        if const_index(loop.step) != 1:
            ops.append(arith.CeilDivSIOp(ops[-1].results[0], loop.step))
        ops.append(arith.MaxSIOp(ops[-1].results[0], zero.result))
    call = func.CallOp(name, [zero.result, ops[-1].results[0], *passed], [])
    call.attributes[DISPATCH_ATTR] = UnitAttr()
    ops.append(call)
    parent.insert_ops_before(ops, loop)
    parent.erase_op(loop, safe_erase=False)
    return call


def _marked_outermost(region: Region, work: _Work) -> Iterator[scf.ForOp]:
    """Marked loops worth a dispatch, outermost first; a loop inside one that
    is yielded is not visited."""
    for block in region.blocks:
        for op in list(block.ops):
            if isinstance(op, scf.ForOp) and PARALLEL_ATTR in op.attributes:
                if not isinstance(op.attributes[PARALLEL_ATTR], UnitAttr):
                    raise PassFailedException(f"nnc-outline-parallel: {PARALLEL_ATTR} must be a unit attribute")
                if worth_parallel(op, work):
                    yield op
                    continue
            for inner in op.regions:
                yield from _marked_outermost(inner, work)


class OutlineParallelPass(ModulePass):
    """Marked parallel loops -> body functions + dispatch calls (see module doc)."""

    name = "nnc-outline-parallel"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        work = _Work(op)
        taken = {f.sym_name.data for f in op.ops if isinstance(f, func.FuncOp)}
        bodies: list[tuple[func.FuncOp, func.CallOp]] = []
        for fn in list(op.ops):
            if not isinstance(fn, func.FuncOp) or fn.is_declaration:
                continue
            for loop in list(_marked_outermost(fn.body, work)):
                name = f"{BODY_PREFIX}{len(bodies)}"
                while name in taken:
                    name += "_"
                taken.add(name)
                bodies.append(outline(loop, name))
        op.body.block.add_ops(share_bodies(bodies))


# -- bodies shared ----------------------------------------------------------------------------------

#: operations a float constant may leave for a parameter without costing
#: the code anything (an operand in a register instead of an immediate)
_PARAMETER_USERS: tuple[type[Operation], ...] = (
    arith.AddfOp, arith.SubfOp, arith.MulfOp, arith.DivfOp,
    arith.MaximumfOp, arith.MinimumfOp, arith.MaxnumfOp, arith.MinnumfOp, arith.CmpfOp,
)  # fmt: skip


def _value_constants(fn: func.FuncOp) -> list[arith.ConstantOp]:
    """The body's scalar float constants whose every use is an operand of
    :data:`_PARAMETER_USERS`, or a value (not the condition) of a select:
    the numbers that may differ between two bodies that share code (scales,
    clamp bounds, dequantisation parameters), in walk order, one per use.
    Integer constants stay: LLVM specialises integer code on them (a
    quantised multiplier's range lets it multiply in 16-bit pairs, the
    saturation test of a constant multiplier folds away), and MobileNetV3's
    HARD_SWISH ran 40% slower with its multipliers as parameters.  But a
    body marked :data:`SIZES_ATTR` only hands its integers to kernel calls
    as sizes and offsets, so they are taken too.  A constant
    the builder reused for several uses is copied first, so that the
    bodies' structure does not depend on which of their numbers happen to
    be equal."""
    sizes = SIZES_ATTR in fn.attributes  # and every integer constant of such a body
    found = []
    for op in walk_ops(fn):
        if not isinstance(op, arith.ConstantOp):
            continue
        uses = list(op.result.uses)
        if isinstance(op.result.type, AnyFloat):
            shared = bool(uses) and all(_parameter_use(u.operation, u.index) for u in uses)
        else:
            shared = sizes and bool(uses) and isinstance(op.result.type, IndexType | IntegerType)
        if shared:
            found.append(op)
            found += _one_per_use(op, uses[1:])
    return found


def _one_per_use(const: arith.ConstantOp, uses: list[Use]) -> list[arith.ConstantOp]:
    """A copy of ``const`` after it for each of ``uses``, which it takes over."""
    block = const.parent_block()
    assert block is not None
    copies: list[arith.ConstantOp] = []
    for use in uses:
        copy = arith.ConstantOp(const.value, const.result.type)
        block.insert_op_after(copy, copies[-1] if copies else const)
        use.operation.operands[use.index] = copy.result
        copies.append(copy)
    return copies


def _parameter_use(user: Operation, index: int) -> bool:
    if isinstance(user, arith.SelectOp):
        return index > 0
    return isinstance(user, _PARAMETER_USERS)


def share_bodies(bodies: list[tuple[func.FuncOp, func.CallOp]]) -> list[func.FuncOp]:
    """The functions of ``bodies`` that remain once bodies that differ only in
    float constants (:func:`_value_constants`) share one: the first of each
    such group, whose constants that differ within the group become
    parameters after the captures, each dispatch passing its own values
    (the captures travel in the context's slots, loaded once per chunk);
    the other dispatches call it.  An element-wise operation that recurs on
    other feature maps, or with other float parameters, then costs LLVM one
    function."""
    groups: dict[tuple, list[tuple[func.FuncOp, func.CallOp, list[arith.ConstantOp]]]] = {}
    for fn, call in bodies:
        consts = _value_constants(fn)
        block = fn.body.block
        params = tuple(_shared_type(t) for t in fn.function_type.inputs.data)
        key = (params, structural_key(list(block.ops), block.args, set(consts)))
        groups.setdefault(key, []).append((fn, call, consts))
    kept = []
    for members in groups.values():
        first, _, consts = members[0]
        kept.append(first)
        if len(members) == 1:
            continue
        _widen_parameters(first, [fn for fn, _, _ in members])
        differ = [k for k, c in enumerate(consts) if any(m[2][k].value != c.value for m in members[1:])]
        for k in differ:
            _make_parameter(first, consts[k])
        for _, call, member_consts in members:
            _call_shared(call, first, [member_consts[k] for k in differ])
    return kept


def _shared_type(t: Attribute) -> Attribute | tuple:
    """What a parameter's type must match for two bodies to share code: the
    type, except that a flat buffer (rank 1, no layout) matches any flat
    buffer of its element type, as its size changes no address the body
    computes (it becomes ``memref<?xT>`` in the shared function)."""
    if _flat(t):
        assert isinstance(t, MemRefType)
        return ("flat", t.element_type, t.memory_space)
    return t


def _flat(t: Attribute) -> bool:
    return isinstance(t, MemRefType) and t.get_num_dims() == 1 and isinstance(t.layout, NoneAttr)


def _widen_parameters(first: func.FuncOp, members: list[func.FuncOp]) -> None:
    """``first``'s flat buffer parameters whose size differs within
    ``members`` made dynamic (``memref<?xT>``)."""
    block = first.body.block
    types = [fn.function_type.inputs.data for fn in members]
    for k, arg in enumerate(list(block.args)):
        t = arg.type
        if _flat(t) and any(ts[k] != t for ts in types):
            assert isinstance(t, MemRefType)
            dynamic = block.insert_arg(MemRefType(t.element_type, [DYNAMIC_INDEX], memory_space=t.memory_space), k)
            arg.replace_all_uses_with(dynamic)
            block.erase_arg(arg)
    first.function_type = FunctionType.from_lists([a.type for a in block.args], [])


def _make_parameter(fn: func.FuncOp, const: arith.ConstantOp) -> None:
    """``const`` of ``fn``'s body replaced by a new last parameter."""
    block = fn.body.block
    arg = block.insert_arg(const.result.type, len(block.args))
    const.result.replace_all_uses_with(arg)
    parent = const.parent_block()
    assert parent is not None
    parent.erase_op(const)
    fn.function_type = FunctionType.from_lists([a.type for a in block.args], [])


def _call_shared(call: func.CallOp, callee: func.FuncOp, values: list[arith.ConstantOp]) -> None:
    """``call`` (a dispatch) made a dispatch of ``callee`` passing copies of
    ``values`` after its arguments, each buffer cast to the parameter's
    type where that is dynamic."""
    block = call.parent_block()
    assert block is not None
    ops: list[Operation] = [arith.ConstantOp(c.value, c.result.type) for c in values]
    args = [*call.arguments, *(c.results[0] for c in ops)]
    for k, (arg, t) in enumerate(zip(args, callee.function_type.inputs.data)):
        if arg.type != t:
            cast = UnrealizedConversionCastOp.get([arg], [t])
            ops.append(cast)
            args[k] = cast.results[0]
    shared = func.CallOp(callee.sym_name.data, args, [])
    shared.attributes.update(call.attributes)
    block.insert_ops_before([*ops, shared], call)
    block.erase_op(call)
