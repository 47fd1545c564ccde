// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// Quantised convolutions on the int8 vector kernels (nnc.passes.kernels.q8).
builtin.module {
  // CONV_2D, signed 8-bit, 1x1 filter known at compile time: the input is
  // widened to int16 minus its zero point (-1) (one flat loop) into a flat buffer with two
  // elements of slack, the filter is packed at compile time into a panel of
  // pairs (w - 2; 4 input channels: 2 pairs per output channel) stored as
  // int8, as they fit (the kernel sign-extends them as it loads them), the
  // requantisation parameters (multiplier, left and right shift per channel,
  // then the output zero point and the clamp range) are a constant table,
  // and the GEMM kernel computes all 4 pixels x 3 channels (widths 2 + 1).
  func.func @conv_q8(%x: tensor<1x2x2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>) -> tensor<1x2x2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>> {
    %w = "nnapi.constant"() <{value = dense<[[[[-6, -5, -4, -3]]], [[[-2, -1, 0, 1]]], [[[2, 3, 4, 5]]]]> : tensor<3x1x1x4xi8>}> : () -> tensor<3x1x1x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<2>>>
    %b = "nnapi.constant"() <{value = dense<[10, -20, 30]> : tensor<3xi32>}> : () -> tensor<3x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>
    %same = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %r = "nnapi.conv_2d"(%x, %w, %b, %same, %one, %one, %none) : (tensor<1x2x2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, tensor<3x1x1x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<2>>>, tensor<3x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>, i32, i32, i32, i32) -> tensor<1x2x2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
    func.return %r : tensor<1x2x2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
  }

  // DEPTHWISE_CONV_2D, unsigned 8-bit, 3x3 filter given at run time, SAME
  // padding: the filter widened to int16 minus its zero point (120) at run
  // time, and the depthwise kernel straight from the stored input (no copy,
  // zero-extended as loaded) per run of output pixels along each row; on a
  // 3x3 image every pixel's window is clipped by the padding.
  func.func @depthwise_q8(%x: tensor<1x3x3x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>, %w: tensor<1x3x3x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<120>>>, %b: tensor<2x!nnapi.quant<"TENSOR_INT32", 2.500000e-01 : f64, #builtin.int<0>>>) -> tensor<1x3x3x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e+00 : f64, #builtin.int<100>>> {
    %same = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %relu = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %r = "nnapi.depthwise_conv_2d"(%x, %w, %b, %same, %one, %one, %one, %relu) : (tensor<1x3x3x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>, tensor<1x3x3x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<120>>>, tensor<2x!nnapi.quant<"TENSOR_INT32", 2.500000e-01 : f64, #builtin.int<0>>>, i32, i32, i32, i32, i32) -> tensor<1x3x3x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e+00 : f64, #builtin.int<100>>>
    func.return %r : tensor<1x3x3x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e+00 : f64, #builtin.int<100>>>
  }
  // FULLY_CONNECTED, signed 8-bit, 2 batch rows of 128 inputs: runs of at
  // least four vectors go through the shared widening kernel (zero point
  // -1), one call per batch row, a loop of 32-lane int16 vectors and a
  // scalar tail.
  func.func @fc_q8_widen(%x: tensor<2x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>) -> tensor<2x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<0>>> {
    %w = "nnapi.constant"() <{value = dense<1> : tensor<1x128xi8>}> : () -> tensor<1x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<0>>>
    %b = "nnapi.constant"() <{value = dense<0> : tensor<1xi32>}> : () -> tensor<1x!nnapi.quant<"TENSOR_INT32", 2.500000e-01 : f64, #builtin.int<0>>>
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %r = "nnapi.fully_connected"(%x, %w, %b, %none) : (tensor<2x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, tensor<1x128x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<0>>>, tensor<1x!nnapi.quant<"TENSOR_INT32", 2.500000e-01 : f64, #builtin.int<0>>>, i32) -> tensor<2x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<0>>>
    func.return %r : tensor<2x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<0>>>
  }
}

// The panel: per output channel the pairs (w0 - 2, w1 - 2), (w2 - 2, w3 - 2),
// pair by pair across the block of 3 channels; the table: multiplier 2^30
// and right shift 2 (0.5 * 0.25 / 1.0 = 0.125), output zero point 3, range
// [-128, 127].
// CHECK:      "memref.global"() <{sym_name = "__nnc_const_conv_q8_2", type = memref<12xi8>, initial_value = dense<[-8, -7, -4, -3, 0, 1, -6, -5, -2, -1, 2, 3]> : tensor<12xi8>
// CHECK:      "memref.global"() <{sym_name = "__nnc_const_conv_q8_3", type = memref<12xi32>, initial_value = dense<[1073741824, 1073741824, 1073741824, 0, 0, 0, 2, 2, 2, 3, -128, 127]> : tensor<12xi32>

// CHECK-LABEL: func.func @conv_q8(
// CHECK-SAME:    %[[X:[^:]*]]: memref<1x2x2x4xi8>, %[[OUT:[^:]*]]: memref<1x2x2x3xi8>
// CHECK:        %[[XF:.*]] = memref.alloc() {{.*}} : memref<18xi16>
// CHECK:        memref.store %{{.*}}, %[[XF]][%{{.*}}] : memref<18xi16>
// CHECK:        memref.store %{{.*}}, %[[XF]][%{{.*}}] : memref<18xi16>
// CHECK:        %[[XV:.*]] = builtin.unrealized_conversion_cast %[[XF]] : memref<18xi16> to memref<16xi16>
// CHECK:        %[[XS:.*]] = builtin.unrealized_conversion_cast %[[X]] : memref<1x2x2x4xi8> to memref<16xi8>
// CHECK:        linalg.generic {{.*}} ins(%[[XS]] : memref<16xi8>) outs(%[[XV]] : memref<16xi16>)
// CHECK:          arith.extsi %{{.*}} : i8 to i32
// CHECK:          arith.constant -1 : i32
// CHECK:          arith.subi
// CHECK:          arith.trunci %{{.*}} : i32 to i16
// CHECK:        memref.get_global @__nnc_const_conv_q8_2 : memref<12xi8>
// CHECK:        memref.get_global @__nnc_const_conv_q8_3 : memref<12xi32>
// CHECK:        scf.for {{.*}} -> (vector<2xi32>, vector<1xi32>, vector<2xi32>, vector<1xi32>, vector<2xi32>, vector<1xi32>, vector<2xi32>, vector<1xi32>)
// CHECK:          vector.load %{{.*}} : memref<?xi8>, vector<4xi8>
// CHECK-NEXT:     llvm.sext %{{.*}} : vector<4xi8> to vector<4xi16>
// CHECK:          vector.load %{{.*}} : memref<?xi8>, vector<2xi8>
// CHECK-NEXT:     llvm.sext %{{.*}} : vector<2xi8> to vector<2xi16>
// CHECK:          vector.load %{{.*}} : memref<?xi16>, vector<2xi16>
// CHECK:          vector.shuffle
// CHECK:          llvm.sext %{{.*}} : vector<4xi16> to vector<4xi32>
// CHECK:          arith.muli %{{.*}} : vector<4xi32>
// CHECK:        llvm.bitcast %{{.*}} : vector<2xi32> to vector<1xi64>
// CHECK:        arith.muli %{{.*}} : vector<1xi64>
// CHECK:        arith.muli %{{.*}} : vector<1xi64>
// CHECK:        vector.shuffle %{{.*}} [0, 3] : vector<2xi32>, vector<2xi32>
// CHECK:        llvm.trunc %{{.*}} : vector<2xi32> to vector<2xi8>
// CHECK:        vector.store %{{.*}} : memref<?xi8>, vector<2xi8>
// CHECK:      }{nnc.kernel = "nnc_q8_gemm_4x2_1_l0_w8_sat"}

// CHECK-LABEL: func.func @depthwise_q8(
// CHECK-SAME:    %[[DX:[^:]*]]: memref<1x3x3x2xi8>, %[[DW:[^:]*]]: memref<1x3x3x2xi8>, %[[DB:[^:]*]]: memref<2xi32>, %[[DOUT:[^:]*]]: memref<1x3x3x2xi8>
// CHECK:        %[[W16:.*]] = memref.alloc() {{.*}} : memref<18xi16>
// CHECK:        linalg.generic {{.*}} outs(%[[W16]] : memref<18xi16>)
// CHECK:          arith.constant 120 : i32
// CHECK-NOT:    memref.alloc
// CHECK:        %[[DXS:.*]] = builtin.unrealized_conversion_cast %[[DX]] : memref<1x3x3x2xi8> to memref<18xi8>
// CHECK:        builtin.unrealized_conversion_cast %[[DXS]], %[[W16]], {{.*}} : memref<18xi8>, memref<18xi16>
// CHECK:          llvm.zext %{{.*}} : vector<2xi8> to vector<2xi32>
// CHECK:        }{nnc.kernel = "nnc_q8_dw_1p_clip_t2_u"}

// CHECK-LABEL: func.func @fc_q8_widen(
// CHECK-SAME:    %[[FX:[^:]*]]: memref<2x128xi8>
// CHECK:        %[[FXF:.*]] = memref.alloc() {{.*}} : memref<258xi16>
// CHECK:        %[[FXS:.*]] = builtin.unrealized_conversion_cast %[[FX]] : memref<2x128xi8> to memref<256xi8>
// CHECK:        arith.constant -1 : index
// CHECK:        scf.for
// CHECK:          builtin.unrealized_conversion_cast %[[FXS]], %[[FXF]], {{.*}} : memref<256xi8>, memref<258xi16>, index, index, index, index to memref<?xi8>, memref<?xi16>, index, index, index, index
// CHECK:            vector.load %{{.*}} : memref<?xi8>, vector<32xi8>
// CHECK-NEXT:       llvm.sext %{{.*}} : vector<32xi8> to vector<32xi16>
// CHECK-NEXT:       arith.subi %{{.*}} : vector<32xi16>
// CHECK:            arith.extsi %{{.*}} : i8 to i16
// CHECK:        }{nnc.kernel = "nnc_q8_widen_s32"}
// CHECK-NEXT:   } {nnc.parallel, nnc.parallel_sizes}
