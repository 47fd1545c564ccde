"""Convenience layer: ``nnc.compile(model).run(x, y) -> [outputs]``.

Built only on the public Compilation/Execution API, so every input goes
through the same validation as NDK-style code.
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from dataclasses import replace

import numpy as np

from nnc.compilation import Compilation
from nnc.details import TensorDetails, bind_inputs
from nnc.errors import BadDataError, OpFailedError, OutputInsufficientSizeError, UnexpectedNullError
from nnc.execution import Execution
from nnc.intermediates import exposing_intermediates
from nnc.model import Model
from nnc.operand_types import dtype_of
from nnc.runtime import cpu_probe
from nnc.runtime.artifact import ArtifactError, ArtifactUsageError
from nnc.tflite import import_tflite, is_tflite_file

#: The cache token of CompiledModel(model, cache_dir): any fixed 32 bytes do.
_CACHE_TOKEN = hashlib.sha256(b"nnc.CompiledModel").digest()


class CompiledModel:
    """A finished compilation with a numpy-in, numpy-out ``run``.

    :attr:`inputs` and :attr:`outputs` describe the tensors (name, shape,
    dtype, NNAPI type, quantisation: :class:`nnc.details.TensorDetails`);
    ``run`` takes inputs by position or by those names, ``run_named``
    returns the outputs by name.

    A model with state (:attr:`nnc.Model.state`: a TFLite model's variable
    tensors) can be run with its state inputs left out: the state then
    starts at zero and each run carries it over to the next, as LiteRT's
    ``invoke()`` does, and ``run`` returns the outputs without the state;
    :meth:`reset_state` sets it back to zero and :attr:`state` reads it.
    Given every input, ``run`` uses the state passed and returns every
    output."""

    def __init__(
        self,
        model: Model,
        cache_dir: str | os.PathLike | None = None,
        *,
        profile: bool = False,
        keep_intermediates: bool = False,
    ):
        """Compile ``model`` now; with ``cache_dir``, through the compilation
        cache there (``Compilation.set_caching``, with a fixed token: the cache
        key already covers the model's contents, see ``nnc.runtime.cache``);
        ``profile``: code that times each operation (``Compilation.set_profiling``);
        ``keep_intermediates``: code that also stores every intermediate
        tensor, which :meth:`tensor` then reads after each run
        (:mod:`nnc.intermediates`)."""
        fn = "ANeuralNetworksCompilation_create"
        if model is None:
            raise UnexpectedNullError(fn, "model is null")
        if not isinstance(model, Model):
            raise BadDataError(fn, f"expected an nnc.Model, got {type(model).__name__}")
        if not model.finished:
            model.finish()
        #: operand -> the value of the last run, for keep_intermediates
        self.intermediates: dict[int, np.ndarray] = {}
        self._kept: list[int] = []
        self._own_outputs = len(model.outputs)
        if keep_intermediates:
            model, self._kept = exposing_intermediates(model)
        self.model = model
        self.compilation = Compilation(model)
        if cache_dir is not None:
            self.compilation.set_caching(cache_dir, _CACHE_TOKEN)
        if profile:
            self.compilation.set_profiling(True)
        self.compilation.finish()
        self._state_lock = threading.Lock()
        self._state: dict[int, np.ndarray] = {}
        self.reset_state()

    def reset_state(self) -> None:
        """Set the carried state (see the class docstring) back to zero."""
        with self._state_lock:
            self._state = {
                k: np.zeros(self.model.operands[self.model.inputs[k]].dims or (), self.inputs[k].dtype)
                for k, _ in self.model.state or ()
            }

    @property
    def state(self) -> dict[str, np.ndarray]:
        """The carried state, by state input name (copies)."""
        with self._state_lock:
            return {self.inputs[k].name: v.copy() for k, v in self._state.items()}

    @property
    def inputs(self) -> list[TensorDetails]:
        """The model's inputs, in position order (``model.input_details``)."""
        return self.model.input_details

    @property
    def outputs(self) -> list[TensorDetails]:
        """The model's outputs, in position order (``model.output_details``)."""
        return self.model.output_details[: self._own_outputs]

    def tensor(self, operand: int) -> np.ndarray:
        """The value operand ``operand`` (NNAPI's numbering) had in the last
        run: a model input or output, or, compiled with
        ``keep_intermediates``, any operand an operation writes."""
        fn = "nnc.CompiledModel.tensor"
        if operand in self.intermediates:
            return self.intermediates[operand]
        if not self._kept:
            raise BadDataError(fn, "intermediate tensors are kept only by nnc.compile(model, keep_intermediates=True)")
        if not self.intermediates:
            raise BadDataError(fn, "no run has finished yet")
        raise BadDataError(fn, f"operand {operand!r} is not a tensor an operation of the main model writes")

    def run(self, *inputs, **named) -> list[np.ndarray]:
        """Run once; returns freshly allocated outputs of the computed shapes.

        Inputs are given by position, by name as keyword arguments (the
        names of :attr:`inputs`, or ``input_K``; a name that is not a Python
        identifier goes through ``**{"name:0": x}``), or both: positional
        ones first.  Each input exactly once, else BAD_DATA.

        When the model leaves an output shape open, a first execution with
        empty output buffers learns the shapes (OUTPUT_INSUFFICIENT_SIZE
        reports them, as the NDK specifies) and a second one computes.
        """
        if self._state and len(inputs) + len(named) == len(self.inputs) - len(self._state):
            return self._run_with_state(inputs, named)
        args = bind_inputs(self.inputs, inputs, named, "nnc.CompiledModel.run") if named else inputs
        outs = self._output_buffers(args)
        self._execute(args, outs)
        return self._keep(args, outs)

    def _keep(self, inputs, outs: list[np.ndarray]) -> list[np.ndarray]:
        """The model's own outputs; with keep_intermediates, the run's
        inputs, outputs and the intermediates after them are kept."""
        if self._kept:
            own = outs[: self._own_outputs]
            self.intermediates = {i: np.asarray(x) for i, x in zip(self.model.inputs, inputs)}
            self.intermediates |= dict(zip(self.model.outputs, outs))
            return own
        return outs

    def _run_with_state(self, inputs, named) -> list[np.ndarray]:
        """``run`` with the state inputs from the carried state, which the
        state outputs then replace; the other outputs returned."""
        plain = [replace(d, position=j) for j, d in enumerate(d for d in self.inputs if d.position not in self._state)]
        given = iter(bind_inputs(plain, inputs, named, "nnc.CompiledModel.run"))
        state_outputs = {o: k for k, o in self.model.state or () if o is not None}
        with self._state_lock:
            args = [self._state[k] if k in self._state else next(given) for k in range(len(self.inputs))]
            outs = self._output_buffers(args)
            self._execute(args, outs)
            for o, k in state_outputs.items():
                self._state[k] = outs[o]
        return [y for j, y in enumerate(self._keep(args, outs)) if j not in state_outputs]

    def run_named(self, *inputs, **named) -> dict[str, np.ndarray]:
        """:meth:`run`, with the outputs keyed by their names (those of
        :attr:`outputs`, the state's left out when ``run`` carries it), in
        output order."""
        results = self.run(*inputs, **named)
        outputs = self.outputs
        if len(results) < len(outputs):
            carried = {o for _, o in self.model.state or ()}
            outputs = [d for d in outputs if d.position not in carried]
        return {d.name: r for d, r in zip(outputs, results)}

    def reusable_execution(self, inputs, num_threads: int | None = None) -> tuple[Execution, list[np.ndarray]]:
        """A reusable :class:`Execution` with ``inputs`` (a sequence, in
        position order) and freshly allocated outputs bound, and the outputs:
        each ``compute()`` rewrites them.  For repeated computations on the
        same buffers (``nnc bench``): the first computation prepares
        everything the bindings fix, the next ones only make the native call.
        ``num_threads`` as :meth:`Execution.set_num_threads`."""
        outs = self._output_buffers(inputs)
        ex = Execution(self.compilation)
        ex.set_reusable(True)
        if num_threads is not None:
            ex.set_num_threads(num_threads)
        for k, x in enumerate(inputs):
            ex.set_input(k, x)
        for k, o in enumerate(outs):
            ex.set_output(k, o)
        return ex, outs

    def _execute(self, inputs, outs: list[np.ndarray]) -> Execution:
        ex = Execution(self.compilation)
        for k, x in enumerate(inputs):
            ex.set_input(k, x)
        for k, o in enumerate(outs):
            ex.set_output(k, o)
        ex.compute()
        return ex

    def _output_buffers(self, inputs) -> list[np.ndarray]:
        """Zeroed outputs of the shapes ``inputs`` give.

        When the model leaves an output shape open, a first execution with
        empty output buffers learns the shapes (OUTPUT_INSUFFICIENT_SIZE
        reports them, as the NDK specifies)."""
        declared = [self.model.operands[i].dims for i in self.model.outputs]
        shapes: list[tuple[int, ...]] | list[list[int]] = [s for s in declared if s is not None and all(s)]
        if len(shapes) < len(declared):
            shapes = self._output_shapes(inputs)
        return [np.zeros(s, dtype=dtype_of(self.model.operands[i].type)) for s, i in zip(shapes, self.model.outputs)]

    def _output_shapes(self, inputs) -> list[list[int]]:
        # One element each: a zero-length buffer is BAD_DATA.
        probe = [np.zeros(1, dtype=dtype_of(self.model.operands[i].type)) for i in self.model.outputs]
        try:
            ex = self._execute(inputs, probe)
        except OutputInsufficientSizeError as e:
            ex = e.execution
        return [ex.get_output_operand_dimensions(k) for k in range(len(self.model.outputs))]


def load_model(path) -> Model:
    """Read a model file: a TFLite flatbuffer (``.tflite``, or any file with
    the ``TFL3`` identifier) through :func:`nnc.import_tflite`, otherwise
    nnc's own model file format (:mod:`nnc.modelfile`).  A binary file
    object is read as a model file; a bare int is refused (see
    :func:`nnc.modelfile.read_identified_source`)."""
    fn = "nnc.load_model"
    if path is None:
        raise UnexpectedNullError(fn, "the model file is null")
    if hasattr(path, "read"):
        return Model.load(path)
    if not isinstance(path, str | bytes | os.PathLike):
        raise BadDataError(fn, f"expected a path or a binary file object, got {type(path).__name__}")
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        mode = stat.S_IFREG  # the reader reports a missing or unreadable file
    if not stat.S_ISREG(mode):  # a FIFO would block the reader's open()
        raise BadDataError(fn, f"{os.fsdecode(path)} is not a regular file")
    if is_tflite_file(path):
        return import_tflite(path)
    return Model.load(path)


def compile(
    model: Model, cache_dir: str | os.PathLike | None = None, *, profile: bool = False, keep_intermediates: bool = False
) -> CompiledModel:
    """Finish (if needed) and compile ``model`` (through the compilation
    cache in ``cache_dir`` when given; ``profile``: with per-operation
    timestamps, read by ``Execution.get_operation_profile``;
    ``keep_intermediates``: every intermediate tensor readable after a run,
    ``CompiledModel.tensor``)."""
    return CompiledModel(model, cache_dir, profile=profile, keep_intermediates=keep_intermediates)


def compile_artifact(
    model: Model,
    path: str | os.PathLike,
    *,
    target: str | None = None,
    cpu: str | None = None,
    features: str | None = None,
    emit: str = "shared",
    header: str | os.PathLike | None = None,
    embed_weights: bool = False,
) -> list[str]:
    """``nnc compile`` from Python: compile ``model`` ahead of time into
    ``path`` and return the files written (``path``, and for ``emit`` obj
    or shared the C header and, unless ``embed_weights``, ``path.weights``).

    ``target``: an LLVM triple (``aarch64-linux-gnu``,
    ``aarch64-linux-android29``; default this machine), ``cpu`` an LLVM CPU
    name for it (default: this machine's CPU, or ``generic`` for another
    triple), ``features`` LLVM's ``+a,-b`` list (``+dotprod``).  ``emit``:
    ``shared`` (linked with the C compiler, or for another triple a cross
    compiler on PATH), ``obj``, ``llvm`` or ``mlir``.  Unlike
    :class:`nnc.Compilation`, whose code runs in this process (so always for
    this machine), the artifact is never loaded here.

    Errors: BadDataError for a request that cannot be met (unknown triple,
    CPU or feature, inputs not fully specified), OpFailedError when a tool
    is missing or a file cannot be written, and the compilation's NNErrors."""
    from nnc import driver  # the compiler (xDSL): only for a compilation, so that reading a model stays light

    fn = "nnc.compile_artifact"
    if model is None:
        raise UnexpectedNullError(fn, "model is null")
    if not isinstance(model, Model):
        raise BadDataError(fn, f"expected an nnc.Model, got {type(model).__name__}")
    if emit not in driver.EMITS:
        raise BadDataError(fn, f"emit must be one of {', '.join(driver.EMITS)}, not {emit!r}")
    if not model.finished:
        model.finish()
    if model.support_report is not None:
        model.support_report(fn)
    try:
        chosen = None if emit == "mlir" else cpu_probe.target_for(target, cpu, features)
        return driver.compile_artifact(
            model, os.fspath(path), emit=emit, target=chosen, embed_weights=embed_weights,
            header=os.fspath(header) if header is not None else None,
        )  # fmt: skip
    except ArtifactUsageError as e:
        raise BadDataError(fn, str(e)) from None
    except ArtifactError as e:
        raise OpFailedError(fn, str(e)) from None
