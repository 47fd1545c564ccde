"""``nnc-add-entry-point``: the C ABI entry ``nnc_run`` around ``@main``.

The model function takes one pointer per input, per output, the constant pool
and the arena.  Callers (the Python runtime through ctypes, or C code through
the header nnc writes) see one stable signature instead::

    int32_t nnc_run(void *const *inputs, void *const *outputs,
                    const void *weights, void *arena);

It returns 0, or ``k + 1`` when operation ``k`` found invalid runtime data (an
out-of-range index, say); the generated code never accesses memory out of
bounds in that case, it only reports.

A module lowered by ``convert-nnapi-to-linalg`` records
``nnc.loop_timeout_arg``; ``nnc_run`` then takes the WHILE loop timeout too
(every model, so that one signature serves all)::

    int32_t nnc_run(void *const *inputs, void *const *outputs,
                    const void *weights, void *arena, uint64_t loop_timeout_ns);

and also returns ``LOOP_TIMEOUT_STATUS`` (-4) when a WHILE loop ran longer
than that (see :mod:`nnc.passes.lowering.control_flow`).  It is passed to
``@main`` when main takes it (the attribute is its position, -1 if not).
Without the attribute (hand-written llvm-dialect modules) ``nnc_run`` keeps
the four-argument form.  A declaration of ``nnc_monotonic_ns`` (the loops'
clock) is replaced by its definition: ``clock_gettime(CLOCK_MONOTONIC)`` in
nanoseconds (Linux: clock id 1, ``struct timespec`` = two 64-bit fields).

Code compiled for profiling (the module attribute ``nnc.profile = [offset,
count]`` that ``nnc-plan-buffers`` records, see :mod:`nnc.passes.profile`)
also exports ``const int64_t nnc_profile_layout[2] = {offset, count}``: where
in the arena ``nnc_run`` leaves the operations' timestamps.  Likewise code
with data-dependent sizes (``nnc.counts``, :mod:`nnc.passes.counts`) exports
``const int64_t nnc_counts_layout[2] = {offset, n}``: where the run leaves
its int32 counts.

This pass runs on the llvm dialect, after ``convert-nnc-to-llvm``; it reads the
input and output counts that ``convert-nnapi-to-linalg`` recorded on the module.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IntAttr, IntegerAttr, ModuleOp, TensorType, i32, i64
from xdsl.ir import Block, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from nnc.passes.build import integer_attr
from nnc.passes.counts import COUNTS_ATTR, read_counts_layout
from nnc.passes.lowering.control_flow import CLOCK_FUNCTION, LOOP_TIMEOUT_ARG_ATTR
from nnc.passes.profile import PROFILE_ATTR, read_layout
from nnc.passes.to_llvm.builders import llvm_call, llvm_constant, llvm_gep, llvm_load, llvm_store
from nnc.runtime.abi import COUNTS_SYMBOL, PROFILE_SYMBOL
from nnc.runtime.abi import ENTRY_NAME as ENTRY

PTR = llvm.LLVMPointerType()


#: clock_gettime's clock id for CLOCK_MONOTONIC on Linux
CLOCK_MONOTONIC = 1


class AddEntryPointPass(ModulePass):
    name = "nnc-add-entry-point"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        n_in = op.attributes.get("nnc.num_inputs")
        n_out = op.attributes.get("nnc.num_outputs")
        if not isinstance(n_in, IntAttr) or not isinstance(n_out, IntAttr):
            raise PassFailedException("nnc-add-entry-point: module has no nnc.num_inputs/outputs")
        main = next((f for f in op.ops if isinstance(f, llvm.FuncOp) and f.sym_name.data == "main"), None)
        if main is None:
            raise PassFailedException("nnc-add-entry-point: no llvm.func @main")
        main.linkage = llvm.LinkageAttr("internal")
        timeout_attr = op.attributes.get(LOOP_TIMEOUT_ARG_ATTR)
        takes_timeout = isinstance(timeout_attr, IntAttr)
        main_timeout = isinstance(timeout_attr, IntAttr) and timeout_attr.data >= 0
        n_args = len(main.function_type.inputs.data)
        # weights, status, the loop timeout if main takes it, then arena if planned
        extra = n_args - n_in.data - n_out.data - (1 if main_timeout else 0)
        if extra not in (2, 3):
            raise PassFailedException(
                f"nnc-add-entry-point: @main takes {n_args} arguments; {n_in.data} inputs and {n_out.data} outputs "
                "need them followed by the weights, the status word, the loop timeout if any and the arena if any"
            )
        params = [PTR, PTR, PTR, PTR, *([i64] if takes_timeout else [])]
        block = Block(arg_types=params)
        ins, outs, weights, arena = block.args[:4]
        args: list[SSAValue] = []
        for base, count in ((ins, n_in.data), (outs, n_out.data)):
            for i in range(count):
                # (to_llvm's builders: the same ops as the constructors, a third of the cost)
                gep = llvm_gep(base, [i], PTR)
                load = llvm_load(gep.results[0], PTR)
                block.add_ops([gep, load])
                args.append(load.results[0])
        one = llvm_constant(integer_attr(1, i64), i64)
        status = llvm.AllocaOp(one, i32)
        zero = llvm_constant(integer_attr(0, i32), i32)
        block.add_ops([one, status, zero, llvm_store(zero.results[0], status.results[0])])
        tail = [weights, status.results[0], *([block.args[4]] if main_timeout else []), arena]
        args.extend(tail[: extra + (1 if main_timeout else 0)])
        call = llvm_call("main", args)
        result = llvm_load(status.results[0], i32)
        block.add_ops([call, result, llvm.ReturnOp(result.results[0])])
        entry = llvm.FuncOp(
            ENTRY,
            llvm.LLVMFunctionType(params, i32),
            linkage=llvm.LinkageAttr("external"),
            body=Region(block),
        )
        # LLVM inlines main into nnc_run and optimises the result under
        # nnc_run's attributes: main's (optsize when it is cold) carry over.
        entry.passthrough = main.passthrough
        op.body.block.add_op(entry)
        _define_clock(op)
        _export_profile_layout(op)
        _export_counts_layout(op)


def _fail(message: str) -> PassFailedException:
    return PassFailedException(f"nnc-add-entry-point: {message}")


def _export_profile_layout(module: ModuleOp) -> None:
    """``nnc_profile_layout`` for a module compiled for profiling."""
    _export_pair(module, PROFILE_SYMBOL, read_layout(module.attributes.get(PROFILE_ATTR), _fail))


def _export_counts_layout(module: ModuleOp) -> None:
    """``nnc_counts_layout`` for a module with data-dependent sizes."""
    _export_pair(module, COUNTS_SYMBOL, read_counts_layout(module.attributes.get(COUNTS_ATTR), _fail))


def _export_pair(module: ModuleOp, symbol: str, layout: tuple[int, int] | None) -> None:
    """``const int64_t symbol[2] = {offset, n}`` (nothing for no layout)."""
    if layout is None:
        return
    value = DenseIntOrFPElementsAttr.from_list(TensorType(i64, [2]), list(layout))
    module.body.block.add_op(
        llvm.GlobalOp(llvm.LLVMArrayType(IntAttr(2), i64), symbol, "external", constant=True, value=value, alignment=8)
    )


def _define_clock(module: ModuleOp) -> None:
    """Replace the declaration ``nnc_monotonic_ns`` (if any) by a definition."""
    decl = next(
        (f for f in module.ops if isinstance(f, llvm.FuncOp) and f.sym_name.data == CLOCK_FUNCTION), None
    )
    if decl is None:
        return
    if decl.body.blocks:
        raise PassFailedException(f"nnc-add-entry-point: {CLOCK_FUNCTION} is already defined")
    block = Block()
    two = llvm.ConstantOp(IntegerAttr(2, i64), i64)
    timespec = llvm.AllocaOp(two, i64)
    clock = llvm.ConstantOp(IntegerAttr(CLOCK_MONOTONIC, i32), i32)
    call = llvm.CallOp("clock_gettime", clock, timespec, return_type=i32)
    sec = llvm.LoadOp(timespec, i64)
    nsec_ptr = llvm.GEPOp(timespec, [1], i64, inbounds=True)
    nsec = llvm.LoadOp(nsec_ptr, i64)
    billion = llvm.ConstantOp(IntegerAttr(1_000_000_000, i64), i64)
    scaled = llvm.MulOp(sec.results[0], billion.results[0])
    total = llvm.AddOp(scaled.results[0], nsec.results[0])
    block.add_ops([two, timespec, clock, call, sec, nsec_ptr, nsec, billion, scaled, total, llvm.ReturnOp(total.results[0])])
    definition = llvm.FuncOp(
        CLOCK_FUNCTION, llvm.LLVMFunctionType([], i64), linkage=llvm.LinkageAttr("internal"), body=Region(block)
    )
    module.body.block.insert_op_before(definition, decl)
    decl.detach()
    decl.erase()
    if not any(isinstance(f, llvm.FuncOp) and f.sym_name.data == "clock_gettime" for f in module.ops):
        module.body.block.add_op(
            llvm.FuncOp("clock_gettime", llvm.LLVMFunctionType([i32, PTR], i32), linkage=llvm.LinkageAttr("external"))
        )
