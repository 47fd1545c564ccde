// RUN: not nnc-opt %s -p 'nnc-fuse-elementwise{max-group-ops=1}' 2>&1 | filecheck %s

// A group has at least two members, so max-group-ops below 2 is refused.
builtin.module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %a = "nnapi.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    func.return %a : tensor<4xf32>
  }
}
// CHECK: nnc-opt: error: nnc-fuse-elementwise: max-group-ops must be at least 2 (a group has two members), got 1
