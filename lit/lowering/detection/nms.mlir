// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// BOX_WITH_NMS_LIMIT (passes/lowering/detection/nms.py): its outputs carry a
// data-dependent size (#nnapi.bounded<axis 0, count 0, factor 1>), so @main
// gets the counts buffer (nnc.counts, zeroed first), the outputs are zeroed
// (padding rows beyond the count), the kernel runs in scf.for loops over the
// boxes of each batch, and the number of kept boxes is stored in counts[0].
builtin.module {
  func.func @main(%scores: tensor<3x2xf32>, %rois: tensor<3x8xf32>, %batch: tensor<3xi32>) -> (tensor<3xf32, #nnapi.bounded<#builtin.int<0>, #builtin.int<0>, #builtin.int<1>>>, tensor<3x4xf32, #nnapi.bounded<#builtin.int<0>, #builtin.int<0>, #builtin.int<1>>>, tensor<3xi32, #nnapi.bounded<#builtin.int<0>, #builtin.int<0>, #builtin.int<1>>>, tensor<3xi32, #nnapi.bounded<#builtin.int<0>, #builtin.int<0>, #builtin.int<1>>>) {
    %thr = "nnapi.constant"() <{value = dense<0.3> : tensor<f32>}> : () -> f32
    %max = "nnapi.constant"() <{value = dense<-1> : tensor<i32>}> : () -> i32
    %hard = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %iou = "nnapi.constant"() <{value = dense<0.4> : tensor<f32>}> : () -> f32
    %sigma = "nnapi.constant"() <{value = dense<1.0> : tensor<f32>}> : () -> f32
    %s, %r, %c, %b = "nnapi.box_with_nms_limit"(%scores, %rois, %batch, %thr, %max, %hard, %iou, %sigma, %thr) : (tensor<3x2xf32>, tensor<3x8xf32>, tensor<3xi32>, f32, i32, i32, f32, f32, f32) -> (tensor<3xf32, #nnapi.bounded<#builtin.int<0>, #builtin.int<0>, #builtin.int<1>>>, tensor<3x4xf32, #nnapi.bounded<#builtin.int<0>, #builtin.int<0>, #builtin.int<1>>>, tensor<3xi32, #nnapi.bounded<#builtin.int<0>, #builtin.int<0>, #builtin.int<1>>>, tensor<3xi32, #nnapi.bounded<#builtin.int<0>, #builtin.int<0>, #builtin.int<1>>>)
    func.return %s, %r, %c, %b : tensor<3xf32, #nnapi.bounded<#builtin.int<0>, #builtin.int<0>, #builtin.int<1>>>, tensor<3x4xf32, #nnapi.bounded<#builtin.int<0>, #builtin.int<0>, #builtin.int<1>>>, tensor<3xi32, #nnapi.bounded<#builtin.int<0>, #builtin.int<0>, #builtin.int<1>>>, tensor<3xi32, #nnapi.bounded<#builtin.int<0>, #builtin.int<0>, #builtin.int<1>>>
  }
}

// CHECK-LABEL: func.func @main(%0: memref<3x2xf32>, %1: memref<3x8xf32>, %2: memref<3xi32>, %3: memref<3xf32>, %4: memref<3x4xf32>, %5: memref<3xi32>, %6: memref<3xi32>
// CHECK:         %[[COUNTS:.*]] = memref.alloc() {alignment = 64 : i64, nnc.counts} : memref<1xi32>
// CHECK:         linalg.generic {{.*}} outs(%[[COUNTS]] : memref<1xi32>)
// CHECK:         linalg.generic {{.*}} outs(%3 : memref<3xf32>)
// CHECK:         %{{.*}} = memref.alloc() {alignment = 64 : i64} : memref<3xi32>
// CHECK:         %{{.*}}, %[[TOTAL:.*]] = scf.for
// CHECK:         %[[N:.*]] = arith.index_cast %[[TOTAL]] : index to i32
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    memref.store %[[N]], %[[COUNTS]][%[[ZERO]]] : memref<1xi32>
// CHECK-NEXT:    func.return
