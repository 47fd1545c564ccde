// RUN: not nnc-opt %s --split-input-file -p nnc-outline-parallel 2>&1 | filecheck %s

// Marked loops nnc-outline-parallel must refuse, one case per chunk (see
// outline_parallel.mlir for what a marked loop is).

// A marked loop that carries a value from one iteration to the next: its
// iterations are not independent.
builtin.module {
  func.func @main(%a: memref<64x256xf32>) -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %c256 = arith.constant 256 : index
    %z = arith.constant 0.0 : f32
    %s = scf.for %i = %c0 to %c64 step %c1 iter_args(%acc = %z) -> (f32) {
      %t = scf.for %j = %c0 to %c256 step %c1 iter_args(%acc2 = %acc) -> (f32) {
        %v = memref.load %a[%i, %j] : memref<64x256xf32>
        %w = arith.addf %acc2, %v : f32
        scf.yield %w : f32
      }
      scf.yield %t : f32
    } {nnc.parallel}
    func.return %s : f32
  }
}
// CHECK: nnc-opt: error: nnc-outline-parallel: a parallel loop carries values

// -----

// The mark is a unit attribute.
builtin.module {
  func.func @main(%a: memref<64xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %z = arith.constant 0.0 : f32
    scf.for %i = %c0 to %c64 step %c1 {
      memref.store %z, %a[%i] : memref<64xf32>
    } {nnc.parallel = 2 : i64}
    func.return
  }
}
// CHECK: nnc-opt: error: nnc-outline-parallel: nnc.parallel must be a unit attribute

// -----

// A captured value that does not fit an 8-byte slot of the context.
builtin.module {
  func.func @main(%a: memref<64x4096xf32>, %v: vector<8xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %c4096 = arith.constant 4096 : index
    scf.for %i = %c0 to %c64 step %c1 {
      scf.for %j = %c0 to %c4096 step %c8 {
        vector.store %v, %a[%i, %j] : memref<64x4096xf32>, vector<8xf32>
      }
    } {nnc.parallel}
    func.return
  }
}
// CHECK: nnc-opt: error: nnc-outline-parallel: a parallel loop captures a value of type vector<8xf32>
