// RUN: not nnc-opt %s -p 'nnc-fuse-epilogues{quant-add-min-elements=-1}' 2>&1 | filecheck %s

// An element count is never negative, so the option refuses one.
builtin.module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %a = "nnapi.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    func.return %a : tensor<4xf32>
  }
}
// CHECK: nnc-opt: error: nnc-fuse-epilogues: quant-add-min-elements must be at least 0, got -1
