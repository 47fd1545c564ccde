"""``nnc-fuse-epilogues``: element-wise consumers of a GEMM-shaped producer
(FULLY_CONNECTED, CONV_2D) computed in the producer's epilogue: float32
ADDs of a residual, RELUs and swish, and quantised ADDs of a residual.

On the nnapi dialect, after shape inference.  A producer ``P`` whose result
reaches one consumer ``C`` through zero or more views (RESHAPE, SQUEEZE,
EXPAND_DIMS) is fused with it when:

* ``C`` is an ADD of ``P``'s (viewed) result and another tensor ``r`` (the
  residual), or a RELU / RELU1 / RELU6 of ``P``'s result;
* everything is TENSOR_FLOAT32 with static shapes, and the ADD broadcasts
  nothing: ``r``, ``P``'s viewed result and ``C``'s result have one shape
  (so element ``i`` of ``P``'s output, in row-major order, meets element
  ``i`` of ``r``: views keep the order);
* each value on the chain from ``P`` to ``C`` has exactly one use (no one
  else reads the sum-less output, and none of them is a model output);
* ``r`` is defined before ``P`` (a function argument, a constant or an
  earlier result), so its buffer exists when ``P`` is lowered; ``P`` is
  never moved, which keeps every operation's NNAPI index;
* ``C``'s fused activation (ADD's third input) is a constant;
* or swish: ``P``'s (viewed) result ``v`` has exactly two readers, a
  LOGISTIC of ``v`` and a MUL of ``v`` and that LOGISTIC's result (its only
  reader), with a constant activation and nothing broadcast: ``C`` is the
  MUL, and the LOGISTIC is computed in the epilogue too
  (``out = act_C(y * logistic(y))``, ``y = act_P(acc)``, the operations of
  LOGISTIC and MUL in their order, so the same bits).

The pass only marks: ``P`` gets the unit attribute :data:`PRODUCER_ATTR`,
``C`` :data:`CONSUMER_ATTR`.  ``convert-nnapi-to-linalg`` then lowers ``P``
with an epilogue (:func:`fused_consumer` describes it) writing straight into
``C``'s result buffer -- ``out = act_C(act_P(acc) + r)`` per element, one
rounding per operation exactly as the two operations separately (an ADD is
commutative in IEEE arithmetic, and no multiply-add is contracted across
it) -- and lowers ``C`` as nothing.  Outputs are bit-identical to the
unfused program; the saving is the write and two reads of ``P``'s output
and one pass over memory.

Quantised (TENSOR_QUANT8_ASYMM and _SIGNED, :func:`_quant_add`): ``P`` on
the int8 GEMM (its filter a constant) and ``C`` an ADD of its (viewed)
result and a residual ``r``, with the conditions above on uses, order and
``C``'s activation, and ``P``'s input, ``P``'s output, ``r`` and ``C``'s
result all of one 8-bit type, the last three of one static shape (their
scales and zero points free), and ADD parameters the reference accepts,
each input multiplier in [2^30, 2^31) as every positive scale ratio gives.
The GEMM kernel computes ``P``'s requantised output (its activation's
clamp included), then ``C``'s reference arithmetic with the residual
element (:func:`~nnc.passes.lowering.quant.add_element`: the same integers,
see :func:`~nnc.passes.kernels.q8.add_lanes`) and stores the 8-bit sum.
A marked ``P`` that the lowering puts off the GEMM (NCHW) writes its output
to ``C``'s buffer and the ADD runs in place after it.  The quantised rule
applies only with the option ``fuse-quant-adds``: the standalone ADD's
vector kernel (:mod:`~nnc.passes.kernels.q8_binary`) costs as much per
element as the epilogue's ADD (on Zen 3, AVX2: MobileNetV3 int8 2.67 ms
fused against 2.64 ms apart, an int8 ResNet-50 64.8 against 64.0 ms),
while each row-block size of the GEMM with the ADD in its epilogue is
another kernel of about 600 lines of LLVM IR to compile and hold in
memory.

Not fused: float16 operations (their epilogues round to half), quantised
consumers other than ADD, producers or consumers inside IF/WHILE bodies
(lowered elsewhere), and anything not matching the rules above.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType, UnitAttr, f32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from nnc.dialects import nnapi
from nnc.enums import FuseCode, OperandType, OperationType
from nnc.passes.graph import graph_functions, require_static_shapes
from nnc.passes.lowering.elementwise_q8 import binary_params
from nnc.passes.lowering.quant import AddParams, QuantError, add_inputs_normal

#: unit attribute of a producer whose consumer is computed in its epilogue
PRODUCER_ATTR = "nnc.fused_epilogue"
#: unit attribute of the consumer computed by its producer (lowered as nothing)
CONSUMER_ATTR = "nnc.fused_into_producer"

PRODUCERS = frozenset({OperationType.FULLY_CONNECTED, OperationType.CONV_2D})
#: the 8-bit types whose producers take a quantised ADD (the int8 GEMM's)
QUANT8_KINDS = frozenset({OperandType.TENSOR_QUANT8_ASYMM.name, OperandType.TENSOR_QUANT8_ASYMM_SIGNED.name})
VIEWS = frozenset({OperationType.RESHAPE, OperationType.SQUEEZE, OperationType.EXPAND_DIMS})
ACTIVATIONS = {
    OperationType.RELU: FuseCode.RELU,
    OperationType.RELU1: FuseCode.RELU1,
    OperationType.RELU6: FuseCode.RELU6,
}


@dataclass(frozen=True)
class FusedConsumer:
    """What a marked producer's epilogue computes: ``act(P + residual)``
    (``residual`` None: ``act(P)``) into ``consumer``'s result; with
    ``logistic`` (swish), ``act(P * logistic(P))``, ``consumer`` the MUL."""

    consumer: nnapi.NNAPIOperation
    residual: SSAValue | None
    act: int
    logistic: nnapi.NNAPIOperation | None = None


def _kind(op: Operation | None) -> OperationType | None:
    return op.SPEC.type if isinstance(op, nnapi.NNAPIOperation) else None


def _single_user(v: SSAValue) -> Operation | None:
    uses = list(v.uses)
    return uses[0].operation if len(uses) == 1 else None


def _static_f32(t: object) -> bool:
    return isinstance(t, TensorType) and t.element_type == f32 and all(d >= 0 for d in t.get_shape())


def _static_quant8(t: object) -> str | None:
    """The kind of a statically shaped TENSOR_QUANT8_ASYMM(_SIGNED) tensor
    type, else None."""
    if not isinstance(t, TensorType) or not all(d >= 0 for d in t.get_shape()):
        return None
    elem = t.element_type
    if isinstance(elem, nnapi.QuantType) and elem.kind.data in QUANT8_KINDS:
        return elem.kind.data
    return None


def _constant_int(v: SSAValue) -> int | None:
    op = v.owner
    if isinstance(op, nnapi.ConstantOp) and isinstance(op.value, DenseIntOrFPElementsAttr):
        values = op.value.get_values()
        if len(values) == 1:
            return int(values[0])
    return None


def _before(a: SSAValue, op: Operation) -> bool:
    """Whether ``a`` is available where ``op`` is: a block argument of
    ``op``'s block or the result of an operation earlier in it."""
    block = op.parent_block()
    if a.owner is block:
        return True
    owner = a.owner
    if block is None or not isinstance(owner, Operation) or owner.parent_block() is not block:
        return False
    return block.get_operation_index(owner) < block.get_operation_index(op)


def _end_of_chain(producer: nnapi.NNAPIOperation) -> tuple[SSAValue, Operation | None]:
    """Follow ``producer``'s result through single-use views: (the last
    value, its single user or None)."""
    v = producer.outs[0]
    user = _single_user(v)
    while user is not None and _kind(user) in VIEWS and len(user.results) == 1:
        v = user.results[0]
        user = _single_user(v)
    return v, user


def fused_consumer(producer: nnapi.NNAPIOperation) -> FusedConsumer | None:
    """The consumer ``producer``'s epilogue may compute (see the module
    doc), or None.  The one statement of the rule: the pass marks what it
    returns, and the lowering asks it again for a marked producer."""
    if _kind(producer) not in PRODUCERS or len(producer.outs) != 1:
        return None
    if _static_quant8(producer.outs[0].type) is not None:
        return _quant_add(producer)
    if not all(_static_f32(v.type) for v in (*producer.outs, producer.args[0])):
        return None
    v, user = _end_of_chain(producer)
    if user is None:
        return _swish(v)
    kind = _kind(user)
    if kind is None or len(user.results) != 1:
        return None
    assert isinstance(user, nnapi.NNAPIOperation)
    out = user.outs[0]
    if kind in ACTIVATIONS:
        if user.args[0] is v and _static_f32(out.type):
            return FusedConsumer(user, None, ACTIVATIONS[kind])
        return None
    if kind != OperationType.ADD or len(user.args) != 3:
        return None
    residual, act_code = _residual_of(user, v, producer)
    if residual is None or act_code is None:
        return None
    if not (v.type == residual.type == out.type and _static_f32(out.type)):
        return None
    return FusedConsumer(user, residual, act_code)


def _residual_of(add: nnapi.NNAPIOperation, v: SSAValue, producer: Operation) -> tuple[SSAValue | None, int | None]:
    """The other operand of an ADD of ``v`` (read once) and its constant
    activation, when that operand is defined before ``producer``; else
    (None, None)."""
    a, b, act = add.args
    residual = b if a is v else a
    act_code = _constant_int(act)
    if (a is v) == (b is v) or act_code is None or not _before(residual, producer):
        return None, None
    return residual, act_code


def _quant_add(producer: nnapi.NNAPIOperation) -> FusedConsumer | None:
    """A quantised producer's ADD of a residual (the module doc's
    quantised rule): the producer the int8 GEMM's (its filter a constant),
    its input, its output, the residual and the sum of one 8-bit type, the
    last three of one static shape, and parameters the vector ADD takes."""
    kind = _static_quant8(producer.outs[0].type)
    if _static_quant8(producer.args[0].type) != kind or not isinstance(producer.args[1].owner, nnapi.ConstantOp):
        return None
    v, user = _end_of_chain(producer)
    if not isinstance(user, nnapi.NNAPIOperation) or _kind(user) != OperationType.ADD or len(user.results) != 1:
        return None
    assert isinstance(v.type, TensorType)
    residual, act_code = _residual_of(user, v, producer)
    if residual is None or act_code is None:
        return None
    shape = v.type.get_shape()
    for t in (residual.type, user.outs[0].type):
        if _static_quant8(t) != kind or not isinstance(t, TensorType) or t.get_shape() != shape:
            return None
    try:
        params = binary_params(nnapi.op_call(user))
    except QuantError:
        return None  # the ADD's own lowering reports it
    if not isinstance(params, AddParams) or not add_inputs_normal(params):
        return None
    return FusedConsumer(user, residual, act_code)


def _swish(v: SSAValue) -> FusedConsumer | None:
    """``v``'s two readers as swish: a LOGISTIC of ``v`` whose one reader is
    a MUL of ``v`` and it (a constant activation, nothing broadcast)."""
    readers = [u.operation for u in v.uses]
    logistic = next((r for r in readers if _kind(r) == OperationType.LOGISTIC), None)
    if len(readers) != 2 or not isinstance(logistic, nnapi.NNAPIOperation) or logistic.args[0] is not v:
        return None
    s = logistic.outs[0]
    mul = _single_user(s)
    if not isinstance(mul, nnapi.NNAPIOperation) or _kind(mul) != OperationType.MUL or mul not in readers:
        return None
    a, b, act = mul.args
    act_code = _constant_int(act)
    if {id(a), id(b)} != {id(v), id(s)} or act_code is None:
        return None
    if not (v.type == s.type == mul.outs[0].type and _static_f32(v.type)):
        return None
    return FusedConsumer(mul, None, act_code, logistic)


@dataclass(frozen=True)
class FuseEpiloguesPass(ModulePass):
    """Mark producer/consumer pairs whose consumer fuses into the producer's
    epilogue (see module doc); ``fuse-quant-adds``: the quantised rule too
    (off by default, see the module doc)."""

    name = "nnc-fuse-epilogues"

    fuse_quant_adds: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in graph_functions(op):
            for producer in list(fn.body.block.ops):
                if _kind(producer) not in PRODUCERS or PRODUCER_ATTR in producer.attributes:
                    continue
                assert isinstance(producer, nnapi.NNAPIOperation)
                require_static_shapes(producer, self.name)
                fused = fused_consumer(producer)
                if fused is None or CONSUMER_ATTR in fused.consumer.attributes:
                    continue
                if _is_quant(fused) and not self.fuse_quant_adds:
                    continue
                producer.attributes[PRODUCER_ATTR] = UnitAttr()
                fused.consumer.attributes[CONSUMER_ATTR] = UnitAttr()
                if fused.logistic is not None:
                    fused.logistic.attributes[CONSUMER_ATTR] = UnitAttr()


def _is_quant(fused: FusedConsumer) -> bool:
    """Whether ``fused`` is a quantised ADD (the float rules' results are float32)."""
    return _static_quant8(fused.consumer.outs[0].type) is not None

