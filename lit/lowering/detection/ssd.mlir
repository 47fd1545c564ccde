// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// DETECTION_POSTPROCESSING (passes/lowering/detection/ssd.py): outputs zeroed, then per
// batch (a parallel loop): the anchors decoded into boxes (exp of the scaled
// size deltas), and regular NMS: per class (a parallel loop, one candidate
// row each) the candidates above the score threshold, hard NMS in place on
// them (argmax scan, then a suppression loop that swaps suppressed candidates
// to the end) and the number kept; the survivors gathered in class order; the
// best max_num_detections written by one scan each; the count stored.
builtin.module {
  func.func @ssd(%scores: tensor<2x3x3xf32>, %deltas: tensor<2x3x4xf32>, %anchors: tensor<3x4xf32>) -> (tensor<2x2xf32>, tensor<2x2x4xf32>, tensor<2x2xi32>, tensor<2xi32>) {
    %sy = "nnapi.constant"() <{value = dense<10.0> : tensor<f32>}> : () -> f32
    %sx = "nnapi.constant"() <{value = dense<10.0> : tensor<f32>}> : () -> f32
    %sh = "nnapi.constant"() <{value = dense<5.0> : tensor<f32>}> : () -> f32
    %sw = "nnapi.constant"() <{value = dense<5.0> : tensor<f32>}> : () -> f32
    %regular = "nnapi.constant"() <{value = dense<true> : tensor<i1>}> : () -> i1
    %maxdet = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %perdet = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %percls = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %thr = "nnapi.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> f32
    %iou = "nnapi.constant"() <{value = dense<0.5> : tensor<f32>}> : () -> f32
    %bg = "nnapi.constant"() <{value = dense<false> : tensor<i1>}> : () -> i1
    %s, %b, %c, %n = "nnapi.detection_postprocessing"(%scores, %deltas, %anchors, %sy, %sx, %sh, %sw, %regular, %maxdet, %perdet, %percls, %thr, %iou, %bg) : (tensor<2x3x3xf32>, tensor<2x3x4xf32>, tensor<3x4xf32>, f32, f32, f32, f32, i1, i32, i32, i32, f32, f32, i1) -> (tensor<2x2xf32>, tensor<2x2x4xf32>, tensor<2x2xi32>, tensor<2xi32>)
    func.return %s, %b, %c, %n : tensor<2x2xf32>, tensor<2x2x4xf32>, tensor<2x2xi32>, tensor<2xi32>
  }
}

// CHECK-LABEL: func.func @ssd(
// CHECK-SAME:    %[[S:[0-9]+]]: memref<2x3x3xf32>, %[[D:[0-9]+]]: memref<2x3x4xf32>, %[[A:[0-9]+]]: memref<3x4xf32>, %[[OS:[0-9]+]]: memref<2x2xf32>, %[[OB:[0-9]+]]: memref<2x2x4xf32>, %[[OC:[0-9]+]]: memref<2x2xi32>, %[[ON:[0-9]+]]: memref<2xi32>
// CHECK:         %[[BOXES:[0-9]+]] = memref.alloc() {{.*}} : memref<2x3x4xf32>
// CHECK:         %[[CAND:[0-9]+]] = memref.alloc() {{.*}} : memref<2x3x3xi32>
// CHECK:         %[[KEPT:[0-9]+]] = memref.alloc() {{.*}} : memref<2x2xi32>
// CHECK:         %[[COUNTS:[0-9]+]] = memref.alloc() {{.*}} : memref<2x3xi32>
// CHECK:         scf.for %[[B:[0-9]+]] =
// CHECK:           math.exp
// CHECK:           memref.store {{.*}}, %[[BOXES]][%[[B]], {{.*}}] : memref<2x3x4xf32>
// CHECK:           scf.for %[[C:[0-9]+]] =
// CHECK:             scf.for {{.*}} -> (index) {
// CHECK:               memref.store {{.*}}, %[[CAND]][%[[B]], %[[C]], {{.*}}] : memref<2x3x3xi32>
// CHECK:               arith.cmpf ogt
// CHECK:             scf.for {{.*}} -> (index, index) {
// CHECK:               scf.if {{.*}} -> (index, index) {
// CHECK:                 scf.for {{.*}} -> (index, f32) {
// CHECK:                   arith.cmpf olt
// CHECK:                 scf.for {{.*}} -> (index, index) {
// CHECK:                   arith.divf
// CHECK:                   arith.cmpf oge
// CHECK:                   scf.if {{.*}} -> (index, index) {
// CHECK:             memref.store {{.*}}, %[[COUNTS]][%[[B]], %[[C]]] : memref<2x3xi32>
// CHECK:           } {nnc.parallel}
// CHECK:           scf.for {{.*}} -> (index) {
// CHECK:             memref.store {{.*}}, %[[KEPT]][%[[B]], {{.*}}] : memref<2x2xi32>
// CHECK:           scf.for {{.*}} -> (f32, i32) {
// CHECK:             scf.for {{.*}} -> (f32, i32) {
// CHECK:             memref.store {{.*}}, %[[OS]][%[[B]], {{.*}}] : memref<2x2xf32>
// CHECK:             memref.store {{.*}}, %[[OB]][%[[B]], {{.*}}, {{.*}}] : memref<2x2x4xf32>
// CHECK:             memref.store {{.*}}, %[[OC]][%[[B]], {{.*}}] : memref<2x2xi32>
// CHECK:           memref.store {{.*}}, %[[ON]][%[[B]]] : memref<2xi32>
// CHECK:         } {nnc.parallel}
