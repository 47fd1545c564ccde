// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// GROUPED_CONV_2D and TRANSPOSE_CONV_2D (float32).
builtin.module {
  // GROUPED_CONV_2D, NHWC, 2 groups of 2 input and 3 output channels, 1x1
  // filter, VALID: the CONV_2D GEMM with the group as one more loop level of
  // its tiles (2 groups x 1 block of 3 channels x 1 run of 4 pixels).
  func.func @grouped(%x: tensor<1x2x2x4xf32>, %w: tensor<6x1x1x2xf32>, %b: tensor<6xf32>) -> tensor<1x2x2x6xf32> {
    %valid = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %groups = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %nhwc = "nnapi.constant"() <{value = dense<false> : tensor<i1>}> : () -> i1
    %r = "nnapi.grouped_conv_2d"(%x, %w, %b, %valid, %one, %one, %groups, %none, %nhwc) : (tensor<1x2x2x4xf32>, tensor<6x1x1x2xf32>, tensor<6xf32>, i32, i32, i32, i32, i32, i1) -> tensor<1x2x2x6xf32>
    func.return %r : tensor<1x2x2x6xf32>
  }

  // TRANSPOSE_CONV_2D, NCHW, 3x3 filter, stride 2, no padding: input 2x2 ->
  // output 5x5 (2 * 2 + 3 - 2).  Rows and columns each split into two
  // phases: even outputs see taps 0 and 2 (2 taps), odd ones tap 1; each of
  // the 4 phase pairs is a stride-1 correlation of the zero-padded input
  // (one row/column each side) with its sub-filter (gathered from the
  // filter, taps reversed) into a strided view of the output.
  func.func @transpose(%x: tensor<1x1x2x2xf32>, %w: tensor<1x3x3x1xf32>, %b: tensor<1xf32>) -> tensor<1x1x5x5xf32> {
    %zero = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %two = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %nchw = "nnapi.constant"() <{value = dense<true> : tensor<i1>}> : () -> i1
    %r = "nnapi.transpose_conv_2d"(%x, %w, %b, %zero, %zero, %zero, %zero, %two, %two, %zero, %nchw) : (tensor<1x1x2x2xf32>, tensor<1x3x3x1xf32>, tensor<1xf32>, i32, i32, i32, i32, i32, i32, i32, i1) -> tensor<1x1x5x5xf32>
    func.return %r : tensor<1x1x5x5xf32>
  }

  // The same in NHWC with 2 output channels: each phase is a GEMM over the
  // padded input (its sub-filter gathered, then laid out as panels at run
  // time) whose output pixels are every second pixel of an output row: the
  // kernel's output stride (ldo) is 2 pixels x 2 channels.
  func.func @transpose_nhwc(%x: tensor<1x2x2x1xf32>, %w: tensor<2x3x3x1xf32>, %b: tensor<2xf32>) -> tensor<1x5x5x2xf32> {
    %zero = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %two = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %nhwc = "nnapi.constant"() <{value = dense<false> : tensor<i1>}> : () -> i1
    %r = "nnapi.transpose_conv_2d"(%x, %w, %b, %zero, %zero, %zero, %zero, %two, %two, %zero, %nhwc) : (tensor<1x2x2x1xf32>, tensor<2x3x3x1xf32>, tensor<2xf32>, i32, i32, i32, i32, i32, i32, i32, i1) -> tensor<1x5x5x2xf32>
    func.return %r : tensor<1x5x5x2xf32>
  }
}

// The grouped filter (a model input) is transposed into panels at run time,
// one per group, then one loop over the GEMM's 2 tiles, one per group.
// CHECK-LABEL: func.func @grouped(
// CHECK:         memref.alloc() {{.*}} : memref<12xf32>
// CHECK:         }{nnc.kernel = "nnc_transpose_0"}
// CHECK:         }{nnc.kernel = "nnc_transpose_0"}
// CHECK:         scf.for
// CHECK:         }{nnc.kernel = "nnc_gemm_4x2_1_l1_none"}

// CHECK-LABEL: func.func @transpose(
// CHECK:         memref.alloc() {{.*}} : memref<1x1x4x4xf32>
// CHECK:         memref.subview %{{.*}}[0, 0, 1, 1] [1, 1, 2, 2] [1, 1, 1, 1]
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : memref<1xf32>) outs(%[[OUT:[^ ]*]] : memref<1x1x5x5xf32>)
// CHECK:         memref.alloc() {{.*}} : memref<1x2x2x1xf32>
// CHECK:         affine_map<(d0, d1, d2, d3) -> (d0, ((d1 * -2) + 2), ((d2 * -2) + 2), d3)>
// CHECK:         memref.subview %[[OUT]][0, 0, 0, 0] [1, 1, 3, 3] [1, 1, 2, 2]
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]
// CHECK:         memref.subview %[[OUT]][0, 0, 0, 1] [1, 1, 3, 2] [1, 1, 2, 2]
// CHECK:         memref.subview %[[OUT]][0, 0, 1, 0] [1, 1, 2, 3] [1, 1, 2, 2]
// CHECK:         memref.alloc() {{.*}} : memref<1x1x1x1xf32>
// CHECK:         memref.subview %[[OUT]][0, 0, 1, 1] [1, 1, 2, 2] [1, 1, 2, 2]
// CHECK:         linalg.generic
// CHECK:         func.return

// CHECK-LABEL: func.func @transpose_nhwc(
// CHECK:         memref.alloc() {{.*}} : memref<1x4x4x1xf32>
// CHECK:         memref.alloc() {{.*}} : memref<2x2x2x1xf32>
// CHECK:         %[[LDO:.*]] = arith.constant 4 : index
// CHECK:         }{nnc.kernel = "nnc_transpose_0"}
// CHECK:         builtin.unrealized_conversion_cast %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %[[LDO]], {{.*}} : memref<16xf32>, memref<8xf32>, memref<2xf32>, memref<50xf32>
// CHECK:         }{nnc.kernel = "nnc_gemm_3x2_l2_none"}
// CHECK:         }{nnc.kernel = "nnc_gemm_2x2_l1_none"}
// CHECK:         }{nnc.kernel = "nnc_gemm_3x2_l1_none"}
// CHECK:         }{nnc.kernel = "nnc_gemm_2x2_l1_none"}
// CHECK:         func.return
