// RUN: nnc-opt %s -p 'nnc-fuse-epilogues{fuse-quant-adds=true}' | filecheck %s

// Quantised pairs nnc-fuse-epilogues leaves apart: an ADD that broadcasts
// the residual, a residual computed after the producer, a producer whose
// result has a second reader, a filter given at run time (not the int8
// GEMM's constant panel), and a DEPTHWISE_CONV_2D (not a GEMM producer).
builtin.module {
  func.func @not_fused(%x: tensor<2x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, %row: tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<2>>>, %r: tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<2>>>, %wx: tensor<4x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>) -> (tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<0>>>, tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<0>>>, tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<0>>>, tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<0>>>) {
    %w = "nnapi.constant"() <{value = dense<1> : tensor<4x8xi8>}> : () -> tensor<4x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>
    %b = "nnapi.constant"() <{value = dense<10> : tensor<4xi32>}> : () -> tensor<4x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    // broadcast: the residual is one row
    %y1 = "nnapi.fully_connected"(%x, %w, %b, %none) : (tensor<2x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, tensor<4x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>, tensor<4x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>, i32) -> tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<1>>>
    %z1 = "nnapi.add"(%y1, %row, %none) : (tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<1>>>, tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<2>>>, i32) -> tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<0>>>
    // the residual is computed after the producer
    %y2 = "nnapi.fully_connected"(%x, %w, %b, %none) : (tensor<2x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, tensor<4x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>, tensor<4x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>, i32) -> tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<1>>>
    %late = "nnapi.relu"(%r) : (tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<2>>>) -> tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<2>>>
    %z2 = "nnapi.add"(%y2, %late, %none) : (tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<1>>>, tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<2>>>, i32) -> tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<0>>>
    // two readers: the ADD of the result with itself
    %y3 = "nnapi.fully_connected"(%x, %w, %b, %none) : (tensor<2x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, tensor<4x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>, tensor<4x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>, i32) -> tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<1>>>
    %z3 = "nnapi.add"(%y3, %y3, %none) : (tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<1>>>, tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<1>>>, i32) -> tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<0>>>
    // the weights are an argument
    %y4 = "nnapi.fully_connected"(%x, %wx, %b, %none) : (tensor<2x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, tensor<4x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>, tensor<4x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>, i32) -> tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<1>>>
    %z4 = "nnapi.add"(%y4, %r, %none) : (tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<1>>>, tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<2>>>, i32) -> tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<0>>>
    func.return %z1, %z2, %z3, %z4 : tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<0>>>, tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<0>>>, tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<0>>>, tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<0>>>
  }

  func.func @depthwise(%x: tensor<1x4x4x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, %r: tensor<1x4x4x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<4>>>) -> tensor<1x4x4x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 7.500000e-01 : f64, #builtin.int<-3>>> {
    %w = "nnapi.constant"() <{value = dense<1> : tensor<1x1x1x8xi8>}> : () -> tensor<1x1x1x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>
    %b = "nnapi.constant"() <{value = dense<10> : tensor<8xi32>}> : () -> tensor<8x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>
    %same = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %y = "nnapi.depthwise_conv_2d"(%x, %w, %b, %same, %one, %one, %one, %none) : (tensor<1x4x4x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, tensor<1x1x1x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>, tensor<8x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>, i32, i32, i32, i32, i32) -> tensor<1x4x4x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
    %z = "nnapi.add"(%r, %y, %none) : (tensor<1x4x4x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<4>>>, tensor<1x4x4x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>, i32) -> tensor<1x4x4x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 7.500000e-01 : f64, #builtin.int<-3>>>
    func.return %z : tensor<1x4x4x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 7.500000e-01 : f64, #builtin.int<-3>>>
  }
}

// CHECK-LABEL: func.func @not_fused(
// CHECK-NOT:     nnc.fused
// CHECK:         func.return

// CHECK-LABEL: func.func @depthwise(
// CHECK-NOT:     nnc.fused
// CHECK:         func.return
