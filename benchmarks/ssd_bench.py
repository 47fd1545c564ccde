"""SSD post-processing: nnc's DETECTION_POSTPROCESSING against LiteRT's
``TFLite_Detection_PostProcess`` kernel, on the shape of SSD MobileNet v1
(1917 anchors, 90 classes plus the background).

Run from the repository root (LiteRT comes with the ``bench`` extra)::

    python benchmarks/ssd_bench.py [--runs 30] [--threads 1]

One ``.tflite`` per NMS flavour holds only the custom operator (inputs: box
encodings and class predictions; the anchors a constant), built with the
tests' flatbuffer builder and imported with ``nnc.import_tflite``.  Class
predictions are sigmoids of normal logits, as after an SSD head; options as
the TF Object Detection API exports them (score threshold 1e-8, IoU 0.6,
10 detections; regular NMS: 100 per class, 100 detections).  Each figure is
the median of ``--runs`` timed computations with the same inputs; the ratio
nnc / LiteRT is taken in the same process run.  The two compute different
things in the details (LiteRT decodes in double precision, sorts once per
class instead of NNAPI's in-place selection), so the detection counts are
printed beside the times.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np
from flatbuffers import flexbuffers

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

import nnc
from tflite_builder import FLOAT32, TFLiteBuilder

ANCHORS, CLASSES = 1917, 90
FAST = {"max_detections": 10, "max_classes_per_detection": 1, "nms_score_threshold": 1e-8,
        "nms_iou_threshold": 0.6, "num_classes": CLASSES, "y_scale": 10.0, "x_scale": 10.0,
        "h_scale": 5.0, "w_scale": 5.0}  # fmt: skip
REGULAR = {**FAST, "use_regular_nms": True, "detections_per_class": 100, "max_detections": 100}


def model(opts: dict, anchors: np.ndarray) -> bytes:
    b = TFLiteBuilder()
    enc = b.tensor("box_encodings", [1, ANCHORS, 4], FLOAT32)
    preds = b.tensor("class_predictions", [1, ANCHORS, CLASSES + 1], FLOAT32)
    anc = b.tensor("anchors", [ANCHORS, 4], FLOAT32, anchors)
    n = opts["max_detections"] * opts["max_classes_per_detection"]
    outs = [b.tensor("boxes", [1, n, 4], FLOAT32), b.tensor("classes", [1, n], FLOAT32),
            b.tensor("scores", [1, n], FLOAT32), b.tensor("num", [1], FLOAT32)]  # fmt: skip
    b.op("", [enc, preds, anc], outs, custom="TFLite_Detection_PostProcess", custom_options=flexbuffers.Dumps(opts))
    return b.build([enc, preds], outs)


def median_s(fn, runs: int) -> float:
    fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    anchors = np.concatenate([rng.random((ANCHORS, 2)), rng.uniform(0.05, 0.5, (ANCHORS, 2))], 1).astype(np.float32)
    enc = rng.normal(0, 1, (1, ANCHORS, 4)).astype(np.float32)
    preds = (1 / (1 + np.exp(-rng.normal(-4, 2, (1, ANCHORS, CLASSES + 1))))).astype(np.float32)
    try:
        from ai_edge_litert import interpreter
    except ImportError:
        interpreter = None
    print(f"anchors {ANCHORS}, classes {CLASSES}, {args.runs} runs, {args.threads} thread(s)")
    for name, opts in (("fast", FAST), ("regular", REGULAR)):
        data = model(opts, anchors)
        comp = nnc.Compilation(nnc.import_tflite(data))
        comp.finish()
        ex = nnc.Execution(comp)
        ex.set_num_threads(args.threads)
        ex.set_reusable(True)
        n = opts["max_detections"] * opts["max_classes_per_detection"]
        outs = [np.zeros(shape, np.float32) for shape in ((1, n, 4), (1, n), (1, n), (1,))]
        ex.set_input(0, enc)
        ex.set_input(1, preds)
        for k, o in enumerate(outs):
            ex.set_output(k, o)
        t_nnc = median_s(ex.compute, args.runs)
        line = f"{name:8s} nnc {t_nnc * 1e3:8.3f} ms ({int(outs[3][0])} detections)"
        if interpreter is not None:
            it = interpreter.Interpreter(model_content=data, num_threads=args.threads)
            it.allocate_tensors()
            ins = it.get_input_details()
            it.set_tensor(ins[0]["index"], enc)
            it.set_tensor(ins[1]["index"], preds)
            t_lite = median_s(it.invoke, args.runs)
            num = int(it.get_tensor(it.get_output_details()[3]["index"])[0])
            line += f"   LiteRT {t_lite * 1e3:8.3f} ms ({num} detections)   nnc/LiteRT {t_nnc / t_lite:.2f}"
        print(line)


if __name__ == "__main__":
    main()
