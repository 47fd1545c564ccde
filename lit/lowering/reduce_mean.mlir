// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// MEAN (passes/lowering/reduce.py).
builtin.module {
  func.func @mean(%m: tensor<4x3x2xf32>, %mq: tensor<4x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 8.000000e-01 : f64, #builtin.int<5>>>, %mr: tensor<4x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<1>>>) -> (tensor<1x3x1xf32>, tensor<3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 8.000000e-01 : f64, #builtin.int<5>>>, tensor<3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<-3>>>) {
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    // MEAN over axes [0, -1, 2] (a repeat) with keep_dims: a float sum into
    // the output in row-major order, then a division by the 8 reduced elements.
    %axes = "nnapi.constant"() <{value = dense<[0, -1, 2]> : tensor<3xi32>}> : () -> tensor<3xi32>
    %r_m = "nnapi.mean"(%m, %axes, %one) : (tensor<4x3x2xf32>, tensor<3xi32>, i32) -> tensor<1x3x1xf32>
    // Quantised MEAN with the input's quantisation: an int32 sum of the
    // zero-extended bytes, then integer division (rounded down).
    %axis0 = "nnapi.constant"() <{value = dense<[0]> : tensor<1xi32>}> : () -> tensor<1xi32>
    %zero = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %r_mq = "nnapi.mean"(%mq, %axis0, %zero) : (tensor<4x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 8.000000e-01 : f64, #builtin.int<5>>>, tensor<1xi32>, i32) -> tensor<3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 8.000000e-01 : f64, #builtin.int<5>>>
    // An output with its own quantisation is requantised:
    // round((sum - 4 * 1) * 0.5 / (4 * 0.25)) - 3, saturated to [-128, 127].
    %r_mr = "nnapi.mean"(%mr, %axis0, %zero) : (tensor<4x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<1>>>, tensor<1xi32>, i32) -> tensor<3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<-3>>>
    func.return %r_m, %r_mq, %r_mr : tensor<1x3x1xf32>, tensor<3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 8.000000e-01 : f64, #builtin.int<5>>>, tensor<3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<-3>>>
  }
}

// CHECK-LABEL: func.func @mean(
// CHECK-SAME:    %[[M:[0-9]+]]: memref<4x3x2xf32>, %[[MQ:[0-9]+]]: memref<4x3xi8>, %[[MR:[0-9]+]]: memref<4x3xi8>, %[[R_M:[0-9]+]]: memref<1x3x1xf32>, %[[R_MQ:[0-9]+]]: memref<3xi8>, %[[R_MR:[0-9]+]]: memref<3xi8>

// MEAN (float): zero the output, sum with reductions over d0 and d2, divide by 8.
// CHECK:         linalg.generic {{.*}} outs(%[[R_M]] : memref<1x3x1xf32>)
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (0, d1, 0)>], iterator_types = ["reduction", "parallel", "reduction"]} ins(%[[M]] : memref<4x3x2xf32>) outs(%[[R_M]] : memref<1x3x1xf32>)
// CHECK:           arith.addf
// CHECK:         linalg.generic {{.*}} ins(%[[R_M]] : memref<1x3x1xf32>) outs(%[[R_M]] : memref<1x3x1xf32>)
// CHECK:           arith.constant 8.000000e+00 : f32
// CHECK:           arith.divf

// MEAN (quantised, same quantisation): int32 column sums of the
// zero-extended bytes (axis 0 is a run of leading axes: rows 3 apart, summed
// in vectors of the 3 channels), then floordivsi (rounded down), trunci.
// CHECK:         %[[ACC:[0-9]+]] = memref.alloc() {{.*}} : memref<3xi32>
// CHECK:         %[[FLAT:[0-9]+]] = builtin.unrealized_conversion_cast %[[MQ]] : memref<4x3xi8> to memref<12xi8>
// CHECK:         scf.execute_region {
// CHECK:           builtin.unrealized_conversion_cast %[[FLAT]], %[[ACC]],
// CHECK:           scf.for
// CHECK:             llvm.zext %{{[0-9]+}} : vector<2xi8> to vector<2xi32>
// CHECK:             llvm.zext %{{[0-9]+}} : vector<1xi8> to vector<1xi32>
// CHECK:         }{nnc.kernel = "nnc_sum_cols_u8_2_1"}
// CHECK:         linalg.generic {{.*}} ins(%[[ACC]] : memref<3xi32>) outs(%[[R_MQ]] : memref<3xi8>)
// CHECK:           arith.constant 4 : i32
// CHECK:           arith.floordivsi
// CHECK:           arith.trunci %{{[0-9]+}} : i32 to i8

// MEAN (requantised): sign-extended column sums, then (sum - 4) * 0.5,
// round, - 3, saturate.
// CHECK:         %[[ACC2:[0-9]+]] = memref.alloc() {{.*}} : memref<3xi32>
// CHECK:         scf.execute_region {
// CHECK:           llvm.sext %{{[0-9]+}} : vector<2xi8> to vector<2xi32>
// CHECK:         }{nnc.kernel = "nnc_sum_cols_s8_2_1"}
// CHECK:         linalg.generic {{.*}} ins(%[[ACC2]] : memref<3xi32>) outs(%[[R_MR]] : memref<3xi8>)
// CHECK:           arith.subi
// CHECK:           arith.sitofp
// CHECK:           arith.constant 5.000000e-01 : f32
// CHECK:           math.round
// CHECK:           arith.constant -3.000000e+00 : f32
// CHECK:           arith.constant -1.280000e+02 : f32
// CHECK:           arith.constant 1.270000e+02 : f32
// CHECK:           arith.fptosi
// CHECK:           arith.trunci
// CHECK:         func.return
