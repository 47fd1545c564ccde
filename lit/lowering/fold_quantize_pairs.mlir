// RUN: nnc-opt %s -p nnc-fold-quantize-pairs,convert-nnapi-to-linalg | filecheck %s

// A folded DEQUANTIZE -> RESHAPE -> QUANTIZE of another zero point and type
// lowers as one integer shift and clamp of the stored values (the RESHAPE a
// view, no float arithmetic); a folded identity pair as nothing (the model
// output is the input copied).
builtin.module {
  func.func @main(%x: tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>) -> (tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<5>>>, tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>) {
    %shape = "nnapi.constant"() <{value = dense<4> : tensor<1xi32>}> : () -> tensor<1xi32>
    %d = "nnapi.dequantize"(%x) : (tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>) -> tensor<2x2xf32>
    %r = "nnapi.reshape"(%d, %shape) : (tensor<2x2xf32>, tensor<1xi32>) -> tensor<4xf32>
    %q = "nnapi.quantize"(%r) : (tensor<4xf32>) -> tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<5>>>
    %d2 = "nnapi.dequantize"(%x) : (tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>) -> tensor<2x2xf32>
    %q2 = "nnapi.quantize"(%d2) : (tensor<2x2xf32>) -> tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>
    func.return %q, %q2 : tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<5>>>, tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>
  }
}
// CHECK-LABEL: func.func @main
// CHECK-NOT:     arith.{{.*}}f
// CHECK:         linalg.generic
// CHECK:           arith.extui %{{.*}} : i8 to i32
// CHECK-NEXT:      %[[SHIFT:.*]] = arith.constant -123 : i32
// CHECK-NEXT:      arith.addi %{{.*}}, %[[SHIFT]] : i32
// CHECK:           arith.maxsi
// CHECK:           arith.minsi
// CHECK-NEXT:      arith.trunci
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[A:.*]]: i8, %{{.*}}: i8):
// CHECK-NEXT:      linalg.yield %[[A]] : i8
// CHECK-NOT:     linalg.generic
// CHECK:         func.return
