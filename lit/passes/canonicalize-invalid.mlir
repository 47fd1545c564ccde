// RUN: not nnc-opt %s -p canonicalize 2>&1 | filecheck %s

// (xDSL's pass, which takes any module that verifies.)  A function whose
// return does not match its type is refused before the pass runs, with the
// verifier's one-line message naming the operation.
func.func @f(%a: i32) -> i64 {
  func.return %a : i32
}

// CHECK: nnc-opt: error: func.return: Expected arguments to have the same types as the function output types: expected [i64], got [i32]
// CHECK-NOT: Traceback
