// RUN: nnc-opt %s -p 'nnc-choose-kernels{target-features="+avx2,+fma" dw-strides="parameters"}' | filecheck %s

// dw-strides forces the choice on every unmarked depthwise convolution,
// whatever its size; one already marked keeps its choice.
builtin.module {
  func.func @main(%big: tensor<1x32x32x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, %small: tensor<1x2x2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>) -> (tensor<1x32x32x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>, tensor<1x2x2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>) {
    %dw = "nnapi.constant"() <{value = dense<1> : tensor<1x3x3x4xi8>}> : () -> tensor<1x3x3x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>
    %db = "nnapi.constant"() <{value = dense<0> : tensor<4xi32>}> : () -> tensor<4x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>
    %same = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %b = "nnapi.depthwise_conv_2d"(%big, %dw, %db, %same, %one, %one, %one, %none) : (tensor<1x32x32x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, tensor<1x3x3x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>, tensor<4x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>, i32, i32, i32, i32, i32) -> tensor<1x32x32x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
    %s = "nnapi.depthwise_conv_2d"(%small, %dw, %db, %same, %one, %one, %one, %none) {nnc.dw_strides = "constant"} : (tensor<1x2x2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, tensor<1x3x3x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>, tensor<4x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>, i32, i32, i32, i32, i32) -> tensor<1x2x2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
    func.return %b, %s : tensor<1x32x32x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>, tensor<1x2x2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
  }
}
// CHECK: "nnapi.depthwise_conv_2d"({{.*}}) {nnc.int8_form = "widen", nnc.dw_strides = "parameters"} : (tensor<1x32x32x4x
// CHECK: "nnapi.depthwise_conv_2d"({{.*}}) {nnc.dw_strides = "constant", nnc.int8_form = "widen"} : (tensor<1x2x2x4x
