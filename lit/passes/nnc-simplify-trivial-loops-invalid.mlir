// RUN: not nnc-opt %s -p nnc-simplify-trivial-loops 2>&1 | filecheck %s

// (A pattern pass that takes any module that verifies.)  An scf.for whose
// body has several blocks is refused before the pass runs, with the
// verifier's one-line message naming the operation.
func.func @f(%lo: index, %hi: index, %st: index) {
  "scf.for"(%lo, %hi, %st) ({
  ^bb0(%i: index):
    "cf.br"() [^bb1] : () -> ()
  ^bb1:
    "scf.yield"() : () -> ()
  }) : (index, index, index) -> ()
  func.return
}

// CHECK: nnc-opt: error: scf.for: Region 'body' at position 0 expected a single block, but got 2 blocks
// CHECK-NOT: Traceback
