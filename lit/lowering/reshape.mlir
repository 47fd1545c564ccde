// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// The operations that change a shape without moving elements
// (passes/lowering/reshape.py): each copies between 1-D views of its input
// and output; RANK stores a constant.
builtin.module {
  // SQUEEZE without axes (every size-1 dimension).
  func.func @squeeze(%sq: tensor<1x3x1x2xf32>) -> tensor<3x2xf32> {
    %none = "nnapi.no_value"() : () -> tensor<0xi32>
    %r_sq = "nnapi.squeeze"(%sq, %none) : (tensor<1x3x1x2xf32>, tensor<0xi32>) -> tensor<3x2xf32>
    func.return %r_sq : tensor<3x2xf32>
  }

  // RESHAPE to [3, -1].
  func.func @reshape(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
    %s = "nnapi.constant"() <{value = dense<[3, -1]> : tensor<2xi32>}> : () -> tensor<2xi32>
    %r = "nnapi.reshape"(%a, %s) : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<3x2xf32>
    func.return %r : tensor<3x2xf32>
  }

  // EXPAND_DIMS: a flat copy (same elements, one more dimension of 1).
  func.func @expand_dims(%x: tensor<2x4xf32>) -> tensor<2x1x4xf32> {
    %axis1 = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %e = "nnapi.expand_dims"(%x, %axis1) : (tensor<2x4xf32>, i32) -> tensor<2x1x4xf32>
    func.return %e : tensor<2x1x4xf32>
  }

  // RANK: the constant rank stored into the scalar result, a rank-0 buffer.
  func.func @rank(%x: tensor<2x3x4xi1>) -> i32 {
    %r = "nnapi.rank"(%x) : (tensor<2x3x4xi1>) -> i32
    func.return %r : i32
  }

  // RESHAPE, int8: a byte copy between 1-D views.
  func.func @reshape_q8(%x: tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<1>>>) -> tensor<6x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<1>>> {
    %shape = "nnapi.constant"() <{value = dense<[6]> : tensor<1xi32>}> : () -> tensor<1xi32>
    %r = "nnapi.reshape"(%x, %shape) : (tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<1>>>, tensor<1xi32>) -> tensor<6x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<1>>>
    func.return %r : tensor<6x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<1>>>
  }
}

// CHECK-LABEL: func.func @squeeze(
// CHECK-SAME:    %[[SQ:[0-9]+]]: memref<1x3x1x2xf32>, %[[R_SQ:[0-9]+]]: memref<3x2xf32>
// CHECK:         %[[SQF:[0-9]+]] = builtin.unrealized_conversion_cast %[[SQ]] : memref<1x3x1x2xf32> to memref<6xf32>
// CHECK:         %[[R_SQF:[0-9]+]] = builtin.unrealized_conversion_cast %[[R_SQ]] : memref<3x2xf32> to memref<6xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[SQF]] : memref<6xf32>) outs(%[[R_SQF]] : memref<6xf32>)

// CHECK-LABEL: func.func @reshape(
// CHECK-SAME:    %[[X:[0-9]+]]: memref<2x3xf32>, %[[Y:[0-9]+]]: memref<3x2xf32>
// CHECK:         %[[XF:[0-9]+]] = builtin.unrealized_conversion_cast %[[X]] : memref<2x3xf32> to memref<6xf32>
// CHECK:         %[[YF:[0-9]+]] = builtin.unrealized_conversion_cast %[[Y]] : memref<3x2xf32> to memref<6xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[XF]] : memref<6xf32>) outs(%[[YF]] : memref<6xf32>)
// CHECK:         func.return

// CHECK-LABEL: func.func @expand_dims(
// CHECK-SAME:    %[[X:[0-9]+]]: memref<2x4xf32>, %[[E:[0-9]+]]: memref<2x1x4xf32>
// CHECK:         %[[XF:[0-9]+]] = builtin.unrealized_conversion_cast %[[X]] : memref<2x4xf32> to memref<8xf32>
// CHECK-NEXT:    %[[EF:[0-9]+]] = builtin.unrealized_conversion_cast %[[E]] : memref<2x1x4xf32> to memref<8xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[XF]] : memref<8xf32>) outs(%[[EF]] : memref<8xf32>)

// CHECK-LABEL: func.func @rank(
// CHECK-SAME:    %{{[0-9]+}}: memref<2x3x4xi8>, %[[OUT:[0-9]+]]: memref<i32>
// CHECK:         %[[C:[0-9]+]] = arith.constant 3 : i32
// CHECK-NEXT:    memref.store %[[C]], %[[OUT]][] : memref<i32>

// CHECK-LABEL: func.func @reshape_q8(
// CHECK-SAME:    %[[X:.*]]: memref<2x3xi8>, %[[OUT:.*]]: memref<6xi8>
// CHECK:         %[[FLAT:.*]] = builtin.unrealized_conversion_cast %[[X]] : memref<2x3xi8> to memref<6xi8>
// CHECK:         linalg.generic {{.*}} ins(%[[FLAT]] : memref<6xi8>) outs(%[[OUT]] : memref<6xi8>)
// CHECK-NEXT:    ^bb0(%[[E:.*]]: i8, %{{.*}}: i8):
// CHECK-NEXT:      linalg.yield %[[E]] : i8
