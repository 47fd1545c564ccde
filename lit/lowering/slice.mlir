// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// The slicing operations (passes/lowering/slice.py).
builtin.module {
  // STRIDED_SLICE of a quantised tensor (its bytes are copied): axis 0 is
  // shrunk at begin 1; axis 1 runs from 3 down with stride -2 (begin_mask
  // and end_mask bit 1); axis 2 from -4 = 1 to 4.
  func.func @strided_slice(%ss: tensor<2x4x5x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>) -> tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>> {
    %b = "nnapi.constant"() <{value = dense<[1, 0, -4]> : tensor<3xi32>}> : () -> tensor<3xi32>
    %e = "nnapi.constant"() <{value = dense<[2, 0, 4]> : tensor<3xi32>}> : () -> tensor<3xi32>
    %s = "nnapi.constant"() <{value = dense<[1, -2, 1]> : tensor<3xi32>}> : () -> tensor<3xi32>
    %two = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %r_ss = "nnapi.strided_slice"(%ss, %b, %e, %s, %two, %two, %one) : (tensor<2x4x5x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, i32, i32, i32) -> tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>
    func.return %r_ss : tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>
  }

  // SLICE: a copy of the subview at offsets (1, 2) with sizes (2, 3).
  func.func @slice(%x: tensor<4x6xf32>) -> tensor<2x3xf32> {
    %begin = "nnapi.constant"() <{value = dense<[1, 2]> : tensor<2xi32>}> : () -> tensor<2xi32>
    %size = "nnapi.constant"() <{value = dense<[2, 3]> : tensor<2xi32>}> : () -> tensor<2xi32>
    %r_s = "nnapi.slice"(%x, %begin, %size) : (tensor<4x6xf32>, tensor<2xi32>, tensor<2xi32>) -> tensor<2x3xf32>
    func.return %r_s : tensor<2x3xf32>
  }

  // SPLIT along axis 1 into 2: a copy of each half (a subview).
  func.func @split(%x: tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
    %axis1 = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %two = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %s0, %s1 = "nnapi.split"(%x, %axis1, %two) : (tensor<2x4xf32>, i32, i32) -> (tensor<2x2xf32>, tensor<2x2xf32>)
    func.return %s0, %s1 : tensor<2x2xf32>, tensor<2x2xf32>
  }
}

// STRIDED_SLICE: in[1, 3 - 2*i, j + 1].
// CHECK-LABEL: func.func @strided_slice(
// CHECK-SAME:    %[[SS:[0-9]+]]: memref<2x4x5xi8>, %[[R_SS:[0-9]+]]: memref<2x3xi8>
// CHECK:         linalg.generic {{.*}} outs(%[[R_SS]] : memref<2x3xi8>)
// CHECK:           %[[I:[0-9]+]] = linalg.index 0 : index
// CHECK:           %[[J:[0-9]+]] = linalg.index 1 : index
// CHECK:           %[[M2:[0-9]+]] = arith.constant -2 : index
// CHECK:           %[[I2:[0-9]+]] = arith.muli %[[I]], %[[M2]] : index
// CHECK:           %[[C3:[0-9]+]] = arith.constant 3 : index
// CHECK:           %[[Y:[0-9]+]] = arith.addi %[[I2]], %[[C3]] : index
// CHECK:           %[[C1:[0-9]+]] = arith.constant 1 : index
// CHECK:           %[[Z:[0-9]+]] = arith.addi %[[J]], %[[C1]] : index
// CHECK:           %[[B:[0-9]+]] = arith.constant 1 : index
// CHECK:           %[[V:[0-9]+]] = memref.load %[[SS]][%[[B]], %[[Y]], %[[Z]]] : memref<2x4x5xi8>
// CHECK:           linalg.yield %[[V]] : i8

// CHECK-LABEL: func.func @slice(
// CHECK-SAME:    %[[X:[0-9]+]]: memref<4x6xf32>, %[[R_S:[0-9]+]]: memref<2x3xf32>
// CHECK:         %[[SV:[0-9]+]] = memref.subview %[[X]][1, 2] [2, 3] [1, 1]
// CHECK:         linalg.generic {{.*}} ins(%[[SV]] : {{.*}}) outs(%[[R_S]] : memref<2x3xf32>)

// CHECK-LABEL: func.func @split(
// CHECK-SAME:    %[[X:[0-9]+]]: memref<2x4xf32>, %[[S0:[0-9]+]]: memref<2x2xf32>, %[[S1:[0-9]+]]: memref<2x2xf32>
// CHECK:         %[[H0:[0-9]+]] = memref.subview %[[X]][0, 0] [2, 2] [1, 1] : memref<2x4xf32> to memref<2x2xf32, strided<[4, 1]>>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[H0]] : memref<2x2xf32, strided<[4, 1]>>) outs(%[[S0]] : memref<2x2xf32>)
// CHECK:         %[[H1:[0-9]+]] = memref.subview %[[X]][0, 2] [2, 2] [1, 1] : memref<2x4xf32> to memref<2x2xf32, strided<[4, 1], offset: 2>>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[H1]] : memref<2x2xf32, strided<[4, 1], offset: 2>>) outs(%[[S1]] : memref<2x2xf32>)
