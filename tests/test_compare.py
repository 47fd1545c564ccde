"""Layer by layer: every intermediate tensor of a run (keep_intermediates,
nnc compare) against LiteRT's reference kernels.

The int8 model below has one of each layer kind whose integer arithmetic
differs between implementations: CONV_2D, DEPTHWISE_CONV_2D,
TRANSPOSE_CONV, RESIZE_BILINEAR with half-pixel centres, CONCATENATION of
differently scaled inputs, ADD and SOFTMAX.  With LiteRT installed each
tensor is compared with its reference kernels' (BUILTIN_REF) on the spot;
without it, with the same tensors stored in tests/data (written by
``python tests/test_compare.py`` where LiteRT is installed).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import nnc
from nnc.cli import main as nnc_main
from nnc.compare import compare_tflite, format_table
from tflite_builder import INT8, INT32, UINT8, TFLiteBuilder

STORED = os.path.join(os.path.dirname(__file__), "data", "int8_layers_litert_reference.npz")


def _int8_layers() -> bytes:
    rng = np.random.default_rng(21)
    b = TFLiteBuilder()

    def q(name: str, shape, scale: float, zp: int) -> int:
        return b.tensor(name, shape, INT8, scale=scale, zero_point=zp)

    def filt(name: str, shape, qdim: int) -> tuple[int, np.ndarray]:
        scales = rng.uniform(0.004, 0.012, shape[qdim])
        data = rng.integers(-127, 128, shape).astype(np.int8)
        return b.tensor(name, shape, INT8, data, scale=scales, zero_point=np.zeros(shape[qdim], int), qdim=qdim), scales

    def bias(name: str, in_scale: float, scales: np.ndarray) -> int:
        values = rng.integers(-400, 400, scales.size).astype(np.int32)
        return b.tensor(name, [scales.size], INT32, values, scale=in_scale * scales, zero_point=np.zeros(scales.size, int))

    x = q("x", [1, 8, 8, 3], 0.05, -3)
    w1, s1 = filt("w1", [8, 3, 3, 3], 0)
    c1 = q("conv", [1, 8, 8, 8], 0.04, -128)
    b.op("CONV_2D", [x, w1, bias("b1", 0.05, s1)], [c1],
         ("Conv2DOptions", {"Padding": 0, "StrideW": 1, "StrideH": 1, "FusedActivationFunction": 1}))  # fmt: skip
    w2, s2 = filt("w2", [1, 3, 3, 8], 3)
    d1 = q("depthwise", [1, 4, 4, 8], 0.03, 5)
    b.op("DEPTHWISE_CONV_2D", [c1, w2, bias("b2", 0.04, s2)], [d1],
         ("DepthwiseConv2DOptions", {"Padding": 0, "StrideW": 2, "StrideH": 2, "DepthMultiplier": 1}))  # fmt: skip
    w3, s3 = filt("w3", [8, 3, 3, 8], 0)
    shape = b.tensor("shape", [4], INT32, np.array([1, 8, 8, 8]))
    t1 = q("transpose_conv", [1, 8, 8, 8], 0.06, 2)
    b.op("TRANSPOSE_CONV", [shape, w3, d1, bias("b3", 0.03, s3)], [t1],
         ("TransposeConvOptions", {"Padding": 0, "StrideW": 2, "StrideH": 2}))  # fmt: skip
    # TFLite's int8 CONCATENATION wants one scale: the differently scaled
    # concatenation is a uint8 one, between QUANTIZEs (requantisations)
    parts = [b.tensor(f"{n}_u8", [1, 8, 8, 8], UINT8, scale=s, zero_point=z)
             for n, s, z in (("conv", 0.04, 0), ("transpose_conv", 0.06, 130))]  # fmt: skip
    for src, dst in zip((c1, t1), parts):
        b.op("QUANTIZE", [src], [dst])
    cat_u8 = b.tensor("concat", [1, 8, 8, 16], UINT8, scale=0.05, zero_point=128)
    b.op("CONCATENATION", parts, [cat_u8], ("ConcatenationOptions", {"Axis": 3}))
    cat = q("concat_i8", [1, 8, 8, 16], 0.05, 0)
    b.op("QUANTIZE", [cat_u8], [cat])
    shift = b.tensor("shift", [1, 1, 1, 16], INT8, rng.integers(-100, 100, (1, 1, 1, 16)), scale=0.02, zero_point=7)
    added = q("add", [1, 8, 8, 16], 0.07, -10)
    b.op("ADD", [cat, shift], [added], ("AddOptions", {}))
    probs = q("softmax", [1, 8, 8, 16], 1 / 256, -128)
    b.op("SOFTMAX", [added], [probs], ("SoftmaxOptions", {"Beta": 1.0}))
    size = b.tensor("size", [2], INT32, np.array([12, 12]))
    resized = q("resize", [1, 12, 12, 8], 0.04, -128)
    b.op("RESIZE_BILINEAR", [c1, size], [resized], ("ResizeBilinearOptions", {"HalfPixelCenters": True}))
    return b.build([x], [probs, resized])


def _input() -> np.ndarray:
    return np.random.default_rng(4).integers(-128, 128, (1, 8, 8, 3)).astype(np.int8)


def test_every_int8_layer_is_within_one_unit_of_litert_reference_kernels():
    data = _int8_layers()
    try:
        import ai_edge_litert  # noqa: F401
    except ImportError:
        _check_against_stored(data)
        return
    rows, _ = compare_tflite(data, [_input()], ["reference"])
    assert [r.operator_name for r in rows] == ["CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV", "QUANTIZE", "QUANTIZE",
                                               "CONCATENATION", "QUANTIZE", "ADD", "SOFTMAX", "RESIZE_BILINEAR"]  # fmt: skip
    for r in rows:
        assert r.diff["reference"] <= 1, (r.operator_name, r.diff, r.differing)
    # the integer layers are bit-exact; RESIZE_BILINEAR interpolates in float
    # where TFLite's kernel uses 10-bit fixed-point coordinates
    assert all(r.diff["reference"] == 0 for r in rows if r.operator_name != "RESIZE_BILINEAR")


def _check_against_stored(data: bytes) -> None:
    stored = np.load(STORED)
    m = nnc.translate_tflite(data)
    compiled = nnc.compile(m.model, keep_intermediates=True)
    compiled.run(_input())
    for key in stored.files:
        mine = compiled.tensor(m.tensor_operands[int(key)])
        assert np.abs(mine.astype(int) - stored[key].astype(int)).max() <= 1, key


def test_compare_table_and_cli(tmp_path, capsys):
    data = _int8_layers()
    rows, notes = compare_tflite(data, [_input()], ["reference"])
    table = format_table(rows, notes)
    assert table.splitlines()[0].split()[:5] == ["op", "operator", "tensor", "type", "shape"]
    assert len(table.splitlines()) >= len(rows) + 1
    path = tmp_path / "m.tflite"
    path.write_bytes(data)
    np.savez(tmp_path / "in.npz", input_0=_input())
    assert nnc_main(["compare", str(path), "--input", str(tmp_path / "in.npz"), "--kernels", "reference", "--json"]) == 0
    import json

    out = json.loads(capsys.readouterr().out)
    assert [t["operator_name"] for t in out["tensors"]][-1] == "RESIZE_BILINEAR"
    assert nnc_main(["compare", str(path), "--kernels", "nonsense"]) == 2
    assert nnc_main(["compare", str(path), "--input", str(tmp_path / "missing.npz")]) == 2


def test_keep_intermediates_reads_every_written_tensor():
    data = _int8_layers()
    m = nnc.translate_tflite(data)
    plain = nnc.compile(m.model)
    kept = nnc.compile(m.model, keep_intermediates=True)
    with pytest.raises(nnc.BadDataError, match="no run"):
        kept.tensor(0)
    with pytest.raises(nnc.BadDataError, match="keep_intermediates"):
        plain.tensor(0)
    x = _input()
    outs = kept.run(x)
    assert len(outs) == 2 and all(np.array_equal(a, b) for a, b in zip(outs, plain.run(x)))
    assert [d.name for d in kept.outputs] == [d.name for d in plain.outputs]
    conv = kept.tensor(m.tensor_operands[2])  # the CONV_2D's output, an intermediate
    assert conv.shape == (1, 8, 8, 8) and conv.dtype == np.int8
    assert np.array_equal(kept.tensor(m.model.inputs[0]), x)
    with pytest.raises(nnc.BadDataError, match="not a tensor"):
        kept.tensor(10_000)


if __name__ == "__main__":  # store LiteRT's reference tensors for runs without LiteRT
    from ai_edge_litert import interpreter

    it = interpreter.Interpreter(model_content=_int8_layers(), num_threads=1, experimental_preserve_all_tensors=True,
                                 experimental_op_resolver_type=interpreter.OpResolverType.BUILTIN_REF)  # fmt: skip
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], _input())
    it.invoke()
    written = [d["index"] for d in it.get_tensor_details() if d["name"] in
               ("conv", "depthwise", "transpose_conv", "conv_u8", "transpose_conv_u8", "concat", "concat_i8",
                                  "add", "softmax", "resize")]  # fmt: skip
    os.makedirs(os.path.dirname(STORED), exist_ok=True)
    np.savez_compressed(STORED, **{str(i): it.get_tensor(i) for i in written})
    print(f"wrote {STORED}: tensors {written}")
