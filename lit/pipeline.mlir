// RUN: nnc-opt %s --pipeline --emit llvm | filecheck %s

// The whole pipeline, from the nnapi dialect to LLVM IR.
builtin.module {
  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    %r = "nnapi.logistic"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    func.return %r : tensor<4xf32>
  }
}

// LOGISTIC's exp(-|x|) is a polynomial (vmath.logistic), no call: the sign
// bit set, the NaN-keeping floor (a compare and a select), the exponent
// bits, then one division.
// CHECK:      define void @"main"(ptr
// CHECK-NOT:    call
// CHECK:        or i32 %{{.*}}, -2147483648
// CHECK:        fcmp olt float
// CHECK:        bitcast float %{{.*}} to i32
// CHECK:        fdiv float
// CHECK:      define i32 @"nnc_run"(ptr
