// RUN: nnc-opt %s -p nnc-concat-in-place,convert-nnapi-to-linalg | filecheck %s

// Producers of CONCATENATION inputs marked nnc.concat_in_place write into
// memref.view windows of the output (here the model output itself, at byte
// offsets 0 and 32); the MUL reads the ADD's window; the concatenation
// copies nothing.
builtin.module {
  func.func @main(%x: tensor<1x2x4xf32>, %y: tensor<1x4x4xf32>) -> (tensor<1x6x4xf32>, tensor<1x4x4xf32>) {
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %axis = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %a = "nnapi.tanh"(%x) : (tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
    %b = "nnapi.add"(%y, %y, %none) : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, i32) -> tensor<1x4x4xf32>
    %m = "nnapi.mul"(%b, %y, %none) : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, i32) -> tensor<1x4x4xf32>
    %c = "nnapi.concatenation"(%a, %b, %axis) : (tensor<1x2x4xf32>, tensor<1x4x4xf32>, i32) -> tensor<1x6x4xf32>
    func.return %c, %m : tensor<1x6x4xf32>, tensor<1x4x4xf32>
  }
}
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[X:.*]]: memref<1x2x4xf32>, %[[Y:.*]]: memref<1x4x4xf32>, %[[OUT:.*]]: memref<1x6x4xf32>,
// CHECK:         %[[B0:.*]] = builtin.unrealized_conversion_cast %[[OUT]] : memref<1x6x4xf32> to memref<96xi8>
// CHECK-NEXT:    %[[O0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[A:.*]] = memref.view %[[B0]][%[[O0]]][] : memref<96xi8> to memref<1x2x4xf32>
// CHECK:         math.tanh
// CHECK:         %[[B1:.*]] = builtin.unrealized_conversion_cast %[[OUT]] : memref<1x6x4xf32> to memref<96xi8>
// CHECK-NEXT:    %[[O1:.*]] = arith.constant 32 : index
// CHECK-NEXT:    %[[B:.*]] = memref.view %[[B1]][%[[O1]]][] : memref<96xi8> to memref<1x4x4xf32>
// CHECK:         arith.addf
// CHECK:         builtin.unrealized_conversion_cast %[[B]] : memref<1x4x4xf32> to memref<16xf32>
// CHECK:         arith.mulf
// CHECK-NEXT:    linalg.yield
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return
