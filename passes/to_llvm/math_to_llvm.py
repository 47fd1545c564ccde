"""math to the llvm dialect: operations LLVM has intrinsics for become
intrinsics (the loop vectoriser sees them); the rest become calls to the C
library (``tanhf``...), half and double computed through float.
"""

from __future__ import annotations

from xdsl.dialects import llvm, math
from xdsl.dialects.builtin import (
    AnyFloat,
    FloatAttr,
)
from xdsl.ir import Operation

from nnc.passes.to_llvm.builders import (
    convert_type,
    llvm_fma,
)
from nnc.passes.to_llvm.converter import FuncConverter, Handler, float_intrinsic, libm_call

#: math ops that are LLVM intrinsics (name without the type suffix)
_FLOAT_INTRINSIC: dict[type[Operation], str] = {
    math.ExpOp: "llvm.exp",
    math.LogOp: "llvm.log",
    math.SqrtOp: "llvm.sqrt",
    math.FloorOp: "llvm.floor",
    math.CeilOp: "llvm.ceil",
    math.AbsFOp: "llvm.fabs",
    math.SinOp: "llvm.sin",
    math.CosOp: "llvm.cos",
    math.Exp2Op: "llvm.exp2",
    math.Log2Op: "llvm.log2",
    math.PowFOp: "llvm.pow",
    math.CopySignOp: "llvm.copysign",
    math.RoundEvenOp: "llvm.roundeven",
    math.TruncOp: "llvm.trunc",
}


#: math ops lowered to C library calls: op -> (f32 name, f16/f64 via f32)
_LIBM: dict[type[Operation], str] = {
    math.TanhOp: "tanhf",
    math.ErfOp: "erff",
    math.AtanOp: "atanf",
    math.Atan2Op: "atan2f",
    math.Log1pOp: "log1pf",
    math.ExpM1Op: "expm1f",
    math.Log10Op: "log10f",
    math.TanOp: "tanf",
    math.RoundOp: "roundf",
}


def _h_rsqrt(c: FuncConverter, op: math.RsqrtOp) -> None:
    t = convert_type(op.result.type)
    assert isinstance(t, AnyFloat)
    s = c.emit(llvm.FSqrtOp(c.v(op.operand))).results[0]
    one = c.emit(llvm.ConstantOp(FloatAttr(1.0, t), t)).results[0]
    c.vmap[op.result] = c.emit(llvm.FDivOp(one, s)).results[0]


def _h_fma(c: FuncConverter, op: math.FmaOp) -> None:
    c.vmap[op.result] = c.emit(llvm_fma(c.v(op.a), c.v(op.b), c.v(op.c))).results[0]


HANDLERS: dict[type[Operation], Handler] = {
    math.RsqrtOp: _h_rsqrt,
    math.FmaOp: _h_fma,
    **{op: float_intrinsic(name) for op, name in _FLOAT_INTRINSIC.items()},
    **{op: libm_call(name) for op, name in _LIBM.items()},
}
