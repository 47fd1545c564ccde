"""Per-layer benchmark of nnc's CONV_2D / DEPTHWISE_CONV_2D /
FULLY_CONNECTED kernels on the layers of a TFLite model, or on fixed
quantised cases.

Run from the repository root::

    python benchmarks/kernel_bench.py [MODEL.tflite] [--runs 50] [--ops CONV_2D,...]
    python benchmarks/kernel_bench.py --q8 [--runs 50] [--forms]

``--q8`` times the int8 kernels on fixed TENSOR_QUANT8_ASYMM_SIGNED cases
(per-channel filters): a 3x3 CONV_2D 56x56x128 -> 128, a 1x1 CONV_2D on the
same input, a 3x3 DEPTHWISE_CONV_2D and FULLY_CONNECTED 1024 -> 1000 at
batch 1 and 8, as GOP/s (2 x multiply-accumulates / time).  With
``--forms`` each int8 GEMM case (the CONV_2D and FULLY_CONNECTED ones) runs
in every form of the int8 GEMM the host can execute
(:class:`nnc.passes.kernels.tiles.GemmForm`, forced with
``nnc-choose-kernels{int8-form=...}``): int16 pairs, the quad layout in
widening arithmetic, and ``vpdpbusd`` (VNNI) or ``sdot`` where the host
has them; the last column is each form's time against the pair form's.
The depthwise case runs in every depthwise form the host can execute
(:class:`nnc.passes.kernels.tiles.DepthwiseForm`, ``dw-form``): each tap
widened, tap pairs, and VNNI's pairs (``vpdpwssd``) and quads
(``vpdpbusd``), against the widening form.

Each CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED of the model (default:
MobileNet v2 1.0 224 from ``/work/shared/models``) becomes a model of its own
(the operation's tensor input as the model input, its weights and scalars
copied) and is compiled and timed alone: the median of ``--runs`` runs after
warm-up minus nnc's per-execution overhead (argument checks, the native
call, the arena; measured on a one-element ADD), as GFLOP/s (2 x
multiply-accumulates / time).  A layer alone runs with its input and weights
in cache, unlike in the whole model; the sum of the layer times next to the
whole model's median shows what that and the other operations cost.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import numpy as np

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc import driver
from nnc.passes.choose_kernels import ChooseKernelsPass
from nnc.passes.pipeline import context
from nnc.passes.target import Int8Dot
from nnc.runtime import threadpool
from nnc.runtime.executable import Executable, generate_code
from nnc.runtime.jit import Target

DEFAULT_MODEL = "/work/shared/models/mobilenet_v2_1.0_224_float32.tflite"
KINDS = (Op.CONV_2D, Op.DEPTHWISE_CONV_2D, Op.FULLY_CONNECTED)


def single_op_model(model: nnc.Model, index: int) -> tuple[nnc.Model, np.ndarray, int]:
    """Operation ``index`` of ``model`` alone: (model, an input, MACs)."""
    op = model.operations[index]
    m = nnc.Model()
    new: dict[int, int] = {}
    for i in (*op.inputs, *op.outputs):
        if i in new:
            continue
        src = model.operands[i]
        new[i] = m.add_operand(src.type, list(src.dims or ()), src.scale, src.zero_point)
        if src.channel_quant is not None:
            m.set_operand_symm_per_channel_quant_params(new[i], *src.channel_quant)
        if src.is_constant:
            m.set_operand_value(new[i], src.value)
    x = op.inputs[0]
    m.add_operation(op.type, [new[i] for i in op.inputs], [new[o] for o in op.outputs])
    m.identify_inputs_and_outputs([new[x]], [new[o] for o in op.outputs])
    m.finish()
    xin = random_input(model.operands[x].type, model.operands[x].dims)
    out_dims = model.operands[op.outputs[0]].dims
    w_dims = model.operands[op.inputs[1]].dims
    if op.type == Op.FULLY_CONNECTED:
        macs = int(np.prod(out_dims)) * w_dims[1]
    elif op.type == Op.DEPTHWISE_CONV_2D:
        macs = int(np.prod(out_dims)) * w_dims[1] * w_dims[2]
    else:
        macs = int(np.prod(out_dims)) * w_dims[1] * w_dims[2] * w_dims[3]
    return m, xin, macs


def random_input(t: T, dims) -> np.ndarray:
    """A reproducible input of operand type ``t`` (float32 in [-1, 1], or
    any 8-bit value)."""
    rng = np.random.default_rng(0)
    if t == T.TENSOR_FLOAT32:
        return rng.uniform(-1, 1, dims).astype(np.float32)
    dtype = np.uint8 if t == T.TENSOR_QUANT8_ASYMM else np.int8
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, dims, endpoint=True).astype(dtype)


def median_ms(run, x: np.ndarray, runs: int) -> float:
    for _ in range(3):
        run(x)
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        run(x)
        ts.append(time.perf_counter() - t)
    return float(np.median(ts)) * 1e3


def add_model(t: T = T.TENSOR_FLOAT32) -> nnc.Model:
    """A one-element ADD of operand type ``t``: a computation that costs
    nothing, to time what every execution costs besides the kernels."""
    m = nnc.Model()
    a = m.add_operand(t, [1])
    act = m.add_operand(T.INT32)
    m.set_operand_value(act, 0)
    out = m.add_operand(t, [1])
    m.add_operation(Op.ADD, [a, a, act], [out])
    m.identify_inputs_and_outputs([a], [out])
    m.finish()
    return m


def overhead_ms(runs: int) -> float:
    """Median time of a model whose computation is negligible: what every
    execution costs besides the kernels (checks, ctypes call, arena)."""
    cm = nnc.compile(add_model())
    return median_ms(lambda x: cm.run(x), np.ones(1, np.float32), runs)


def _q8_case(kind: Op, x_dims, w_dims, scalars) -> tuple[nnc.Model, np.ndarray, int]:
    """One quantised (signed; per-channel filter for the convolutions, per
    tensor for FULLY_CONNECTED) operation as a model: (model, an input, MACs)."""
    rng = np.random.default_rng(0)
    t = T.TENSOR_QUANT8_ASYMM_SIGNED
    m = nnc.Model()
    x = m.add_operand(t, list(x_dims), 0.05, -3)
    channel_dim = 3 if kind == Op.DEPTHWISE_CONV_2D else 0
    oc = w_dims[channel_dim]
    if kind == Op.FULLY_CONNECTED:
        w = m.add_operand(t, list(w_dims), 0.01, 1)
    else:
        w = m.add_operand(T.TENSOR_QUANT8_SYMM_PER_CHANNEL, list(w_dims))
        m.set_operand_symm_per_channel_quant_params(w, list(rng.uniform(0.005, 0.02, oc)), channel_dim)
    m.set_operand_value(w, rng.integers(-127, 127, w_dims, endpoint=True).astype(np.int8))
    b = m.add_operand(T.TENSOR_INT32, [oc], 0.0005 if kind == Op.FULLY_CONNECTED else 0.0)
    m.set_operand_value(b, rng.integers(-2000, 2000, oc).astype(np.int32))
    ins = [x, w, b]
    for v in scalars:
        i = m.add_operand(T.INT32)
        m.set_operand_value(i, v)
        ins.append(i)
    if kind == Op.FULLY_CONNECTED:
        out_dims = [x_dims[0], oc]
        macs = x_dims[0] * oc * w_dims[1]
    else:
        out_dims = [x_dims[0], x_dims[1], x_dims[2], oc]  # SAME, stride 1
        taps = w_dims[1] * w_dims[2]
        macs = int(np.prod(out_dims)) * taps * (1 if kind == Op.DEPTHWISE_CONV_2D else w_dims[3])
    out = m.add_operand(t, out_dims, 0.1, 2)
    m.add_operation(kind, ins, [out])
    m.identify_inputs_and_outputs([x], [out])
    m.finish()
    return m, random_input(t, x_dims), macs


#: --q8: (label, operation, input dims, filter dims, scalars: padding SAME, strides 1, [multiplier,] RELU6)
Q8_CASES = [
    ("CONV_2D 3x3 56x56x128->128", Op.CONV_2D, (1, 56, 56, 128), (128, 3, 3, 128), (1, 1, 1, 3)),
    ("CONV_2D 1x1 56x56x128->128", Op.CONV_2D, (1, 56, 56, 128), (128, 1, 1, 128), (1, 1, 1, 3)),
    ("DEPTHWISE 3x3 56x56x128", Op.DEPTHWISE_CONV_2D, (1, 56, 56, 128), (1, 3, 3, 128), (1, 1, 1, 1, 3)),
    ("FULLY_CONNECTED 1x1024->1000", Op.FULLY_CONNECTED, (1, 1024), (1000, 1024), (3,)),
    ("FULLY_CONNECTED 8x1024->1000", Op.FULLY_CONNECTED, (8, 1024), (1000, 1024), (3,)),
]


def q8_cases(runs: int, base: float) -> None:
    for label, kind, x_dims, w_dims, scalars in Q8_CASES:
        m, x, macs = _q8_case(kind, x_dims, w_dims, scalars)
        cm = nnc.compile(m)
        ms = max(median_ms(cm.run, x, runs) - base, 1e-6)
        print(f"{label:30s} {macs / 1e6:7.2f} MMAC {ms * 1e3:8.1f} us {2 * macs / ms / 1e6:6.1f} GOP/s")


def host_forms() -> list[str]:
    """The int8 GEMM forms the host can run: pairs, quads in widening
    arithmetic, and its dot instruction's quads."""
    dot = driver.target_description(Target.host()).int8_dot
    forms = ["pair", "quad"]
    if dot in (Int8Dot.AVX512_VNNI, Int8Dot.AVX_VNNI):
        forms.append("vpdpbusd")
    elif dot is Int8Dot.SDOT:
        forms.append("sdot")
    return forms


def host_dw_forms() -> list[str]:
    """The int8 depthwise forms the host can run (see :func:`host_forms`)."""
    dot = driver.target_description(Target.host()).int8_dot
    return ["widen", "pair"] + (["vpdpwssd", "vpdpbusd"] if dot in (Int8Dot.AVX512_VNNI, Int8Dot.AVX_VNNI) else [])


def forced_runner(m: nnc.Model, form: str, depthwise: bool = False):
    """``m`` compiled with every int8 GEMM (or depthwise convolution) in
    ``form``: run(x) -> output."""
    infos = driver.static_input_infos(m)
    module, weights = driver.shaped_module(m, infos)
    host = driver.target_description(Target.host())
    option = {"dw_form": form} if depthwise else {"int8_form": form}
    replace(ChooseKernelsPass.for_target(host), **option).apply(context(), module)
    ir = driver.lower_shaped(module, weights, infos)
    taken = (form == "widen" or f"_{form}_" in ir.llvm_ir) if depthwise else f"nnc_q8_{'' if form == 'pair' else form + '_'}gemm" in ir.llvm_ir
    if not taken:
        raise SystemExit(f"kernel_bench: the {form} form was not taken")
    exe = Executable(generate_code(ir, Target.host()))
    out = m.operands[m.outputs[0]]
    y = np.zeros(out.dims, np.int8)

    def run(x: np.ndarray) -> np.ndarray:
        exe.run([x], [y])
        return y

    return run


def q8_forms(runs: int) -> None:
    """The int8 GEMM cases in every form, on one thread, each time less the
    native call's own cost (a one-element ADD through the same path)."""
    threadpool.set_num_threads(1)
    forms = host_forms()
    add = add_model(T.TENSOR_INT32)
    exe = Executable(generate_code(driver.lower(add, driver.static_input_infos(add)), Target.host()))
    one = np.ones(1, np.int32)
    base = median_ms(lambda x: exe.run([x], [np.zeros(1, np.int32)]), one, runs)
    print(f"int8 GEMM forms on this host ({driver.target_description(Target.host()).summary()}): {', '.join(forms)}; "
          f"1 thread; native call overhead {base * 1e3:.1f} us, subtracted")  # fmt: skip
    for label, kind, x_dims, w_dims, scalars in Q8_CASES:
        depthwise = kind == Op.DEPTHWISE_CONV_2D
        kinds = host_dw_forms() if depthwise else forms
        m, x, macs = _q8_case(kind, x_dims, w_dims, scalars)
        times, outs = {}, {}
        for form in kinds:
            run = forced_runner(m, form, depthwise)
            outs[form] = run(x).copy()
            times[form] = max(median_ms(run, x, runs) - base, 1e-6)
        same = all(np.array_equal(outs[kinds[0]], o) for o in outs.values())
        for form in kinds:
            ms = times[form]
            print(f"{label:30s} {form:9s} {ms * 1e3:8.1f} us {2 * macs / ms / 1e6:6.1f} GOP/s "
                  f"{ms / times[kinds[0]]:5.2f} x {kinds[0]}{'' if same else '  OUTPUTS DIFFER'}")  # fmt: skip


def describe(model: nnc.Model, index: int) -> str:
    op = model.operations[index]
    x = model.operands[op.inputs[0]].dims
    w = model.operands[op.inputs[1]].dims
    return f"{Op(op.type).name:18s} in {'x'.join(map(str, x)):14s} w {'x'.join(map(str, w)):14s}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", nargs="?", default=DEFAULT_MODEL)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--ops", default=",".join(k.name for k in KINDS))
    ap.add_argument("--q8", action="store_true", help="the fixed quantised cases instead of a model's layers")
    ap.add_argument("--forms", action="store_true", help="with --q8: the int8 GEMM and depthwise cases in every form the host runs")
    args = ap.parse_args()
    kinds = {Op[k] for k in args.ops.split(",")}
    if args.q8 and args.forms:
        q8_forms(args.runs)
        return
    base = overhead_ms(args.runs)
    print(f"per-execution overhead (a 1-element ADD): {base * 1e3:.1f} us, subtracted below")
    if args.q8:
        q8_cases(args.runs, base)
        return
    model = nnc.import_tflite(args.model)
    total_ms, total_macs = 0.0, 0
    for k, op in enumerate(model.operations):
        if op.type not in kinds:
            continue
        m, x, macs = single_op_model(model, k)
        cm = nnc.compile(m)
        ms = max(median_ms(cm.run, x, args.runs) - base, 1e-6)
        total_ms += ms
        total_macs += macs
        print(f"{k:3d} {describe(model, k)} {macs / 1e6:7.2f} MMAC {ms * 1e3:8.1f} us {2 * macs / ms / 1e6:6.1f} GFLOP/s")
    whole = nnc.compile(model)
    x = random_input(model.operands[model.inputs[0]].type, model.operands[model.inputs[0]].dims)
    model_ms = median_ms(lambda a: whole.run(a), x, args.runs)
    print(f"layers: {total_macs / 1e6:.1f} MMAC in {total_ms:.2f} ms ({2 * total_macs / total_ms / 1e6:.1f} GFLOP/s); "
          f"whole model {model_ms:.2f} ms")


if __name__ == "__main__":
    main()
