// RUN: nnc-opt %s -p nnc-outline-loops | filecheck %s

// A function below min-ops (default 1500 operations) keeps its loops; a
// nest that yields a value stays too.

// CHECK-LABEL: func.func @main(
// CHECK:         scf.for
// CHECK-NOT:     func.call
// CHECK-NOT:   nnc_loop_

builtin.module {
  func.func @main(%a: memref<8xf32>, %b: memref<8xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    scf.for %i = %c0 to %c8 step %c1 {
      %x = memref.load %a[%i] : memref<8xf32>
      memref.store %x, %b[%i] : memref<8xf32>
    }
    func.return
  }
}
