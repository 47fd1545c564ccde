// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// Element-wise operations across operand types (passes/lowering/elementwise.py
// and elementwise_q8.py): quantised GREATER and MAXIMUM, CAST, LOGICAL_NOT.
builtin.module {
  func.func @elementwise_types(%a: tensor<3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>, %b: tensor<3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 2.500000e-01 : f64, #builtin.int<1>>>, %f: tensor<3xf32>, %l: tensor<3xi1>) -> (tensor<3xi1>, tensor<3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>, tensor<3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e+00 : f64, #builtin.int<0>>>, tensor<3xi1>) {
    // GREATER of quantised operands compares the float32 real values.
    %r_g = "nnapi.greater"(%a, %b) : (tensor<3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>, tensor<3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 2.500000e-01 : f64, #builtin.int<1>>>) -> tensor<3xi1>
    // MAXIMUM requantises %b to the output (in f64, Android's requantize);
    // %a already has the output's quantisation.
    %r_m = "nnapi.maximum"(%a, %b) : (tensor<3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>, tensor<3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 2.500000e-01 : f64, #builtin.int<1>>>) -> tensor<3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>
    // CAST float32 -> QUANT8_ASYMM clamps to [0, 255] and truncates.
    %r_c = "nnapi.cast"(%f) : (tensor<3xf32>) -> tensor<3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e+00 : f64, #builtin.int<0>>>
    // LOGICAL_NOT of a stored bool byte.
    %r_n = "nnapi.logical_not"(%l) : (tensor<3xi1>) -> tensor<3xi1>
    func.return %r_g, %r_m, %r_c, %r_n : tensor<3xi1>, tensor<3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>, tensor<3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e+00 : f64, #builtin.int<0>>>, tensor<3xi1>
  }
}

// CHECK-LABEL: func.func @elementwise_types(
// CHECK-SAME:    %[[A:[0-9]+]]: memref<3xi8>, %[[B:[0-9]+]]: memref<3xi8>, %[[F:[0-9]+]]: memref<3xf32>, %[[L:[0-9]+]]: memref<3xi8>, %[[R_G:[0-9]+]]: memref<3xi8>, %[[R_M:[0-9]+]]: memref<3xi8>, %[[R_C:[0-9]+]]: memref<3xi8>, %[[R_N:[0-9]+]]: memref<3xi8>

// GREATER: (q - zp) * scale for both sides, an ordered float compare, a 0/1 byte.
// CHECK:         ins(%[[A]], %[[B]] : memref<3xi8>, memref<3xi8>) outs(%[[R_G]] : memref<3xi8>)
// CHECK:           arith.constant 5.000000e-01 : f32
// CHECK:           %[[RA:[0-9]+]] = arith.mulf
// CHECK:           arith.constant 2.500000e-01 : f32
// CHECK:           %[[RB:[0-9]+]] = arith.mulf
// CHECK:           %[[GT:[0-9]+]] = arith.cmpf ogt, %[[RA]], %[[RB]] : f32
// CHECK:           arith.extui %[[GT]] : i1 to i8

// MAXIMUM: %b requantised in f64 (divide by the output scale, add its zero
// point, saturate, round half away from zero), then an unsigned std::max.
// CHECK:         ins(%[[A]], %[[B]] : memref<3xi8>, memref<3xi8>) outs(%[[R_M]] : memref<3xi8>)
// CHECK:         ^bb0(%[[VA:[0-9]+]]: i8, %{{[0-9]+}}: i8, %{{[0-9]+}}: i8):
// CHECK:           arith.extf %{{[0-9]+}} : f32 to f64
// CHECK:           arith.divf %{{[0-9]+}}, %{{[0-9]+}} : f64
// CHECK:           math.trunc %{{[0-9]+}} : f64
// CHECK:           %[[VB:[0-9]+]] = arith.trunci %{{[0-9]+}} : i32 to i8
// CHECK:           %[[UGT:[0-9]+]] = arith.cmpi ugt, %[[VB]], %[[VA]] : i8
// CHECK:           arith.select %[[UGT]], %[[VB]], %[[VA]] : i8

// CAST float32 -> QUANT8_ASYMM
// CHECK:         ins(%[[F]] : memref<3xf32>) outs(%[[R_C]] : memref<3xi8>)
// CHECK:           arith.maxnumf
// CHECK:           arith.minnumf
// CHECK:           arith.fptosi %{{[0-9]+}} : f32 to i32

// LOGICAL_NOT
// CHECK:         ins(%[[L]] : memref<3xi8>) outs(%[[R_N]] : memref<3xi8>)
// CHECK:           arith.cmpi eq
