// RUN: nnc-opt %s -p nnc-lower-scf-while | filecheck %s

// A counting loop: scf.while becomes a header block that branches to the body
// or out, and a body block that branches back with the yielded values.
func.func @count(%n: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.while (%i = %c0) : (i32) -> i32 {
    %go = arith.cmpi slt, %i, %n : i32
    scf.condition(%go) %i : i32
  } do {
  ^bb0(%j: i32):
    %next = arith.addi %j, %c1 : i32
    scf.yield %next : i32
  }
  func.return %r : i32
}

// CHECK-LABEL: func.func @count
// CHECK-NOT:   scf.while
// CHECK:         cf.br ^[[BEFORE:.*]](%{{.*}} : i32)
// CHECK:       ^[[BEFORE]](%[[I:.*]]: i32):
// CHECK:         %[[GO:.*]] = arith.cmpi slt, %[[I]]
// CHECK:         cf.cond_br %[[GO]], ^[[AFTER:.*]](%[[I]] : i32), ^[[CONT:.*]](%[[I]] : i32)
// CHECK:       ^[[AFTER]](%[[J:.*]]: i32):
// CHECK:         %[[NEXT:.*]] = arith.addi %[[J]]
// CHECK:         cf.br ^[[BEFORE]](%[[NEXT]] : i32)
// CHECK:       ^[[CONT]](%[[R:.*]]: i32):
// CHECK:         func.return %[[R]] : i32
