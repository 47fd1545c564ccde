// RUN: nnc-opt %s -p nnc-simplify-trivial-loops | filecheck %s

// A copy over a 1 x 4 domain, as nnc-convert-linalg-to-loops leaves it: the
// outer loop runs once, so it becomes its body with %i = 0; the inner loop
// (four iterations) stays.  A loop of no iteration is dropped, its result
// replaced by its initial value.
func.func @copy(%a: memref<1x4xf32>, %b: memref<1x4xf32>, %init: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c1 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %v = memref.load %a[%i, %j] : memref<1x4xf32>
      memref.store %v, %b[%i, %j] : memref<1x4xf32>
    }
  }
  %r = scf.for %k = %c0 to %c0 step %c1 iter_args(%acc = %init) -> (f32) {
    %s = arith.addf %acc, %acc : f32
    scf.yield %s : f32
  }
  func.return %r : f32
}

// CHECK-LABEL: func.func @copy
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK:         scf.for %[[J:.*]] = %[[C0]] to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[V:.*]] = memref.load %{{.*}}[%[[C0]], %[[J]]] : memref<1x4xf32>
// CHECK-NEXT:      memref.store %[[V]], %{{.*}}[%[[C0]], %[[J]]] : memref<1x4xf32>
// CHECK-NEXT:    }
// CHECK-NOT:     scf.for
// CHECK-NOT:     arith.addf
// CHECK:         func.return %{{.*}} : f32
