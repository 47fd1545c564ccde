"""``nnc.Execution``: running a compilation (ANeuralNetworksExecution_*).

Every argument is checked here, in Python, before native code is entered:
index ranges, dtypes, exact byte sizes, dimensions against the model, and the
output buffers against the shapes the compiled variant will write.  Native
code therefore only ever sees buffers of exactly the sizes it was compiled for.

States (Android 12, feature level 5)
------------------------------------
PREPARATION after creation: only then may inputs, outputs and options be set.
Starting a computation -- :meth:`~Execution.compute` (synchronous),
:meth:`~Execution.start_compute` (on a worker thread; returns an
:class:`~nnc.Event`), :meth:`~Execution.start_compute_with_dependencies`
(waits for other events first; its event has a sync fence) or
:meth:`~Execution.burst_compute` (synchronous, on a :class:`~nnc.Burst`) --
moves it to COMPUTATION, and the end of the computation to COMPLETED.  Output
shapes and durations are readable only in COMPLETED.  An execution computes
once, unless :meth:`~Execution.set_reusable` made it reusable: then it may be
computed again from COMPLETED, any number of times and in any mode, still
with the same bindings.  Two computations at once on one execution: the
second is BAD_STATE.

Where Android 11 and 12 differ nnc follows Android 12: a computation whose
arguments fail validation (e.g. an unset input) has *started* and completed
with that error, so a non-reusable execution cannot be computed again;
and ``get_sync_fence_fd`` on an event without a fence is BAD_DATA (see
:mod:`nnc.event`).

Errors of a computation are raised by the call that reports its status: the
synchronous calls themselves, or :meth:`nnc.Event.wait` for the asynchronous
ones (whose own call raises only what is detected before the computation
starts: state, unset arguments, uninitialised device memory).

Timing and deadlines
--------------------
With :meth:`~Execution.set_measure_timing` nnc measures each computation with
the monotonic clock: ``DurationCode.ON_HARDWARE`` is the native call that runs
the whole model, ``IN_DRIVER`` everything nnc did for the computation
(argument preparation, finding or compiling the variant for the input shapes,
the native call); so ON_HARDWARE <= IN_DRIVER.  The FENCED_* codes report the
same pair (for ``start_compute_with_dependencies`` measured from the moment
its dependencies were signalled).  :meth:`~Execution.set_timeout` sets a
deadline from the start of the computation; it is checked before a variant is
compiled, before the native call and after it, and a missed one is
MISSED_DEADLINE_TRANSIENT (a running native call is not interrupted; its
outputs are then undefined).  Timing and timeouts need a compilation made for
exactly one device (``Compilation.for_devices(model, [device])``), as in
NNAPI.  :meth:`~Execution.set_loop_timeout` bounds each WHILE loop (default
2 s, values above 15 s are lowered to 15 s): the compiled loop reads the
monotonic clock every iteration, stops once it has run longer, and the
computation fails with MISSED_DEADLINE_TRANSIENT.

Per-operation profile (nnc extension): an execution of a compilation made
with ``Compilation.set_profiling(True)`` keeps the timestamps its code
recorded around each operation of the main graph, and
:meth:`~Execution.get_operation_profile` returns the last computation's
per-operation times (:mod:`nnc.profile`).

Cost of a computation: everything a computation needs that its bindings
fix -- the variant, the output checks, the native call's pointer arrays, the
scratch arena -- is prepared by the first computation of a reusable
execution and kept (arguments can be bound only before it), so the next ones
only check what can still change (state, deadline, client memory mappings)
and make the native call; inputs whose values select the variant, and device
memories, are looked up again every time (see ``Runner._plan_for`` in
:mod:`nnc.execution.computation`).
``benchmarks/overhead_bench.py`` measures it.

Thread safety: executions of one compilation may run on any number of
threads at once (each native call gets its own scratch memory, see
:mod:`nnc.runtime.executable`).  One execution must not be modified by two
threads at once; it refuses a second simultaneous computation with BAD_STATE
instead of misbehaving.  Closing an execution while it computes is deferred
until the computation ends.

Layout
------
:class:`Execution` (:mod:`nnc.execution.facade`) is the public facade: the
state machine, the options and the lifetime.  It composes the argument table
(:mod:`nnc.execution.bindings`: every set call's checks), the computation
(:mod:`nnc.execution.computation`: the kept plan, the native call, deadlines,
what the asynchronous worker waits for) and the outputs
(:mod:`nnc.execution.outputs`: destinations, computed and dynamic shapes,
:class:`OutputRank` / :class:`OutputDimensions`).
"""

from nnc.execution.bindings import Binding, Bindings, resolve_dims
from nnc.execution.computation import Options, Plan, Runner
from nnc.execution.facade import Execution, State
from nnc.execution.outputs import Outcome, OutputDimensions, OutputRank

__all__ = [
    "Binding",
    "Bindings",
    "Execution",
    "Options",
    "Outcome",
    "OutputDimensions",
    "OutputRank",
    "Plan",
    "Runner",
    "State",
    "resolve_dims",
]
