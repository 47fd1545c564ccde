// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// RANK (passes/lowering/tensor_ops.py): the constant rank stored into the
// scalar result, a rank-0 buffer.
builtin.module {
  func.func @rank(%x: tensor<2x3x4xi1>) -> i32 {
    %r = "nnapi.rank"(%x) : (tensor<2x3x4xi1>) -> i32
    func.return %r : i32
  }
}

// CHECK-LABEL: func.func @rank(
// CHECK-SAME:    %{{[0-9]+}}: memref<2x3x4xi8>, %[[OUT:[0-9]+]]: memref<i32>
// CHECK:         %[[C:[0-9]+]] = arith.constant 3 : i32
// CHECK-NEXT:    memref.store %[[C]], %[[OUT]][] : memref<i32>
