// RUN: not nnc-opt %s --split-input-file -p nnc-lower-scf-while 2>&1 | filecheck %s

// scf.while loops that nnc-lower-scf-while must refuse, one case per chunk:
// each region must leave through its own terminator (xDSL's verifier lets
// these through; lowered, the stray terminator would end up outside any loop).

// The condition region ends in scf.yield instead of scf.condition.
func.func @count(%n: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.while (%i = %c0) : (i32) -> i32 {
    %go = arith.cmpi slt, %i, %n : i32
    scf.yield %i : i32
  } do {
  ^bb0(%j: i32):
    %next = arith.addi %j, %c1 : i32
    scf.yield %next : i32
  }
  func.return %r : i32
}
// CHECK: nnc-opt: error: nnc-lower-scf-while: the condition region of scf.while ends in scf.yield, expected scf.condition

// -----

// The body region ends in scf.condition instead of scf.yield.
func.func @count(%n: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.while (%i = %c0) : (i32) -> i32 {
    %go = arith.cmpi slt, %i, %n : i32
    scf.condition(%go) %i : i32
  } do {
  ^bb0(%j: i32):
    %next = arith.addi %j, %c1 : i32
    %go2 = arith.cmpi slt, %next, %n : i32
    scf.condition(%go2) %next : i32
  }
  func.return %r : i32
}
// CHECK: nnc-opt: error: nnc-lower-scf-while: the body region of scf.while ends in scf.condition, expected scf.yield
// CHECK-NOT: Traceback
