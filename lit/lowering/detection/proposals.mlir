// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// AXIS_ALIGNED_BBOX_TRANSFORM (passes/lowering/detection/proposals.py): a loop over the
// boxes, then one over the classes; each box reads its image's size through a
// checked batch index (an index outside image_info or x2 < x1 is reported).
builtin.module {
  func.func @bbox(%r: tensor<3x4xf32>, %d: tensor<3x8xf32>, %b: tensor<3xi32>, %i: tensor<2x2xf32>) -> tensor<3x8xf32> {
    %o = "nnapi.axis_aligned_bbox_transform"(%r, %d, %b, %i) : (tensor<3x4xf32>, tensor<3x8xf32>, tensor<3xi32>, tensor<2x2xf32>) -> tensor<3x8xf32>
    func.return %o : tensor<3x8xf32>
  }

  // GENERATE_PROPOSALS: outputs bounded by 2 boxes (#nnapi.bounded<axis 0,
  // count 0, factor 1>).  Per image: anchors x positions into scratch boxes
  // and scores, two merge passes (pre_nms_max 2 < 4 boxes), the size filter,
  // hard NMS (scf.if per pick: max_element scan, then the sweep), the kept
  // boxes written at the running offset; zero rows from the total to the
  // bound; the total is counts[0].
  func.func @proposals(%s: tensor<1x2x2x1xf32>, %d: tensor<1x2x2x4xf32>, %a: tensor<1x4xf32>, %i: tensor<1x2xf32>) -> (tensor<2xf32, #nnapi.bounded<#builtin.int<0>, #builtin.int<0>, #builtin.int<1>>>, tensor<2x4xf32, #nnapi.bounded<#builtin.int<0>, #builtin.int<0>, #builtin.int<1>>>, tensor<2xi32, #nnapi.bounded<#builtin.int<0>, #builtin.int<0>, #builtin.int<1>>>) {
    %stride = "nnapi.constant"() <{value = dense<4.0> : tensor<f32>}> : () -> f32
    %pre = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %post = "nnapi.constant"() <{value = dense<-1> : tensor<i32>}> : () -> i32
    %iou = "nnapi.constant"() <{value = dense<0.3> : tensor<f32>}> : () -> f32
    %min = "nnapi.constant"() <{value = dense<1.0> : tensor<f32>}> : () -> f32
    %nchw = "nnapi.constant"() <{value = dense<false> : tensor<i1>}> : () -> i1
    %os, %or, %ob = "nnapi.generate_proposals"(%s, %d, %a, %i, %stride, %stride, %pre, %post, %iou, %min, %nchw) : (tensor<1x2x2x1xf32>, tensor<1x2x2x4xf32>, tensor<1x4xf32>, tensor<1x2xf32>, f32, f32, i32, i32, f32, f32, i1) -> (tensor<2xf32, #nnapi.bounded<#builtin.int<0>, #builtin.int<0>, #builtin.int<1>>>, tensor<2x4xf32, #nnapi.bounded<#builtin.int<0>, #builtin.int<0>, #builtin.int<1>>>, tensor<2xi32, #nnapi.bounded<#builtin.int<0>, #builtin.int<0>, #builtin.int<1>>>)
    func.return %os, %or, %ob : tensor<2xf32, #nnapi.bounded<#builtin.int<0>, #builtin.int<0>, #builtin.int<1>>>, tensor<2x4xf32, #nnapi.bounded<#builtin.int<0>, #builtin.int<0>, #builtin.int<1>>>, tensor<2xi32, #nnapi.bounded<#builtin.int<0>, #builtin.int<0>, #builtin.int<1>>>
  }
}

// CHECK-LABEL: func.func @bbox(
// CHECK:         scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step
// CHECK:           %[[B:.*]] = memref.load %{{.*}}[%[[R]]] : memref<3xi32>
// CHECK:           %[[BAD:.*]] = arith.cmpi uge, %[[B]], %{{.*}} : i32
// CHECK:           arith.select %[[BAD]]
// CHECK:           memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<1xi32>
// CHECK:           scf.for
// CHECK:             math.exp
// CHECK:             math.exp
// CHECK-COUNT-4:     memref.store %{{.*}}, %{{.*}}[%[[R]], %{{.*}}] : memref<3x8xf32>

// CHECK-LABEL: func.func @proposals(
// CHECK:         %[[COUNTS:.*]] = memref.alloc() {alignment = 64 : i64, nnc.counts} : memref<1xi32>
// CHECK:         %[[SCORE:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK:         %[[TOTAL:.*]] = scf.for {{.*}} iter_args({{.*}}) -> (index) {
// CHECK:           math.exp
// CHECK:           scf.for {{.*}} step %{{.*}} {
// CHECK:             scf.for {{.*}} -> (index, index) {
// CHECK:           scf.for {{.*}} step %{{.*}} {
// CHECK:             scf.for {{.*}} -> (index, index) {
// CHECK:           %[[KEPT:.*]] = scf.for {{.*}} -> (index) {
// CHECK:           scf.for %{{.*}} = %{{.*}} to %[[KEPT]] step %{{.*}} iter_args({{.*}}) -> (index, index) {
// CHECK:             scf.if %{{.*}} -> (index, index) {
// CHECK:               scf.for {{.*}} -> (index, f32) {
// CHECK:               scf.for {{.*}} -> (index, index) {
// CHECK:         scf.for %{{.*}} = %[[TOTAL]] to
// CHECK:         %[[N:.*]] = arith.index_cast %[[TOTAL]] : index to i32
// CHECK:         memref.store %[[N]], %[[COUNTS]][%{{.*}}] : memref<1xi32>
// CHECK-NEXT:    func.return
