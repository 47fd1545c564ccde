"""Fuzz kind (c): mutated ``.nnc`` model files and ``.tflite`` bytes.

Seeds are small valid files (float32 and quant8 TFLite models with a
convolution, pooling, reshape, softmax; ``.nnc`` files of models with
constants); a mutation flips bytes, truncates, overwrites a run, splices a
piece of one file into another, or (``.nnc``) replaces one JSON value by a
random one.  Loading must give a Model or an NNError; a model that loads is
then sometimes compiled and run (an NNError or outputs, never a crash: the
trial runs in a child process).
"""

from __future__ import annotations

import io
import json
import random
from typing import Any

import numpy as np

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc import modelfile
from tflite_builder import FLOAT32, INT32, UINT8, TFLiteBuilder

from .common import add_model, guarded, nnerror_or_ok

_SEED_FILES: dict[str, list[bytes]] = {}


def tflite_add() -> bytes:
    """A one-operator float32 ADD .tflite: the valid file the mutations start from."""
    b = TFLiteBuilder()
    x = b.tensor("x", [1, 8], FLOAT32)
    c = b.tensor("c", [1, 8], FLOAT32, np.arange(8, dtype=np.float32))
    y = b.tensor("y", [1, 8], FLOAT32)
    b.op("ADD", [x, c], [y], ("AddOptions", {"FusedActivationFunction": 0}))
    return b.build([x], [y])


def _tflite_cnn(quant: bool) -> bytes:
    """CONV_2D -> MAX_POOL_2D -> RESHAPE -> FULLY_CONNECTED -> SOFTMAX."""
    rng = np.random.default_rng(3)
    b = TFLiteBuilder()
    if quant:
        q = {"scale": 0.05, "zero_point": 128}
        x = b.tensor("x", [1, 4, 4, 2], UINT8, **q)
        w = b.tensor("w", [3, 2, 2, 2], UINT8, rng.integers(0, 255, (3, 2, 2, 2)), scale=0.02, zero_point=120)
        bias = b.tensor("b", [3], INT32, rng.integers(-50, 50, 3), scale=0.001, zero_point=0)
        conv = b.tensor("conv", [1, 4, 4, 3], UINT8, scale=0.1, zero_point=100)
        pool = b.tensor("pool", [1, 2, 2, 3], UINT8, scale=0.1, zero_point=100)
        flat = b.tensor("flat", [1, 12], UINT8, scale=0.1, zero_point=100)
        fw = b.tensor("fw", [5, 12], UINT8, rng.integers(0, 255, (5, 12)), scale=0.03, zero_point=127)
        fb = b.tensor("fb", [5], INT32, rng.integers(-50, 50, 5), scale=0.003, zero_point=0)
        logits = b.tensor("logits", [1, 5], UINT8, scale=0.2, zero_point=128)
        y = b.tensor("y", [1, 5], UINT8, scale=1 / 256, zero_point=0)
    else:
        x = b.tensor("x", [1, 4, 4, 2], FLOAT32)
        w = b.tensor("w", [3, 2, 2, 2], FLOAT32, rng.normal(size=(3, 2, 2, 2)))
        bias = b.tensor("b", [3], FLOAT32, rng.normal(size=3))
        conv = b.tensor("conv", [1, 4, 4, 3], FLOAT32)
        pool = b.tensor("pool", [1, 2, 2, 3], FLOAT32)
        flat = b.tensor("flat", [1, 12], FLOAT32)
        fw = b.tensor("fw", [5, 12], FLOAT32, rng.normal(size=(5, 12)))
        fb = b.tensor("fb", [5], FLOAT32, rng.normal(size=5))
        logits = b.tensor("logits", [1, 5], FLOAT32)
        y = b.tensor("y", [1, 5], FLOAT32)
    shape = b.tensor("shape", [2], INT32, [1, 12])
    b.op("CONV_2D", [x, w, bias], [conv], ("Conv2DOptions", {"Padding": 0, "StrideW": 1, "StrideH": 1,
                                                            "FusedActivationFunction": 1}))  # fmt: skip
    b.op("MAX_POOL_2D", [conv], [pool], ("Pool2DOptions", {"Padding": 1, "StrideW": 2, "StrideH": 2,
                                                          "FilterWidth": 2, "FilterHeight": 2}))  # fmt: skip
    b.op("RESHAPE", [pool, shape], [flat])
    b.op("FULLY_CONNECTED", [flat, fw, fb], [logits])
    b.op("SOFTMAX", [logits], [y], ("SoftmaxOptions", {"Beta": 1.0}))
    return b.build([x], [y])


def _nnc_conv() -> bytes:
    m = nnc.Model()
    x = m.add_operand(T.TENSOR_QUANT8_ASYMM, [1, 3, 3, 2], 0.5, 10)
    w = m.add_operand(T.TENSOR_QUANT8_ASYMM, [2, 2, 2, 2], 0.25, 128)
    m.set_operand_value(w, np.arange(16, dtype=np.uint8) * 9)
    bias = m.add_operand(T.TENSOR_INT32, [2], 0.125, 0)
    m.set_operand_value(bias, np.array([3, -7], np.int32))
    scalars = []
    for value in (2, 1, 1, 0):  # padding VALID, stride 1, 1, no activation
        k = m.add_operand(T.INT32)
        m.set_operand_value(k, value)
        scalars.append(k)
    y = m.add_operand(T.TENSOR_QUANT8_ASYMM, [1, 2, 2, 2], 1.0, 3)
    m.add_operation(Op.CONV_2D, [x, w, bias, *scalars], [y])
    m.identify_inputs_and_outputs([x], [y])
    m.finish()
    return json.dumps(modelfile.to_dict(m)).encode()


def seed_files() -> dict[str, list[bytes]]:
    if not _SEED_FILES:
        _SEED_FILES["tflite"] = [tflite_add(), _tflite_cnn(False), _tflite_cnn(True)]
        _SEED_FILES["nnc"] = [json.dumps(modelfile.to_dict(add_model())).encode(), _nnc_conv()]
    return _SEED_FILES


_JSON_VALUES: list[Any] = [None, -1, 0, 1, 2**31, 2**64, -(2**63), 1e308, -0.5, "", "zz", [], [0], [[]], {}, True,
                           [2**32, -1], "NaN"]  # fmt: skip


def _mutate_json(data: bytes, rng: random.Random) -> bytes:
    """Replace one value anywhere in the JSON document by a random one (a
    document already broken by an earlier mutation gets a byte flip instead)."""
    try:
        doc = json.loads(data)
    except ValueError:
        return mutate(data, rng, [data], False)
    holders: list[tuple[Any, Any]] = []

    def walk(node: Any) -> None:
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for k, child in items:
            holders.append((node, k))
            walk(child)

    walk(doc)
    node, k = rng.choice(holders)
    if isinstance(node, dict) and rng.random() < 0.15:
        del node[k]
    else:
        node[k] = rng.choice(_JSON_VALUES)
    return json.dumps(doc).encode()


def mutate(data: bytes, rng: random.Random, others: list[bytes], is_json: bool) -> bytes:
    """One random mutation of ``data`` (``others``: files to splice from)."""
    buf = bytearray(data)
    kind = rng.randrange(6 if is_json else 5)
    if kind == 0:  # flip bytes
        for _ in range(rng.randint(1, 8)):
            buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
    elif kind == 1:  # truncate
        buf = buf[: rng.randrange(len(buf))]
    elif kind == 2:  # overwrite a run with random bytes, zeros or 0xff
        at, n = rng.randrange(len(buf)), rng.randint(1, 32)
        fill = rng.choice([lambda: rng.randrange(256), lambda: 0, lambda: 255])
        buf[at : at + n] = bytes(fill() for _ in range(n))
    elif kind == 3:  # splice a piece of another file in
        other = rng.choice(others)
        a = rng.randrange(len(other))
        piece = other[a : a + rng.randint(1, 64)]
        at = rng.randrange(len(buf))
        buf[at : at + (len(piece) if rng.random() < 0.5 else 0)] = piece
    elif kind == 4:  # duplicate or drop a region
        a = rng.randrange(len(buf))
        b = min(len(buf), a + rng.randint(1, 64))
        buf[a:b] = buf[a:b] * rng.choice([0, 2])
    else:
        return _mutate_json(data, rng)
    return bytes(buf)


def _feed(dtype: np.dtype, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100), shape, endpoint=True).astype(dtype)
    return rng.normal(size=shape).astype(dtype)


def _mutated_file(seed: int, compile_fraction: float = 0.3) -> None:
    """Load one mutated file; sometimes compile and run what loads."""
    rng = random.Random(seed)
    files = seed_files()
    kind = rng.choice(sorted(files))
    data = rng.choice(files[kind])
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        data = mutate(data, rng, files["tflite"] + files["nnc"], kind == "nnc") if data else data
    what = f"mutated {kind} file"
    load = (lambda: nnc.import_tflite(data)) if kind == "tflite" else (lambda: nnc.Model.load(io.BytesIO(data)))
    ok, model = nnerror_or_ok(what, load)
    if not ok or rng.random() >= compile_fraction:
        return
    ok, cm = nnerror_or_ok(what + ", compiled", lambda: nnc.compile(model))
    if not ok:
        return
    feeds = np.random.default_rng(seed)
    inputs = []
    for d in cm.inputs:  # type: ignore[union-attr]
        if d.shape is None or None in d.shape:
            return
        inputs.append(_feed(np.dtype(d.dtype), tuple(d.shape), feeds))
    nnerror_or_ok(what + ", run", lambda: cm.run(*inputs))  # type: ignore[union-attr]


file_trial = guarded(_mutated_file)
