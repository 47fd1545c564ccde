// RUN: nnc-opt %s -p 'nnc-fuse-epilogues{fuse-quant-adds=true}' | filecheck %s

// nnc-fuse-epilogues marks a quantised CONV_2D / FULLY_CONNECTED with a
// constant filter (the int8 GEMM's) and the ADD of a residual reading its
// result: the input, the output, the residual and the sum of one 8-bit type
// and shape, their scales and zero points free, with the option
// fuse-quant-adds (the default leaves them apart: fuse_epilogues_q8_default.mlir).
builtin.module {
  // A 1x1 CONV_2D (RELU6) -> ADD(residual, ., RELU), int8: fused.
  func.func @conv_residual(%x: tensor<1x4x4x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, %r: tensor<1x4x4x16x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<4>>>) -> tensor<1x4x4x16x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 7.500000e-01 : f64, #builtin.int<-3>>> {
    %w = "nnapi.constant"() <{value = dense<1> : tensor<16x1x1x8xi8>}> : () -> tensor<16x1x1x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>
    %b = "nnapi.constant"() <{value = dense<10> : tensor<16xi32>}> : () -> tensor<16x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>
    %same = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %relu6 = "nnapi.constant"() <{value = dense<3> : tensor<i32>}> : () -> i32
    %y = "nnapi.conv_2d"(%x, %w, %b, %same, %one, %one, %relu6) : (tensor<1x4x4x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, tensor<16x1x1x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>, tensor<16x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>, i32, i32, i32, i32) -> tensor<1x4x4x16x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
    %z = "nnapi.add"(%r, %y, %one) : (tensor<1x4x4x16x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<4>>>, tensor<1x4x4x16x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>, i32) -> tensor<1x4x4x16x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 7.500000e-01 : f64, #builtin.int<-3>>>
    func.return %z : tensor<1x4x4x16x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 7.500000e-01 : f64, #builtin.int<-3>>>
  }

  // FULLY_CONNECTED -> ADD(., residual), uint8: fused.
  func.func @fc_residual(%x: tensor<2x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>, %r: tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 2.500000e-01 : f64, #builtin.int<120>>>) -> tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e+00 : f64, #builtin.int<130>>> {
    %w = "nnapi.constant"() <{value = dense<130> : tensor<4x8xui8>}> : () -> tensor<4x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 2.500000e-01 : f64, #builtin.int<128>>>
    %b = "nnapi.constant"() <{value = dense<10> : tensor<4xi32>}> : () -> tensor<4x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %y = "nnapi.fully_connected"(%x, %w, %b, %none) : (tensor<2x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>, tensor<4x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 2.500000e-01 : f64, #builtin.int<128>>>, tensor<4x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>, i32) -> tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<125>>>
    %z = "nnapi.add"(%y, %r, %none) : (tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<125>>>, tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 2.500000e-01 : f64, #builtin.int<120>>>, i32) -> tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e+00 : f64, #builtin.int<130>>>
    func.return %z : tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e+00 : f64, #builtin.int<130>>>
  }
}

// CHECK-LABEL: func.func @conv_residual(
// CHECK:         %y = "nnapi.conv_2d"({{.*}}) {nnc.fused_epilogue}
// CHECK-NEXT:    %z = "nnapi.add"(%r, %y, %one) {nnc.fused_into_producer}

// CHECK-LABEL: func.func @fc_residual(
// CHECK:         %y = "nnapi.fully_connected"({{.*}}) {nnc.fused_epilogue}
// CHECK-NEXT:    %z = "nnapi.add"(%y, %r, %none) {nnc.fused_into_producer}
