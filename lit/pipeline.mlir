// RUN: nnc-opt %s --pipeline --emit llvm | filecheck %s

// The whole pipeline, from the nnapi dialect to LLVM IR.
builtin.module {
  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    %r = "nnapi.logistic"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    func.return %r : tensor<4xf32>
  }
}

// LOGISTIC's exp is a polynomial (nnc-expand-math), no call: the
// NaN-keeping clamp (compares and selects), the exponent bits, then
// 1 / (1 + exp(-x)).
// CHECK:      define void @"main"(ptr
// CHECK-NOT:    call
// CHECK:        fcmp olt float
// CHECK:        bitcast float %{{.*}} to i32
// CHECK:        fdiv float
// CHECK:      define i32 @"nnc_run"(ptr
