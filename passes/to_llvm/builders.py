"""Builders of llvm-dialect operations and the type mapping shared by the
per-dialect conversions of ``convert-nnc-to-llvm``.

Each builder builds exactly the op (operands, results, properties) that the
llvm op class's own constructor builds, through :func:`nnc.passes.build.new_op`:
the generic IRDL constructor and fresh default attributes were most of the
pass's time.  ``index`` becomes ``i64``, a memref a pointer.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

from xdsl.dialects import builtin, llvm
from xdsl.dialects.builtin import (
    AffineMapAttr,
    IndexType,
    IntegerType,
    MemRefType,
    NoneAttr,
    StridedLayoutAttr,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    VectorType,
    i1,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.utils.exceptions import PassFailedException

from nnc.passes.build import i32_array, integer_attr, new_op, segment_sizes, vector_type

PTR = llvm.LLVMPointerType()


def convert_type(t: Attribute) -> Attribute:
    """index -> i64, memref -> !llvm.ptr, everything else unchanged."""
    if isinstance(t, IndexType):
        return i64
    if isinstance(t, MemRefType):
        return PTR
    if isinstance(t, IntegerType) and t.signedness.data != builtin.Signedness.SIGNLESS:
        return IntegerType(t.width.data)
    return t


def memref_strides(t: MemRefType) -> tuple[int, list[int]]:
    """Static offset and strides (in elements) of a memref type."""
    shape = list(t.get_shape())
    layout = t.layout
    if isinstance(layout, StridedLayoutAttr):
        strides = [s.data for s in layout.strides.data]  # type: ignore[union-attr]
        off = layout.offset
        return (off.data if hasattr(off, "data") else 0), strides
    if not isinstance(layout, NoneAttr) and layout is not None:
        if isinstance(layout, AffineMapAttr) and layout.data != AffineMap.identity(len(shape)):
            raise PassFailedException(f"convert-nnc-to-llvm: unsupported memref layout {layout}")
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return 0, strides


#: properties of the llvm ops built here, shared (attributes are immutable)
NO_PROPS: dict[str, Attribute] = {}


NO_OVERFLOW = {"overflowFlags": integer_attr(0, 32)}


_NO_FASTMATH = llvm.FastMathAttr(None)


_ORDERING = integer_attr(0, i64)


_UNIT = UnitAttr()


_CCC = llvm.CallingConventionAttr("ccc")


_NO_BUNDLES = i32_array(())


@functools.lru_cache(maxsize=64)
def fastmath_props(flags: frozenset[llvm.FastMathFlag]) -> dict[str, Attribute]:
    """The properties of float arithmetic with these fast-math flags."""
    return {"fastmathFlags": llvm.FastMathAttr(flags) if flags else _NO_FASTMATH}


@functools.lru_cache(maxsize=1024)
def symbol_ref(name: str) -> SymbolRefAttr:
    return SymbolRefAttr(name)


def llvm_binop(cls: type[Operation], a: SSAValue, b: SSAValue, props: Mapping[str, Attribute] = NO_PROPS) -> Operation:
    """A two-operand llvm op whose result has the operands' type."""
    return new_op(cls, (a, b), (a.type,), props)


def llvm_add(a: SSAValue, b: SSAValue) -> Operation:
    return llvm_binop(llvm.AddOp, a, b, NO_OVERFLOW)


def llvm_mul(a: SSAValue, b: SSAValue) -> Operation:
    return llvm_binop(llvm.MulOp, a, b, NO_OVERFLOW)


def llvm_cast(cls: type[Operation], v: SSAValue, to: Attribute) -> Operation:
    """A one-operand conversion (sext, trunc, sitofp, bitcast, ...)."""
    return new_op(cls, (v,), (to,), _CAST_PROPS.get(cls, NO_PROPS))


#: the properties the conversion ops' constructors give (the others: none)
_CAST_PROPS: dict[type[Operation], dict[str, Attribute]] = {
    llvm.TruncOp: {"overflowFlags": llvm.OverflowAttr(None)},
}


def llvm_constant(value: Attribute, t: Attribute) -> Operation:
    return new_op(llvm.ConstantOp, (), (t,), {"value": value})


def llvm_gep(ptr: SSAValue, indices: list[int | SSAValue], elem: Attribute) -> Operation:
    """``getelementptr inbounds elem, ptr, indices`` (constant and SSA indices,
    as ``GEPOp.from_mixed_indices``)."""
    raw = tuple(llvm.GEP_USE_SSA_VAL if isinstance(i, SSAValue) else i for i in indices)
    props = {"rawConstantIndices": i32_array(raw), "elem_type": elem, "noWrapFlags": NO_OVERFLOW["overflowFlags"], "inbounds": _UNIT}
    return new_op(llvm.GEPOp, (ptr, *[i for i in indices if isinstance(i, SSAValue)]), (PTR,), props)


def llvm_load(ptr: SSAValue, t: Attribute, alignment: int | None = None) -> Operation:
    props: dict[str, Attribute] = {"ordering": _ORDERING}
    if alignment is not None:
        props["alignment"] = integer_attr(alignment, i64)
    return new_op(llvm.LoadOp, (ptr,), (t,), props)


def llvm_store(value: SSAValue, ptr: SSAValue, alignment: int | None = None) -> Operation:
    props: dict[str, Attribute] = {"ordering": _ORDERING}
    if alignment is not None:
        props["alignment"] = integer_attr(alignment, i64)
    return new_op(llvm.StoreOp, (value, ptr), (), props)


def llvm_call(callee: str, args: Sequence[SSAValue], ret: Attribute | None = None) -> Operation:
    props = {
        "callee": symbol_ref(callee),
        "fastmathFlags": _NO_FASTMATH,
        "CConv": _CCC,
        "op_bundle_sizes": _NO_BUNDLES,
        "operandSegmentSizes": segment_sizes(len(args), 0),
    }
    return new_op(llvm.CallOp, args, () if ret is None else (ret,), props)


def llvm_call_intrinsic(name: str | StringAttr, args: Sequence[SSAValue], results: Sequence[Attribute]) -> Operation:
    props = {
        "intrin": StringAttr(name) if isinstance(name, str) else name,
        "op_bundle_sizes": _NO_BUNDLES,
        "operandSegmentSizes": segment_sizes(len(args), 0),
    }
    return new_op(llvm.CallIntrinsicOp, args, results, props)


def llvm_icmp(pred: str, a: SSAValue, b: SSAValue) -> Operation:
    t = a.type
    if isinstance(t, VectorType):
        result: Attribute = vector_type(i1, t.get_shape()[0]) if t.get_num_dims() == 1 else VectorType(i1, t.shape)
    else:
        result = i1
    return new_op(llvm.ICmpOp, (a, b), (result,), {"predicate": _ICMP_PREDICATES[pred]})


def llvm_fma(a: SSAValue, b: SSAValue, acc: SSAValue) -> Operation:
    return new_op(llvm.FMAOp, (a, b, acc), (a.type,), fastmath_props(frozenset()))


def llvm_select(cond: SSAValue, a: SSAValue, b: SSAValue) -> Operation:
    return new_op(llvm.SelectOp, (cond, a, b), (a.type,))


def llvm_shuffle(v1: SSAValue, v2: SSAValue, mask: tuple[int, ...], t: Attribute) -> Operation:
    return new_op(llvm.ShuffleVectorOp, (v1, v2), (t,), {"mask": i32_array(mask)})


FSUFFIX: dict[Attribute, str] = {builtin.f16: "f16", builtin.f32: "f32", builtin.f64: "f64"}


def type_suffix(t: Attribute) -> str:
    """Intrinsic name mangling of a float or 1-D float vector type: f32, v16f32."""
    if isinstance(t, VectorType):
        return f"v{t.get_shape()[0]}{FSUFFIX[t.element_type]}"
    return FSUFFIX[t]


ICMP_CODES = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]


FCMP_CODES = [
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
    "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true",
]  # fmt: skip


#: llvm.icmp's predicate property per predicate name
_ICMP_PREDICATES = {p: integer_attr(list(llvm.ICmpPredicateFlag).index(llvm.ICmpPredicateFlag(p)), 64) for p in ICMP_CODES}
