// RUN: not nnc-opt %s -p nnc-fuse-epilogues 2>&1 | filecheck %s

// nnc-fuse-epilogues compares shapes, so it runs after shape inference: a
// producer with a tensor of unknown shape is refused.
builtin.module {
  func.func @main(%x: tensor<8x4xf32>, %r: tensor<8x6xf32>) -> tensor<?x6xf32> {
    %w = "nnapi.constant"() <{value = dense<1.0> : tensor<6x4xf32>}> : () -> tensor<6x4xf32>
    %b = "nnapi.constant"() <{value = dense<0.5> : tensor<6xf32>}> : () -> tensor<6xf32>
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %y = "nnapi.fully_connected"(%x, %w, %b, %none) : (tensor<8x4xf32>, tensor<6x4xf32>, tensor<6xf32>, i32) -> tensor<?x6xf32>
    func.return %y : tensor<?x6xf32>
  }
}
// CHECK: nnc-opt: error: nnc-fuse-epilogues: FULLY_CONNECTED has a tensor of unknown shape tensor<?x6xf32> (run nnapi-shape-inference first)
