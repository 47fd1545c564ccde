"""arith to the llvm dialect: integer and float arithmetic (float fast-math
flags carry over), comparisons, selects, casts (float to int through the
saturating intrinsics, defined on every input), integer min/max as compare
and select, ``floordivsi`` as a rounded ``sdiv``, float min/max as intrinsics.
"""

from __future__ import annotations

from collections.abc import Mapping

from xdsl.dialects import arith, builtin, llvm
from xdsl.dialects.builtin import (
    AnyFloat,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    i64,
)
from xdsl.ir import Attribute, Operation

from nnc.passes.build import integer_attr, new_op
from nnc.passes.to_llvm.builders import (
    FCMP_CODES,
    FSUFFIX,
    ICMP_CODES,
    NO_OVERFLOW,
    NO_PROPS,
    convert_type,
    fastmath_props,
    llvm_binop,
    llvm_call_intrinsic,
    llvm_cast,
    llvm_constant,
    llvm_icmp,
    llvm_select,
)
from nnc.passes.to_llvm.converter import FuncConverter, Handler, float_intrinsic

_INT_BIN: dict[type[Operation], tuple[type[Operation], Mapping[str, Attribute]]] = {
    arith.AddiOp: (llvm.AddOp, NO_OVERFLOW),
    arith.SubiOp: (llvm.SubOp, NO_OVERFLOW),
    arith.MuliOp: (llvm.MulOp, NO_OVERFLOW),
    arith.DivSIOp: (llvm.SDivOp, NO_PROPS),
    arith.DivUIOp: (llvm.UDivOp, NO_PROPS),
    arith.RemSIOp: (llvm.SRemOp, NO_PROPS),
    arith.RemUIOp: (llvm.URemOp, NO_PROPS),
    arith.AndIOp: (llvm.AndOp, NO_PROPS),
    arith.OrIOp: (llvm.OrOp, NO_PROPS),
    arith.XOrIOp: (llvm.XOrOp, NO_PROPS),
    arith.ShLIOp: (llvm.ShlOp, NO_OVERFLOW),
    arith.ShRSIOp: (llvm.AShrOp, NO_PROPS),
    arith.ShRUIOp: (llvm.LShrOp, NO_PROPS),
}


#: float arithmetic: its fast-math flags (``contract``: a multiply and an
#: add LLVM may fuse) carry over
_FLOAT_BIN: dict[type[Operation], type[Operation]] = {
    arith.AddfOp: llvm.FAddOp,
    arith.SubfOp: llvm.FSubOp,
    arith.MulfOp: llvm.FMulOp,
    arith.DivfOp: llvm.FDivOp,
}


def _h_constant(c: FuncConverter, op: arith.ConstantOp) -> None:
    t = convert_type(op.result.type)
    value: Attribute = op.value
    if isinstance(value, IntegerAttr):
        value = integer_attr(value.value.data, t)
    elif isinstance(value, FloatAttr) and value.type != t:
        assert isinstance(t, AnyFloat)
        value = FloatAttr(value.value.data, t)
    c.vmap[op.result] = c.constant(value, t)


def _h_cmpi(c: FuncConverter, op: arith.CmpiOp) -> None:
    pred = ICMP_CODES[op.predicate.value.data]
    c.vmap[op.result] = c.emit(llvm_icmp(pred, c.v(op.lhs), c.v(op.rhs))).results[0]


def _h_cmpf(c: FuncConverter, op: arith.CmpfOp) -> None:
    pred = FCMP_CODES[op.predicate.value.data]
    props = {"predicate": integer_attr(llvm.FCmpPredicateFlag(pred).to_int(), i64)}
    result = convert_type(op.result.type)  # i1, or a vector of i1
    c.vmap[op.result] = c.emit(new_op(llvm.FCmpOp, (c.v(op.lhs), c.v(op.rhs)), (result,), props)).results[0]


def _h_select(c: FuncConverter, op: arith.SelectOp) -> None:
    c.vmap[op.result] = c.emit(llvm_select(c.v(op.cond), c.v(op.lhs), c.v(op.rhs))).results[0]


def _int_width(t: Attribute) -> int:
    t = convert_type(t)
    assert isinstance(t, IntegerType)
    return t.width.data


def _h_int_resize(c: FuncConverter, op: Operation, signed: bool) -> None:
    src, dst = op.operands[0], op.results[0]
    to = convert_type(dst.type)
    ws, wd = _int_width(src.type), _int_width(to)
    v = c.v(src)
    if wd > ws:
        v = c.emit(llvm_cast(llvm.SExtOp if signed else llvm.ZExtOp, v, to)).results[0]
    elif wd < ws:
        v = c.emit(llvm_cast(llvm.TruncOp, v, to)).results[0]
    c.vmap[dst] = v


def _h_index_cast(c: FuncConverter, op: arith.IndexCastOp) -> None:
    _h_int_resize(c, op, signed=True)


def _h_sitofp(c: FuncConverter, op: arith.SIToFPOp) -> None:
    c.vmap[op.result] = c.emit(llvm_cast(llvm.SIToFPOp, c.v(op.input), convert_type(op.result.type))).results[0]


def _h_uitofp(c: FuncConverter, op: arith.UIToFPOp) -> None:
    # llvm has no uitofp op in xDSL: widen with zext, then sitofp is exact.
    v = c.emit(llvm_cast(llvm.ZExtOp, c.v(op.input), builtin.IntegerType(_int_width(op.input.type) * 2))).results[0]
    c.vmap[op.result] = c.emit(llvm_cast(llvm.SIToFPOp, v, convert_type(op.result.type))).results[0]


def _fp_to_int(c: FuncConverter, op: Operation, signed: bool) -> None:
    # The saturating intrinsics are well defined on every input (NaN -> 0),
    # unlike plain fptosi, which is poison out of range.
    src = c.v(op.operands[0])
    to = convert_type(op.results[0].type)
    fname = FSUFFIX[src.type]
    name = f"llvm.fpto{'s' if signed else 'u'}i.sat.i{_int_width(to)}.{fname}"
    c.vmap[op.results[0]] = c.emit(llvm_call_intrinsic(name, [src], [to])).results[0]


def _h_ext_trunc_f(c: FuncConverter, op: Operation) -> None:
    c.vmap[op.results[0]] = c.fcast(c.v(op.operands[0]), convert_type(op.results[0].type))


def _h_bitcast(c: FuncConverter, op: arith.BitcastOp) -> None:
    c.vmap[op.result] = c.emit(llvm_cast(llvm.BitcastOp, c.v(op.operands[0]), convert_type(op.result.type))).results[0]


def _h_minmax(c: FuncConverter, op: Operation) -> None:
    """Integer min/max: compare and select."""
    a, b = c.v(op.operands[0]), c.v(op.operands[1])
    preds: dict[type[Operation], str] = {arith.MaxSIOp: "sgt", arith.MinSIOp: "slt", arith.MaxUIOp: "ugt", arith.MinUIOp: "ult"}
    pred = preds[type(op)]
    cond = c.emit(llvm_icmp(pred, a, b)).results[0]
    c.vmap[op.results[0]] = c.emit(llvm_select(cond, a, b)).results[0]


def _h_floordiv(c: FuncConverter, op: Operation) -> None:
    """floordivsi (from lower-affine): sdiv rounded toward -inf."""
    a, b = c.v(op.operands[0]), c.v(op.operands[1])
    t = a.type
    q = c.emit(llvm_binop(llvm.SDivOp, a, b)).results[0]
    r = c.emit(llvm_binop(llvm.SRemOp, a, b)).results[0]
    zero = c.emit(llvm_constant(integer_attr(0, t), t)).results[0]
    has_rem = c.emit(llvm_icmp("ne", r, zero)).results[0]
    # signs differ <=> (r xor b) < 0
    x = c.emit(llvm_binop(llvm.XOrOp, r, b)).results[0]
    neg = c.emit(llvm_icmp("slt", x, zero)).results[0]
    adjust = c.emit(llvm_binop(llvm.AndOp, has_rem, neg)).results[0]
    one = c.emit(llvm_constant(integer_attr(1, t), t)).results[0]
    q1 = c.emit(llvm_binop(llvm.SubOp, q, one, NO_OVERFLOW)).results[0]
    c.vmap[op.results[0]] = c.emit(llvm_select(adjust, q1, q)).results[0]


def _h_negf(c: FuncConverter, op: arith.NegfOp) -> None:
    a = c.v(op.operand)
    c.vmap[op.result] = c.emit(new_op(llvm.FNegOp, (a,), (a.type,), fastmath_props(frozenset()))).results[0]


def _int_binary(cls: type[Operation], props: Mapping[str, Attribute]) -> Handler:
    def handle(c: FuncConverter, op: Operation) -> None:
        c.vmap[op.results[0]] = c.emit(llvm_binop(cls, c.v(op.operands[0]), c.v(op.operands[1]), props)).results[0]

    return handle


def _float_binary(cls: type[Operation]) -> Handler:
    def handle(c: FuncConverter, op: Operation) -> None:
        flags = op.fastmath.data  # type: ignore[attr-defined]
        new = c.emit(llvm_binop(cls, c.v(op.operands[0]), c.v(op.operands[1]), fastmath_props(flags)))
        c.vmap[op.results[0]] = new.results[0]

    return handle


#: float min/max: LLVM intrinsics (name without the type suffix)
_FLOAT_INTRINSIC: dict[type[Operation], str] = {
    arith.MaxnumfOp: "llvm.maxnum",
    arith.MinnumfOp: "llvm.minnum",
    arith.MaximumfOp: "llvm.maximum",
    arith.MinimumfOp: "llvm.minimum",
}


HANDLERS: dict[type[Operation], Handler] = {
    arith.ConstantOp: _h_constant,
    arith.CmpiOp: _h_cmpi,
    arith.CmpfOp: _h_cmpf,
    arith.SelectOp: _h_select,
    arith.IndexCastOp: _h_index_cast,
    arith.ExtSIOp: lambda c, op: _h_int_resize(c, op, True),
    arith.ExtUIOp: lambda c, op: _h_int_resize(c, op, False),
    arith.TruncIOp: lambda c, op: _h_int_resize(c, op, True),
    arith.SIToFPOp: _h_sitofp,
    arith.UIToFPOp: _h_uitofp,
    arith.FPToSIOp: lambda c, op: _fp_to_int(c, op, True),
    arith.FPToUIOp: lambda c, op: _fp_to_int(c, op, False),
    arith.ExtFOp: _h_ext_trunc_f,
    arith.BitcastOp: _h_bitcast,
    arith.TruncFOp: _h_ext_trunc_f,
    arith.MaxSIOp: _h_minmax,
    arith.MinSIOp: _h_minmax,
    arith.MaxUIOp: _h_minmax,
    arith.MinUIOp: _h_minmax,
    arith.NegfOp: _h_negf,
    arith.FloorDivSIOp: _h_floordiv,
    **{op: _int_binary(cls, props) for op, (cls, props) in _INT_BIN.items()},
    **{op: _float_binary(cls) for op, cls in _FLOAT_BIN.items()},
    **{op: float_intrinsic(name) for op, name in _FLOAT_INTRINSIC.items()},
}
