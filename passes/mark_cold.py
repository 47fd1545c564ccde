"""``nnc-mark-cold``: functions whose whole run is a few ten thousand
operations are marked ``nnc.cold``, and LLVM optimises them for size.

Most corpus models, and the glue of real ones, are small: a MIRROR_PAD of a
rank-9 tensor of 2 elements a side, a 2 x 3 ADD.  Their loops have small
constant trip counts, so LLVM's O2 pipeline unrolls the nests fully and
then spends most of its time (loop and SLP vectorisers, dead store
elimination, GVN) on the straight-line code that leaves, to save
microseconds.  Under ``optsize`` LLVM does not unroll what would grow the
code and skips the transformations that trade size for speed.  Real
models' kernels keep O2: the mark goes only to functions whose run time
cannot matter, decided from the IR (never from the machine).

The static work of a function, W, is an upper bound on the operations one
call executes, computed on structured control flow (so this pass runs
before ``nnc-convert-scf-to-cf``):

* an operation without regions counts 1 (terminators 0);
* an ``scf.for`` counts at most its trip count times (1 + W(body)) (the 1
  is the loop's own increment and compare), an ``scf.parallel`` likewise
  with the product of its trip counts; bounds need not be constants, an
  interval is enough (see :class:`_Work`);
* an ``scf.if`` counts 1 + the larger of its branches;
* a ``func.call`` of a function the module defines counts 1 + W(callee)
  for the call's arguments;
* anything whose work cannot be bounded from the IR makes W unbounded: a
  loop with a data-dependent bound, a call of a declared (runtime or
  library) function, a parallel dispatch (the thread pool), a branch (a
  loop already lowered to blocks: WHILE), an operation with regions or of
  a dialect this pass does not know, recursion.

A function that no function calls (``main``) is cold when ``min-work <= W
<= max-work``; a function called only by cold functions is cold (a cold
caller's W covers all the calls it makes); any other function is hot, a
kernel called from hot code however short one call is (it may run a
million times).  So a cold function never calls a hot one and a hot
function never calls a cold one: LLVM never inlines code into a function
optimised otherwise.  ``main`` is inlined into the entry point
``nnc_run``, which ``nnc-add-entry-point`` creates later with ``main``'s
function attributes, so the two are cold together.

Cold functions get the unit attribute ``nnc.cold`` (:data:`COLD_ATTR`),
which ``convert-nnc-to-llvm`` turns into LLVM's ``optsize``; a module (or
part of one, :mod:`nnc.runtime.partition`) whose functions are all
``optsize`` skips LLVM's middle end: its IR goes straight to code
generation, which keeps the target machine's level
(:func:`nnc.runtime.jit.optimize`).  Only compile time and the cold code's
speed change, not what it computes: LLVM's optimisations never reassociate
or otherwise change floating-point arithmetic that carries no fast-math
flags, and the one freedom nnc's kernels grant (``contract`` on their
vector multiply-adds) is taken by code generation, which fuses such a pair
into an FMA at either level.  Over the 7,481 conformance models run once
each, every output was bit for bit the one the optimised code gives.

The band was measured over samples of 300 conformance cases (LLVM's CPU
time, one core, AMD EPYC znver1, AVX2): skipping the middle end for modules
of cold functions takes LLVM from 19.4 s to 12.6 s; lowering min-work from
512 to 0 saves another 6 %.  Raising max-work to 2^20 would save 15 % more,
but the code it then leaves unoptimised runs up to 50 us slower per call
(a recurrent layer at 66 us instead of 19), and a small real model's
``main`` can fall under that bound; under 65536 the cost is at most about
10 us.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, ModuleOp, UnitAttr
from xdsl.ir import Attribute, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from nnc.passes.outline_parallel import DISPATCH_ATTR

#: unit attribute on a func.func whose run is too short for its speed to matter
COLD_ATTR = "nnc.cold"

#: The most operations a cold function may execute.  W overestimates (a
#: clamped window counts its widest trip everywhere): the corpus case of
#: the largest W under it, a CONCATENATION of W = 63582, computes in 12 us
#: through the Python API at optsize, 1 us more than at O2.  A real
#: model's ``main`` is far above it (MobileNetV2's global average pool
#: alone loads 7 x 7 x 1280 values), so nothing of a real model is cold.
MAX_COLD_WORK = 65536
#: The fewest.  0 since cold modules skip LLVM's middle end: under
#: ``optsize`` alone, functions below about 512 operations compiled slower
#: than at O2 (whose full unrolling left less code), but code generation of
#: the unoptimised IR is faster still (see the module doc).
MIN_COLD_WORK = 0

#: dialects whose operations (without regions or successors) run straight
#: through: one unit of work each
_STRAIGHT = frozenset({"arith", "math", "memref", "vector", "builtin", "index", "affine", "llvm"})
#: terminators that cost nothing of their own
_FREE = frozenset({scf.YieldOp, func.ReturnOp})


#: an inclusive range of integer values; None: unknown
Range = tuple[int, int] | None

#: index arithmetic whose result range follows from its operands' ranges
_INTERVAL_OPS: dict[type[Operation], Callable[[tuple[int, int], tuple[int, int]], tuple[int, int]]] = {
    arith.AddiOp: lambda a, b: (a[0] + b[0], a[1] + b[1]),
    arith.SubiOp: lambda a, b: (a[0] - b[1], a[1] - b[0]),
    arith.MuliOp: lambda a, b: (min(x * y for x in a for y in b), max(x * y for x in a for y in b)),
    arith.MaxSIOp: lambda a, b: (max(a[0], b[0]), max(a[1], b[1])),
    arith.MinSIOp: lambda a, b: (min(a[0], b[0]), min(a[1], b[1])),
}


def _signed(value: int, t: Attribute) -> int:
    """An integer attribute's value as a signed number of its width."""
    if isinstance(t, IntegerType):
        width = t.width.data
        value &= (1 << width) - 1
        return value - (1 << width) if value >> (width - 1) else value
    return value


class _Work:
    """W of the calls of functions, saturating at ``limit + 1`` (what exceeds
    the limit is not walked further: hot code costs this pass little).

    Loop bounds need not be constants: an interval is known for every index
    value computed by addition, subtraction, multiplication, min and max
    from constants, induction variables and the arguments of a call with
    known arguments, so a pooling window clamped to its input (``max(0,
    i * s - p)`` to ``min(i * s - p + k, h)``) or a kernel's loop up to its
    size parameter is bounded by its largest trip count."""

    def __init__(self, module: ModuleOp, limit: int):
        self.functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
        self.limit = limit
        self.over = limit + 1
        self.known: dict[tuple[str, tuple[Range, ...]], int] = {}
        #: the ranges of the function being walked (one dictionary per call context)
        self.ranges: dict[SSAValue, Range] = {}

    def function(self, name: str, args: tuple[Range, ...]) -> int:
        """W of one call of @name with arguments in ``args``."""
        key = (name, args)
        known = self.known.get(key)
        if known is not None:
            return known
        fn = self.functions[name]  # the verifier checked every callee
        self.known[key] = self.over  # a recursive call is unbounded
        work = self.over
        if not fn.is_declaration:
            outer, self.ranges = self.ranges, dict(zip(fn.body.blocks[0].args, args))
            work = self.region(fn.body)
            self.ranges = outer
        self.known[key] = work
        return work

    def range(self, v: SSAValue) -> Range:
        if v in self.ranges:
            return self.ranges[v]
        found: Range = None
        op = v.owner
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            n = _signed(op.value.value.data, v.type)
            found = (n, n)
        elif isinstance(op, arith.IndexCastOp):
            found = self.range(op.input)
        elif isinstance(op, Operation) and type(op) in _INTERVAL_OPS and isinstance(v.type, IndexType):
            a, b = self.range(op.operands[0]), self.range(op.operands[1])
            if a is not None and b is not None:
                found = _INTERVAL_OPS[type(op)](a, b)
        self.ranges[v] = found
        return found

    def region(self, region: Region) -> int:
        """W of one execution of ``region`` (0 for an empty one)."""
        if not region.blocks:
            return 0
        if len(region.blocks) != 1:  # branches: a loop of unknown trip count
            return self.over
        total = 0
        for op in region.block.ops:
            total += self.op(op)
            if total > self.limit:
                return self.over
        return total

    def loop(self, bounds: list[tuple[SSAValue, SSAValue, SSAValue]], ivs: Sequence[SSAValue], body: Region) -> int:
        """W of a loop nest of ``bounds`` (lower, upper, step) over ``body``:
        at most its largest trip count times (1 + W(body))."""
        n = 1
        for (lb, ub, step), iv in zip(bounds, ivs, strict=True):
            lo, hi, st = self.range(lb), self.range(ub), self.range(step)
            if lo is None or hi is None or st is None or st[0] <= 0:
                return self.over
            n *= max(0, -(-(hi[1] - lo[0]) // st[0]))
            self.ranges[iv] = (lo[0], hi[1] - 1)
        if n == 0:
            return 1
        if n > self.limit:
            return self.over
        return min(self.over, n * (1 + self.region(body)))

    def op(self, op: Operation) -> int:
        kind = type(op)  # exact types: the common operations cost one lookup
        if kind in _FREE:
            return 0
        if type(op) is scf.ForOp:
            return self.loop([(op.lb, op.ub, op.step)], [op.body.block.args[0]], op.body)
        if type(op) is scf.ParallelOp:
            bounds = list(zip(op.lowerBound, op.upperBound, op.step, strict=True))
            return self.loop(bounds, op.body.block.args, op.body)
        if type(op) is scf.IfOp:
            return min(self.over, 1 + max(self.region(op.true_region), self.region(op.false_region)))
        if type(op) is func.CallOp:
            if DISPATCH_ATTR in op.attributes:  # runs in the thread pool
                return self.over
            args = tuple(self.range(a) if isinstance(a.type, IndexType | IntegerType) else None for a in op.arguments)
            return min(self.over, 1 + self.function(op.callee.string_value(), args))
        if kind not in _straight_kinds:
            if op.regions or op.successors or op.name == "llvm.call" or op.dialect_name() not in _STRAIGHT:
                return self.over
            _straight_kinds.add(kind)
        return 1


#: operation classes found to run straight through (no regions, successors)
_straight_kinds: set[type[Operation]] = set()


def cold_functions(module: ModuleOp, min_work: int = MIN_COLD_WORK, max_work: int = MAX_COLD_WORK) -> list[func.FuncOp]:
    """The functions of ``module`` that ``nnc-mark-cold`` marks: those
    called by no function whose W (arguments unknown) is within
    ``[min_work, max_work]``, then every function all of whose callers
    are cold (its total work in a run is bounded by theirs)."""
    work = _Work(module, max_work)
    defined = [f for f in work.functions.values() if not f.is_declaration]
    # Every cold function is reached from an uncalled one within the band:
    # evaluating each function with unknown arguments first (a hot one stops
    # at its first long or unbounded loop) spares a real model's module the
    # walk over all its operations that finding the callers takes.
    roots = [
        f for f in defined if min_work <= work.function(f.sym_name.data, (None,) * len(f.body.blocks[0].args)) <= max_work
    ]
    if not roots:
        return []
    callers: dict[str, set[str]] = {name: set() for name in work.functions}
    for name, fn in work.functions.items():
        for op in fn.walk():
            if isinstance(op, func.CallOp):
                callers[op.callee.string_value()].add(name)  # the verifier checked the symbol
    cold = {f.sym_name.data for f in roots if not callers[f.sym_name.data]}
    grew = True
    while grew:  # the least fixed point: a cycle of calls reached from no cold function stays hot
        grew = False
        for fn in defined:
            name = fn.sym_name.data
            if name not in cold and callers[name] and callers[name] <= cold:
                cold.add(name)
                grew = True
    return [f for f in defined if f.sym_name.data in cold]


@dataclass(frozen=True)
class MarkColdPass(ModulePass):
    """Mark ``nnc.cold`` the functions whose calls execute few enough
    operations for their speed not to matter (see the module doc).
    Options ``min-work`` and ``max-work``: the band of W of a cold
    uncalled function (default :data:`MIN_COLD_WORK`, :data:`MAX_COLD_WORK`)."""

    name = "nnc-mark-cold"

    min_work: int = MIN_COLD_WORK
    max_work: int = MAX_COLD_WORK

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not 0 <= self.min_work <= self.max_work:
            raise PassFailedException(
                f"nnc-mark-cold: min-work ({self.min_work}) and max-work ({self.max_work}) "
                "must satisfy 0 <= min-work <= max-work"
            )
        cold = cold_functions(op, self.min_work, self.max_work)
        for fn in op.ops:
            if isinstance(fn, func.FuncOp) and COLD_ATTR in fn.attributes and fn not in cold:
                # The mark is this pass's conclusion: one it cannot draw would
                # have LLVM optimise hot code for size.
                raise PassFailedException(
                    f"nnc-mark-cold: @{fn.sym_name.data} is marked {COLD_ATTR} but is not cold "
                    f"(its work is not within [{self.min_work}, {self.max_work}] operations a run)"
                )
        for fn in cold:
            fn.attributes[COLD_ATTR] = UnitAttr()
