// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// Regions of interest (passes/lowering/detection/roi.py).  ROI_ALIGN and ROI_POOLING
// first check and scale every roi in one sequential loop (an invalid roi or
// batch index sets the status and becomes the empty box of batch 0), then
// compute the output rows (roi, y) in a parallel loop, each looping over
// its columns, channels and the samples (ROI_ALIGN) or the clipped bin
// (ROI_POOLING).
builtin.module {
  // Quantised ROI_ALIGN with adaptive sampling (ratio 0, a run-time count):
  // QUANT16 box coordinates are v * 0.125; the int32 sum of the samples is
  // requantised by a multiplier made from the float32 bits of
  // scale / 255 / output scale / count.
  func.func @align(%x: tensor<1x4x4x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 2.500000e-01 : f64, #builtin.int<128>>>, %rois: tensor<3x4x!nnapi.quant<"TENSOR_QUANT16_ASYMM", 1.250000e-01 : f64, #builtin.int<0>>>, %batch: tensor<3xi32>) -> tensor<3x2x2x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 6.250000e-02 : f64, #builtin.int<128>>> {
    %two = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %ratio = "nnapi.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> f32
    %adaptive = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %nhwc = "nnapi.constant"() <{value = dense<false> : tensor<i1>}> : () -> i1
    %r = "nnapi.roi_align"(%x, %rois, %batch, %two, %two, %ratio, %ratio, %adaptive, %adaptive, %nhwc) : (tensor<1x4x4x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 2.500000e-01 : f64, #builtin.int<128>>>, tensor<3x4x!nnapi.quant<"TENSOR_QUANT16_ASYMM", 1.250000e-01 : f64, #builtin.int<0>>>, tensor<3xi32>, i32, i32, f32, f32, i32, i32, i1) -> tensor<3x2x2x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 6.250000e-02 : f64, #builtin.int<128>>>
    func.return %r : tensor<3x2x2x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 6.250000e-02 : f64, #builtin.int<128>>>
  }

  // ROI_POOLING, float, NCHW: boxes are rounded to the map; the maximum of
  // each bin starts from its first element.
  func.func @pooling(%x: tensor<2x3x4x4xf32>, %rois: tensor<2x4xf32>, %batch: tensor<2xi32>) -> tensor<2x3x2x2xf32> {
    %two = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %ratio = "nnapi.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> f32
    %nchw = "nnapi.constant"() <{value = dense<true> : tensor<i1>}> : () -> i1
    %r = "nnapi.roi_pooling"(%x, %rois, %batch, %two, %two, %ratio, %ratio, %nchw) : (tensor<2x3x4x4xf32>, tensor<2x4xf32>, tensor<2xi32>, i32, i32, f32, f32, i1) -> tensor<2x3x2x2xf32>
    func.return %r : tensor<2x3x2x2xf32>
  }

  // HEATMAP_MAX_KEYPOINT: boxes checked in a sequential loop, then one
  // parallel iteration per (box, keypoint): the first maximum, its 3x3
  // grid and the Taylor correction.
  func.func @heatmap(%h: tensor<2x3x3x4xf32>, %boxes: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4x2xf32>) {
    %nhwc = "nnapi.constant"() <{value = dense<false> : tensor<i1>}> : () -> i1
    %s, %k = "nnapi.heatmap_max_keypoint"(%h, %boxes, %nhwc) : (tensor<2x3x3x4xf32>, tensor<2x4xf32>, i1) -> (tensor<2x4xf32>, tensor<2x4x2xf32>)
    func.return %s, %k : tensor<2x4xf32>, tensor<2x4x2xf32>
  }
}

// CHECK-LABEL: func.func @align(
// CHECK-SAME:    %[[X:[0-9]+]]: memref<1x4x4x2xi8>, %[[ROIS:[0-9]+]]: memref<3x4xi16>, %[[B:[0-9]+]]: memref<3xi32>, %[[OUT:[0-9]+]]: memref<3x2x2x2xi8>, %{{[0-9]+}}: memref<1xi8>, %[[STATUS:[0-9]+]]: memref<1xi32>)
// CHECK:         %[[BOXES:[0-9]+]] = memref.alloc() {{.*}} : memref<3x4xf32>
// CHECK:         scf.for
// CHECK:           memref.load %[[ROIS]]
// CHECK:           arith.uitofp
// CHECK:           memref.load %[[B]]
// CHECK:           memref.store {{.*}}, %[[STATUS]]
// CHECK:           memref.store {{.*}}, %[[BOXES]]
// CHECK:         %[[SUMS:[0-9]+]] = memref.alloc() {{.*}} : memref<3x2x2x2xi32>
// CHECK:         scf.for
// CHECK:           math.ceil
// CHECK:           arith.bitcast {{.*}} : f32 to i32
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               memref.store {{.*}}, %[[SUMS]]
// CHECK:             scf.for
// CHECK:               scf.for
// CHECK:                 math.round
// CHECK:                 scf.for
// CHECK:                   memref.load %[[X]]
// CHECK:                   memref.store {{.*}}, %[[SUMS]]
// CHECK:             scf.for
// CHECK:               memref.store {{.*}}, %[[OUT]]
// CHECK:         } {nnc.parallel}

// CHECK-LABEL: func.func @pooling(
// CHECK-SAME:    %[[X:[0-9]+]]: memref<2x3x4x4xf32>
// CHECK:         scf.for
// CHECK:           math.round
// CHECK:         scf.for
// CHECK:           math.floor
// CHECK:           math.ceil
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               scf.for {{.*}} -> (f32, i1)
// CHECK:                 scf.for {{.*}} -> (f32, i1)
// CHECK:                   memref.load %[[X]]
// CHECK:                   arith.cmpf ogt
// CHECK:         } {nnc.parallel}

// CHECK-LABEL: func.func @heatmap(
// CHECK-SAME:    %[[H:[0-9]+]]: memref<2x3x3x4xf32>, %{{[0-9]+}}: memref<2x4xf32>, %[[S:[0-9]+]]: memref<2x4xf32>, %[[K:[0-9]+]]: memref<2x4x2xf32>, %{{[0-9]+}}: memref<1xi8>, %[[STATUS:[0-9]+]]: memref<1xi32>)
// CHECK:         scf.for
// CHECK:           memref.store {{.*}}, %[[STATUS]]
// CHECK:         scf.for
// CHECK:           scf.for {{.*}} -> (f32, index, index)
// CHECK:             scf.for {{.*}} -> (f32, index, index)
// CHECK:               memref.load %[[H]]
// CHECK:               arith.cmpf olt
// CHECK:           memref.store {{.*}}, %[[S]]
// CHECK:           memref.store {{.*}}, %[[K]]
// CHECK:           memref.store {{.*}}, %[[K]]
// CHECK:         } {nnc.parallel}
