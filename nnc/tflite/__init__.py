"""Import a TensorFlow Lite flatbuffer as an NNAPI :class:`~nnc.model.Model`.

The mapping follows TFLite's own NNAPI delegate (``nnapi_delegate.cc``), so a
``.tflite`` file means to nnc what it means to Android:

* fused activations become the NNAPI ``FuseCode`` input; SAME/VALID become
  the implicit padding scheme; a missing bias becomes a zero bias;
* float32/int32/bool tensors map one to one; uint8 is TENSOR_QUANT8_ASYMM;
  int8 is TENSOR_QUANT8_ASYMM_SIGNED, or, for a target feature level below 4
  (Android 11) where that type does not exist, TENSOR_QUANT8_ASYMM with values
  and zero point shifted by +128 (what the delegate does for old drivers);
  an int8 tensor with a scale per channel is TENSOR_QUANT8_SYMM_PER_CHANNEL,
  and its int32 bias gets scale 0 as NNAPI requires;
* constant tensors (a non-empty buffer) become operand values, a sparse
  one (its ``sparsity`` parameters) made dense first;
* the subgraph's inputs and outputs keep their order and their names (the
  signature's names where the file has a signature, else the tensor names),
  in ``model.input_names`` / ``model.output_names``.

Variable tensors (an LSTM's carried state) have no NNAPI equivalent: NNAPI
models are stateless.  They become explicit model inputs appended after the
subgraph's inputs (zero for the first run), and where the operation can
return the final state (UNIDIRECTIONAL_SEQUENCE_LSTM's outputs 1 and 2, NNAPI
1.3) it is appended to the model outputs.  They are named after the operator
and the state, ``op1.output_state`` / ``op1.cell_state`` for the inputs and
``op1.output_state:out`` / ``op1.cell_state:out`` for the outputs; the caller
feeds the outputs back in to continue a sequence as LiteRT does internally.

Some builtins become small NNAPI graphs (per-channel FULLY_CONNECTED as a
1x1 CONV_2D between RESHAPEs, keep_num_dims as a RESHAPE after the FC, the
``DECOMPOSITIONS`` of builtins the delegate rejects); DEQUANTIZE of a float16
constant is folded into a float32 constant.  One custom operator is mapped:
SSD's ``TFLite_Detection_PostProcess``, options read from its flexbuffer
``custom_options``, becomes DETECTION_POSTPROCESSING (and CASTs of its int32
outputs to TFLite's float32).

Every operator is checked before anything is compiled.  Operators with no
NNAPI equivalent, options the mapping cannot express, NNAPI operations of a
later feature level than the target, and NNAPI operations nnc does not
implement yet are reported together in one :class:`UnsupportedOperatorsError`
(index, operator name, reason); an import is never partial.
:func:`translate_tflite` returns the same report with, for every operator,
the NNAPI operations it became (``nnc info``).

The package: ``reader`` reads the flatbuffer, ``state`` holds the conversion
context, ``converters`` the per-operator converters and their table (with
``decompositions`` and ``custom`` operators), ``importer`` drives the import.
Names with a leading underscore are shared inside the package only.
"""

from nnc.tflite.converters import CONVERTERS, CUSTOM_CONVERTERS, register_custom
from nnc.tflite.decompositions import DECOMPOSITIONS
from nnc.tflite.importer import (
    OperatorImport,
    TFLiteTranslation,
    UnsupportedOperatorsError,
    import_tflite,
    translate_tflite,
)
from nnc.tflite.reader import is_tflite_file
from nnc.tflite.state import OperatorCall

__all__ = [
    "CONVERTERS",
    "CUSTOM_CONVERTERS",
    "DECOMPOSITIONS",
    "OperatorCall",
    "OperatorImport",
    "TFLiteTranslation",
    "UnsupportedOperatorsError",
    "import_tflite",
    "is_tflite_file",
    "register_custom",
    "translate_tflite",
]
