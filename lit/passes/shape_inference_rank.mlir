// RUN: nnc-opt %s -p nnapi-shape-inference | filecheck %s

// RANK is folded for its readers: FILL reads the constant 2, while the RANK
// operation stays and still produces the returned value.
builtin.module {
  func.func @main(%x: tensor<2x3xf32>) -> (i32, tensor<?x?x?xi32>) {
    %dims = "nnapi.constant"() <{value = dense<[2, 3, 4]> : tensor<3xi32>}> : () -> tensor<3xi32>
    %r = "nnapi.rank"(%x) : (tensor<2x3xf32>) -> i32
    %f = "nnapi.fill"(%dims, %r) : (tensor<3xi32>, i32) -> tensor<?x?x?xi32>
    func.return %r, %f : i32, tensor<?x?x?xi32>
  }
}

// CHECK:      func.func @main(
// CHECK:        %[[C:.*]] = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
// CHECK-NEXT:   %[[R:.*]] = "nnapi.rank"(%{{.*}}) : (tensor<2x3xf32>) -> i32
// CHECK-NEXT:   "nnapi.fill"(%{{.*}}, %[[C]])
// CHECK:        func.return %[[R]], %{{.*}} : i32, tensor<2x3x4xi32>
