// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// The order of an int8 GEMM's tiles in the loop the thread pool splits
// (the default target has AVX-512: blocks of 64 channels).  With a small
// weight panel (16 input channels x 128 outputs: 2 KiB, at most
// PIXEL_MAJOR_PANEL_BYTES) an iteration is a block of pixels (6 or 5 rows)
// running the tiles of both channel blocks in an inner loop: threads split
// the pixels and never write one pixel's output line together.  With a
// larger panel (256 x 128: 32 KiB) an iteration is one tile, channel block
// by channel block, so that consecutive tiles share a panel.

builtin.module {
  func.func @pixels(%x: tensor<1x8x8x16x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>) -> tensor<1x8x8x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>> {
    %w = "nnapi.constant"() <{value = dense<1> : tensor<128x1x1x16xi8>}> : () -> tensor<128x1x1x16x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>
    %b = "nnapi.constant"() <{value = dense<5> : tensor<128xi32>}> : () -> tensor<128x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>
    %valid = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %r = "nnapi.conv_2d"(%x, %w, %b, %valid, %one, %one, %none) : (tensor<1x8x8x16x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, tensor<128x1x1x16x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>, tensor<128x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>, i32, i32, i32, i32) -> tensor<1x8x8x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
    func.return %r : tensor<1x8x8x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
  }
  func.func @channels(%x: tensor<1x8x8x256x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>) -> tensor<1x8x8x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>> {
    %w = "nnapi.constant"() <{value = dense<1> : tensor<128x1x1x256xi8>}> : () -> tensor<128x1x1x256x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>
    %b = "nnapi.constant"() <{value = dense<5> : tensor<128xi32>}> : () -> tensor<128x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>
    %valid = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %r = "nnapi.conv_2d"(%x, %w, %b, %valid, %one, %one, %none) : (tensor<1x8x8x256x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, tensor<128x1x1x256x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>, tensor<128x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>, i32, i32, i32, i32) -> tensor<1x8x8x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
    func.return %r : tensor<1x8x8x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
  }
}

// CHECK-LABEL: func.func @pixels(
// CHECK:         }{nnc.kernel = "nnc_q8_widen_s32"}
// CHECK:         scf.for
// CHECK:           scf.if
// CHECK:             scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:               scf.execute_region {
// CHECK-NEXT:            builtin.unrealized_conversion_cast {{.*}}, %[[C]], {{.*}} : memref<1026xi16>, memref<2048xi8>,
// CHECK:               }{nnc.kernel = "nnc_q8_gemm_6x16_16_16_16_l0_w8_sat"}
// CHECK:           } else {
// CHECK:             scf.for
// CHECK:               }{nnc.kernel = "nnc_q8_gemm_5x16_16_16_16_l0_w8_sat"}
// CHECK:         } {nnc.parallel}

// CHECK-LABEL: func.func @channels(
// CHECK:         }{nnc.kernel = "nnc_q8_widen_s32"}
// CHECK:         scf.for
// CHECK-NOT:       scf.for
// CHECK:           scf.execute_region {
// CHECK-NEXT:        builtin.unrealized_conversion_cast {{.*}} : memref<16386xi16>, memref<32768xi8>,
// CHECK:           }{nnc.kernel = "nnc_q8_gemm_6x16_16_16_16_l0_w8_sat"}
// CHECK-NEXT:    } else {
// CHECK:             scf.execute_region {
// CHECK:         } {nnc.parallel}
