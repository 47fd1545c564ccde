// RUN: not nnc-opt %s -p nnc-fuse-elementwise 2>&1 | filecheck %s

// nnc-fuse-elementwise compares shapes, so it runs after shape inference: an
// element-wise operation with a tensor of unknown shape is refused.
builtin.module {
  func.func @main(%x: tensor<8x4xf32>) -> tensor<?x4xf32> {
    %s = "nnapi.logistic"(%x) : (tensor<8x4xf32>) -> tensor<?x4xf32>
    func.return %s : tensor<?x4xf32>
  }
}
// CHECK: nnc-opt: error: nnc-fuse-elementwise: LOGISTIC has a tensor of unknown shape tensor<?x4xf32> (run nnapi-shape-inference first)
