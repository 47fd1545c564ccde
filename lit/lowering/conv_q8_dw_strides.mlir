// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// The interior int8 depthwise kernel (3x3 window unrolled, here every
// output pixel's window lies inside the input) takes the layer's strides as
// the nnc.dw_strides attribute of nnc-choose-kernels says: as constants, in
// a kernel specialised to the layer's shape (its name ends in the
// geometry: channels, pixel, tap-row and tap-column strides), or as
// parameters, in a kernel every layer with this window shares.
builtin.module {
  func.func @constant(%x: tensor<1x9x9x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>) -> tensor<1x7x7x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>> {
    %w = "nnapi.constant"() <{value = dense<1> : tensor<1x3x3x8xi8>}> : () -> tensor<1x3x3x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>
    %b = "nnapi.constant"() <{value = dense<5> : tensor<8xi32>}> : () -> tensor<8x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>
    %valid = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %d = "nnapi.depthwise_conv_2d"(%x, %w, %b, %valid, %one, %one, %one, %none) {nnc.dw_strides = "constant"} : (tensor<1x9x9x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, tensor<1x3x3x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>, tensor<8x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>, i32, i32, i32, i32, i32) -> tensor<1x7x7x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
    func.return %d : tensor<1x7x7x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
  }
  func.func @parameters(%x: tensor<1x9x9x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>) -> tensor<1x7x7x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>> {
    %w = "nnapi.constant"() <{value = dense<1> : tensor<1x3x3x8xi8>}> : () -> tensor<1x3x3x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>
    %b = "nnapi.constant"() <{value = dense<5> : tensor<8xi32>}> : () -> tensor<8x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>
    %valid = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %d = "nnapi.depthwise_conv_2d"(%x, %w, %b, %valid, %one, %one, %one, %none) {nnc.dw_strides = "parameters"} : (tensor<1x9x9x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, tensor<1x3x3x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>, tensor<8x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>, i32, i32, i32, i32, i32) -> tensor<1x7x7x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
    func.return %d : tensor<1x7x7x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
  }
}

// CHECK-LABEL: func.func @constant(
// CHECK:        }{nnc.kernel = "nnc_q8_dw_7p_3x3_t8_s_c_sat_g8_8_72_8"}
// CHECK-LABEL: func.func @parameters(
// CHECK-NOT:    _g8_8_72_8
// CHECK:        }{nnc.kernel = "nnc_q8_dw_7p_3x3_t8_s_c_sat"}
