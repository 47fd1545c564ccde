"""Fuzz kind (f): edge shapes, compiled for two targets at two thread counts.

Every implemented (operation, primary operand type) pair of the operation
table has conformance models in ``../shared/nnapi-cts``; a trial takes one
as a template and moves its dimension sizes to edge values
(:data:`EDGES`: 1, 2, 3, 7, 16, 17, a large prime, and 0), in one of two
ways:

* consistent: every occurrence of one or two of the template's sizes, in
  every tensor (and, half the time, every integer operand value equal to the
  size, so that a shape or a count follows), becomes the edge size;
* single: one axis of one tensor changes alone.

Outputs and internal tensors are declared with the new sizes or, half the
time, unspecified (shape inference decides).  Constant tensors whose shape
changed get random values; inputs keep the template's values where their
shape did not change.

The operation's own rules decide validity: a model that the model API or
the compiler rejects with an NNError that is not an internal compiler error
is "rejected" (not a finding: that is the rule speaking).  A valid model is
compiled for the host and for generic x86-64 (SSE2, 4 lanes, no FMA), each
run at 1 and 2 threads on the same inputs, and all four must agree:

* the same outcome: outputs, or the same NNError class at run time;
* at 1 and 2 threads on one target, bit for bit (the thread pool splits
  work but never reassociates, see ``parallel_each``);
* across targets, bit for bit for integer and boolean tensors, and for
  float within the corpus tolerance of the template scaled by the output's
  magnitude (vector forms of other widths sum in other orders, and FMA
  contracts).  Quantised tensors are integers: bit for bit.

A differential check needs no reference implementation, so it covers every
operation.  An internal compiler error on a model that ``Model.finish()``
accepted is a finding ("ice") with a reproducer: operations, operand types
and shapes, the mutation and the template.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import math
import os
import random
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

import nnc
from nnc import NNError, OperandType, OperationType
from nnc import driver as nnc_driver
from nnc.dialects.optable import SPECS
from nnc.errors import INTERNAL_ERROR, OutputInsufficientSizeError
from nnc.model import dtype_of
from nnc.runtime.jit import Target

from .common import Finding, guarded

#: sizes a dimension is moved to: the smallest, odd and prime ones around the
#: vector widths (4, 8, 16 lanes), a large prime, and zero
LARGE_PRIME = 127
EDGES = (1, 2, 3, 7, 16, 17, LARGE_PRIME, 0)
#: a mutated tensor larger than this is drawn again (a trial is seconds, not minutes)
MAX_ELEMENTS = 1 << 18
#: (target name, thread count) of the four runs; the host is compared with the rest
RUNS = (("host", 1), ("host", 2), ("x86-64", 1), ("x86-64", 2))

Key = tuple[str, str]  # (operation name, primary operand type name)


# -- templates ------------------------------------------------------------------------------------


def _cts_dir() -> str:
    from cts import DEFAULT_CTS_DIR

    return os.environ.get("NNC_CTS_DIR", DEFAULT_CTS_DIR)


def _primary_type(op: dict, operands: list[dict]) -> str | None:
    """The operand type name of the operation's primary operand (the corpus calls MODEL SUBGRAPH)."""
    spec = SPECS[OperationType[op["type"]]]
    primary = spec.primary_operand([operands[i] for i in op["inputs"]], [operands[i] for i in op["outputs"]])
    return None if primary is None else "MODEL" if primary["type"] == "SUBGRAPH" else primary["type"]


def _keys_of(model: dict) -> list[Key]:
    """The implemented (operation, type) pairs of the main graph's operations."""
    operands = model["main"]["operands"]
    keys = []
    for op in model["main"]["operations"]:
        t = _primary_type(op, operands)
        spec = SPECS[OperationType[op["type"]]]
        if t is not None and t in {x.name for x in spec.implemented}:
            keys.append((op["type"], t))
    return keys


#: changes whenever what :func:`templates` records changes (it names the index file)
_INDEX_VERSION = 2


@functools.cache
def templates() -> dict[Key, list[tuple[str, int]]]:
    """(operation, type) -> [(corpus file, model index)] of the models that
    can serve as templates (not expected to fail).  Reading the corpus takes
    seconds, so the index is kept in the temporary directory under a name
    derived from the files' names, sizes and times."""
    from cts import corpus_files, load_file

    files = corpus_files(_cts_dir())
    stamp = hashlib.sha256(repr([_INDEX_VERSION] + [(f, os.stat(f).st_size, os.stat(f).st_mtime_ns) for f in files]).encode())
    path = os.path.join(tempfile.gettempdir(), f"nnc-fuzz-edges-{stamp.hexdigest()[:16]}.json")
    try:
        with open(path) as f:
            return {tuple(k.split("/")): [tuple(v) for v in vs] for k, vs in json.load(f).items()}  # type: ignore[misc]
    except (OSError, ValueError):
        pass
    index: dict[Key, list[tuple[str, int]]] = {}
    for file in files:
        for k, model in enumerate(load_file(file)["models"]):
            if not model["expect_failure"]:
                for key in dict.fromkeys(_keys_of(model)):
                    index.setdefault(key, []).append((file, k))
    tmp = f"{path}.{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump({"/".join(k): v for k, v in sorted(index.items())}, f)
    os.replace(tmp, path)
    return index


def implemented_pairs() -> list[Key]:
    """Every (operation, primary operand type) pair nnc implements."""
    return sorted((s.type.name, t.name) for s in SPECS.values() for t in s.implemented)


#: A template: (corpus file, model index, recipe).  The recipe is "" for the
#: corpus model as it is, "as:TYPE" for the model of another primary type
#: converted (:func:`_convert`), "op:NAME" for a model of another operation
#: with the same signature renamed, and for the file "builtin" the index
#: names a model of :data:`BUILTIN` (operations the corpus has no model of).
Template = tuple[str, int | str, str]

#: conversions between primary types, most faithful first: float16 from
#: float32 (same values), the two 8-bit asymmetric types (values shifted by
#: 128: the same real numbers), then any type from float32 or quant8 with
#: fresh values
_SOURCES = {"TENSOR_FLOAT16": ("TENSOR_FLOAT32",), "TENSOR_QUANT8_ASYMM_SIGNED": ("TENSOR_QUANT8_ASYMM",),
            "TENSOR_QUANT8_ASYMM": ("TENSOR_QUANT8_ASYMM_SIGNED",)}  # fmt: skip
#: operations without a corpus model that share a signature with one that has
_SIBLINGS = {"SQRT": "RSQRT"}


@functools.cache
def all_templates() -> dict[Key, list[Template]]:
    """A template for every implemented pair the corpus or a derivation can
    give: the corpus's own models where it has them, else a converted or
    renamed one, else a built-in model."""
    index: dict[Key, list[tuple[str, int | str]]] = {k: list(v) for k, v in templates().items()}
    for name in BUILTIN:
        index.setdefault(_builtin_key(name), []).append(("builtin", name))
    out: dict[Key, list[Template]] = {k: [(f, i, "") for f, i in v] for k, v in index.items()}
    for op, t in implemented_pairs():
        if (op, t) in out:
            continue
        sibling = _SIBLINGS.get(op)
        if sibling and (sibling, t) in index:
            out[op, t] = [(f, i, f"op:{op}") for f, i in index[sibling, t]]
            continue
        for src in (*_SOURCES.get(t, ()), "TENSOR_FLOAT32", "TENSOR_QUANT8_ASYMM"):
            if (op, src) in index:
                out[op, t] = [(f, i, f"as:{src}") for f, i in index[op, src]]
                break
    return out


def uncovered_pairs() -> list[Key]:
    """Implemented pairs no template reaches (the fuzz cannot reach them)."""
    have = all_templates()
    return [k for k in implemented_pairs() if k not in have]


def choose(seed: int) -> tuple[Key, Template]:
    """The (operation, type) pair and template of trial ``seed``: pairs are
    equally likely, whatever their number of corpus models."""
    rng = random.Random(seed)
    index = all_templates()
    key = rng.choice(sorted(index))
    return key, rng.choice(index[key])


def template_json(key: Key, template: Template) -> dict:
    """The model (corpus JSON form) a template stands for."""
    from cts import load_file

    file, index, recipe = template
    model = copy.deepcopy(BUILTIN[index]) if file == "builtin" else load_file(file)["models"][index]  # type: ignore[index]
    if recipe.startswith("op:"):
        model = copy.deepcopy(model)
        for op in model["main"]["operations"]:
            op["type"] = recipe[3:]
    elif recipe.startswith("as:"):
        model = _convert(model, recipe[3:], key[1])
    return model


_QUANT_ZERO = {"TENSOR_QUANT8_ASYMM": 128, "TENSOR_QUANT16_ASYMM": 32768}


def _convert(model: dict, src: str, dst: str) -> dict:
    """``model`` with every operand of type ``src`` made ``dst`` (float32
    scalars become float16 with float16 tensors): the asymmetric 8-bit types
    keep their real values (stored values and zero point shifted by 128),
    float16 keeps float32's values, and other conversions get fresh values
    and a quantisation (scale 0.05, the type's middle as zero point)."""
    model = copy.deepcopy(model)
    nrng = np.random.default_rng(len(model["name"]))
    shift = {("TENSOR_QUANT8_ASYMM", "TENSOR_QUANT8_ASYMM_SIGNED"): -128,
             ("TENSOR_QUANT8_ASYMM_SIGNED", "TENSOR_QUANT8_ASYMM"): 128}.get((src, dst))  # fmt: skip
    for o in model["main"]["operands"]:
        if src == "TENSOR_FLOAT32" and dst == "TENSOR_FLOAT16" and o["type"] == "FLOAT32":
            o["type"] = "FLOAT16"
        if o["type"] != src:
            continue
        o["type"] = dst
        if shift is not None:
            o["zero_point"] += shift
            o["data"] = [v + shift for v in o["data"]]
            continue
        if dst == "TENSOR_FLOAT16":
            continue
        quant = "QUANT" in dst
        o["scale"] = 0.05 if quant and "PER_CHANNEL" not in dst else 0.0
        o["zero_point"] = _QUANT_ZERO.get(dst, 0)
        if "PER_CHANNEL" in dst:
            o["channel_quant"] = {"scales": [0.05] * (o["dimensions"] or [1])[0], "channel_dim": 0}
        if o["data"]:
            o["data"] = _random_values(nrng, OperandType[dst], o["dimensions"])
    return model


def _builtin_key(name: str) -> Key:
    m = BUILTIN[name]["main"]
    op = m["operations"][0]
    return op["type"], str(_primary_type(op, m["operands"]))


def _operand(type_: str, dims: list[int], lifetime: str, data: list | None = None,
             scale: float = 0.0, zero_point: int = 0) -> dict:  # fmt: skip
    return {"name": "", "type": type_, "dimensions": dims, "scale": scale, "zero_point": zero_point,
            "lifetime": lifetime, "channel_quant": None, "data": data or []}  # fmt: skip


def _grouped_conv(t: str, scale: float, zero_point: int, bias: str, bias_scale: float) -> dict:
    """GROUPED_CONV_2D, 2 groups of 2 channels, 2 x 2 filters, SAME padding:
    input [1, 3, 3, 4], filter [4, 2, 2, 2], output [1, 3, 3, 4]."""
    rng = np.random.default_rng(11)
    q = "QUANT" in t
    values = (lambda n: rng.integers(100, 156, n).tolist()) if q else (lambda n: rng.uniform(-1, 1, n).tolist())
    c = "CONSTANT_COPY"
    operands = [
        _operand(t, [1, 3, 3, 4], "SUBGRAPH_INPUT", values(36), scale, zero_point),
        _operand(t, [4, 2, 2, 2], c, values(32), scale, zero_point),
        _operand(bias, [4], c, rng.integers(-50, 50, 4).tolist() if q else rng.uniform(-1, 1, 4).tolist(), bias_scale),
        *(_operand("INT32", [], c, [v]) for v in (1, 1, 1, 2, 0)),  # SAME, strides, groups, activation
        _operand("BOOL", [], c, [0]),  # NHWC
        _operand(t, [1, 3, 3, 4], "SUBGRAPH_OUTPUT", None, scale * 4 if q else 0.0, zero_point),
    ]
    return _single(f"grouped_conv_2d_{t.lower()}", "GROUPED_CONV_2D", operands, [0])


def _single(name: str, op: str, operands: list[dict], inputs: list[int]) -> dict:
    """A model of one operation whose inputs are ``operands`` but the last
    (its output), ``inputs`` of them the model's inputs."""
    n = len(operands) - 1
    main = {"operands": operands, "operations": [{"type": op, "inputs": list(range(n)), "outputs": [n]}],
            "input_indexes": inputs, "output_indexes": [n]}  # fmt: skip
    if op == "HEATMAP_MAX_KEYPOINT":  # two outputs
        main["operations"][0] = {"type": op, "inputs": list(range(n - 1)), "outputs": [n - 1, n]}
        main["output_indexes"] = [n - 1, n]
    return {"name": f"builtin_{name}", "main": main, "referenced": [], "expect_failure": False, "is_relaxed": False}


def _heatmap_float32() -> dict:
    """HEATMAP_MAX_KEYPOINT float32, NHWC: 2 boxes, 4 x 4 heatmaps, 3 keypoints."""
    rng = np.random.default_rng(12)
    return _single("heatmap_max_keypoint_float32", "HEATMAP_MAX_KEYPOINT", [
        _operand("TENSOR_FLOAT32", [2, 4, 4, 3], "SUBGRAPH_INPUT", rng.uniform(-1, 1, 96).tolist()),
        _operand("TENSOR_FLOAT32", [2, 4], "SUBGRAPH_INPUT", [1, 2, 9, 6, 0, 0, 4, 4]),
        _operand("BOOL", [], "CONSTANT_COPY", [0]),
        _operand("TENSOR_FLOAT32", [2, 3], "SUBGRAPH_OUTPUT"),
        _operand("TENSOR_FLOAT32", [2, 3, 2], "SUBGRAPH_OUTPUT"),
    ], [0, 1])  # fmt: skip


def _lsh_projection(t: str, scale: float, zero_point: int) -> dict:
    """LSH_PROJECTION, dense: 4 hash functions of 2 bits over 3 inputs of 2 values."""
    rng = np.random.default_rng(13)
    values = rng.integers(0, 256, 6).tolist() if "QUANT" in t else rng.uniform(-1, 1, 6).tolist()
    return _single(f"lsh_projection_{t.lower()}", "LSH_PROJECTION", [
        _operand("TENSOR_FLOAT32", [4, 2], "CONSTANT_COPY", rng.uniform(-1, 1, 8).tolist()),
        _operand(t, [3, 2], "SUBGRAPH_INPUT", values, scale, zero_point),
        _operand("TENSOR_FLOAT32", [3], "CONSTANT_COPY", [0.5, 1.0, 2.0]),
        _operand("INT32", [], "CONSTANT_COPY", [2]),
        _operand("TENSOR_INT32", [8], "SUBGRAPH_OUTPUT"),
    ], [1])  # fmt: skip


#: models of operations the corpus has none of, in its JSON form (the other
#: operand types of the operation are converted from these)
BUILTIN: dict[str, dict] = {
    "grouped_conv_2d_float32": _grouped_conv("TENSOR_FLOAT32", 0.0, 0, "TENSOR_FLOAT32", 0.0),
    "grouped_conv_2d_quant8": _grouped_conv("TENSOR_QUANT8_ASYMM", 0.05, 128, "TENSOR_INT32", 0.0025),
    "heatmap_max_keypoint_float32": _heatmap_float32(),
    "lsh_projection_float32": _lsh_projection("TENSOR_FLOAT32", 0.0, 0),
    "lsh_projection_quant8": _lsh_projection("TENSOR_QUANT8_ASYMM", 0.05, 128),
    # CAST of a signed 8-bit tensor: only to itself (same scale and zero point)
    "cast_quant8_signed": _single("cast_quant8_signed", "CAST", [
        _operand("TENSOR_QUANT8_ASYMM_SIGNED", [2, 3], "SUBGRAPH_INPUT", [-128, -1, 0, 1, 5, 127], 0.5, -3),
        _operand("TENSOR_QUANT8_ASYMM_SIGNED", [2, 3], "SUBGRAPH_OUTPUT", None, 0.5, -3),
    ], [0]),  # fmt: skip
}


def family(seed: int) -> str:
    """The operation family trial ``seed`` exercises (for the run's summary)."""
    (op, _), _ = choose(seed)
    return SPECS[OperationType[op]].family


# -- mutation -------------------------------------------------------------------------------------


def _is_tensor(o: dict) -> bool:
    return o["type"].startswith("TENSOR_")


def _random_values(rng: np.random.Generator, t: OperandType, dims: list[int]) -> list:
    """Values for a tensor of type ``t``: floats in [-3, 3], small
    non-negative int32 (indices, axes, counts), booleans, and any value of a
    quantised type's storage."""
    n = math.prod(dims)
    dtype = np.dtype(dtype_of(t))
    if dtype.kind == "f":
        return rng.uniform(-3, 3, n).astype(dtype).tolist()
    if t == OperandType.TENSOR_INT32:
        return rng.integers(0, 3, n).tolist()
    if t == OperandType.TENSOR_BOOL8:
        return rng.integers(0, 2, n).tolist()
    info = np.iinfo(dtype)
    return rng.integers(info.min, int(info.max) + 1, n).tolist()


class Mutation:
    """What a trial changed in its template, for the reproducer."""

    def __init__(self, how: str, sizes: dict[int, int], values: bool, unspecified: bool):
        self.how, self.sizes, self.values, self.unspecified = how, sizes, values, unspecified

    def __str__(self) -> str:
        moved = ", ".join(f"{a}->{b}" for a, b in self.sizes.items())
        extra = (", integer values too" if self.values else "") + (", outputs unspecified" if self.unspecified else "")
        return f"{self.how} {moved}{extra}"


def mutate(graph: dict, rng: random.Random) -> tuple[dict, Mutation] | None:
    """A copy of ``graph`` with edge sizes (see the module docstring), or
    None if no mutation under :data:`MAX_ELEMENTS` was found."""
    operands = graph["operands"]
    tensors = [k for k, o in enumerate(operands) if _is_tensor(o) and o["dimensions"]]
    sizes = sorted({d for k in tensors for d in operands[k]["dimensions"] if d > 0})
    if not sizes:
        return None
    nrng = np.random.default_rng(rng.randrange(2**32))
    for _ in range(8):
        g = copy.deepcopy(graph)
        unspecified = rng.random() < 0.5
        if rng.random() < 0.8:
            moved = {s: rng.choice(EDGES) for s in rng.sample(sizes, min(len(sizes), rng.choice((1, 1, 2))))}
            values = rng.random() < 0.5
            mutation = Mutation("consistent", moved, values, unspecified)
            for k in tensors:
                o = g["operands"][k]
                o["dimensions"] = [moved.get(d, d) for d in o["dimensions"]]
        else:
            k = rng.choice(tensors)
            dims = g["operands"][k]["dimensions"]
            axis = rng.randrange(len(dims))
            new = rng.choice(EDGES)
            mutation = Mutation(f"single operand {k} axis {axis}", {dims[axis]: new}, False, unspecified)
            dims[axis] = new
            moved = {}
        if all(math.prod(g["operands"][k]["dimensions"]) <= MAX_ELEMENTS for k in tensors):
            _refill(g, graph, moved if mutation.values else {}, unspecified, nrng)
            return g, mutation
    return None


def _refill(g: dict, original: dict, moved: dict[int, int], unspecified: bool, rng: np.random.Generator) -> None:
    """Values and quantisation that follow the new shapes: constants and
    inputs whose shape changed get random values, per-channel scales one per
    channel; integer values equal to a moved size move with it; outputs and
    internal tensors are left unspecified if asked."""
    produced = {i for op in g["operations"] for i in op["outputs"]}
    for k, (o, before) in enumerate(zip(g["operands"], original["operands"])):
        t = OperandType.MODEL if o["type"] == "SUBGRAPH" else OperandType[o["type"]]
        if moved and o["type"] in ("INT32", "TENSOR_INT32") and o["data"]:
            o["data"] = [moved.get(v, v) for v in o["data"]]
        if not _is_tensor(o):
            continue
        if k in produced:
            if unspecified:
                o["dimensions"] = [0] * len(o["dimensions"])
            continue
        if o["dimensions"] != before["dimensions"]:
            cq = o.get("channel_quant")
            if cq:
                n = o["dimensions"][cq["channel_dim"]] if cq["channel_dim"] < len(o["dimensions"]) else 0
                cq["scales"] = rng.uniform(0.005, 0.05, n).tolist()
            if o["data"]:  # a constant, or an input given a value (not omitted)
                o["data"] = _random_values(rng, t, o["dimensions"])


# -- running --------------------------------------------------------------------------------------


@contextmanager
def compiling_for(target: Target | None) -> Iterator[None]:
    """Compilations in this block are for ``target`` (None: the host): the
    public Compilation compiles through ``nnc.driver.compile_model``."""
    original = nnc_driver.compile_model
    if target is not None:
        nnc_driver.compile_model = functools.partial(original, target=target)  # type: ignore[assignment]
    try:
        yield
    finally:
        nnc_driver.compile_model = original  # type: ignore[assignment]


def _execute(model: nnc.Model, comp: nnc.Compilation, inputs: list, threads: int) -> list[np.ndarray]:
    """The outputs of one computation, of the computed shapes: buffers of
    the declared size where the model declares every dimension (a smaller
    one is BAD_DATA), else of one element, and when an output needs more,
    a second run with the sizes the first one reported."""
    types = [model.operands[i].type for i in model.outputs]
    declared = [model.operands[i].dims for i in model.outputs]

    def attempt(sizes: list[int]) -> list[np.ndarray]:
        ex = nnc.Execution(comp)
        ex.set_num_threads(threads)
        for k, x in enumerate(inputs):
            ex.set_input(k, x)
        bufs = [np.zeros(max(n, 1), dtype_of(t)) for n, t in zip(sizes, types)]
        for k, b in enumerate(bufs):
            ex.set_output(k, b)
        ex.compute()
        dims = [ex.get_output_operand_dimensions(k) if t.is_tensor else [] for k, t in enumerate(types)]
        return [b[: math.prod(d)].reshape(d) for b, d in zip(bufs, dims)]

    try:
        return attempt([math.prod(d) if d and all(d) else 1 for d in declared])
    except OutputInsufficientSizeError as e:
        return attempt([math.prod(s) for s in e.output_shapes])


def _outcome(model: nnc.Model, inputs: list, target: Target | None, threads: tuple[int, ...]) -> list[object]:
    """Per thread count: the outputs, or the NNError class name the
    computation (or the compilation) raised."""
    with compiling_for(target):
        try:
            comp = nnc.Compilation(model)
            comp.finish()
        except NNError as e:
            if INTERNAL_ERROR in str(e):
                raise
            return [f"compilation: {type(e).__name__}"] * len(threads)
        results: list[object] = []
        for n in threads:
            try:
                results.append(_execute(model, comp, inputs, n))
            except NNError as e:
                if INTERNAL_ERROR in str(e):
                    raise
                results.append(f"computation: {type(e).__name__}")
        return results


def _same_bits(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return all(x.shape == y.shape and x.tobytes() == y.tobytes() for x, y in zip(a, b, strict=True))


def _disagreement(a: list[np.ndarray], b: list[np.ndarray], tol: Callable[[OperandType], tuple[float, float]],
                  types: list[OperandType]) -> str | None:  # fmt: skip
    """Where outputs of two targets differ beyond what reassociation explains."""
    for k, (x, y, t) in enumerate(zip(a, b, types, strict=True)):
        if x.shape != y.shape:
            return f"output {k}: shape {list(x.shape)} vs {list(y.shape)}"
        if x.dtype.kind != "f":
            if x.tobytes() != y.tobytes():
                i = int(np.argmax(x.reshape(-1) != y.reshape(-1)))
                return f"output {k} ({t.name}): element {i}: {x.reshape(-1)[i]} vs {y.reshape(-1)[i]}"
            continue
        xf, yf = x.astype(np.float64).reshape(-1), y.astype(np.float64).reshape(-1)
        if not np.array_equal(np.isnan(xf), np.isnan(yf)) or not np.array_equal(np.isinf(xf), np.isinf(yf)):
            return f"output {k} ({t.name}): NaN or infinity in other places"
        finite = np.isfinite(xf)
        if np.any(xf[~finite & ~np.isnan(xf)] != yf[~finite & ~np.isnan(xf)]):
            return f"output {k} ({t.name}): infinities of other signs"
        atol, rtol = tol(t)
        scale = max(1.0, float(np.abs(xf[finite]).max(initial=0)))
        bad = np.abs(xf[finite] - yf[finite]) > atol * scale + rtol * np.abs(xf[finite])
        if bad.any():
            i = int(np.argmax(bad))
            return f"output {k} ({t.name}): {int(bad.sum())} elements differ, first {xf[finite][i]!r} vs {yf[finite][i]!r}"
    return None


def describe(model_json: dict, graph: dict, mutation: Mutation | None) -> str:
    """The reproducer of a finding: operations, operand types and shapes, the mutation, the template."""
    ops = ", ".join(f"{o['type']}{o['inputs']}->{o['outputs']}" for o in graph["operations"])
    operands = "; ".join(
        f"{k}: {o['type']}{o['dimensions'] if _is_tensor(o) else ''}"
        + (f"={o['data']}" if not _is_tensor(o) and o["data"] else "")
        for k, o in enumerate(graph["operands"])
    )
    return f"{ops} | {operands} | mutation: {mutation} | template {model_json['name']}"


def _build(model_json: dict, graph: dict) -> nnc.Model:
    from cts import build_graph

    return build_graph(graph, model_json["referenced"], model_json["is_relaxed"], False, {})


def _inputs(graph: dict, template: dict) -> list:
    """The execution's inputs: None where the template omits the input (an
    input whose data is empty there), else the graph's values (possibly
    of zero elements)."""
    from cts import _array

    return [None if not template["operands"][i]["data"] else _array(graph["operands"][i]) for i in graph["input_indexes"]]


def _threads_agree(a: object, b: object) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return _same_bits(a, b)  # type: ignore[arg-type]


def _edge(seed: int) -> None:
    """One template, one mutation, four runs (see the module docstring);
    raises a Finding for anything but agreement ("rejected" when the rules
    refused the model: not a finding)."""
    from cts import tolerance

    rng = random.Random(seed)
    (op, t), template = choose(seed)
    model_json = template_json((op, t), template)
    mutated = mutate(model_json["main"], rng)
    if mutated is None:
        raise Finding("rejected", f"{op} {t}: no mutation under {MAX_ELEMENTS} elements")
    graph, mutation = mutated
    what = describe(model_json, graph, mutation)
    try:
        model = _build(model_json, graph)
    except NNError as e:
        raise Finding("rejected", f"model: {type(e).__name__}: {e}") from None
    except Exception as e:  # noqa: BLE001 - the model API must answer with an NNError
        raise Finding("unexpected", f"building: {type(e).__name__}: {e} | {what}") from None
    inputs = _inputs(graph, model_json["main"])
    types = [model.operands[i].type for i in model.outputs]
    outcomes: list[object] = []
    try:
        for target in (None, Target.for_cpu("x86-64")):
            outcomes += _outcome(model, inputs, target, (1, 2))
    except NNError as e:
        raise Finding("ice", f"{e} | {what}") from None
    except Exception as e:  # noqa: BLE001 - a non-NNError out of the public API
        raise Finding("unexpected", f"{type(e).__name__}: {e} | {what}") from None
    names = [f"{n} at {k} thread{'s' * (k > 1)}" for n, k in RUNS]
    for i, j in ((0, 1), (2, 3)):
        if not _threads_agree(outcomes[i], outcomes[j]):
            raise Finding("mismatch", f"{names[i]}: {_summary(outcomes[i])}; {names[j]}: "
                                      f"{_summary(outcomes[j])} (or other bits) | {what}")  # fmt: skip
    host, generic = outcomes[0], outcomes[2]
    if isinstance(host, str) or isinstance(generic, str):
        if host != generic:
            raise Finding("mismatch", f"host: {_summary(host)}; x86-64: {_summary(generic)} | {what}")
        if str(host).startswith("compilation"):
            raise Finding("rejected", str(host))
        return  # the same run-time error everywhere
    bad = _disagreement(host, generic, lambda ty: tolerance(ty, model_json), types)  # type: ignore[arg-type]
    if bad:
        raise Finding("mismatch", f"host vs x86-64: {bad} | {what}")


def _summary(o: object) -> str:
    return o if isinstance(o, str) else "outputs"


edge_trial = guarded(_edge)
#: the trial's operation family, for summaries by family
edge_trial.family = family  # type: ignore[attr-defined]
