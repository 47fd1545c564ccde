// RUN: not nnc-opt %s -p nnc-convert-linalg-to-loops 2>&1 | filecheck %s

// Loops need buffers: a linalg.generic on tensors (one that
// convert-nnapi-to-linalg never emits) is refused.
func.func @f(%a: tensor<4xf32>, %o: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%o : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  } -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// CHECK: nnc-opt: error: nnc-convert-linalg-to-loops: a linalg.generic with tensor results (buffers expected)
// CHECK-NOT: Traceback
