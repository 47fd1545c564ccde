// RUN: not nnc-opt %s --split-input-file -p nnapi-shape-inference 2>&1 | filecheck %s

// IR that nnapi-shape-inference must refuse, one case per chunk: each error
// names the operation (its index in the function and its NNAPI type).

// ADD of a float32 and an int32 tensor: the operand types must agree.
builtin.module {
  func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xi32>) -> tensor<?x?xf32> {
    %act = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %r = "nnapi.add"(%a, %b, %act) : (tensor<2x3xf32>, tensor<2x3xi32>, i32) -> tensor<?x?xf32>
    func.return %r : tensor<?x?xf32>
  }
}
// CHECK: nnc-opt: error: operation 0 (ADD): input types differ: TENSOR_FLOAT32 vs TENSOR_INT32

// -----

// A declared output shape that contradicts the inferred one.
builtin.module {
  func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<4x3xf32> {
    %act = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %r = "nnapi.add"(%a, %b, %act) : (tensor<2x3xf32>, tensor<2x3xf32>, i32) -> tensor<4x3xf32>
    func.return %r : tensor<4x3xf32>
  }
}
// CHECK: nnc-opt: error: operation 0 (ADD): declared dimensions [4, 3], inferred [2, 3]

// -----

// The fused activation code is a scalar computed at run time (a function
// argument): nnc compiles scalars into the code, so it must be a constant.
builtin.module {
  func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %act: i32) -> tensor<?x?xf32> {
    %r = "nnapi.add"(%a, %b, %act) : (tensor<2x3xf32>, tensor<2x3xf32>, i32) -> tensor<?x?xf32>
    func.return %r : tensor<?x?xf32>
  }
}
// CHECK: nnc-opt: error: operation 0 (ADD): scalar input 2 must be a constant

// -----

// The second operation is the bad one: the index counts NNAPI operations
// (not constants).  TANH's output rank is not its input's.
builtin.module {
  func.func @main(%a: tensor<2x3xf32>) -> tensor<?xf32> {
    %t = "nnapi.tanh"(%a) : (tensor<2x3xf32>) -> tensor<?x?xf32>
    %r = "nnapi.tanh"(%t) : (tensor<?x?xf32>) -> tensor<?xf32>
    func.return %r : tensor<?xf32>
  }
}
// CHECK: nnc-opt: error: operation 1 (TANH): declared rank 1, inferred 2

// -----

// ADD without its fused activation code: the operand count matches no
// signature of ADD (the nnapi dialect's verifier refuses it, before the pass).
builtin.module {
  func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<?x?xf32> {
    %r = "nnapi.add"(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<?x?xf32>
    func.return %r : tensor<?x?xf32>
  }
}
// CHECK: nnc-opt: error: nnapi.add: 2 inputs is not a valid signature

// -----

// An operation nnc has no shape rule for (and cannot compile).
builtin.module {
  func.func @main(%rois: tensor<2x4xf32>, %deltas: tensor<2x8xf32>, %batch: tensor<2xi32>, %info: tensor<1x2xf32>) -> tensor<?x?xf32> {
    %r = "nnapi.axis_aligned_bbox_transform"(%rois, %deltas, %batch, %info) : (tensor<2x4xf32>, tensor<2x8xf32>, tensor<2xi32>, tensor<1x2xf32>) -> tensor<?x?xf32>
    func.return %r : tensor<?x?xf32>
  }
}
// CHECK: nnc-opt: error: operation 0 (AXIS_ALIGNED_BBOX_TRANSFORM): no rule for AXIS_ALIGNED_BBOX_TRANSFORM
// CHECK-NOT: error
// CHECK-NOT: Traceback
