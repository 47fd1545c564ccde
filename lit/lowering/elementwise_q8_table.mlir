// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// An element-wise operation from one int8 tensor to another of at least
// 256 elements (TABLE_MIN_ELEMENTS) is a lookup in the 256 results of its
// scalar body, evaluated at compile time (passes/lowering/byte_table.py),
// with none of the body's arithmetic.  The default target (AVX-512F, which
// has AVX2's byte shuffle but not AVX512BW's) looks bytes up 32 at a time
// (passes/kernels/lut.py): 16 rows of the shuffled table, each repeated
// over the two 128-bit halves, then the plain table (16 x 32 + 256 = 768
// bytes); per vector 16 shuffles, 8 wrapping and 7 saturating
// subtractions of 16 and 15 XORs; the bytes after the last whole vector
// one at a time.  Without a byte shuffle: elementwise_q8_table_scalar.mlir.  A smaller tensor keeps the body, and so
// does a body of fewer than 8 operations (a RELU between the same
// quantisations is a clamp, which LLVM vectorises).
builtin.module {
  func.func @hard_swish_table(%x: tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-02 : f64, #builtin.int<3>>>) -> tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 4.000000e-02 : f64, #builtin.int<-5>>> {
    %r = "nnapi.hard_swish"(%x) : (tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-02 : f64, #builtin.int<3>>>) -> tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 4.000000e-02 : f64, #builtin.int<-5>>>
    func.return %r : tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 4.000000e-02 : f64, #builtin.int<-5>>>
  }

  func.func @hard_swish_small(%x: tensor<255x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-02 : f64, #builtin.int<3>>>) -> tensor<255x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 4.000000e-02 : f64, #builtin.int<-5>>> {
    %r = "nnapi.hard_swish"(%x) : (tensor<255x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-02 : f64, #builtin.int<3>>>) -> tensor<255x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 4.000000e-02 : f64, #builtin.int<-5>>>
    func.return %r : tensor<255x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 4.000000e-02 : f64, #builtin.int<-5>>>
  }

  func.func @relu_clamp(%x: tensor<1024x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-02 : f64, #builtin.int<3>>>) -> tensor<1024x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-02 : f64, #builtin.int<3>>> {
    %r = "nnapi.relu"(%x) : (tensor<1024x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-02 : f64, #builtin.int<3>>>) -> tensor<1024x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-02 : f64, #builtin.int<3>>>
    func.return %r : tensor<1024x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-02 : f64, #builtin.int<3>>>
  }
}

// CHECK-LABEL: func.func @hard_swish_table(
// CHECK:         %[[TABLES:.*]] = memref.get_global @{{.*}} : memref<768xi8>
// CHECK:         scf.execute_region {
// CHECK:           builtin.unrealized_conversion_cast %{{.*}}, %{{.*}}, %[[TABLES]],
// CHECK-COUNT-16:  vector.load %{{.*}} : memref<?xi8>, vector<32xi8>
// CHECK:           scf.for
// CHECK:             vector.load %{{.*}} : memref<?xi8>, vector<32xi8>
// CHECK-COUNT-8:     arith.subi %{{.*}} : vector<32xi8>
// CHECK-COUNT-7:     llvm.call_intrinsic "llvm.ssub.sat.v32i8"
// CHECK:             vector.store %{{.*}} : memref<?xi8>, vector<32xi8>
// CHECK:           scf.for
// CHECK:             arith.extui %{{.*}} : i8 to i32
// CHECK:             memref.load
// CHECK:         }{nnc.kernel = "nnc_lut_pshufb_256"}

// CHECK-LABEL: func.func @hard_swish_small(
// CHECK-NOT:     memref<256xi8>
// CHECK:         arith.divsi

// CHECK-LABEL: func.func @relu_clamp(
// CHECK-NOT:     memref<256xi8>
// CHECK:         arith.maxsi
