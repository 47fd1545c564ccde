"""The NNAPI conformance harness: builds each corpus model through nnc's public
API, runs it, and checks the outputs with the corpus's accuracy rules (see
``nnapi-cts/README.md``).

A case ends in one of three statuses:

* ``passed``      outputs (and reported dimensions) match, or an
                  ``expect_failure`` model was rejected with an NNError;
* ``unsupported`` nnc raised UnsupportedOperationError (counted, out loud);
* ``failed``      anything else: wrong numbers, wrong dimensions, an invalid
                  model accepted, or any exception that is not an NNError.
"""

from __future__ import annotations

import glob
import json
import os
import traceback
from dataclasses import dataclass
from functools import cache

import numpy as np

import nnc
from nnc import NNError, OperandType, OperationType, UnsupportedOperationError
from nnc.compilation import INTERNAL_ERROR
from nnc.model import dtype_of

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CTS_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "nnapi-cts"))

#: NNAPI 1.0 operation types (types-1.0.hal)
V1_0_OPS = frozenset(
    "ADD AVERAGE_POOL_2D CONCATENATION CONV_2D DEPTHWISE_CONV_2D DEPTH_TO_SPACE DEQUANTIZE "
    "EMBEDDING_LOOKUP FLOOR FULLY_CONNECTED HASHTABLE_LOOKUP L2_NORMALIZATION L2_POOL_2D "
    "LOCAL_RESPONSE_NORMALIZATION LOGISTIC LSH_PROJECTION LSTM MAX_POOL_2D MUL RELU RELU1 RELU6 "
    "RESHAPE RESIZE_BILINEAR RNN SOFTMAX SPACE_TO_DEPTH SVDF TANH".split()
)
FLOAT_INT_TYPES = frozenset("FLOAT32 INT32 UINT32 TENSOR_FLOAT32 TENSOR_INT32".split())
#: NNAPI 1.1 adds these (types-1.1.hal)
V1_1_OPS = V1_0_OPS | frozenset(
    "BATCH_TO_SPACE_ND DIV MEAN PAD SPACE_TO_BATCH_ND SQUEEZE STRIDED_SLICE SUB TRANSPOSE".split()
)


@dataclass(frozen=True)
class Case:
    file: str
    index: int
    name: str
    dynamic: bool

    @property
    def id(self) -> str:
        return f"{self.name}{'-dynamic' if self.dynamic else ''}"


@cache
def load_file(path: str) -> dict:
    with open(path) as f:
        return json.load(f)


def corpus_files(cts_dir: str) -> list[str]:
    return sorted(glob.glob(os.path.join(cts_dir, "*", "*.json")))


def cases(cts_dir: str) -> list[Case]:
    """Every model, plain and (where CTS runs it) with dynamic output shapes,
    in the order of :func:`twins_together`."""
    out = []
    for path in corpus_files(cts_dir):
        for i, m in enumerate(load_file(path)["models"]):
            out.append(Case(path, i, m["name"], False))
            if dynamic_applies(m):
                out.append(Case(path, i, m["name"], True))
    return twins_together(out)


def twins_together(found: list[Case]) -> list[Case]:
    """``found`` with each ``_relaxed`` model moved right after its twin (the
    name without ``_relaxed``), otherwise in corpus order.  Why: many twins
    shape-infer to the same module, which nnc's in-process compile cache
    (nnc/driver.py ``compile_model``) then compiles once, but only in the same
    process and while the first is among its recent entries; the corpus puts
    a twin ~300 models later, often on the other xdist worker (which takes
    consecutive runs of tests).  As with the dynamic-shape variant, right
    after its plain model, every case still builds, compiles (or hits) and
    runs through the public API."""
    first: dict[str, int] = {}
    for k, c in enumerate(found):
        first.setdefault(c.name.replace("_relaxed", ""), k)
    order = {c: (first[c.name.replace("_relaxed", "")], k) for k, c in enumerate(found)}
    return sorted(found, key=order.__getitem__)


def dynamic_applies(m: dict) -> bool:
    """CTS skips the dynamic-shape variant for expect_failure, RANK, IF, WHILE."""
    if m["expect_failure"]:
        return False
    ops = {o["type"] for g in [m["main"], *m["referenced"]] for o in g["operations"]}
    return not ops & {"RANK", "IF", "WHILE"}


def in_foundation_scope(m: dict) -> bool:
    """Issue 2's scope: NNAPI 1.0 operations on float32/int32 operands, not relaxed."""
    graphs = [m["main"], *m["referenced"]]
    ops = {o["type"] for g in graphs for o in g["operations"]}
    types = {o["type"] for g in graphs for o in g["operands"]}
    return ops <= V1_0_OPS and types <= FLOAT_INT_TYPES and not m["is_relaxed"]


def in_v1_1_scope(case: Case) -> bool:
    """Issue 3's scope: every model of V1_0 and V1_1, and any other model whose
    operations are NNAPI 1.0/1.1 ones on float32/int32/quant8-asymm operands."""
    m = model_json(case)
    if os.path.basename(os.path.dirname(case.file)) in ("V1_0", "V1_1"):
        return True
    graphs = [m["main"], *m["referenced"]]
    ops = {o["type"] for g in graphs for o in g["operations"]}
    types = {o["type"] for g in graphs for o in g["operands"]}
    return ops <= V1_1_OPS and types <= FLOAT_INT_TYPES | {"TENSOR_QUANT8_ASYMM"}


def model_json(case: Case) -> dict:
    return load_file(case.file)["models"][case.index]


# -- building ---------------------------------------------------------------------------


def operand_type(name: str) -> OperandType:
    """The corpus calls the MODEL operand type SUBGRAPH."""
    return OperandType.MODEL if name == "SUBGRAPH" else OperandType[name]


def _array(operand: dict) -> np.ndarray:
    t = operand_type(operand["type"])
    data = np.array(operand["data"], dtype=np.float64 if t in _FLOATS else np.int64)
    return data.astype(dtype_of(t)).reshape(operand["dimensions"] if t.is_tensor else ())


_FLOATS = {OperandType.FLOAT32, OperandType.FLOAT16, OperandType.TENSOR_FLOAT32, OperandType.TENSOR_FLOAT16}


def build_graph(graph: dict, referenced: list[dict], relaxed: bool, dynamic: bool, built: dict, api=nnc) -> nnc.Model:
    """The model of ``graph`` built through ``api`` (nnc, or :func:`cts_c.api`'s classes)."""
    model = api.Model()
    outputs = set(graph["output_indexes"])
    for k, o in enumerate(graph["operands"]):
        dims = o["dimensions"]
        if dynamic and k in outputs:
            dims = [0] * len(dims)
        t = operand_type(o["type"])
        model.add_operand(t, dims if (dims or t.is_tensor) else None, o["scale"], o["zero_point"])
        if o.get("channel_quant"):
            cq = o["channel_quant"]
            model.set_operand_symm_per_channel_quant_params(k, cq["scales"], cq["channel_dim"])
    for k, o in enumerate(graph["operands"]):
        lifetime = o["lifetime"]
        if lifetime in ("CONSTANT_COPY", "CONSTANT_REFERENCE"):
            model.set_operand_value(k, _array(o))
        elif lifetime == "NO_VALUE":
            model.set_operand_value(k, None)
        elif lifetime == "SUBGRAPH":
            ref = o["data"][0]
            if ref not in built:
                built[ref] = build_graph(referenced[ref], referenced, relaxed, False, built, api)
            model.set_operand_value_from_model(k, built[ref])
    for op in graph["operations"]:
        model.add_operation(OperationType[op["type"]], op["inputs"], op["outputs"])
    model.identify_inputs_and_outputs(graph["input_indexes"], graph["output_indexes"])
    model.relax_computation_float32_to_float16(relaxed)
    model.finish()
    return model


# -- checking ---------------------------------------------------------------------------


def tolerance(t: OperandType, m: dict) -> tuple[float, float]:
    graphs = [m["main"], *m["referenced"]]
    has_f16 = any(o["type"] == "TENSOR_FLOAT16" for g in graphs for o in g["operands"])
    if t == OperandType.TENSOR_FLOAT32:
        if m["is_relaxed"] or has_f16:
            return 5 * 2**-10, 5 * 2**-10
        return float(np.float32(1e-5)), 5 * 2**-23
    if t == OperandType.TENSOR_FLOAT16:
        return 5 * 2**-10, 5 * 2**-10
    if t == OperandType.TENSOR_BOOL8:
        return 0.0, 0.0
    return 1.0, 0.0


def compare(expected: np.ndarray, actual: np.ndarray, atol: float, rtol: float) -> str | None:
    e = expected.astype(np.float64).reshape(-1)
    a = actual.astype(np.float64).reshape(-1)
    if e.shape != a.shape:
        return f"size {a.size}, expected {e.size}"
    bad = ~(np.abs(a - e) <= atol + rtol * np.abs(e))
    if bad.any():
        i = int(np.argmax(bad))
        return f"{int(bad.sum())} of {e.size} elements differ; first at {i}: got {a[i]!r}, expected {e[i]!r}"
    return None


@dataclass
class Result:
    status: str  # passed / failed / unsupported
    message: str = ""


def run_case(case: Case, api=nnc) -> Result:
    """Run ``case`` through ``api``: nnc's Python classes, or the same
    classes over the C library (:func:`cts_c.api`)."""
    m = model_json(case)
    try:
        return _run(case, m, api)
    except UnsupportedOperationError as e:
        return Result("unsupported", str(e))
    except NNError as e:
        if INTERNAL_ERROR in str(e):
            return Result("failed", f"nnc bug: {e}")
        if m["expect_failure"]:
            return Result("passed", f"rejected: {e}")
        return Result("failed", f"unexpected {type(e).__name__}: {e}")
    except Exception as e:  # noqa: BLE001 - any other exception is a harness-visible crash
        return Result("failed", f"crash: {type(e).__name__}: {e}\n{traceback.format_exc()}")


def _run(case: Case, m: dict, api=nnc) -> Result:
    main = m["main"]
    model = build_graph(main, m["referenced"], m["is_relaxed"], case.dynamic, {}, api)
    comp = api.Compilation(model)
    comp.finish()
    ex = api.Execution(comp)
    for k, idx in enumerate(main["input_indexes"]):
        o = main["operands"][idx]
        if not o["data"]:  # the corpus marks an omitted optional input this way
            ex.set_input(k, None)
        else:
            ex.set_input(k, _array(o))
    outs = []
    for k, idx in enumerate(main["output_indexes"]):
        o = main["operands"][idx]
        # A zero-sized output still gets a buffer of one element, as CTS gives
        # one (TestGenerated.cpp: a client cannot pre-specify a zero-sized
        # output, and a non-NULL buffer of length 0 is BAD_DATA, C118).
        buf = np.zeros(max(_size(o), 1), dtype=dtype_of(operand_type(o["type"])))
        outs.append(buf)
        ex.set_output(k, buf, o["dimensions"] if not case.dynamic else None)
    ex.compute()
    if m["expect_failure"]:
        return Result("failed", "an invalid model was accepted and computed")
    for k, idx in enumerate(main["output_indexes"]):
        o = main["operands"][idx]
        if o.get("is_ignored"):
            continue
        # The NDK answers dimensions for tensors only (BAD_DATA for a scalar).
        dims = ex.get_output_operand_dimensions(k) if operand_type(o["type"]).is_tensor else []
        if list(dims) != list(o["dimensions"]):
            return Result("failed", f"output {k}: dimensions {dims}, expected {o['dimensions']}")
        t = operand_type(o["type"])
        if m.get("multinomial_tolerance", 0) > 0:
            msg = multinomial_distribution(m, outs[k].reshape(o["dimensions"]))
            return Result("failed", f"output {k}: {msg}") if msg else Result("passed")
        atol, rtol = tolerance(t, m)
        msg = compare(_array(o), outs[k][: _size(o)], atol, rtol)
        if msg:
            return Result("failed", f"output {k}: {msg}")
    return Result("passed")


def multinomial_distribution(m: dict, samples: np.ndarray) -> str | None:
    """CTS's check of a RANDOM_MULTINOMIAL model (TestHarness.cpp,
    ``expectMultinomialDistributionWithinTolerance``), which replaces the
    comparison of values: in each batch row, the share of the samples equal
    to class c must be within ``multinomial_tolerance`` of softmax(row)[c],
    computed in float as there (``expf`` of each input over their sum).
    Row b is input row b (upstream reads row ``batches * b``, the same for
    the corpus's batch of 1)."""
    main = m["main"]
    x = _array(main["operands"][main["input_indexes"][0]]).astype(np.float32)
    tol = m["multinomial_tolerance"]
    classes = x.shape[1]
    if samples.size and not (0 <= samples.min() and samples.max() < classes):
        return f"sampled classes in [{samples.min()}, {samples.max()}], expected [0, {classes})"
    for b, (row, drawn) in enumerate(zip(x, samples)):
        e = np.exp(row)
        expected = e / np.float32(e.sum(dtype=np.float32))
        share = np.bincount(drawn, minlength=classes).astype(np.float32) / np.float32(drawn.size)
        bad = np.flatnonzero(~(np.abs(share - expected) <= tol))
        if bad.size:
            c = int(bad[0])
            return (f"row {b}: {bad.size} classes off; class {c} drawn {share[c]:.4f} of the time, "
                    f"expected {expected[c]:.4f} +- {tol}")  # fmt: skip
    return None


def _size(o: dict) -> int:
    n = 1
    for d in o["dimensions"]:
        n *= d
    return n
