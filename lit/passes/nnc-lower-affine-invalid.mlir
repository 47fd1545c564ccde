// RUN: not nnc-opt %s -p nnc-lower-affine 2>&1 | filecheck %s

// nnc's IR has no affine op but affine.apply: another one (here an
// affine.for) is refused with the pass's one-line message rather than left
// for the LLVM lowering to fail on.
func.func @f(%m: memref<4xf32>, %v: f32) {
  affine.for %i = 0 to 4 {
    memref.store %v, %m[%i] : memref<4xf32>
  }
  func.return
}

// CHECK: nnc-opt: error: nnc-lower-affine: affine.for is not supported (only affine.apply)
// CHECK-NOT: Traceback
