// RUN: not nnc-opt %s -p 'convert-nnapi-to-linalg{target-cpu="znver3"}' 2>&1 | filecheck %s

// A CPU name without its features: the pass cannot ask LLVM what the CPU
// implies (it is pure Python); the driver derives the features and passes
// them (nnc.runtime.cpu_probe.implied_features).
builtin.module {
  func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %r = "nnapi.tanh"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    func.return %r : tensor<2x3xf32>
  }
}
// CHECK: nnc-opt: error: convert-nnapi-to-linalg: target-cpu without target-features: give the CPU's features (LLVM's spelling, e.g. target-features="+avx2,+fma"); the driver derives them from the CPU name
