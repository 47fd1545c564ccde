// RUN: not nnc-opt %s -p convert-nnapi-to-linalg 2>&1 | filecheck %s

// A recorded nnc.dw_strides that is not a choice is refused, naming the
// operation and the choices.
builtin.module {
  func.func @constant(%x: tensor<1x9x9x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>) -> tensor<1x7x7x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>> {
    %w = "nnapi.constant"() <{value = dense<1> : tensor<1x3x3x8xi8>}> : () -> tensor<1x3x3x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>
    %b = "nnapi.constant"() <{value = dense<5> : tensor<8xi32>}> : () -> tensor<8x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>
    %valid = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %d = "nnapi.depthwise_conv_2d"(%x, %w, %b, %valid, %one, %one, %one, %none) {nnc.dw_strides = "sometimes"} : (tensor<1x9x9x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, tensor<1x3x3x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>, tensor<8x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>, i32, i32, i32, i32, i32) -> tensor<1x7x7x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
    func.return %d : tensor<1x7x7x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
  }
}

// CHECK: convert-nnapi-to-linalg: operation 0 (DEPTHWISE_CONV_2D) has nnc.dw_strides = "sometimes", not one of 'constant', 'parameters'
