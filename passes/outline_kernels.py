"""``nnc-outline-kernels``: shared kernels become functions, their uses calls.

Lowerings emit a use of a shared kernel (see
:func:`nnc.passes.kernels.vector.kernel`) as

    scf.execute_region {nnc.kernel = "NAME"} {
      %p:k = builtin.unrealized_conversion_cast %a0, ..., %ak : ... to ...
      <body using only %p and constants>
      scf.yield
    }

The cast's results are the kernel's parameters (their types are the generic
ones, e.g. ``memref<?xf32>``), its operands the arguments of this use.  Every
use of a name has the same body, and only the first use (in walk order) needs
to hold it: later uses may be just the cast and the yield.  This pass makes
one private ``func.func @NAME`` from the first use and replaces every use by
``func.call @NAME(args)`` (buffers cast to the parameter type with ``memref.cast``, once
per buffer, right after its definition).  A model with fifty convolutions then compiles a few dozen
kernel functions instead of fifty copies of unrolled vector code, which is
what keeps the rest of the pipeline and LLVM fast.

Uses must be top-level ops of a function body or nested in its loops; a
body that reads a value defined outside the region (other than through the
cast), or two uses of one name whose bodies differ in size, are lowering bugs
and fail the pass.
"""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.context import Context
from xdsl.dialects import func, memref, scf
from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr, UnitAttr, UnrealizedConversionCastOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from nnc.passes.build import new_op

#: attribute naming the kernel of a marked scf.execute_region; defined here,
#: the lowest module that knows the convention (it imports only xDSL), and
#: imported by the kernels that emit the marked regions
KERNEL_ATTR = "nnc.kernel"
#: set on outlined functions: their buffer arguments never alias a written one
NOALIAS_ATTR = "nnc.noalias"


def _parts(op: scf.ExecuteRegionOp) -> tuple[UnrealizedConversionCastOp, list[Operation]]:
    """The parameter cast and the body ops (without the yield) of a use."""
    block = op.region.block
    ops = list(block.ops)
    if not ops or not isinstance(ops[0], UnrealizedConversionCastOp):
        raise PassFailedException(f"nnc-outline-kernels: kernel use {op.attributes[KERNEL_ATTR]} has no parameter cast")
    # (xDSL prints scf.execute_region without its terminator)
    if isinstance(ops[-1], scf.YieldOp):
        ops.pop()
    if op.results or any(o.operands for o in block.ops if isinstance(o, scf.YieldOp)):
        raise PassFailedException("nnc-outline-kernels: a kernel use yields nothing")
    return ops[0], ops[1:]


def _check_closed(name: str, cast: UnrealizedConversionCastOp, body: list[Operation]) -> None:
    """Every value the body reads is defined in the body or is a parameter."""
    inside: set[SSAValue] = set(cast.results)
    for top in body:
        for op in top.walk():
            inside.update(op.results)
            for region in op.regions:
                for block in region.blocks:
                    inside.update(block.args)
    for top in body:
        for op in top.walk():
            for operand in op.operands:
                if operand not in inside:
                    raise PassFailedException(f"nnc-outline-kernels: kernel {name} reads a value from outside")


def _size(body: list[Operation]) -> int:
    return sum(1 for top in body for _ in top.walk())


def _outline(name: str, cast: UnrealizedConversionCastOp, body: list[Operation]) -> func.FuncOp:
    """A private function whose arguments replace the cast's results.  The
    body's operations move into it (the use they come from is erased next):
    the same operations a clone would give, without copying a few thousand
    of them."""
    types = [r.type for r in cast.results]
    block = Block(arg_types=types)
    for result, arg in zip(cast.results, block.args):
        result.replace_all_uses_with(arg)
        arg.name_hint = None  # (a clone's arguments take no hint from the cast)
    for op in body:
        op.detach()
    block.add_ops(body)
    block.add_op(func.ReturnOp())
    fn = func.FuncOp(name, (types, []), Region(block), visibility="private")
    fn.attributes[NOALIAS_ATTR] = UnitAttr()
    return fn


def _kernel_uses(region: Region) -> Iterator[scf.ExecuteRegionOp]:
    """The kernel uses in ``region``, in walk order, without walking into
    them (the first use of each kernel holds its whole body)."""
    for block in region.blocks:
        for op in block.ops:
            if isinstance(op, scf.ExecuteRegionOp) and KERNEL_ATTR in op.attributes:
                yield op
                continue
            for inner in op.regions:
                yield from _kernel_uses(inner)


class OutlineKernelsPass(ModulePass):
    """One function per shared kernel, calls at every use (see module doc)."""

    name = "nnc-outline-kernels"

    @staticmethod
    def _cast(value: SSAValue, to: Attribute, casts: dict[tuple[SSAValue, Attribute], SSAValue]) -> SSAValue:
        """``memref.cast`` of ``value`` (memref<98xf32> -> memref<?xf32>),
        made once, right after the value is defined so that it dominates
        every use."""
        key = (value, to)
        if key not in casts:
            conv = new_op(memref.CastOp, (value,), (to,))
            owner = value.owner
            if isinstance(owner, Block):
                owner.insert_op_before(conv, owner.first_op) if owner.first_op else owner.add_op(conv)
            else:
                block = owner.parent_block()
                assert block is not None
                block.insert_op_after(conv, owner)
            casts[key] = conv.results[0]
        return casts[key]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels: dict[str, tuple[func.FuncOp, int]] = {}
        casts: dict[tuple[SSAValue, Attribute], SSAValue] = {}
        callees: dict[str, SymbolRefAttr] = {}
        for fn in list(op.ops):
            if not isinstance(fn, func.FuncOp):
                continue
            for use in list(_kernel_uses(fn.body)):
                attr = use.attributes[KERNEL_ATTR]
                if not isinstance(attr, StringAttr):
                    raise PassFailedException(f"nnc-outline-kernels: {KERNEL_ATTR} is {attr}, expected a string")
                name = attr.data
                cast, body = _parts(use)
                if name not in kernels:
                    callees[name] = SymbolRefAttr(name)
                    if not body:
                        raise PassFailedException(f"nnc-outline-kernels: the first use of kernel {name} has no body")
                    _check_closed(name, cast, body)
                    kernels[name] = (_outline(name, cast, body), _size(body))
                elif body and kernels[name][1] != _size(body):
                    raise PassFailedException(f"nnc-outline-kernels: two uses of kernel {name} differ")
                if [t for t in cast.result_types] != list(kernels[name][0].function_type.inputs.data):
                    raise PassFailedException(f"nnc-outline-kernels: kernel {name} used with other parameter types")
                parent = use.parent_block()
                assert parent is not None
                args = [v if v.type == p.type else self._cast(v, p.type, casts) for v, p in zip(cast.inputs, cast.results)]
                parent.insert_op_before(new_op(func.CallOp, args, (), {"callee": callees[name]}), use)
                parent.erase_op(use, safe_erase=False)
        op.body.block.add_ops(f for f, _ in kernels.values())
