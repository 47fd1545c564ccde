// RUN: not nnc-opt %s -p nnc-expand-math 2>&1 | filecheck %s

// (A rewrite of any module that verifies.)  A math.exp whose result type
// differs from its operand's is refused before the pass runs, with the
// verifier's one-line message naming the operation.
func.func @f(%x: f32) -> f64 {
  %e = "math.exp"(%x) <{fastmath = #arith.fastmath<none>}> : (f32) -> f64
  func.return %e : f64
}

// CHECK: nnc-opt: error: math.exp:
// CHECK-NOT: Traceback
