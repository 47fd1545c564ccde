// RUN: nnc-opt %s -p 'convert-nnapi-to-linalg{target-cpu="znver4" target-features="+avx512f,+avx512vnni"}' | filecheck %s

// A quantised 1x1 CONV_2D (int8, 8 -> 16 channels) on an AVX512-VNNI target:
// the int8 GEMM's quad form.  The weights are packed as int8 quads (four
// adjacent input channels per output channel), the input zero point's share
// (zero point -1 + 128 = 127, as the kernel flips the input to uint8) is
// folded into the bias (10 - 127 * 8 = -1006), and the kernel reads the
// stored input itself: no copy, each broadcast word xor 0x80808080, one
// vpdpbusd on 16 int32 lanes per row and step.
builtin.module {
  func.func @conv_q8_quads(%x: tensor<1x2x2x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>) -> tensor<1x2x2x16x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>> {
    %w = "nnapi.constant"() <{value = dense<1> : tensor<16x1x1x8xi8>}> : () -> tensor<16x1x1x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>
    %b = "nnapi.constant"() <{value = dense<10> : tensor<16xi32>}> : () -> tensor<16x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>
    %same = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %r = "nnapi.conv_2d"(%x, %w, %b, %same, %one, %one, %none) : (tensor<1x2x2x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, tensor<16x1x1x8x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>, tensor<16x!nnapi.quant<"TENSOR_INT32", 1.250000e-01 : f64, #builtin.int<0>>>, i32, i32, i32, i32) -> tensor<1x2x2x16x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
    func.return %r : tensor<1x2x2x16x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<3>>>
  }
}

// CHECK:      "memref.global"() <{sym_name = "__nnc_const_conv_q8_quads_{{[0-9]+}}", type = memref<16xi32>, initial_value = dense<-1006> : tensor<16xi32>
// CHECK:      "memref.global"() <{sym_name = "__nnc_const_conv_q8_quads_{{[0-9]+}}", type = memref<128xi8>, initial_value = dense<1> : tensor<128xi8>
// CHECK-LABEL: func.func @conv_q8_quads(
// CHECK-SAME:    %[[X:[^:]*]]: memref<1x2x2x8xi8>
// CHECK-NOT:    memref.alloc
// CHECK:        %[[XF:.*]] = builtin.unrealized_conversion_cast %[[X]] : memref<1x2x2x8xi8> to memref<32xi8>
// CHECK:        scf.execute_region {
// CHECK:          builtin.unrealized_conversion_cast %[[XF]], {{.*}} : memref<32xi8>, memref<128xi8>, memref<51xi32>, memref<16xi32>
// CHECK:          %[[FLIP:.*]] = arith.constant dense<-2139062144> : vector<1xi32>
// CHECK:          scf.for
// CHECK:            %[[WORD:.*]] = llvm.bitcast %{{.*}} : vector<4xi8> to vector<1xi32>
// CHECK:            arith.xori %[[WORD]], %[[FLIP]] : vector<1xi32>
// CHECK:            llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"({{.*}}) : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
// CHECK:        }{nnc.kernel = "nnc_q8_vpdpbusd_gemm_4x16_l0_f_sat"}
