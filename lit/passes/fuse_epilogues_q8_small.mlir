// RUN: nnc-opt %s -p nnc-fuse-epilogues | filecheck %s

// By default nnc-fuse-epilogues marks a quantised ADD of a residual only
// from 16384 elements (QUANT_ADD_MIN_ELEMENTS, the option
// quant-add-min-elements): a smaller ADD costs the standalone vector ADD a
// few microseconds, less than the GEMM kernels with the ADD in their
// epilogue cost to compile.  FULLY_CONNECTED -> ADD of 128 x 128 elements
// is marked, of 127 x 128 is not.
builtin.module {
  func.func @large(%x: tensor<128x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, %r: tensor<128x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<4>>>) -> tensor<128x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 7.500000e-01 : f64, #builtin.int<-3>>> {
    %w = "nnapi.constant"() <{value = dense<1> : tensor<128x8xi8>}> : () -> tensor<128x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>
    %b = "nnapi.constant"() <{value = dense<10> : tensor<128xi32>}> : () -> tensor<128x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %y = "nnapi.fully_connected"(%x, %w, %b, %none) : (tensor<128x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, tensor<128x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>, tensor<128x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>, i32) -> tensor<128x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
    %z = "nnapi.add"(%y, %r, %none) : (tensor<128x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>, tensor<128x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<4>>>, i32) -> tensor<128x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 7.500000e-01 : f64, #builtin.int<-3>>>
    func.return %z : tensor<128x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 7.500000e-01 : f64, #builtin.int<-3>>>
  }

  func.func @small(%x: tensor<127x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, %r: tensor<127x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<4>>>) -> tensor<127x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 7.500000e-01 : f64, #builtin.int<-3>>> {
    %w = "nnapi.constant"() <{value = dense<1> : tensor<128x8xi8>}> : () -> tensor<128x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>
    %b = "nnapi.constant"() <{value = dense<10> : tensor<128xi32>}> : () -> tensor<128x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %y = "nnapi.fully_connected"(%x, %w, %b, %none) : (tensor<127x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, tensor<128x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>, tensor<128x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>, i32) -> tensor<127x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
    %z = "nnapi.add"(%y, %r, %none) : (tensor<127x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>, tensor<127x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<4>>>, i32) -> tensor<127x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 7.500000e-01 : f64, #builtin.int<-3>>>
    func.return %z : tensor<127x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 7.500000e-01 : f64, #builtin.int<-3>>>
  }
}

// CHECK-LABEL: func.func @large(
// CHECK:         %y = "nnapi.fully_connected"({{.*}}) {nnc.fused_epilogue}
// CHECK-NEXT:    %z = "nnapi.add"(%y, %r, %none) {nnc.fused_into_producer}

// CHECK-LABEL: func.func @small(
// CHECK-NOT:     nnc.fused
// CHECK:         func.return
