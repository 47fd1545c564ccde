// RUN: not nnc-opt %s -p nnc-mark-cold 2>&1 | filecheck %s

// nnc.cold is this pass's conclusion: a function that already carries it
// but whose work is unbounded (a loop of unknown trip count) is refused
// rather than left for LLVM to optimise for size.
func.func @main(%a: memref<?xf32>, %n: index) attributes {nnc.cold} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    memref.store %zero, %a[%i] : memref<?xf32>
  }
  func.return
}

// CHECK: nnc-opt: error: nnc-mark-cold: @main is marked nnc.cold but is not cold (its work is not within [0, 65536] operations a run)
// CHECK-NOT: Traceback
