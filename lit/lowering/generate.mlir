// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// FILL and RANDOM_MULTINOMIAL (passes/lowering/generate.py, philox.py).
builtin.module {
  // FILL a 2x3 output with 1.5.
  func.func @fill() -> tensor<2x3xf32> {
    %dims = "nnapi.constant"() <{value = dense<[2, 3]> : tensor<2xi32>}> : () -> tensor<2xi32>
    %v = "nnapi.constant"() <{value = dense<1.500000e+00> : tensor<f32>}> : () -> f32
    %f = "nnapi.fill"(%dims, %v) : (tensor<2xi32>, f32) -> tensor<2x3xf32>
    func.return %f : tensor<2x3xf32>
  }

  // RANDOM_MULTINOMIAL: seeds read at run time ((0, 0): the clock), per row
  // the double cumulative sums, per sample a Philox-4x32-10 block and a
  // binary search of the sums.
  func.func @multinomial(%x: tensor<2x5xf32>, %seeds: tensor<2xi32>) -> tensor<2x3xi32> {
    %n = "nnapi.constant"() <{value = dense<3> : tensor<i32>}> : () -> i32
    %r = "nnapi.random_multinomial"(%x, %n, %seeds) : (tensor<2x5xf32>, i32, tensor<2xi32>) -> tensor<2x3xi32>
    func.return %r : tensor<2x3xi32>
  }
}

// CHECK-LABEL: func.func @fill(
// CHECK-SAME:    %[[F:[0-9]+]]: memref<2x3xf32>
// CHECK:         linalg.generic {{.*}} outs(%[[F]] : memref<2x3xf32>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %[[V:[0-9]+]] = arith.constant 1.500000e+00 : f32
// CHECK-NEXT:      linalg.yield %[[V]] : f32

// CHECK-LABEL: func.func @multinomial(
// CHECK-SAME:    %[[X:[0-9]+]]: memref<2x5xf32>, %[[S:[0-9]+]]: memref<2xi32>, %[[OUT:[0-9]+]]: memref<2x3xi32>
// CHECK:         memref.load %[[S]]
// CHECK:         func.call @nnc_monotonic_ns() : () -> i64
// CHECK:         %[[CDF:[0-9]+]] = memref.alloc() {{.*}} : memref<5xf64>
// CHECK:         math.exp {{.*}} : f64
// CHECK:         memref.store {{.*}}, %[[CDF]]
// CHECK:         arith.constant 3528531795 : i64
// CHECK:         arith.uitofp {{.*}} : i64 to f64
// CHECK:         memref.store {{.*}}, %[[OUT]]
// CHECK:       func.func @nnc_monotonic_ns() -> i64
