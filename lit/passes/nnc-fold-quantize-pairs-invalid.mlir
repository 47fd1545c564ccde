// RUN: not nnc-opt %s -p nnc-fold-quantize-pairs 2>&1 | filecheck %s

// nnc-fold-quantize-pairs compares types and shapes, so it runs after shape
// inference: a DEQUANTIZE with a tensor of unknown shape is refused.
builtin.module {
  func.func @main(%x: tensor<?x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>) -> tensor<?x4xf32> {
    %d = "nnapi.dequantize"(%x) : (tensor<?x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>) -> tensor<?x4xf32>
    func.return %d : tensor<?x4xf32>
  }
}
// CHECK: nnc-opt: error: nnc-fold-quantize-pairs: DEQUANTIZE has a tensor of unknown shape tensor<?x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>> (run nnapi-shape-inference first)
