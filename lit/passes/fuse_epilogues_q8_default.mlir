// RUN: nnc-opt %s -p nnc-fuse-epilogues | filecheck %s

// Without the option fuse-quant-adds nnc-fuse-epilogues marks no quantised
// ADD of a residual (fuse_epilogues_q8.mlir marks such pairs with it): the
// standalone ADD's vector kernel costs as much per element as the GEMM
// epilogue's, and each GEMM kernel with the ADD is more code to compile.
builtin.module {
  func.func @apart(%x: tensor<127x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, %r: tensor<127x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<4>>>) -> tensor<127x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 7.500000e-01 : f64, #builtin.int<-3>>> {
    %w = "nnapi.constant"() <{value = dense<1> : tensor<128x8xi8>}> : () -> tensor<128x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>
    %b = "nnapi.constant"() <{value = dense<10> : tensor<128xi32>}> : () -> tensor<128x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %y = "nnapi.fully_connected"(%x, %w, %b, %none) : (tensor<127x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, tensor<128x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>, tensor<128x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>, i32) -> tensor<127x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
    %z = "nnapi.add"(%y, %r, %none) : (tensor<127x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>, tensor<127x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<4>>>, i32) -> tensor<127x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 7.500000e-01 : f64, #builtin.int<-3>>>
    func.return %z : tensor<127x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 7.500000e-01 : f64, #builtin.int<-3>>>
  }
}

// CHECK-LABEL: func.func @apart(
// CHECK-NOT:     nnc.fused
// CHECK:         func.return
