// RUN: nnc-opt %s -p nnc-fuse-elementwise | filecheck %s

// Groups of float32 element-wise operations are marked (nnc.fused_group,
// nnc.fused_root on the last member).  In @main: SUB's result is read by two
// MULs, one of which feeds a MEAN-like outside reader (here: returned), so
// the readers-join group {SUB, MUL, MUL, RELU} would leave two results; the
// single-reader rule keeps {MUL(d, g), RELU}.  A quantised RELU and a TANH
// with no element-wise neighbour stay as they are.  In @swish: LOGISTIC,
// MUL and a broadcast ADD form one group.
builtin.module {
  func.func @main(%x: tensor<4x8xf32>, %mean: tensor<4x1xf32>, %g: tensor<8xf32>, %q: tensor<4x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>, tensor<4x8xf32>) {
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %d = "nnapi.sub"(%x, %mean, %none) : (tensor<4x8xf32>, tensor<4x1xf32>, i32) -> tensor<4x8xf32>
    %sq = "nnapi.mul"(%d, %d, %none) : (tensor<4x8xf32>, tensor<4x8xf32>, i32) -> tensor<4x8xf32>
    %scaled = "nnapi.mul"(%d, %g, %none) : (tensor<4x8xf32>, tensor<8xf32>, i32) -> tensor<4x8xf32>
    %r = "nnapi.relu"(%scaled) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %qr = "nnapi.relu"(%q) : (tensor<4x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>) -> tensor<4x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>
    %alone = "nnapi.tanh"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    func.return %sq, %r, %qr, %alone : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>, tensor<4x8xf32>
  }
  func.func @swish(%a: tensor<1x4x4x8xf32>, %b: tensor<8xf32>) -> tensor<1x4x4x8xf32> {
    %s = "nnapi.logistic"(%a) : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %m = "nnapi.mul"(%a, %s, %none) : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, i32) -> tensor<1x4x4x8xf32>
    %r = "nnapi.add"(%m, %b, %none) : (tensor<1x4x4x8xf32>, tensor<8xf32>, i32) -> tensor<1x4x4x8xf32>
    func.return %r : tensor<1x4x4x8xf32>
  }
}

// CHECK-LABEL: func.func @main(
// CHECK:         %d = "nnapi.sub"(%x, %mean, %none) : (
// CHECK-NEXT:    %sq = "nnapi.mul"(%d, %d, %none) : (
// CHECK-NEXT:    %scaled = "nnapi.mul"(%d, %g, %none) {nnc.fused_group = #builtin.int<0>} : (
// CHECK-NEXT:    %r = "nnapi.relu"(%scaled) {nnc.fused_group = #builtin.int<0>, nnc.fused_root} : (
// CHECK-NEXT:    %qr = "nnapi.relu"(%q) : (
// CHECK-NEXT:    %alone = "nnapi.tanh"(%x) : (
// CHECK-LABEL: func.func @swish(
// CHECK:         %s = "nnapi.logistic"(%a) {nnc.fused_group = #builtin.int<1>} : (
// CHECK:         %m = "nnapi.mul"(%a, %s, %none) {nnc.fused_group = #builtin.int<1>} : (
// CHECK-NEXT:    %r = "nnapi.add"(%m, %b, %none) {nnc.fused_group = #builtin.int<1>, nnc.fused_root} : (
