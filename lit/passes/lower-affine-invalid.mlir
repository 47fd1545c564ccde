// RUN: not nnc-opt %s -p lower-affine 2>&1 | filecheck %s

// (xDSL's pass, which takes any module that verifies.)  An affine.apply whose
// operands do not match its map's dimensions is refused before the pass runs,
// with the verifier's one-line message.
func.func @f(%i: index) -> index {
  %r = "affine.apply"(%i) <{map = affine_map<(d0, d1) -> (d0 * 3 + d1)>}> : (index) -> index
  func.return %r : index
}

// CHECK: nnc-opt: error: affine.apply expects 2 operands, but got 1.
// CHECK-NOT: Traceback
