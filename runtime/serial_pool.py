"""A single-thread stand-in for the thread pool's ``nnc_parallel_for``.

TEMPORARY (issue 11): the generated code of a model with parallel loops
(:mod:`nnc.passes.outline_parallel`) calls

    void nnc_parallel_for(void (*body)(int64_t begin, int64_t end, void *ctx), void *ctx, int64_t n);

which the native thread pool provides.  Until the pool is merged, this module
provides the same symbol running ``body(0, n, ctx)`` on the calling thread:
registered in this process for JIT-loaded code (:func:`register`, called by
:mod:`nnc.runtime.jit` when it initialises LLVM) and linked into artifacts
that reference it (:func:`link_into`).  Remove the module and its two uses
when the pool lands.
"""

from __future__ import annotations

import threading

import llvmlite.binding as llvm

#: the pool's entry point (nnc.passes.outline_parallel.PARALLEL_FOR)
SYMBOL = "nnc_parallel_for"

IR = f"""
define void @{SYMBOL}(ptr %body, ptr %ctx, i64 %n) {{
entry:
  %some = icmp sgt i64 %n, 0
  br i1 %some, label %run, label %done
run:
  call void %body(i64 0, i64 %n, ptr %ctx)
  br label %done
done:
  ret void
}}
"""

_lock = threading.Lock()
_engine: llvm.ExecutionEngine | None = None


def register(machine: llvm.TargetMachine) -> None:
    """Make ``nnc_parallel_for`` resolvable by code loaded later in this
    process (once; the engine that holds the code lives as long as the process)."""
    global _engine
    with _lock:
        if _engine is not None:
            return
        mod = llvm.parse_assembly(IR)
        mod.verify()
        _engine = llvm.create_mcjit_compiler(mod, machine)
        _engine.finalize_object()
        llvm.add_symbol(SYMBOL, _engine.get_function_address(SYMBOL))


def link_into(mod: llvm.ModuleRef) -> None:
    """Define ``nnc_parallel_for`` in ``mod`` if it calls it and has no definition."""
    try:
        fn = mod.get_function(SYMBOL)
    except NameError:
        return
    if fn.is_declaration:
        mod.link_in(llvm.parse_assembly(IR))
        mod.get_function(SYMBOL).linkage = "internal"  # not exported by the .so
