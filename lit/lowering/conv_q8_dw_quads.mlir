// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// The int8 depthwise kernel in the quad form (nnc.int8_form = "vpdpbusd",
// as nnc-choose-kernels records it for VNNI targets): per pixel, four
// taps' input bytes interleaved by one shuffle, the int8 input's top bit
// flipped, and one vpdpbusd per four taps (the 3x3 window: two quads and a
// last one of one tap).  Weights that do not fit int8 (uint8, zero point 0,
// values up to 200) take VNNI's tap pairs instead.  With SAME padding the
// borders of a 3x3 window run the quads too (one kernel per pixel count,
// "_clip"): each quad's weights masked by the taps inside the input, given
// at run time; a 5x5 window's borders (here every pixel: its interior run
// is shorter than a block) loop over their taps instead.
builtin.module {
  func.func @quads(%x: tensor<1x9x9x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>) -> tensor<1x7x7x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>> {
    %w = "nnapi.constant"() <{value = dense<1> : tensor<1x3x3x8xi8>}> : () -> tensor<1x3x3x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>
    %b = "nnapi.constant"() <{value = dense<5> : tensor<8xi32>}> : () -> tensor<8x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>
    %valid = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %d = "nnapi.depthwise_conv_2d"(%x, %w, %b, %valid, %one, %one, %one, %none) {nnc.int8_form = "vpdpbusd", nnc.dw_strides = "parameters"} : (tensor<1x9x9x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, tensor<1x3x3x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>, tensor<8x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>, i32, i32, i32, i32, i32) -> tensor<1x7x7x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
    func.return %d : tensor<1x7x7x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
  }
  func.func @too_wide(%x: tensor<1x9x9x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>) -> tensor<1x7x7x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e+00 : f64, #builtin.int<120>>> {
    %w = "nnapi.constant"() <{value = dense<200> : tensor<1x3x3x8xui8>}> : () -> tensor<1x3x3x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 2.500000e-01 : f64, #builtin.int<0>>>
    %b = "nnapi.constant"() <{value = dense<5> : tensor<8xi32>}> : () -> tensor<8x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>
    %valid = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %d = "nnapi.depthwise_conv_2d"(%x, %w, %b, %valid, %one, %one, %one, %none) {nnc.int8_form = "vpdpbusd", nnc.dw_strides = "parameters"} : (tensor<1x9x9x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>, tensor<1x3x3x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 2.500000e-01 : f64, #builtin.int<0>>>, tensor<8x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>, i32, i32, i32, i32, i32) -> tensor<1x7x7x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e+00 : f64, #builtin.int<120>>>
    func.return %d : tensor<1x7x7x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e+00 : f64, #builtin.int<120>>>
  }
  func.func @borders(%x: tensor<1x9x9x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>) -> tensor<1x9x9x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>> {
    %w = "nnapi.constant"() <{value = dense<1> : tensor<1x3x3x8xi8>}> : () -> tensor<1x3x3x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>
    %b = "nnapi.constant"() <{value = dense<5> : tensor<8xi32>}> : () -> tensor<8x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>
    %same = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %d = "nnapi.depthwise_conv_2d"(%x, %w, %b, %same, %one, %one, %one, %none) {nnc.int8_form = "vpdpbusd", nnc.dw_strides = "parameters"} : (tensor<1x9x9x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, tensor<1x3x3x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>, tensor<8x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>, i32, i32, i32, i32, i32) -> tensor<1x9x9x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
    func.return %d : tensor<1x9x9x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
  }
  func.func @wide_borders(%x: tensor<1x9x9x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>) -> tensor<1x9x9x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>> {
    %w = "nnapi.constant"() <{value = dense<1> : tensor<1x5x5x8xi8>}> : () -> tensor<1x5x5x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>
    %b = "nnapi.constant"() <{value = dense<5> : tensor<8xi32>}> : () -> tensor<8x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>
    %same = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %d = "nnapi.depthwise_conv_2d"(%x, %w, %b, %same, %one, %one, %one, %none) {nnc.int8_form = "vpdpbusd", nnc.dw_strides = "parameters"} : (tensor<1x9x9x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, tensor<1x5x5x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>, tensor<8x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>, i32, i32, i32, i32, i32) -> tensor<1x9x9x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
    func.return %d : tensor<1x9x9x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
  }
}

// The 8-channel tail: four taps' 8 bytes concatenated in pairs, then
// interleaved byte by byte into one 32-byte quad vector, flipped, dotted.
// CHECK-LABEL: func.func @quads(
// CHECK:          %[[TOP:.*]] = arith.constant dense<-128> : vector<32xi8>
// CHECK:          %[[AB:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<8xi8>, vector<8xi8>
// CHECK-NEXT:     %[[CD:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<8xi8>, vector<8xi8>
// CHECK-NEXT:     %[[Q:.*]] = vector.shuffle %[[AB]], %[[CD]] [0, 8, 16, 24, 1, 9, 17, 25, {{.*}}] : vector<16xi8>, vector<16xi8>
// CHECK-NEXT:     %[[F:.*]] = arith.xori %[[Q]], %[[TOP]] : vector<32xi8>
// CHECK-NEXT:     llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"(%{{.*}}, %[[F]], %{{.*}}) : (vector<8xi32>, vector<32xi8>, vector<32xi8>) -> vector<8xi32>
// CHECK-NOT:      vpdpwssd
// CHECK:        }{nnc.kernel = "nnc_q8_dw_7p_3x3_t8_s_vpdpbusd_c_sat"}

// CHECK-LABEL: func.func @too_wide(
// CHECK-NOT:      vpdpbusd
// CHECK:          llvm.call_intrinsic "llvm.x86.avx512.vpdpwssd.256"
// CHECK-NOT:      vpdpbusd
// CHECK:        }{nnc.kernel = "nnc_q8_dw_7p_3x3_t8_u_vpdpwssd_c_sat"}

// CHECK-LABEL: func.func @borders(
// CHECK:          %[[M:.*]] = llvm.bitcast %{{.*}} : vector<8xi32> to vector<32xi8>
// CHECK-NEXT:     %[[W:.*]] = arith.andi %{{.*}}, %[[M]] : vector<32xi8>
// CHECK:          llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"(%{{.*}}, %{{.*}}, %[[W]])
// CHECK:        }{nnc.kernel = "nnc_q8_dw_1p_3x3_t8_s_vpdpbusd_clip_sat"}
// CHECK:        }{nnc.kernel = "nnc_q8_dw_7p_3x3_t8_s_vpdpbusd_c_sat"}

// CHECK-LABEL: func.func @wide_borders(
// CHECK-NOT:    _vpdpbusd_clip
// CHECK:        }{nnc.kernel = "nnc_q8_dw_1p_clip_t8_s_sat"}
// CHECK-NOT:    _vpdpbusd_clip
// CHECK:        }{nnc.kernel = "nnc_q8_dw_5p_clip_t8_s_sat"}
// CHECK-NOT:    _vpdpbusd_clip
