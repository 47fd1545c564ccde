// RUN: nnc-opt %s -p nnc-concat-in-place | filecheck %s

// nnc-concat-in-place marks the CONCATENATION inputs whose producers write
// straight into their window of the output: every output dimension before
// the axis is 1 (each window contiguous), the input has the output's element
// type (quantised: scale and zero point), its producer is an operation that
// writes any buffer it is given, and it is no model output.
builtin.module {
  // Axis 1 of [1, 6, 4]: both producers (TANH, ADD) write in place; the ADD's
  // result has another reader (the MUL), which reads the window.
  func.func @contiguous(%x: tensor<1x2x4xf32>, %y: tensor<1x4x4xf32>) -> (tensor<1x6x4xf32>, tensor<1x4x4xf32>) {
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %axis = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %a = "nnapi.tanh"(%x) : (tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
    %b = "nnapi.add"(%y, %y, %none) : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, i32) -> tensor<1x4x4xf32>
    %m = "nnapi.mul"(%b, %y, %none) : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, i32) -> tensor<1x4x4xf32>
    %c = "nnapi.concatenation"(%a, %b, %axis) : (tensor<1x2x4xf32>, tensor<1x4x4xf32>, i32) -> tensor<1x6x4xf32>
    func.return %c, %m : tensor<1x6x4xf32>, tensor<1x4x4xf32>
  }
  // CHECK-LABEL: func.func @contiguous
  // CHECK:         "nnapi.concatenation"(%a, %b, %axis) {nnc.concat_in_place = array<i64: 0, 1>}

  // Quantised: the input with the output's scale and zero point is written in
  // place, the one with another scale is requantised by the concatenation;
  // a model input is copied.
  func.func @quantised(%x: tensor<1x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>) -> tensor<3x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>> {
    %axis = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %a = "nnapi.relu"(%x) : (tensor<1x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>) -> tensor<1x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>
    %b = "nnapi.relu"(%x) : (tensor<1x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>) -> tensor<1x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<-1>>>
    %c = "nnapi.concatenation"(%a, %b, %x, %axis) : (tensor<1x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, tensor<1x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<-1>>>, tensor<1x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, i32) -> tensor<3x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>
    func.return %c : tensor<3x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>
  }
  // CHECK-LABEL: func.func @quantised
  // CHECK:         "nnapi.concatenation"(%a, %b, %x, %axis) {nnc.concat_in_place = array<i64: 0>}

  // Not marked: the channel axis of [1, 2, 2, 3] (windows not contiguous); a
  // returned input; an input read twice; a view's result.
  func.func @kept(%x: tensor<1x2x2x1xf32>, %y: tensor<2x4xf32>) -> (tensor<1x2x2x2xf32>, tensor<4x4xf32>, tensor<2x4xf32>, tensor<8x2xf32>) {
    %three = "nnapi.constant"() <{value = dense<3> : tensor<i32>}> : () -> i32
    %zero = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %shape = "nnapi.constant"() <{value = dense<[4, 2]> : tensor<2xi32>}> : () -> tensor<2xi32>
    %a = "nnapi.tanh"(%x) : (tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
    %c0 = "nnapi.concatenation"(%a, %x, %three) : (tensor<1x2x2x1xf32>, tensor<1x2x2x1xf32>, i32) -> tensor<1x2x2x2xf32>
    %t = "nnapi.tanh"(%y) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %c1 = "nnapi.concatenation"(%t, %y, %zero) : (tensor<2x4xf32>, tensor<2x4xf32>, i32) -> tensor<4x4xf32>
    %u = "nnapi.logistic"(%y) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %r = "nnapi.reshape"(%u, %shape) : (tensor<2x4xf32>, tensor<2xi32>) -> tensor<4x2xf32>
    %c2 = "nnapi.concatenation"(%r, %r, %zero) : (tensor<4x2xf32>, tensor<4x2xf32>, i32) -> tensor<8x2xf32>
    func.return %c0, %c1, %t, %c2 : tensor<1x2x2x2xf32>, tensor<4x4xf32>, tensor<2x4xf32>, tensor<8x2xf32>
  }
  // CHECK-LABEL: func.func @kept
  // CHECK-NOT:     nnc.concat_in_place
  // CHECK:         func.return
}
