// RUN: nnc-opt %s -p nnc-fuse-epilogues | filecheck %s

// nnc-fuse-epilogues marks a float32 FULLY_CONNECTED / CONV_2D and the one
// element-wise consumer its kernel computes in its epilogue: an ADD of a
// residual of the same shape defined before the producer (through views
// of the producer's result), a RELU / RELU1 / RELU6, or swish.
builtin.module {
  // FULLY_CONNECTED -> RESHAPE -> ADD(residual, .): fused.
  func.func @fc_residual(%x: tensor<8x4xf32>, %r: tensor<1x8x6xf32>) -> tensor<1x8x6xf32> {
    %w = "nnapi.constant"() <{value = dense<1.0> : tensor<6x4xf32>}> : () -> tensor<6x4xf32>
    %b = "nnapi.constant"() <{value = dense<0.5> : tensor<6xf32>}> : () -> tensor<6xf32>
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %relu = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %shape = "nnapi.constant"() <{value = dense<[1, 8, 6]> : tensor<3xi32>}> : () -> tensor<3xi32>
    %y = "nnapi.fully_connected"(%x, %w, %b, %none) : (tensor<8x4xf32>, tensor<6x4xf32>, tensor<6xf32>, i32) -> tensor<8x6xf32>
    %v = "nnapi.reshape"(%y, %shape) : (tensor<8x6xf32>, tensor<3xi32>) -> tensor<1x8x6xf32>
    %z = "nnapi.add"(%r, %v, %relu) : (tensor<1x8x6xf32>, tensor<1x8x6xf32>, i32) -> tensor<1x8x6xf32>
    func.return %z : tensor<1x8x6xf32>
  }

  // CONV_2D -> RELU6: fused; the second CONV_2D's result has two uses
  // (an ADD of itself): not fused.
  func.func @conv(%x: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) {
    %w = "nnapi.constant"() <{value = dense<1.0> : tensor<3x1x1x2xf32>}> : () -> tensor<3x1x1x2xf32>
    %b = "nnapi.constant"() <{value = dense<0.0> : tensor<3xf32>}> : () -> tensor<3xf32>
    %zero = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %y = "nnapi.conv_2d"(%x, %w, %b, %zero, %zero, %zero, %zero, %one, %one, %zero) : (tensor<1x4x4x2xf32>, tensor<3x1x1x2xf32>, tensor<3xf32>, i32, i32, i32, i32, i32, i32, i32) -> tensor<1x4x4x3xf32>
    %a = "nnapi.relu6"(%y) : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
    %y2 = "nnapi.conv_2d"(%x, %w, %b, %zero, %zero, %zero, %zero, %one, %one, %zero) : (tensor<1x4x4x2xf32>, tensor<3x1x1x2xf32>, tensor<3xf32>, i32, i32, i32, i32, i32, i32, i32) -> tensor<1x4x4x3xf32>
    %s = "nnapi.add"(%y2, %y2, %zero) : (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>, i32) -> tensor<1x4x4x3xf32>
    func.return %a, %s : tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>
  }

  // CONV_2D -> swish (LOGISTIC of the output, MUL of the output and it):
  // both fused.  A LOGISTIC whose result is also returned: not fused.
  func.func @swish(%x: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) {
    %w = "nnapi.constant"() <{value = dense<1.0> : tensor<3x1x1x2xf32>}> : () -> tensor<3x1x1x2xf32>
    %b = "nnapi.constant"() <{value = dense<0.0> : tensor<3xf32>}> : () -> tensor<3xf32>
    %zero = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %y = "nnapi.conv_2d"(%x, %w, %b, %zero, %zero, %zero, %zero, %one, %one, %zero) : (tensor<1x4x4x2xf32>, tensor<3x1x1x2xf32>, tensor<3xf32>, i32, i32, i32, i32, i32, i32, i32) -> tensor<1x4x4x3xf32>
    %s = "nnapi.logistic"(%y) : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
    %sw = "nnapi.mul"(%y, %s, %zero) : (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>, i32) -> tensor<1x4x4x3xf32>
    %y2 = "nnapi.conv_2d"(%x, %w, %b, %zero, %zero, %zero, %zero, %one, %one, %zero) : (tensor<1x4x4x2xf32>, tensor<3x1x1x2xf32>, tensor<3xf32>, i32, i32, i32, i32, i32, i32, i32) -> tensor<1x4x4x3xf32>
    %s2 = "nnapi.logistic"(%y2) : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
    %sw2 = "nnapi.mul"(%s2, %y2, %zero) : (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>, i32) -> tensor<1x4x4x3xf32>
    func.return %sw, %sw2, %s2 : tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>
  }

  // The residual is computed after the producer (it would have to move):
  // not fused; a broadcast ADD: not fused.
  func.func @not_fused(%x: tensor<8x4xf32>, %r: tensor<8x6xf32>, %row: tensor<6xf32>) -> (tensor<8x6xf32>, tensor<8x6xf32>) {
    %w = "nnapi.constant"() <{value = dense<1.0> : tensor<6x4xf32>}> : () -> tensor<6x4xf32>
    %b = "nnapi.constant"() <{value = dense<0.5> : tensor<6xf32>}> : () -> tensor<6xf32>
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %y = "nnapi.fully_connected"(%x, %w, %b, %none) : (tensor<8x4xf32>, tensor<6x4xf32>, tensor<6xf32>, i32) -> tensor<8x6xf32>
    %late = "nnapi.tanh"(%r) : (tensor<8x6xf32>) -> tensor<8x6xf32>
    %z = "nnapi.add"(%y, %late, %none) : (tensor<8x6xf32>, tensor<8x6xf32>, i32) -> tensor<8x6xf32>
    %y2 = "nnapi.fully_connected"(%x, %w, %b, %none) : (tensor<8x4xf32>, tensor<6x4xf32>, tensor<6xf32>, i32) -> tensor<8x6xf32>
    %z2 = "nnapi.add"(%y2, %row, %none) : (tensor<8x6xf32>, tensor<6xf32>, i32) -> tensor<8x6xf32>
    func.return %z, %z2 : tensor<8x6xf32>, tensor<8x6xf32>
  }
}

// CHECK-LABEL: func.func @fc_residual(
// CHECK:         "nnapi.fully_connected"({{.*}}) {nnc.fused_epilogue}
// CHECK:         "nnapi.reshape"(%{{[^)]*}}) : (
// CHECK:         "nnapi.add"({{.*}}) {nnc.fused_into_producer}

// CHECK-LABEL: func.func @conv(
// CHECK:         "nnapi.conv_2d"({{.*}}) {nnc.fused_epilogue}
// CHECK:         "nnapi.relu6"({{.*}}) {nnc.fused_into_producer}
// CHECK:         "nnapi.conv_2d"
// CHECK-NOT:     nnc.fused
// CHECK:         "nnapi.add"
// CHECK-NOT:     nnc.fused
// CHECK:         func.return

// CHECK-LABEL: func.func @swish(
// CHECK:         %y = "nnapi.conv_2d"({{.*}}) {nnc.fused_epilogue}
// CHECK-NEXT:    %s = "nnapi.logistic"(%y) {nnc.fused_into_producer}
// CHECK-NEXT:    %sw = "nnapi.mul"(%y, %s, %zero) {nnc.fused_into_producer}
// CHECK-NEXT:    %y2 = "nnapi.conv_2d"({{.*}}) : (
// CHECK-NEXT:    %s2 = "nnapi.logistic"(%y2) : (
// CHECK-NEXT:    %sw2 = "nnapi.mul"(%s2, %y2, %zero) : (

// CHECK-LABEL: func.func @not_fused(
// CHECK-NOT:     nnc.fused
// CHECK:         func.return
