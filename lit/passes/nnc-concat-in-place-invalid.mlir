// RUN: not nnc-opt %s -p nnc-concat-in-place 2>&1 | filecheck %s

// nnc-concat-in-place compares shapes, so it runs after shape inference: a
// CONCATENATION with a tensor of unknown shape is refused.
builtin.module {
  func.func @main(%x: tensor<?x4xf32>, %y: tensor<2x4xf32>) -> tensor<?x4xf32> {
    %axis = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %c = "nnapi.concatenation"(%x, %y, %axis) : (tensor<?x4xf32>, tensor<2x4xf32>, i32) -> tensor<?x4xf32>
    func.return %c : tensor<?x4xf32>
  }
}
// CHECK: nnc-opt: error: nnc-concat-in-place: CONCATENATION has a tensor of unknown shape tensor<?x4xf32> (run nnapi-shape-inference first)
