"""Per-operation timestamps: what code compiled for profiling records.

``convert-nnapi-to-linalg{profile=true}`` (the driver sets it for a
compilation made with ``Compilation.set_profiling(True)``) makes the lowering
dispatch of the main graph read the monotonic clock before each NNAPI
operation and once after the last one, and store the readings in one buffer::

    %stamps = memref.alloc() {nnc.profile} : memref<(N+1)xi64>
    %t0 = func.call @nnc_monotonic_ns() : () -> i64
    memref.store %t0, %stamps[0]          // operation 0 starts
    ... operation 0 ...
    %t1 = func.call @nnc_monotonic_ns() : () -> i64
    memref.store %t1, %stamps[1]          // operation 1 starts (0 ended)
    ...
    memref.store %tN, %stamps[N]          // the last operation ended

Operation ``k`` took ``stamps[k + 1] - stamps[k]`` nanoseconds, so the
operations' times add up exactly to ``stamps[N] - stamps[0]``: the whole
native call but its prologue (the entry's argument loads) and the copies of
outputs that are not written in place (an output that is an input or a
constant).  It is one hook in the dispatch (``FunctionLowering.run``), not
code in each lowering, so an operation's time is that of the code *its*
lowering emitted:

* an operation lowered as a view (RESHAPE, SQUEEZE, EXPAND_DIMS of the main
  graph: no code) takes ~0 (two clock reads);
* an operation whose work another one's lowering does (a fused epilogue: the
  activation or residual ADD computed in the producer's loops) takes ~0 and
  its work counts in the producer's time; likewise the members of a fused
  element-wise group (``nnc-fuse-elementwise``) but the last, whose time is
  the whole group's loop;
* IF and WHILE are one operation each: their referenced models' operations
  are lowered inside them and not stamped (a stamp in a loop body would be
  overwritten at each iteration);
* parallel loops run on the thread pool inside an operation; the stamps are
  taken in the calling thread, which waits for its loops, so an operation's
  time is its wall time with every thread it used.

The clock is ``nnc_monotonic_ns`` (``clock_gettime(CLOCK_MONOTONIC)``
through libc, defined by ``nnc-add-entry-point``; WHILE's loop timeout uses
it too), not ``rdtsc``/``llvm.readcyclecounter``: it is portable (x86-64 and
AArch64 Linux read it from the vDSO without a system call, some 20-50 ns),
it counts nanoseconds (a cycle counter needs its frequency, which on x86 is
the TSC's nominal rate, not the core's, and has to be calibrated), and
``llvm.readcyclecounter`` on AArch64 reads PMCCNTR_EL0, which Linux does not
let user space read (the instruction traps).  It is also the clock
``time.monotonic_ns()`` and ``time.perf_counter_ns()`` read on Linux, so the
stamps can be compared with the caller's clock readings.

Where the stamps live: the buffer is a temporary like any other, marked with
the unit attribute :data:`PROFILE_ATTR`; ``nnc-plan-buffers`` places it in the
arena (it is live over the whole function, so nothing shares its bytes) and
records ``nnc.profile = [offset, count]`` on the module; ``nnc-add-entry-point``
exports that pair as the constant ``int64_t nnc_profile_layout[2]``
(:data:`nnc.runtime.abi.PROFILE_SYMBOL`), from which the runtime reads the
stamps out of the arena after each call.  Each computation has its own arena,
so concurrent computations of one profiled model never mix their stamps.
Code compiled without the option has no buffer, no clock reads and no
symbol: profiling costs nothing when it is off.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.builder import Builder
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import ArrayAttr, IndexType, IntegerAttr, UnitAttr, i64
from xdsl.ir import Attribute, SSAValue

from nnc.passes.arena_layout import layout_attr, read_layout_attr
from nnc.passes.lowering.control_flow import CLOCK_FUNCTION

#: Unit attribute of the stamps' ``memref.alloc``; after buffer planning the
#: module attribute ``[offset in the arena, number of stamps]``.
PROFILE_ATTR = "nnc.profile"


class OperationStamps:
    """The timestamps of one function's top-level operations (see the module
    docstring): :meth:`stamp` before operation ``k`` writes slot ``k``,
    :meth:`stamp` after the last one slot ``count``."""

    def __init__(self, builder: Builder, count: int):
        #: number of operations (the buffer has one slot more)
        self.count = count
        alloc = memref.AllocOp.get(i64, 64, [count + 1])
        alloc.attributes[PROFILE_ATTR] = UnitAttr()
        builder.insert(alloc)
        self.buffer: SSAValue = alloc.memref

    def stamp(self, builder: Builder, slot: int) -> None:
        """``stamps[slot] = nnc_monotonic_ns()`` at the builder."""
        if not 0 <= slot <= self.count:
            raise ValueError(f"profile slot {slot} outside [0, {self.count}]")
        now = func.CallOp(CLOCK_FUNCTION, [], [i64])
        index = arith.ConstantOp(IntegerAttr(slot, IndexType()))
        builder.insert(now)
        builder.insert(index)
        builder.insert(memref.StoreOp.get(now.results[0], self.buffer, [index.result]))


def profile_layout(offset: int, count: int) -> ArrayAttr:
    """The module attribute ``nnc.profile`` the buffer planner records:
    the stamps' byte offset in the arena and their number."""
    return layout_attr(offset, count)


def read_layout(attr: Attribute | None, fail: Callable[[str], Exception]) -> tuple[int, int] | None:
    """(offset, count) of a module's ``nnc.profile`` attribute, None without
    one; ``fail(message)`` is raised for a malformed one."""
    return read_layout_attr(PROFILE_ATTR, attr, 8, fail)
