"""``nnc-choose-kernels``: the kernel strategy of each quantised
convolution, recorded in the IR before the lowering applies it.

A quantised CONV_2D, FULLY_CONNECTED or TRANSPOSE_CONV_2D runs on the
int8 GEMM of :mod:`nnc.passes.kernels.q8` in one of its forms
(:class:`~nnc.passes.kernels.tiles.GemmForm`): int16 pairs, or byte quads
with the target's dot instruction (``vpdpbusd``, ``sdot``); a quantised
DEPTHWISE_CONV_2D on the int8 depthwise kernel, which multiplies each tap
alone, tap pairs or tap quads
(:class:`~nnc.passes.kernels.tiles.DepthwiseForm`).  As IREE records
its ``lowering_config`` on each operation before code generation, this pass
writes the form it chooses as the string attribute ``nnc.int8_form`` on the
operation, and ``convert-nnapi-to-linalg`` lowers what the attribute says,
so the choice can be read (``nnc-opt -p nnc-choose-kernels``), tested per
target, and fixed by hand.

The choice is :func:`~nnc.passes.kernels.tiles.target_form` and
:func:`~nnc.passes.kernels.tiles.target_depthwise_form` of the target (the
options, else the module's ``nnc.target``, as the lowering reads it), or
the ``int8-form`` and ``dw-form`` options for every operation of the kind
(to compare forms bit for bit: ``quad`` runs the quad layout in widening
arithmetic on any target, ``pair`` the depthwise tap pairs).
For a quantised DEPTHWISE_CONV_2D it also records, as ``nnc.dw_strides``,
whether the interior kernel takes the layer's strides as constants (one
kernel per layer shape, for the large layers where that pays) or as
parameters (one kernel shared by the layers of a window shape):
:func:`~nnc.passes.kernels.tiles.depthwise_strides` of the output size, or
what the ``dw-strides`` option says for every such operation.
An operation that already carries an attribute keeps it.  The quad forms
need the filter's ``w - zero_point`` in int8 and a constant bias; where
they are not (uint8 filters with an off-centre zero point), the lowering
multiplies in pairs, which its kernels' names say
(``nnc_q8_gemm_...`` against ``nnc_q8_vpdpbusd_gemm_...``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from nnc.dialects import nnapi
from nnc.enums import OperandType, OperationType
from nnc.passes.build import walk_ops
from nnc.passes.convert_nnapi_to_linalg import module_target
from nnc.passes.kernels.tiles import (
    FORM_ATTR,
    STRIDES_ATTR,
    DepthwiseForm,
    DepthwiseStrides,
    GemmForm,
    depthwise_strides,
    target_depthwise_form,
    target_form,
)
from nnc.passes.target import DEFAULT_TARGET, Int8Dot, TargetDescription

#: operations whose quantised form runs on the int8 GEMM
GEMM_OPERATIONS = (OperationType.CONV_2D, OperationType.FULLY_CONNECTED, OperationType.TRANSPOSE_CONV_2D)
#: and on the int8 depthwise kernel
DEPTHWISE_OPERATIONS = (OperationType.DEPTHWISE_CONV_2D,)

#: a kind of kernel choice
F = TypeVar("F", GemmForm, DepthwiseForm, DepthwiseStrides)

#: the 8-bit input types of the int8 GEMM
QUANT8 = (OperandType.TENSOR_QUANT8_ASYMM, OperandType.TENSOR_QUANT8_ASYMM_SIGNED)

#: the dot instructions each instruction form needs
NEEDS: dict[GemmForm | DepthwiseForm, tuple[Int8Dot, ...]] = {
    GemmForm.VPDPBUSD: (Int8Dot.AVX512_VNNI, Int8Dot.AVX_VNNI),
    GemmForm.SDOT: (Int8Dot.SDOT,),
    DepthwiseForm.VPDPWSSD: (Int8Dot.AVX512_VNNI, Int8Dot.AVX_VNNI),
    DepthwiseForm.VPDPBUSD: (Int8Dot.AVX512_VNNI, Int8Dot.AVX_VNNI),
}


def quant8_input(op: nnapi.NNAPIOperation) -> bool:
    """Whether ``op``'s first input is an 8-bit quantised tensor."""
    if not op.args:
        return False
    t = op.args[0].type
    return isinstance(t, TensorType) and nnapi.from_xdsl_type(t).type in QUANT8


@dataclass(frozen=True)
class ChooseKernelsPass(ModulePass):
    """Record the kernel form of each quantised CONV_2D, FULLY_CONNECTED,
    TRANSPOSE_CONV_2D and DEPTHWISE_CONV_2D (see the module's docstring).  Options:
    ``target-triple``, ``target-cpu``, ``target-features`` as
    ``convert-nnapi-to-linalg`` takes them, ``int8-form`` (``pair``,
    ``quad``, ``vpdpbusd``, ``sdot``) and ``dw-form`` (``widen``, ``pair``,
    ``vpdpwssd``, ``vpdpbusd``),
    empty: the target's; ``dw-strides`` (``constant``, ``parameters``),
    empty: by each layer's size."""

    name = "nnc-choose-kernels"

    target_triple: str = ""
    target_cpu: str = ""
    target_features: str = ""
    int8_form: str = ""
    dw_form: str = ""
    dw_strides: str = ""

    @staticmethod
    def for_target(target: TargetDescription) -> ChooseKernelsPass:
        return ChooseKernelsPass(target.triple, target.cpu, target.feature_string)

    def target(self, module: ModuleOp) -> TargetDescription:
        if not self.target_features:
            if self.target_triple or self.target_cpu:
                raise PassFailedException(f"{self.name}: target-cpu or target-triple without target-features")
            return module_target(module) or DEFAULT_TARGET
        return TargetDescription.parse(self.target_triple or DEFAULT_TARGET.triple, self.target_cpu, self.target_features)

    def form(self, module: ModuleOp) -> GemmForm:
        """The form every unmarked GEMM operation gets."""
        dot = self.target(module).int8_dot
        return self._option("int8-form", self.int8_form, GemmForm, module) or target_form(dot)

    def depthwise_form(self, module: ModuleOp) -> DepthwiseForm:
        """The form every unmarked depthwise convolution gets."""
        dot = self.target(module).int8_dot
        return self._option("dw-form", self.dw_form, DepthwiseForm, module) or target_depthwise_form(dot)

    def _option(self, option: str, value: str, kind: type[F], module: ModuleOp) -> F | None:
        """The form an option forces (None: the option is empty), refused
        when it names no form or one whose instruction the target lacks."""
        if not value:
            return None
        try:
            form = kind(value)
        except ValueError:
            known = ", ".join(f.value for f in kind)
            raise PassFailedException(f"{self.name}: {option}={value!r} is not one of {known}") from None
        if not isinstance(form, DepthwiseStrides):  # any target takes either
            self._check_instruction(option, form.value, NEEDS.get(form), self.target(module))
        return form

    def _check_instruction(self, option: str, value: str, needs: tuple[Int8Dot, ...] | None, target: TargetDescription) -> None:
        """Refuse a form whose instruction the target lacks (LLVM could not select it)."""
        if needs is not None and target.int8_dot not in needs:
            raise PassFailedException(
                f"{self.name}: {option}={value} needs a target with {' or '.join(d.value for d in needs)}; "
                f"this one has int8 {target.int8_dot.value} ({target.summary()})"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        forms = {
            **dict.fromkeys(GEMM_OPERATIONS, StringAttr(self.form(op).value)),
            **dict.fromkeys(DEPTHWISE_OPERATIONS, StringAttr(self.depthwise_form(op).value)),
        }
        strides = self._option("dw-strides", self.dw_strides, DepthwiseStrides, op)
        for o in walk_ops(op):
            if isinstance(o, nnapi.NNAPIOperation) and o.SPEC.type in forms and quant8_input(o):
                o.attributes.setdefault(FORM_ATTR, forms[o.SPEC.type])
                if o.SPEC.type in DEPTHWISE_OPERATIONS:
                    chosen = strides or depthwise_strides(output_pixels(o))
                    o.attributes.setdefault(STRIDES_ATTR, StringAttr(chosen.value))


def output_pixels(op: nnapi.NNAPIOperation) -> int:
    """Pixels per image of ``op``'s NHWC output (height x width of its 4-D
    result; the int8 depthwise kernel runs NHWC layers only); 0 when the
    shape is not known."""
    t = op.results[0].type
    if not isinstance(t, TensorType) or t.get_num_dims() != 4:
        return 0
    _, h, w, _ = t.get_shape()
    return max(h, 0) * max(w, 0)
