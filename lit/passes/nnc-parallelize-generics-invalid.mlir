// RUN: not nnc-opt %s -p nnc-parallelize-generics 2>&1 | filecheck %s

// nnc-parallelize-generics works on buffers: a linalg.generic with tensor
// results (not bufferized) is refused rather than left behind.
builtin.module {
  func.func @main(%a: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<64xf32> {
    %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<64xf32>) outs(%b : tensor<64xf32>) {
    ^bb0(%x: f32, %o: f32):
      linalg.yield %x : f32
    } -> tensor<64xf32>
    func.return %r : tensor<64xf32>
  }
}
// CHECK: nnc-opt: error: nnc-parallelize-generics: a linalg.generic with tensor results (buffers expected)
