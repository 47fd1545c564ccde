// RUN: nnc-opt %s -p nnc-convert-scf-to-cf | filecheck %s

// (xDSL's convert-scf-to-cf patterns, applied last operation first.)  Two
// loops in a row: each becomes a header block comparing the induction
// variable with the bound, a body block that steps it, and a continuation
// block; the blocks come out in program order, as the forward walk leaves
// them.  An scf.if becomes a conditional branch to its then-block.
func.func @f(%lo: index, %hi: index, %st: index, %m: memref<8xf32>, %v: f32, %c: i1) {
  scf.for %i = %lo to %hi step %st {
    memref.store %v, %m[%i] : memref<8xf32>
  }
  scf.for %j = %lo to %hi step %st {
    scf.if %c {
      memref.store %v, %m[%j] : memref<8xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @f(
// CHECK-NOT:     scf.
// CHECK:         cf.br ^[[HEAD:.*]](%lo : index)
// CHECK:       ^[[HEAD]](%[[I:.*]]: index):
// CHECK-NEXT:    %[[GO:.*]] = arith.cmpi slt, %[[I]], %hi : index
// CHECK-NEXT:    cf.cond_br %[[GO]], ^[[BODY:.*]], ^[[EXIT:[a-z0-9]+]]
// CHECK:       ^[[BODY]]:
// CHECK-NEXT:    memref.store %v, %m[%[[I]]] : memref<8xf32>
// CHECK-NEXT:    %[[NEXT:.*]] = arith.addi %[[I]], %st : index
// CHECK-NEXT:    cf.br ^[[HEAD]](%[[NEXT]] : index)
// CHECK:       ^[[EXIT]]:
// CHECK-NEXT:    cf.br ^[[HEAD2:.*]](%lo : index)
// CHECK:       ^[[HEAD2]](%[[J:.*]]: index):
// CHECK-NEXT:    %[[GO2:.*]] = arith.cmpi slt, %[[J]], %hi : index
// CHECK-NEXT:    cf.cond_br %[[GO2]], ^[[BODY2:.*]], ^[[EXIT2:[a-z0-9]+]]
// CHECK:       ^[[BODY2]]:
// CHECK-NEXT:    cf.cond_br %c, ^[[THEN:.*]], ^[[JOIN:[a-z0-9]+]]
// CHECK:       ^[[THEN]]:
// CHECK-NEXT:    memref.store %v, %m[%[[J]]] : memref<8xf32>
// CHECK-NEXT:    cf.br ^[[JOIN]]
// CHECK:       ^[[JOIN]]:
// CHECK-NEXT:    %[[NEXT2:.*]] = arith.addi %[[J]], %st : index
// CHECK-NEXT:    cf.br ^[[HEAD2]](%[[NEXT2]] : index)
// CHECK:       ^[[EXIT2]]:
// CHECK-NEXT:    func.return
