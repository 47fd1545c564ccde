// RUN: nnc-opt %s -p convert-scf-to-cf | filecheck %s

// (xDSL's pass, after nnc-lower-scf-while.)  An scf.for becomes a header
// block comparing the induction variable with the bound, a body block that
// steps it, and a continuation block.
func.func @f(%lo: index, %hi: index, %st: index, %m: memref<8xf32>, %v: f32) {
  scf.for %i = %lo to %hi step %st {
    memref.store %v, %m[%i] : memref<8xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @f(
// CHECK-NOT:     scf.for
// CHECK:         cf.br ^[[HEAD:.*]](%lo : index)
// CHECK:       ^[[HEAD]](%[[I:.*]]: index):
// CHECK-NEXT:    %[[GO:.*]] = arith.cmpi slt, %[[I]], %hi : index
// CHECK-NEXT:    cf.cond_br %[[GO]], ^[[BODY:.*]], ^[[EXIT:[a-z0-9]+]]
// CHECK:       ^[[BODY]]:
// CHECK-NEXT:    memref.store %v, %m[%[[I]]] : memref<8xf32>
// CHECK-NEXT:    %[[NEXT:.*]] = arith.addi %[[I]], %st : index
// CHECK-NEXT:    cf.br ^[[HEAD]](%[[NEXT]] : index)
// CHECK:       ^[[EXIT]]:
// CHECK-NEXT:    func.return
