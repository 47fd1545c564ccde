// RUN: nnc-opt %s -p nnc-fold-quantize-pairs | filecheck %s

// nnc-fold-quantize-pairs: a DEQUANTIZE read only by a QUANTIZE of the same
// scale (through single-use views) is the quantised values themselves (same
// type and zero point) or an integer zero-point shift (QUANTIZE of the
// quantised input, marked nnc.requantize).  Folded operations stay, marked
// nnc.elided and reading nnapi.no_value, so every operation keeps its index.
builtin.module {
  // Same type, scale and zero point: the TANH reads %x itself.
  func.func @identity(%x: tensor<1x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>) -> tensor<1x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 7.812500e-03 : f64, #builtin.int<128>>> {
    %d = "nnapi.dequantize"(%x) : (tensor<1x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>) -> tensor<1x4xf32>
    %q = "nnapi.quantize"(%d) : (tensor<1x4xf32>) -> tensor<1x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>
    %t = "nnapi.tanh"(%q) : (tensor<1x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>) -> tensor<1x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 7.812500e-03 : f64, #builtin.int<128>>>
    func.return %t : tensor<1x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 7.812500e-03 : f64, #builtin.int<128>>>
  }
  // CHECK-LABEL: func.func @identity
  // CHECK-NEXT:    %[[NONE:.*]] = "nnapi.no_value"() : () -> tensor<1x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>
  // CHECK-NEXT:    %[[D:.*]] = "nnapi.dequantize"(%[[NONE]]) {nnc.elided}
  // CHECK-NEXT:    %{{.*}} = "nnapi.quantize"(%[[D]]) {nnc.elided}
  // CHECK-NEXT:    %{{.*}} = "nnapi.tanh"(%x)

  // Through a RESHAPE, returned: the RESHAPE now reshapes %x and is returned.
  func.func @view(%x: tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<-3>>>) -> tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<-3>>> {
    %shape = "nnapi.constant"() <{value = dense<4> : tensor<1xi32>}> : () -> tensor<1xi32>
    %d = "nnapi.dequantize"(%x) : (tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<-3>>>) -> tensor<2x2xf32>
    %r = "nnapi.reshape"(%d, %shape) : (tensor<2x2xf32>, tensor<1xi32>) -> tensor<4xf32>
    %q = "nnapi.quantize"(%r) : (tensor<4xf32>) -> tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<-3>>>
    func.return %q : tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<-3>>>
  }
  // CHECK-LABEL: func.func @view
  // CHECK:         "nnapi.dequantize"(%{{.*}}) {nnc.elided}
  // CHECK-NEXT:    %[[R:.*]] = "nnapi.reshape"(%x, %shape) : (tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<-3>>>, tensor<1xi32>) -> tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<-3>>>
  // CHECK-NEXT:    "nnapi.quantize"(%{{.*}}) {nnc.elided} : (tensor<2x2xf32>) -> tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<-3>>>
  // CHECK-NEXT:    func.return %[[R]]

  // Another zero point and type, same scale: QUANTIZE of the quantised input.
  func.func @shift(%x: tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>) -> tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<5>>> {
    %d = "nnapi.dequantize"(%x) : (tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>) -> tensor<4xf32>
    %q = "nnapi.quantize"(%d) : (tensor<4xf32>) -> tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<5>>>
    func.return %q : tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<5>>>
  }
  // CHECK-LABEL: func.func @shift
  // CHECK:         "nnapi.dequantize"(%{{.*}}) {nnc.elided}
  // CHECK-NEXT:    %[[Q:.*]] = "nnapi.quantize"(%x) {nnc.requantize}
  // CHECK-NEXT:    func.return %[[Q]]

  // Not folded: a QUANTIZE -> DEQUANTIZE pair (it rounds), another scale,
  // a float value read twice, a subnormal scale.
  func.func @kept(%f: tensor<4xf32>, %x: tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>, %y: tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e-40 : f64, #builtin.int<0>>>) -> (tensor<4xf32>, tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 2.500000e-01 : f64, #builtin.int<128>>>, tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>, tensor<4xf32>, tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e-40 : f64, #builtin.int<0>>>) {
    %q0 = "nnapi.quantize"(%f) : (tensor<4xf32>) -> tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>
    %d0 = "nnapi.dequantize"(%q0) : (tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>) -> tensor<4xf32>
    %d1 = "nnapi.dequantize"(%x) : (tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>) -> tensor<4xf32>
    %q1 = "nnapi.quantize"(%d1) : (tensor<4xf32>) -> tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 2.500000e-01 : f64, #builtin.int<128>>>
    %d2 = "nnapi.dequantize"(%x) : (tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>) -> tensor<4xf32>
    %q2 = "nnapi.quantize"(%d2) : (tensor<4xf32>) -> tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>
    %d3 = "nnapi.dequantize"(%y) : (tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e-40 : f64, #builtin.int<0>>>) -> tensor<4xf32>
    %q3 = "nnapi.quantize"(%d3) : (tensor<4xf32>) -> tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e-40 : f64, #builtin.int<0>>>
    func.return %d0, %q1, %q2, %d2, %q3 : tensor<4xf32>, tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 2.500000e-01 : f64, #builtin.int<128>>>, tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>, tensor<4xf32>, tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e-40 : f64, #builtin.int<0>>>
  }
  // CHECK-LABEL: func.func @kept
  // CHECK-NOT:     nnc.elided
  // CHECK-NOT:     nnc.requantize
  // CHECK:         func.return
}
