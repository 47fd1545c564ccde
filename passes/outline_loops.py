"""``nnc-outline-loops``: the serial loop nests of a large function become
functions of their own, identical ones shared.

What ``nnc-outline-parallel`` leaves in ``main`` is a sequence of calls and
the loop nests of the operations too small for the thread pool: the
squeeze-and-excitation blocks' average pools, sigmoids and scalings, the
swish of a small feature map.  In an element-wise-heavy model there are a
hundred of them, and LLVM vectorises each (a vector loop, its remainder,
the expanded exp), so ``main`` becomes one function of thousands of lines:
LLVM's time grows faster than linearly in a function's size, and a
function is the unit that :mod:`nnc.runtime.partition` spreads over the
compiler's worker processes, so that one function bounds the compile time.

This pass moves each top-level ``scf.for`` nest of a function with at least
``min-ops`` operations (default :data:`MIN_FUNCTION_OPS`) into a private function
``nnc_loop_K(captures...)`` and calls it; constants are cloned into the
function, every other value the nest reads from outside is a parameter.
Nests that are the same once outlined (the same operations on buffers of
the same types: the same layer shape) share one function, so LLVM compiles
the sigmoid of a 1x1x240 tensor once however many blocks have one.  A
function whose buffer parameters lie in pairwise disjoint memory (traced
through views to an arena slice, a global or an argument; two buffers that
are only read may overlap) is marked ``nnc.noalias``, so LLVM vectorises it
without run-time alias checks as it did inside ``main``, where it saw the
distinct arena offsets; a shared function is marked only if every use is
disjoint.  Small functions (every conformance model) are left as they are.
:mod:`nnc.runtime.partition` may compile an outlined nest apart from its
caller: its calls pass only buffers, no constant a callee could specialise on.
Nests that yield values are left in place.

Parallel bodies (``nnc-outline-parallel``) get the same treatment whatever
the size of the function: a body reads its buffers from the thread pool's
context, pointers LLVM knows nothing about, so a loop that loads and stores
memory itself (an element-wise operation, a copy into padding) was
vectorised with run-time alias checks or not at all (a byte copy of the
int8 U-Net ran ten times slower than inside ``main``).  The body's loop
moves into ``<body>_nest`` (``nnc.noalias``, ``nnc.parallel_nest``), which
the body calls with the pointers it loaded, when the buffers of every
dispatch of the body are disjoint where one is written (stored to, or
handed to a call); LLVM inlines it back, its ``noalias`` parameters
becoming alias scopes of the body's accesses.
Bodies that only call kernels (the GEMM's tiles) stay as they are: the
kernels have ``noalias`` parameters of their own.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf, vector
from xdsl.dialects.builtin import MemRefType, ModuleOp, StringAttr, UnitAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from nnc.passes.build import structural_key
from nnc.passes.outline_kernels import NOALIAS_ATTR
from nnc.passes.outline_parallel import BODY_ATTR, DISPATCH_ATTR, _is_constant, captures
from nnc.passes.parallel_generics import _VIEWS, extent, view_source

#: a function with fewer operations (nested ones included) keeps its loops:
#: its LLVM IR is too small to be worth a second part (about 1,000 lines,
#: ``nnc.driver.SPLIT_MIN_LINES``, from roughly this many operations)
MIN_FUNCTION_OPS = 1500
#: prefix of the outlined functions' names
LOOP_PREFIX = "nnc_loop_"
#: unit attribute of an outlined nest's function: it stays a function
#: (``noinline``), so a whole module and its parts compile it alike
LOOP_ATTR = "nnc.outlined_loop"


def _written(loop: scf.ForOp) -> set[SSAValue]:
    """Buffers the nest stores to."""
    return {op.memref for op in loop.walk() if isinstance(op, memref.StoreOp)}


def disjoint(buffers: list[SSAValue], written: set[SSAValue]) -> bool:
    """Whether no two of ``buffers`` may overlap where one of them is written."""
    spans = [extent(b) for b in buffers]
    for i, a in enumerate(spans):
        for j in range(i + 1, len(spans)):
            if (buffers[i] in written or buffers[j] in written) and a.overlaps(spans[j]):
                return False
    return True


def outline_nest(loop: scf.ForOp, name: str) -> tuple[func.FuncOp, func.CallOp]:
    """Move ``loop`` into a new private function ``name`` (returned, not yet
    in the module) and put a call of it in its place (returned too)."""
    caps = captures(loop)
    for v in (loop.lb, loop.ub, loop.step):
        if v not in caps:
            caps.append(v)
    passed = [v for v in caps if not _is_constant(v)]
    block = Block(arg_types=[v.type for v in passed])
    mapping: dict[SSAValue, SSAValue] = dict(zip(passed, block.args))
    for v in caps:
        if _is_constant(v):
            assert isinstance(v.owner, Operation)  # a constant's result
            clone = v.owner.clone()
            block.add_op(clone)
            mapping[v] = clone.results[0]
    parent = loop.parent_block()
    assert parent is not None
    call = func.CallOp(name, passed, [])
    parent.insert_op_before(call, loop)
    loop.detach()
    for op in loop.walk():
        if any(v in mapping for v in op.operands):
            op.operands = [mapping.get(v, v) for v in op.operands]
    block.add_ops([loop, func.ReturnOp()])
    fn = func.FuncOp(name, ([v.type for v in passed], []), Region(block), visibility="private")
    fn.attributes[LOOP_ATTR] = UnitAttr()
    return fn, call


def _signature(fn: func.FuncOp) -> tuple:
    """The function without its name: its type and its body's structure
    with values numbered in order of appearance
    (:func:`~nnc.passes.build.structural_key`), equal for nests that differ
    only in which buffers they get."""
    block = fn.body.block
    return (fn.function_type, structural_key(list(block.ops), block.args))


def _size(fn: func.FuncOp) -> int:
    return sum(1 for _ in fn.walk())


@dataclass(frozen=True)
class OutlineLoopsPass(ModulePass):
    """Top-level serial loop nests of large functions -> shared private functions (see module doc)."""

    name = "nnc-outline-loops"

    min_ops: int = MIN_FUNCTION_OPS

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.min_ops < 0:
            raise PassFailedException(f"{self.name}: min-ops must be >= 0, got {self.min_ops}")
        taken = {f.sym_name.data for f in op.ops if isinstance(f, func.FuncOp)}
        by_signature: dict[tuple, func.FuncOp] = {}
        for fn in [f for f in op.ops if isinstance(f, func.FuncOp)]:
            if fn.is_declaration or fn.sym_visibility == StringAttr("private") or _size(fn) < self.min_ops:
                continue
            for loop in [o for o in fn.body.blocks[0].ops if isinstance(o, scf.ForOp) and not o.results]:
                self._outline(op, loop, taken, by_signature)
        _outline_parallel_nests(op, taken)

    @staticmethod
    def _outline(module: ModuleOp, loop: scf.ForOp, taken: set[str], by_signature: dict[tuple, func.FuncOp]) -> None:
        name = f"{LOOP_PREFIX}{len(by_signature)}"
        while name in taken:
            name += "_"
        written = _written(loop)
        fn, call = outline_nest(loop, name)
        buffers = [v for v in call.arguments if isinstance(v.type, MemRefType)]
        separate = disjoint(buffers, written)
        key = _signature(fn)
        shared = by_signature.get(key)
        if shared is None:
            taken.add(name)
            by_signature[key] = fn
            if separate:
                fn.attributes[NOALIAS_ATTR] = UnitAttr()
            module.body.block.add_op(fn)
            return
        # the same nest on other buffers: call the function made first
        block = call.parent_block()
        assert block is not None
        block.insert_op_before(func.CallOp(shared.sym_name.data, list(call.arguments), []), call)
        block.erase_op(call)
        if not separate and NOALIAS_ATTR in shared.attributes:
            del shared.attributes[NOALIAS_ATTR]


# -- the loops of parallel bodies -------------------------------------------------------------

#: suffix of the function a parallel body's loop moves into
NEST_SUFFIX = "_nest"
#: unit attribute of that function: ``noalias`` parameters, but LLVM may
#: inline it into its body (which turns them into alias scopes there), so
#: that it costs no function of its own
NEST_ATTR = "nnc.parallel_nest"


#: operations that only read the buffer they are given
_READS = (memref.LoadOp, vector.LoadOp, memref.DimOp)


def _accesses_memory(fn: func.FuncOp) -> bool:
    return any(isinstance(o, memref.LoadOp | memref.StoreOp | vector.LoadOp | vector.StoreOp) for o in fn.walk())


def _root_param(v: SSAValue, params: dict[SSAValue, int]) -> int | None:
    """The parameter (position) a value inside a function is, or is a view of."""
    while v not in params:
        owner = v.owner
        if not isinstance(owner, _VIEWS + (memref.ViewOp,)):
            return None
        v = view_source(v)
    return params[v]


def _written_params(fn: func.FuncOp) -> set[int]:
    """Positions of the parameters whose memory ``fn`` may write: a buffer
    (through any view) that an operation other than a load uses (a store, a
    call, anything else counts as a write)."""
    params: dict[SSAValue, int] = {a: k for k, a in enumerate(fn.body.block.args)}
    written: set[int] = set()
    for op in fn.walk():
        if isinstance(op, _READS + _VIEWS + (memref.ViewOp,)):
            continue
        for v in op.operands:
            if (k := _root_param(v, params)) is not None:
                written.add(k)
    return written


def _dispatches(module: ModuleOp) -> dict[str, list[func.CallOp]]:
    calls: dict[str, list[func.CallOp]] = {}
    for op in module.walk():
        if isinstance(op, func.CallOp) and DISPATCH_ATTR in op.attributes:
            calls.setdefault(op.callee.root_reference.data, []).append(op)
    return calls


def _outline_parallel_nests(module: ModuleOp, taken: set[str]) -> None:
    """Each parallel body that accesses memory itself: its loop to a function
    of its own, ``noalias`` when every dispatch's buffers are disjoint (see
    the module doc)."""
    dispatches = _dispatches(module)
    for body in [f for f in module.ops if isinstance(f, func.FuncOp) and BODY_ATTR in f.attributes]:
        loops = [o for o in body.body.block.ops if isinstance(o, scf.ForOp) and not o.results]
        if len(loops) != 1 or not _accesses_memory(body):
            continue
        written = _written_params(body)
        separate = all(
            disjoint(
                [v for v in call.arguments if isinstance(v.type, MemRefType)],
                {call.arguments[k] for k in written},
            )
            for call in dispatches.get(body.sym_name.data, [])
        )
        if not separate:
            continue
        name = body.sym_name.data + NEST_SUFFIX
        while name in taken:
            name += "_"
        taken.add(name)
        nest, _ = outline_nest(loops[0], name)
        for const in [o for o in body.body.block.ops if isinstance(o, arith.ConstantOp) and not o.result.uses]:
            body.body.block.erase_op(const)  # cloned into the nest, unused here
        del nest.attributes[LOOP_ATTR]
        nest.attributes[NOALIAS_ATTR] = UnitAttr()
        nest.attributes[NEST_ATTR] = UnitAttr()
        module.body.block.add_op(nest)
