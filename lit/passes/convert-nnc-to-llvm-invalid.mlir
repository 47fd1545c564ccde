// RUN: not nnc-opt %s --split-input-file -p convert-nnc-to-llvm 2>&1 | filecheck %s

// IR that convert-nnc-to-llvm must refuse, one case per chunk.

// A temporary that nnc-plan-buffers has not placed in the arena: this pass
// has no memref.alloc lowering (nnc code never calls malloc).
builtin.module {
  func.func @main(%a: memref<4xf32>) {
    %t = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
    func.return
  }
}
// CHECK: nnc-opt: error: convert-nnc-to-llvm: cannot lower memref.alloc

// -----

// Functions return at most one value (outputs are written through pointers).
builtin.module {
  func.func @two(%a: i32) -> (i32, i32) {
    func.return %a, %a : i32, i32
  }
}
// CHECK: nnc-opt: error: convert-nnc-to-llvm: @two has 2 results; functions return at most one value

// -----

// Memref layouts are strided or the identity, not a permutation map.
builtin.module {
  func.func @main(%a: memref<2x3xf32, affine_map<(d0, d1) -> (d1, d0)>>, %i: index) -> f32 {
    %v = memref.load %a[%i, %i] : memref<2x3xf32, affine_map<(d0, d1) -> (d1, d0)>>
    func.return %v : f32
  }
}
// CHECK: nnc-opt: error: convert-nnc-to-llvm: unsupported memref layout affine_map<(d0, d1) -> (d1, d0)>

// -----

// Only functions and globals at the top level of the module.
builtin.module {
  "test.op"() : () -> ()
}
// CHECK: nnc-opt: error: convert-nnc-to-llvm: unexpected top-level op test.op

// -----

// vector.broadcast only splats a scalar.
builtin.module {
  func.func @main(%v: vector<4xf32>) {
    %b = vector.broadcast %v : vector<4xf32> to vector<2x4xf32>
    func.return
  }
}
// CHECK: nnc-opt: error: convert-nnc-to-llvm: vector.broadcast of a vector is not supported
// CHECK-NOT: Traceback

// -----

// A parallel dispatch (nnc-outline-parallel) runs its body from iteration 0.
builtin.module {
  func.func @main(%a: memref<64xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    func.call @nnc_par_0(%c1, %n, %a) {nnc.parallel_dispatch} : (index, index, memref<64xf32>) -> ()
    func.return
  }
  func.func private @nnc_par_0(%begin: index, %end: index, %a: memref<64xf32>) attributes {nnc.parallel_body} {
    func.return
  }
}
// CHECK: nnc-opt: error: convert-nnc-to-llvm: a parallel dispatch must start at iteration 0
