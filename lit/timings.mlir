// RUN: nnc-opt %s --pipeline --emit llvm --timings -o /dev/null 2>&1 | filecheck %s

// --timings: one line per pass in pipeline order, with the operations in the
// module before and after it, then the stages around the passes and the total.
builtin.module {
  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    %r = "nnapi.logistic"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    func.return %r : tensor<4xf32>
  }
}

// CHECK:      wall (s)   share  ops before   ops after  stage
// CHECK:      parse+verify
// CHECK-NEXT: {{[0-9.]+ +[0-9.]+%}} 3 3 nnapi-shape-inference
// CHECK-NEXT: {{[0-9.]+ +[0-9.]+%}} 3 3 nnc-fold-quantize-pairs
// CHECK-NEXT: {{[0-9.]+ +[0-9.]+%}} 3 3 nnc-fuse-epilogues
// CHECK-NEXT: {{[0-9.]+ +[0-9.]+%}} 3 3 nnc-fuse-elementwise
// CHECK-NEXT: {{[0-9.]+ +[0-9.]+%}} 3 3 nnc-concat-in-place
// CHECK-NEXT: {{[0-9.]+ +[0-9.]+%}} 3 3 nnc-choose-kernels
// CHECK-NEXT: {{[0-9.]+ +[0-9.]+%}} 3 {{[0-9]+}} convert-nnapi-to-linalg
// CHECK:      nnc-expand-math
// CHECK-NEXT: convert-nnc-to-llvm
// CHECK-NEXT: nnc-add-entry-point
// CHECK-NEXT: verify
// CHECK-NEXT: to-llvm-ir
// CHECK-NEXT: 100.0% total
