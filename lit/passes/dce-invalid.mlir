// RUN: not nnc-opt %s -p dce 2>&1 | filecheck %s

// (xDSL's pass, which takes any module that verifies.)  A function body
// without its terminator is refused before the pass runs, with the
// verifier's one-line message naming the operation.
func.func @f(%a: f32) {
  %e = math.exp %a : f32
}

// CHECK: nnc-opt: error: Operation math.exp terminates block in single-block region but is not a terminator
// CHECK-NOT: Traceback
