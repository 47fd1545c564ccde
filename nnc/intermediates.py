"""Every intermediate tensor of a run, for debugging a model layer by layer.

The compiled code keeps no intermediate it does not need (a fused chain
never stores its middle), so reading them needs other code: a copy of the
model whose outputs are its own followed by every operand an operation of
the main graph writes.  Compiled, that copy stores each one; being another
model, it has its own cache key and never shares a cache entry with the
plain compilation.  :func:`nnc.compile` builds it for
``keep_intermediates=True``.
"""

from __future__ import annotations

from nnc.enums import Lifetime
from nnc.model import Model


def exposing_intermediates(model: Model) -> tuple[Model, list[int]]:
    """(a finished copy of the finished ``model`` with every intermediate as
    an extra output after its own outputs, those intermediates' operand
    indices).  The copy keeps the operand numbering; constant values and
    referenced models are shared with ``model``, not copied."""
    copy = Model()
    for k, op in enumerate(model.operands):
        copy.add_operand(op.type, op.dims, op.scale, op.zero_point)
        if op.channel_quant is not None:
            scales, dim = op.channel_quant
            copy.set_operand_symm_per_channel_quant_params(k, list(scales), dim)
    for k, op in enumerate(model.operands):
        target = copy.operands[k]
        if op.lifetime in (Lifetime.CONSTANT_COPY, Lifetime.CONSTANT_REFERENCE, Lifetime.NO_VALUE):
            target.lifetime, target.value = op.lifetime, op.value
        elif op.lifetime == Lifetime.SUBGRAPH and op.subgraph is not None:
            copy.set_operand_value_from_model(k, op.subgraph)
    for operation in model.operations:
        copy.add_operation(operation.type, operation.inputs, operation.outputs)
    own = set(model.outputs)
    extra = [o for operation in model.operations for o in operation.outputs if o not in own]
    copy.identify_inputs_and_outputs(model.inputs, [*model.outputs, *extra])
    copy.relax_computation_float32_to_float16(model.relaxed)
    copy.finish()
    copy.input_names = model.input_names
    copy.output_names = [d.name for d in model.output_details] + [f"operand{k}" for k in extra]
    copy.state = model.state
    return copy, extra
