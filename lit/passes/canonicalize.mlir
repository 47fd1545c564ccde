// RUN: nnc-opt %s -p canonicalize | filecheck %s

// (xDSL's pass.)  Adding zero folds away and constants fold.
func.func @f(%a: i32) -> (i32, i32) {
  %z = arith.constant 0 : i32
  %r = arith.addi %a, %z : i32
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %s = arith.muli %c2, %c3 : i32
  func.return %r, %s : i32, i32
}

// CHECK-LABEL: func.func @f(%a: i32) -> (i32, i32)
// CHECK-NOT:     arith.addi
// CHECK-NOT:     arith.muli
// CHECK:         %[[SIX:.*]] = arith.constant 6 : i32
// CHECK-NEXT:    func.return %a, %[[SIX]] : i32, i32
