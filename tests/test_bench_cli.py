"""``nnc bench`` (issue 18, item 1 without --profile): the figures it prints."""

from __future__ import annotations

import json
import os

import numpy as np

import nnc
from nnc.bench import percentile, run_benchmark
from nnc.cli import main

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "tiny_cnn.nnc")


def test_bench_json_then_text_from_the_cache(tmp_path, capsys):
    cache = str(tmp_path / "cache")  # created by the command
    args = ["bench", EXAMPLE, "--runs", "3", "--warmup", "1", "--threads", "1", "--cache", cache]
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["runs"], data["warmup"], data["threads"], len(data["latencies_ms"])) == (3, 1, 1, 3)
    assert 0 < data["min_ms"] <= data["median_ms"] <= data["p90_ms"] <= data["max_ms"]
    assert data["min_ms"] == min(data["latencies_ms"]) and data["max_ms"] == max(data["latencies_ms"])
    assert data["compile_s"] > 0 and data["prepare_s"] > 0 and data["throughput_per_s"] > 0
    assert data["cache"] == "miss, saved"
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "compile: " in text and "(cache: hit)" in text
    assert "latency: min " in text and " median " in text and " p90 " in text and "throughput: " in text


def test_bench_bad_usage_exits_2(capsys):
    assert main(["bench", EXAMPLE, "--runs", "0"]) == 2
    assert "--runs" in capsys.readouterr().err


def test_percentile_interpolates():
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 90) == 4.6
    assert percentile([7.0], 90) == 7.0


def test_run_benchmark_from_python():
    model = nnc.load_model(EXAMPLE)
    x = np.zeros(model.input_details[0].shape, model.input_details[0].dtype)
    result = run_benchmark(model, [x], name="tiny", threads=1, runs=2, warmup=0)
    assert (result.runs, result.threads, len(result.latencies_ms), result.cache) == (2, 1, 2, "off")
    assert "latency: min" in result.report() and result.to_json()["median_ms"] > 0
