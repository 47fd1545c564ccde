// RUN: nnc-opt %s -p 'nnc-choose-kernels{target-features="+avx512vnni"}' | filecheck %s

// AVX512-VNNI: the quantised GEMMs (CONV_2D, FULLY_CONNECTED,
// TRANSPOSE_CONV_2D) get the byte-quad form with vpdpbusd, the depthwise
// convolution tap quads (vpdpbusd).
builtin.module {
  // a quantised 1x1 CONV_2D (int8) and a quantised FULLY_CONNECTED (uint8)
  func.func @main(%x: tensor<1x2x2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, %v: tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>) -> (tensor<1x2x2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>, tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e+00 : f64, #builtin.int<120>>>) {
    %w = "nnapi.constant"() <{value = dense<1> : tensor<3x1x1x4xi8>}> : () -> tensor<3x1x1x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>
    %b = "nnapi.constant"() <{value = dense<[10, -20, 30]> : tensor<3xi32>}> : () -> tensor<3x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>
    %same = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %r = "nnapi.conv_2d"(%x, %w, %b, %same, %one, %one, %none) : (tensor<1x2x2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, tensor<3x1x1x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>, tensor<3x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>, i32, i32, i32, i32) -> tensor<1x2x2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
    %fw = "nnapi.constant"() <{value = dense<130> : tensor<3x4xui8>}> : () -> tensor<3x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 2.500000e-01 : f64, #builtin.int<128>>>
    %fb = "nnapi.constant"() <{value = dense<0> : tensor<3xi32>}> : () -> tensor<3x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>
    %f = "nnapi.fully_connected"(%v, %fw, %fb, %none) : (tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>, tensor<3x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 2.500000e-01 : f64, #builtin.int<128>>>, tensor<3x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>, i32) -> tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e+00 : f64, #builtin.int<120>>>
    %dw = "nnapi.constant"() <{value = dense<1> : tensor<1x3x3x4xi8>}> : () -> tensor<1x3x3x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>
    %db = "nnapi.constant"() <{value = dense<0> : tensor<4xi32>}> : () -> tensor<4x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>
    %d = "nnapi.depthwise_conv_2d"(%x, %dw, %db, %same, %one, %one, %one, %none) : (tensor<1x2x2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, tensor<1x3x3x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>, tensor<4x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>, i32, i32, i32, i32, i32) -> tensor<1x2x2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
    %tw = "nnapi.constant"() <{value = dense<1> : tensor<3x3x3x4xi8>}> : () -> tensor<3x3x3x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>
    %two = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %nhwc = "nnapi.constant"() <{value = dense<false> : tensor<i1>}> : () -> i1
    %t = "nnapi.transpose_conv_2d"(%x, %tw, %b, %none, %none, %none, %none, %two, %two, %none, %nhwc) : (tensor<1x2x2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, tensor<3x3x3x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>, tensor<3x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>, i32, i32, i32, i32, i32, i32, i32, i1) -> tensor<1x5x5x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
    func.return %r, %f : tensor<1x2x2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>, tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e+00 : f64, #builtin.int<120>>>
  }
}
// CHECK:      "nnapi.conv_2d"({{.*}}) {nnc.int8_form = "vpdpbusd"}
// CHECK:      "nnapi.fully_connected"({{.*}}) {nnc.int8_form = "vpdpbusd"}
// CHECK:      "nnapi.depthwise_conv_2d"({{.*}}) {nnc.int8_form = "vpdpbusd", nnc.dw_strides = "parameters"}
// CHECK:      "nnapi.transpose_conv_2d"({{.*}}) {nnc.int8_form = "vpdpbusd"}
