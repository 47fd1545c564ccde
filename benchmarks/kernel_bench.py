"""Per-layer benchmark of nnc's float32 CONV_2D / DEPTHWISE_CONV_2D /
FULLY_CONNECTED kernels on the layers of a TFLite model.

Run from the repository root::

    python benchmarks/kernel_bench.py [MODEL.tflite] [--runs 50] [--ops CONV_2D,...]

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

import numpy as np

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op

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
        new[i] = m.add_operand(src.type, list(src.dims or ()))
        if src.is_constant:
            m.set_operand_value(new[i], src.value)
    x = op.inputs[0]
    m.add_operation(op.type, [new[i] for i in op.inputs], [new[o] for o in op.outputs])
    m.identify_inputs_and_outputs([new[x]], [new[o] for o in op.outputs])
    m.finish()
    xin = np.random.default_rng(0).uniform(-1, 1, model.operands[x].dims).astype(np.float32)
    out_dims = model.operands[op.outputs[0]].dims
    w_dims = model.operands[op.inputs[1]].dims
    if op.type == Op.FULLY_CONNECTED:
        macs = int(np.prod(out_dims)) * w_dims[1]
    elif op.type == Op.DEPTHWISE_CONV_2D:
        macs = int(np.prod(out_dims)) * w_dims[1] * w_dims[2]
    else:
        macs = int(np.prod(out_dims)) * w_dims[1] * w_dims[2] * w_dims[3]
    return m, xin, macs


def median_ms(run, x: np.ndarray, runs: int) -> float:
    for _ in range(3):
        run(x)
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        run(x)
        ts.append(time.perf_counter() - t)
    return float(np.median(ts)) * 1e3


def overhead_ms(runs: int) -> float:
    """Median time of a model whose computation is negligible: what every
    execution costs besides the kernels (checks, ctypes call, arena)."""
    m = nnc.Model()
    a = m.add_operand(T.TENSOR_FLOAT32, [1])
    act = m.add_operand(T.INT32)
    m.set_operand_value(act, 0)
    out = m.add_operand(T.TENSOR_FLOAT32, [1])
    m.add_operation(Op.ADD, [a, a, act], [out])
    m.identify_inputs_and_outputs([a], [out])
    m.finish()
    cm = nnc.compile(m)
    return median_ms(lambda x: cm.run(x), np.ones(1, np.float32), runs)


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
    args = ap.parse_args()
    kinds = {Op[k] for k in args.ops.split(",")}
    model = nnc.import_tflite(args.model)
    base = overhead_ms(args.runs)
    print(f"per-execution overhead (a 1-element ADD): {base * 1e3:.1f} us, subtracted below")
    total_ms, total_macs = 0.0, 0
    for k, op in enumerate(model.operations):
        if op.type not in kinds or model.operands[op.inputs[0]].type != T.TENSOR_FLOAT32:
            continue
        m, x, macs = single_op_model(model, k)
        cm = nnc.compile(m)
        ms = max(median_ms(lambda a: cm.run(a), x, args.runs) - base, 1e-6)
        total_ms += ms
        total_macs += macs
        print(f"{k:3d} {describe(model, k)} {macs / 1e6:7.2f} MMAC {ms * 1e3:8.1f} us {2 * macs / ms / 1e6:6.1f} GFLOP/s")
    whole = nnc.compile(model)
    x = np.random.default_rng(0).uniform(-1, 1, model.operands[model.inputs[0]].dims).astype(np.float32)
    model_ms = median_ms(lambda a: whole.run(a), x, args.runs)
    print(f"layers: {total_macs / 1e6:.1f} MMAC in {total_ms:.2f} ms ({2 * total_macs / total_ms / 1e6:.1f} GFLOP/s); "
          f"whole model {model_ms:.2f} ms")


if __name__ == "__main__":
    main()
