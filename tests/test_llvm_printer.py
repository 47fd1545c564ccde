"""The direct LLVM IR printer (nnc.passes.llvm_printer) against xDSL's
llvmlite-based backend: for models that exercise its operations (vector
kernels, intrinsics, phis, quantised integer arithmetic, half floats, a
WHILE loop), LLVM makes the same machine code of both texts; an operation it
does not know falls back to xDSL's backend."""

from __future__ import annotations

import re

import pytest
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc import driver
from nnc.passes import pipeline
from nnc.passes.llvm_printer import Unprintable, print_module
from nnc.runtime.jit import Target, emit_assembly, optimize
from targets import X86_CPUS, description, x86_target


def _model(op: Op, in_type: T, dims: list[int], extra: list[tuple[T, object]], **q) -> nnc.Model:
    m = nnc.Model()
    a = m.add_operand(in_type, dims, **q)
    ins = [a]
    if op in (Op.ADD, Op.MUL):
        ins.append(m.add_operand(in_type, dims, **q))
    for t, value in extra:
        x = m.add_operand(t)
        m.set_operand_value(x, value)
        ins.append(x)
    y = m.add_operand(in_type, dims, **q)
    m.add_operation(op, ins, [y])
    m.identify_inputs_and_outputs([i for i in ins if m.operands[i].type == in_type], [y])
    m.finish()
    return m


MODELS = {
    "add_f32": lambda: _model(Op.ADD, T.TENSOR_FLOAT32, [2, 37], [(T.INT32, 1)]),
    "softmax_f32": lambda: _model(Op.SOFTMAX, T.TENSOR_FLOAT32, [3, 20], [(T.FLOAT32, 1.0)]),
    "mul_q8": lambda: _model(Op.MUL, T.TENSOR_QUANT8_ASYMM, [1, 45], [(T.INT32, 0)], scale=0.5, zero_point=3),
    "tanh_f16": lambda: _model(Op.TANH, T.TENSOR_FLOAT16, [1, 19], []),
}


def llvm_module(model: nnc.Model, monkeypatch, target: Target) -> ModuleOp:
    """The model's llvm-dialect module for ``target``, as the driver hands it
    to to_llvm_ir (a copy: the driver empties the module once printed)."""
    seen: list[ModuleOp] = []
    monkeypatch.setattr(driver, "to_llvm_ir", lambda m: seen.append(m.clone()) or pipeline.to_llvm_ir(m))
    infos = [model.operands[i].info(with_value=False) for i in model.inputs]
    driver.lower_to_llvm(model, infos, target)
    return seen[0]


def machine_code(ir_text: str, target: Target) -> str:
    asm = emit_assembly(optimize(ir_text, target), target)
    return re.sub(r"(\.LBB|\.Lfunc_end|\.LCPI|\.Ltmp)\d+", r"\1N", asm)


@pytest.mark.parametrize("cpu", ["haswell", "skylake-avx512"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_same_machine_code_as_xdsl_backend(name: str, cpu: str, monkeypatch) -> None:
    target = x86_target(cpu)
    module = llvm_module(MODELS[name](), monkeypatch, target)
    direct = print_module(module, lambda f: f.no_inline is not None)
    assert machine_code(direct, target) == machine_code(pipeline._xdsl_llvm_ir(module), target)


def test_unknown_operation_falls_back_to_xdsl(monkeypatch) -> None:
    module = llvm_module(MODELS["add_f32"](), monkeypatch, x86_target("haswell"))
    main = next(op for op in module.ops if isinstance(op, llvm.FuncOp) and op.body.blocks)
    block = main.body.blocks.first
    assert block is not None
    block.insert_op_before(llvm.InlineAsmOp("nop", "", [], has_side_effects=True), block.last_op)
    with pytest.raises(Unprintable, match="inline_asm"):
        print_module(module, lambda f: False)
    assert "asm sideeffect" in pipeline.to_llvm_ir(module)


@pytest.mark.parametrize("cpu", X86_CPUS)
def test_cold_functions_get_optsize_in_both_printers(cpu: str, monkeypatch) -> None:
    """nnc-mark-cold's mark reaches LLVM as ``optsize`` (llvm.func's
    passthrough), on the function and on nnc_run, which inlines main, from
    the direct printer and from xDSL's backend alike.  The softmax row
    kernel is named by the target's float32 lanes and the row's tail (the
    model's rows have 20 elements)."""
    target = x86_target(cpu)
    module = llvm_module(MODELS["softmax_f32"](), monkeypatch, target)
    lanes = description(target).lanes("f32")
    kernel = f"nnc_softmax_{lanes}_t{20 % lanes}"
    for text in (print_module(module, lambda f: f.no_inline is not None), pipeline._xdsl_llvm_ir(module)):
        defines = {m.group(1): m.group(0) for m in re.finditer(r'^define .*@"?([\w.]+)"?\(.*$', text, re.MULTILINE)}
        assert {"main", "nnc_run", kernel} <= set(defines)
        assert all("optsize" in line for line in defines.values()), defines
    big = llvm_module(_model(Op.ADD, T.TENSOR_FLOAT32, [1024, 1024], [(T.INT32, 0)]), monkeypatch, target)  # over max-work
    assert "optsize" not in print_module(big, lambda f: f.no_inline is not None)


_SUM_LOOP = """
define void @"main"(ptr noalias %a, ptr noalias %b){attrs}
{{
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%n, %loop]
  %p = getelementptr float, ptr %a, i64 %i
  %q = getelementptr float, ptr %b, i64 %i
  %x = load float, ptr %p
  %y = fadd float %x, %x
  store float %y, ptr %q
  %n = add i64 %i, 1
  %c = icmp ult i64 %n, 256
  br i1 %c, label %loop, label %done
done:
  ret void
}}
"""


def test_module_of_cold_functions_skips_the_middle_end() -> None:
    """A module whose every function is optsize (nnc.cold) reaches code
    generation as written (the same loop without optsize is vectorised at
    O2); one hot function among cold ones optimises the whole module."""
    target = Target.host()
    hot = str(optimize(_SUM_LOOP.format(attrs=""), target, exported=("main",)))
    cold = str(optimize(_SUM_LOOP.format(attrs=" optsize"), target, exported=("main",)))
    assert re.search(r"fadd <\d+ x float>", hot)  # vectorised
    assert not re.search(r"<\d+ x float>", cold)
    assert "%y = fadd float %x, %x" in cold and "br i1 %c, label %loop, label %done" in cold  # untouched
    mixed = _SUM_LOOP.format(attrs=" optsize") + _SUM_LOOP.format(attrs="").replace('@"main"', '@"other"')
    assert re.search(r"fadd <\d+ x float>", str(optimize(mixed, target, exported=("main", "other"))))


def _fully_connected(batch: int, n_in: int, n_out: int) -> nnc.Model:
    """FULLY_CONNECTED float32 with constant weights and bias (a kernel of
    vector multiply-adds that may contract into FMAs)."""
    import numpy as np

    rng = np.random.default_rng(7)
    m = nnc.Model()
    x = m.add_operand(T.TENSOR_FLOAT32, [batch, n_in])
    w = m.add_operand(T.TENSOR_FLOAT32, [n_out, n_in])
    m.set_operand_value(w, rng.standard_normal((n_out, n_in)).astype(np.float32))
    b = m.add_operand(T.TENSOR_FLOAT32, [n_out])
    m.set_operand_value(b, rng.standard_normal(n_out).astype(np.float32))
    act = m.add_operand(T.INT32)
    m.set_operand_value(act, 0)
    y = m.add_operand(T.TENSOR_FLOAT32, [batch, n_out])
    m.add_operation(Op.FULLY_CONNECTED, [x, w, b, act], [y])
    m.identify_inputs_and_outputs([x], [y])
    m.finish()
    return m


@pytest.mark.parametrize("name", ["fully_connected", "softmax_f32", "tanh_f16"])
def test_cold_code_computes_bit_for_bit_what_optimised_code_does(name: str, monkeypatch) -> None:
    """A cold module (every function optsize: LLVM's middle end skipped)
    computes exactly what the same IR optimised at O2 computes: the two
    objects differ, their outputs do not, bit for bit."""
    import numpy as np

    from nnc.model import dtype_of
    from nnc.runtime import jit
    from nnc.runtime.executable import Executable, generate_code

    model = _fully_connected(3, 40, 12) if name == "fully_connected" else MODELS[name]()
    infos = [model.operands[i].info() for i in model.inputs]
    ir = driver.lower_to_llvm(model, infos)
    defines = re.findall(r"^define .*$", ir.llvm_ir, re.MULTILINE)
    assert defines and all("optsize" in line for line in defines)  # all cold
    target = Target.host()
    cold = generate_code(ir, target)
    with monkeypatch.context() as m:
        m.setattr(jit, "_for_size", lambda fn: False)  # as if hot: the O2 pipeline
        hot = generate_code(ir, target)
    assert cold.object_code != hot.object_code
    rng = np.random.default_rng(3)
    inputs = [(rng.standard_normal(i.dims) * 3).astype(dtype_of(i.type)) for i in infos]
    results = []
    for code in (cold, hot):
        outs = [np.zeros(o.dims, dtype_of(o.type)) for o in ir.outputs]
        assert Executable(code).run(inputs, outs) == 0
        results.append([o.view(np.uint8) for o in outs])
    assert all(np.array_equal(a, b) for a, b in zip(*results, strict=True))


def test_a_cold_module_reaches_code_generation_as_few_functions() -> None:
    """In a cold module, O0's always-inliner folds ``main`` (and any other
    internal function that may be inlined) into ``nnc_run``; the shared
    kernels, ``noinline``, stay functions.  Code generation pays per
    function, and cold modules are mostly ``main`` plus ``nnc_run``."""
    from nnc.runtime.abi import ENTRY_NAME

    model = MODELS["softmax_f32"]()
    ir = driver.lower_to_llvm(model, [model.operands[i].info() for i in model.inputs])
    names = re.findall(r'^define [^@]*@"?([\w.]+)"?\(.*$', ir.llvm_ir, re.MULTILINE)
    assert "main" in names and ENTRY_NAME in names
    kernels = [n for n in names if re.search(rf'^define [^@]*@"?{n}"?\(.*\bnoinline\b', ir.llvm_ir, re.MULTILINE)]
    mod = optimize(ir.llvm_ir, Target.host())
    defined = sorted(fn.name for fn in mod.functions if not fn.is_declaration)
    assert defined == sorted([ENTRY_NAME, *kernels])
