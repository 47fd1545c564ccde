"""The ``nnc`` command line.

    nnc run MODEL [--input NAME=FILE.npy ...] [--output-dir DIR] [--seed N]
        Compile MODEL (an .nnc model file or a .tflite file) to native code
        and run it.  Inputs
        not given are generated (uniform in [-1, 1], or small integers) from
        --seed; the model's state (an LSTM's variable tensors) is zero.  Without --output-dir the inputs and outputs are printed;
        with it each output is written as DIR/output_K.npy.
    nnc info MODEL [--dot] [--svg FILE]
        Print the model's inputs, outputs and operations; for a .tflite
        file first each TFLite operator and the NNAPI operation(s) it
        became, and (exit status 1) every operator that cannot be imported.
        --dot prints the graph as Graphviz DOT instead (nnc.dot); --svg FILE
        renders it to FILE with Graphviz's dot program (exit status 1, with
        how to install it, when dot is missing).
    nnc compile MODEL -o OUT [--emit mlir|llvm|obj|shared] [--target TRIPLE]
                [--target-cpu CPU] [--target-features +a,-b] [--header PATH] [--embed-weights]
        Compile MODEL (whose inputs must be fully specified tensors) ahead of
        time.  mlir: the nnapi dialect module after shape inference; llvm: the
        optimised LLVM IR; obj: an ELF relocatable object; shared (default): a
        shared library linked with the system C compiler ($CC, cc, gcc or
        clang).  obj and shared also write a C header (OUT with suffix .h, or
        --header) and the weights (OUT.weights, unless --embed-weights).
        OUT may be - (standard output) for mlir and llvm.  --target
        cross-compiles (aarch64-linux-gnu, aarch64-linux-android29; shared
        then links with $CC, TRIPLE-gcc/clang or ld.lld); --target-cpu and
        --target-features choose the CPU and LLVM features (+dotprod).

    nnc bench MODEL [--threads N] [--runs N] [--warmup N] [--input NAME=FILE.npy ...]
              [--cache DIR] [--profile [--top N]] [--json] [--seed N]
        Compile MODEL (through the compilation cache in DIR with --cache) and
        time it: compile, prepare (first computation), then --warmup untimed
        and --runs timed computations: latency min/median/p90/max and
        throughput (see nnc.bench).  --profile compiles code that times each
        operation and adds a table per operation (median time, share, MACs,
        GFLOP/s; longest first, the --top N longest shown, default all, the
        rest summed) with the sum of the operations' medians next to the
        median latency (nnc.profile).  --json prints the same figures, each
        run's latency and the whole table as JSON.
    nnc compare MODEL.tflite [--input FILE.npz | --input NAME=FILE.npy ...] [--seed N]
                [--kernels reference,builtin,xnnpack] [--json]
        Run the TFLite model in nnc with every intermediate tensor kept and,
        where LiteRT is installed, in LiteRT with each kernel set (reference
        kernels, optimised builtin kernels, XNNPACK: outputs only), and print
        per tensor, in execution order, the largest difference (absolute for
        float tensors, in quantisation units for quantised ones) and how many
        elements differ, marking the first tensor where nnc leaves the
        reference kernels' arithmetic (nnc.compare).  An .npz input file
        holds the inputs by name or as input_K (a model zoo's .io.npz).

MODEL is nnc's model file format (.nnc) or a TensorFlow Lite flatbuffer
(.tflite, imported as ``nnc.import_tflite`` does; an operator nnc cannot
take is reported with the others, before anything is compiled).

Inputs are named ``input_K`` (K = position), by their position ``K``, or by
the model's own input name (a TFLite signature or tensor name).
Exit status: 0 on success, 1 on an NNAPI error (the message names the NDK
function and result code) or when an artifact cannot be built or written, 2
on bad usage (including a model that ``compile`` cannot take: see above).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import threading
import time
from typing import TextIO

import numpy as np

import nnc
from nnc.enums import OperationType
from nnc.errors import NNError
from nnc.operand_types import dtype_of
from nnc.runtime import cpu_probe
from nnc.runtime.artifact import ArtifactError, ArtifactUsageError


class UsageError(Exception):
    """Bad command-line usage (exit status 2)."""


class CommandError(Exception):
    """The command failed for a reason other than an NNAPI error (exit status 1)."""


def _parse_inputs(specs: list[str], n: int, names: list[str] | None = None) -> dict[int, str]:
    out: dict[int, str] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep:
            raise UsageError(f"--input expects NAME=FILE.npy, got {spec!r}")
        key = name.removeprefix("input_")
        if names and name in names:
            out[names.index(name)] = path
            continue
        if not key.isdigit() or not 0 <= int(key) < n:
            known = f" or {', '.join(names)}" if names else ""
            raise UsageError(f"unknown input {name!r} (the model has inputs input_0..input_{n - 1}{known})")
        out[int(key)] = path
    return out


def _load(path: str):
    return nnc.load_model(path)  # a missing or unreadable file is BAD_DATA (exit 1)


def _names(model, kind: str) -> list[str]:
    """The model's own names of its inputs or outputs ([] when it has none)."""
    return list(getattr(model, f"{kind}_names", None) or [])


def _label(model, kind: str, k: int) -> str:
    names = _names(model, kind)
    return f"{kind}_{k} ({names[k]})" if k < len(names) else f"{kind}_{k}"


def _generate(model, k: int, rng: np.random.Generator) -> np.ndarray:
    op = model.operands[model.inputs[k]]
    if op.dims is None or any(d == 0 for d in op.dims):
        raise UsageError(f"input_{k} has unspecified dimensions; pass it with --input input_{k}=FILE.npy")
    dt = dtype_of(op.type)
    if dt.kind == "f":
        return rng.uniform(-1, 1, op.dims).astype(dt)
    if dt.kind == "b":
        return rng.integers(0, 2, op.dims).astype(dt)
    return rng.integers(0, 10, op.dims).astype(dt)


def _inputs(model, specs: list[str], seed: int) -> list[np.ndarray]:
    """The inputs --input names, the others generated from ``seed`` (the
    model's state, such as an LSTM's, zero: its value before a first run)."""
    given = _parse_inputs(specs, len(model.inputs), _names(model, "input"))
    rng = np.random.default_rng(seed)
    state = {k for k, _ in model.state or ()}
    inputs = []
    for k in range(len(model.inputs)):
        if k in given:
            try:
                inputs.append(np.load(given[k], allow_pickle=False))
            except (OSError, ValueError) as e:
                raise UsageError(f"cannot read {given[k]}: {e}") from None
        elif k in state:
            op = model.operands[model.inputs[k]]
            inputs.append(np.zeros(op.dims, dtype_of(op.type)))
        else:
            inputs.append(_generate(model, k, rng))
    return inputs


def cmd_run(args: argparse.Namespace) -> int:
    model = _load(args.model)
    inputs = _inputs(model, args.input, args.seed)
    t0 = time.perf_counter()
    with Progress(os.path.basename(args.model)) as progress:
        progress.stage("compiling")
        compiled = nnc.compile(model)
    t1 = time.perf_counter()
    outputs = compiled.run(*inputs)
    t2 = time.perf_counter()
    if args.output_dir:
        os.makedirs(args.output_dir, exist_ok=True)
        for k, out in enumerate(outputs):
            np.save(os.path.join(args.output_dir, f"output_{k}.npy"), out)
    else:
        np.set_printoptions(precision=5, suppress=True, threshold=64)
        for k, x in enumerate(inputs):
            print(f"{_label(model, 'input', k)} {list(x.shape)} {x.dtype}:\n{x}")
        for k, y in enumerate(outputs):
            print(f"{_label(model, 'output', k)} {list(y.shape)} {y.dtype}:\n{y}")
    print(f"compiled in {t1 - t0:.2f} s, ran in {(t2 - t1) * 1e3:.2f} ms", file=sys.stderr)
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from nnc import bench  # the compiler: imported by the commands that compile (--help stays fast)

    if args.runs < 1 or args.warmup < 0 or (args.threads is not None and args.threads < 1):
        raise UsageError("--runs and --threads must be >= 1, --warmup >= 0")
    if args.top is not None and (args.top < 1 or not args.profile):
        raise UsageError("--top N needs --profile and N >= 1")
    model = _load(args.model)
    inputs = _inputs(model, args.input, args.seed)
    name = os.path.basename(args.model)
    if args.cache:
        try:
            os.makedirs(args.cache, exist_ok=True)
        except OSError as e:
            raise CommandError(f"cannot create the cache directory {args.cache}: {e.strerror}") from None
    with Progress(name) as progress:
        progress.stage("compiling")
        compiled, compile_s, cache = bench.compile_timed(model, args.cache, profile=args.profile)
    used, prepare_s, latencies, profile = bench.measure(compiled, inputs, threads=args.threads, runs=args.runs,
                                                        warmup=args.warmup, profile=args.profile)  # fmt: skip
    result = bench.BenchResult(name, used, args.warmup, args.runs, compile_s, cache, prepare_s, latencies, profile)
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        print(result.report(args.top))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from nnc import compare

    kernels = [k for k in args.kernels.split(",") if k]
    unknown = [k for k in kernels if k not in compare.KERNELS]
    if unknown or not kernels:
        raise UsageError(f"--kernels takes a comma-separated list of {', '.join(compare.KERNELS)}")
    model = _load(args.model)
    if not model_is_tflite(args.model):
        raise UsageError(f"{args.model} is not a TFLite file: compare runs a .tflite model against LiteRT")
    npz = [spec for spec in args.input if "=" not in spec and spec.endswith(".npz")]
    if npz and len(args.input) > 1:
        raise UsageError("--input FILE.npz gives every input; it takes no other --input")
    inputs = _npz_inputs(model, npz[0]) if npz else _inputs(model, args.input, args.seed)
    with Progress(os.path.basename(args.model)) as progress:
        progress.stage("compiling")
        rows, notes = compare.compare_tflite(args.model, inputs, kernels)
    if args.json:
        print(json.dumps({"tensors": [compare.row_json(r) for r in rows], "notes": notes}, indent=2))
    else:
        print(compare.format_table(rows, notes))
    return 0


def model_is_tflite(path: str) -> bool:
    from nnc.tflite import is_tflite_file

    return is_tflite_file(path)


def _npz_inputs(model, path: str) -> list[np.ndarray]:
    """Every input from an .npz file: by the model's input names or input_K."""
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot read {path}: {e}") from None
    names = _names(model, "input")
    inputs = []
    for k in range(len(model.inputs)):
        key = next((n for n in (f"input_{k}", names[k] if k < len(names) else None) if n in arrays), None)
        if key is None:
            raise UsageError(f"{path} has no {_label(model, 'input', k)} (its arrays: {', '.join(arrays)})")
        inputs.append(arrays[key])
    return inputs


def cmd_info(args: argparse.Namespace) -> int:
    from nnc import tflite

    if args.dot or args.svg:
        return _info_graph(args)
    if tflite.is_tflite_file(args.model):
        return _info_tflite(args.model)
    _print_model(_load(args.model))
    return 0


def _info_graph(args: argparse.Namespace) -> int:
    """``--dot`` (DOT on stdout) and/or ``--svg FILE``."""
    from nnc import dot

    model = _load(args.model)  # a TFLite operator nnc cannot import is an NNError (exit 1)
    text = dot.to_dot(model, os.path.basename(args.model))
    if args.dot:
        sys.stdout.write(text)
    if args.svg:
        try:
            dot.write_svg(text, args.svg)
        except dot.DotUnavailableError as e:
            raise CommandError(str(e)) from None
        print(f"nnc: wrote {args.svg}", file=sys.stderr)
    return 0


def _info_tflite(path: str) -> int:
    """Each TFLite operator and the NNAPI operation(s) it became; then the
    imported model, or (exit status 1) the one report of every problem."""
    from nnc import tflite

    result = tflite.translate_tflite(path)
    for o in result.operators:
        became = ", ".join(o.nnapi) or (f"({o.note})" if o.note else "-")
        print(f"operator {o.index}: {o.name} -> {became}" + (f"  [cannot import: {o.problem}]" if o.problem else ""))
    if result.model is not None:
        _print_model(result.model)
    if result.problems:
        print(f"nnc: error: {tflite.UnsupportedOperatorsError(result.problems)}", file=sys.stderr)
        return 1
    return 0


def _print_model(model) -> None:
    for k, i in enumerate(model.inputs):
        print(f"{_label(model, 'input', k)}: operand {i} {model.operands[i].info().describe()}")
    for k, i in enumerate(model.outputs):
        print(f"{_label(model, 'output', k)}: operand {i} {model.operands[i].info().describe()}")
    for k, op in enumerate(model.operations):
        print(f"op {k}: {OperationType(op.type).name} {op.inputs} -> {op.outputs}")


def cmd_compile(args: argparse.Namespace) -> int:
    emit = args.emit
    if args.target_cpu == "help":
        try:
            triple = None if args.target in (None, "host", "native") else cpu_probe.check_triple(args.target)
            print("\n".join(cpu_probe.known_cpus(triple)))
        except ArtifactUsageError as e:
            raise UsageError(str(e)) from None
        except ArtifactError as e:
            raise CommandError(str(e)) from None
        return 0
    if args.output == "-" and emit in ("obj", "shared"):
        raise UsageError(f"--emit {emit} writes files: give -o a path, not -")
    if args.header is not None and emit not in ("obj", "shared"):
        raise UsageError("--header only applies to --emit obj or shared")
    if args.embed_weights and emit == "mlir":
        raise UsageError("--embed-weights does not apply to --emit mlir (weights are blob references there)")
    for option, value in (("--target", args.target), ("--target-cpu", args.target_cpu),
                          ("--target-features", args.target_features)):  # fmt: skip
        if value is not None and emit == "mlir":
            raise UsageError(f"{option} does not apply to --emit mlir")
    model = _load(args.model)
    name = os.path.basename(args.model)
    try:
        target = cpu_probe.target_for(args.target, args.target_cpu, args.target_features) if emit != "mlir" else None
        # The compiler (xDSL) is imported once the arguments are known to be good.
        from nnc import driver
        from nnc.passes.pipeline import format_timings

        # Timing counts the module's operations around every pass: only when asked.
        timing: contextlib.AbstractContextManager[list] = driver.timed() if args.timings else contextlib.nullcontext([])
        with Progress(name) as progress, timing as timings:
            written = driver.compile_artifact(
                model,
                args.output,
                emit=emit,
                target=target,
                header=args.header,
                embed_weights=args.embed_weights,
                model_name=name,
                progress=progress,
            )
    except ArtifactUsageError as e:
        raise UsageError(str(e)) from None
    except ArtifactError as e:
        raise CommandError(str(e)) from None
    if args.timings:
        print(format_timings(timings), file=sys.stderr)
    if written:
        print(f"nnc: wrote {', '.join(written)}", file=sys.stderr)
    return 0


# -- progress -----------------------------------------------------------------------------------


class Progress:
    """A progress indicator on ``stream`` (stderr) for slow compilations.

    Nothing is shown for the first ``delay`` seconds.  On a terminal a single
    line then shows the current stage and the elapsed time, redrawn in place
    and erased at the end; otherwise (CI logs) one line says the compilation
    is under way and one more says when it finished.
    """

    SPIN = "|/-\\"

    def __init__(self, label: str, stream: TextIO | None = None, delay: float = 1.5, interval: float = 0.1):
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.delay = delay
        self.interval = interval
        isatty = getattr(self.stream, "isatty", None)
        self.tty = bool(isatty and isatty())
        self._stage = "importing"
        self._start = time.monotonic()
        self._shown = False
        self._width = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def stage(self, name: str) -> None:
        with self._lock:
            self._stage = name

    def __enter__(self) -> Progress:
        self._start = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="nnc-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            if not self._shown:
                return
            if self.tty:
                self._write("\r" + " " * self._width + "\r")
            elif exc_type is None:
                self._write(f"nnc: compiled {self.label} in {time.monotonic() - self._start:.1f} s\n")

    def _run(self) -> None:
        if self._stop.wait(self.delay):
            return
        n = 0
        while True:
            with self._lock:
                if self._stop.is_set():
                    return
                elapsed = time.monotonic() - self._start
                if self.tty:
                    text = f"nnc: compiling {self.label}: {self._stage} {self.SPIN[n % 4]} {elapsed:.0f} s"
                    self._write("\r" + text.ljust(self._width))
                    self._width = max(self._width, len(text))
                elif not self._shown:
                    self._write(f"nnc: compiling {self.label} ({self._stage})...\n")
                self._shown = True
            if not self.tty or self._stop.wait(self.interval):
                return
            n += 1

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            pass


def cmd_ndk_lib(args: argparse.Namespace) -> int:
    """Build libneuralnetworks.so (the NNAPI NDK C API backed by this nnc)."""
    from nnc.ndk.build import BuildError, build

    try:
        path = build(args.output, cc=args.cc)
    except BuildError as e:
        raise CommandError(str(e)) from None
    print(path)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="nnc", description="Compile and run NNAPI models with nnc.")
    sub = ap.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="compile a model to native code and run it")
    run.add_argument("model", help="model file (.nnc or .tflite)")
    run.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    run.add_argument("--output-dir", metavar="DIR")
    run.add_argument("--seed", type=int, default=0)
    run.set_defaults(fn=cmd_run)
    info = sub.add_parser("info", help="describe a model file")
    info.add_argument("model")
    info.add_argument("--dot", action="store_true", help="print the graph as Graphviz DOT")
    info.add_argument("--svg", metavar="FILE", help="render the graph to FILE (needs Graphviz's dot program)")
    info.set_defaults(fn=cmd_info)
    b = sub.add_parser(
        "bench",
        help="time a model's compilation and computations",
        description="Time compile, prepare and computations (latency min/median/p90/max, throughput); "
        "with --profile, the time of each operation.",
    )
    b.add_argument("model", help="model file (.nnc or .tflite)")
    b.add_argument("--threads", type=int, metavar="N",
                   help="threads per computation (default: NNC_NUM_THREADS or the CPUs)")  # fmt: skip
    b.add_argument("--runs", type=int, default=50, metavar="N", help="timed computations (default: 50)")
    b.add_argument("--warmup", type=int, default=5, metavar="N", help="untimed computations first (default: 5)")
    b.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    b.add_argument("--seed", type=int, default=0, help="seed of the generated inputs")
    b.add_argument("--cache", metavar="DIR", help="compilation cache directory (compile then loads on a hit)")
    b.add_argument("--profile", action="store_true",
                   help="compile code that times each operation and print a table per operation")  # fmt: skip
    b.add_argument("--top", type=int, metavar="N", help="with --profile: show the N longest operations (default: all)")
    b.add_argument("--json", action="store_true", help="print the figures as JSON")
    b.set_defaults(fn=cmd_bench)
    comp = sub.add_parser("compile", help="compile a model to a native artifact (shared library, object, IR)")
    comp.add_argument("model", help="model file (.nnc or .tflite) with fully specified inputs")
    comp.add_argument("-o", "--output", required=True, metavar="OUT", help="output file (- : stdout, mlir/llvm only)")
    comp.add_argument("--emit", choices=("mlir", "llvm", "obj", "shared"), default="shared",
                      help="what to produce (default: shared)")  # fmt: skip
    comp.add_argument("--target", metavar="TRIPLE",
                      help="LLVM target triple, e.g. aarch64-linux-gnu, aarch64-linux-android29 (default: this machine)")  # fmt: skip
    comp.add_argument("--target-cpu", metavar="CPU",
                      help="LLVM CPU name (default: this machine's CPU, or generic for another --target; help: list them)")  # fmt: skip
    comp.add_argument("--target-features", metavar="+A,-B",
                      help="LLVM target features to add or remove, e.g. +dotprod")  # fmt: skip
    comp.add_argument("--header", metavar="PATH", help="C header path (default: OUT with suffix .h)")
    comp.add_argument("--embed-weights", action="store_true",
                      help="put the weights in the artifact instead of OUT.weights")  # fmt: skip
    comp.add_argument("--timings", action="store_true",
                      help="print each stage's wall time (each pass with its op counts) to stderr")  # fmt: skip
    comp.set_defaults(fn=cmd_compile)
    cmp = sub.add_parser("compare", help="compare every tensor of a TFLite model with LiteRT's",
                         description="Run a TFLite model in nnc and LiteRT and print, per tensor in execution order, "
                         "the largest difference, marking where nnc leaves LiteRT's reference kernels.")  # fmt: skip
    cmp.add_argument("model", help="a .tflite file")
    cmp.add_argument("--input", action="append", default=[], metavar="FILE.npz|NAME=FILE.npy")
    cmp.add_argument("--seed", type=int, default=0, help="seed of the generated inputs")
    cmp.add_argument("--kernels", default="reference,builtin,xnnpack", metavar="LIST",
                     help="LiteRT kernel sets to compare with (default: reference,builtin,xnnpack)")  # fmt: skip
    cmp.add_argument("--json", action="store_true", help="print the rows as JSON")
    cmp.set_defaults(fn=cmd_compare)
    lib = sub.add_parser("ndk-lib", help="build libneuralnetworks.so, the NNAPI NDK C API backed by nnc",
                         description="Build libneuralnetworks.so (SONAME libneuralnetworks.so) and copy "
                         "NeuralNetworks.h beside it; link C programs with -lneuralnetworks.")  # fmt: skip
    lib.add_argument("-o", "--output", required=True, metavar="DIR", help="directory to write the library to")
    lib.add_argument("--cc", metavar="CC", help="C compiler (default: $CC, cc or gcc)")
    lib.set_defaults(fn=cmd_ndk_lib)
    args = ap.parse_args(argv)
    try:
        return args.fn(args)
    except NNError as e:
        print(f"nnc: error: {e}", file=sys.stderr)
        return 1
    except UsageError as e:
        print(f"nnc: {e}", file=sys.stderr)
        return 2
    except CommandError as e:
        print(f"nnc: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. `nnc compile ... -o - | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
