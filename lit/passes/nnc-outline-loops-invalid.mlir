// RUN: not nnc-opt %s -p 'nnc-outline-loops{min-ops=-1}' 2>&1 | filecheck %s

// A negative operation count is refused.
// CHECK: nnc-opt: error: {{.*}}nnc-outline-loops: min-ops must be >= 0, got -1

builtin.module {
  func.func @main() {
    func.return
  }
}
