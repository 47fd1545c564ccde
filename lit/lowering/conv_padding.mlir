// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// Float32 NHWC CONV_2D with SAME padding on an 8x8 image: no padded copy.
// The GEMM reads the unpadded input (the flat memref<64xf32>); its output
// pixels are nine regions whose windows see the same taps: the 6x6 interior
// (the whole 3x3 window; tested first), the top and bottom rows (runs along
// the row, the window's first or last row of taps skipped) and the left and
// right columns (runs down the column).  A region's kernel gets the clipped
// level sizes and starts its panel at its first tap.
builtin.module {
  func.func @main(%x: tensor<1x8x8x1xf32>) -> tensor<1x8x8x2xf32> {
    %w = "nnapi.constant"() <{value = dense<1.0> : tensor<2x3x3x1xf32>}> : () -> tensor<2x3x3x1xf32>
    %b = "nnapi.constant"() <{value = dense<0.5> : tensor<2xf32>}> : () -> tensor<2xf32>
    %same = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %r = "nnapi.conv_2d"(%x, %w, %b, %same, %one, %one, %none) : (tensor<1x8x8x1xf32>, tensor<2x3x3x1xf32>, tensor<2xf32>, i32, i32, i32, i32) -> tensor<1x8x8x2xf32>
    func.return %r : tensor<1x8x8x2xf32>
  }
}

// CHECK-LABEL: func.func @main(
// CHECK-NOT:     memref.subview
// CHECK-NOT:     memref.alloc
// CHECK:         %[[XF:.*]] = builtin.unrealized_conversion_cast %{{.*}} : memref<1x8x8x1xf32> to memref<64xf32>
// CHECK:         scf.for %{{.*}} {
// One loop over 14 tiles, one kernel use per region: the interior's 6 tiles
// (a block of 6 pixels per row, the whole 3x3 window) first, then those of
// the top and bottom rows, the left and right columns and the 4 corners.
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : index
// CHECK:           scf.if %[[IN]] {
// CHECK:             builtin.unrealized_conversion_cast %[[XF]], {{.*}} : memref<64xf32>,
// CHECK:             }{nnc.kernel = "nnc_gemm_6x2_l3_none"}
// CHECK:           } else {
// CHECK-COUNT-8:     }{nnc.kernel = "nnc_gemm_{{[0-9]+}}x2_l3_none"}
// CHECK:         } {nnc.parallel}
// CHECK-NOT:     linalg.generic
// CHECK:         func.return
