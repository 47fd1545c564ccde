// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// ARGMAX / ARGMIN and REDUCE_* (passes/lowering/reduce.py).
builtin.module {
  func.func @reduce(%x: tensor<2x3xf32>, %q: tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>, %b: tensor<2x3xi1>) -> (tensor<2xi32>, tensor<3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>, tensor<2x1xi1>) {
    // ARGMAX along axis 1: seed with column 0, then a reduction keeping the
    // first index of a strictly greater element.
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %r_a = "nnapi.argmax"(%x, %one) : (tensor<2x3xf32>, i32) -> tensor<2xi32>
    // REDUCE_MAX of QUANT8_ASYMM over axis 0: unsigned compares of the bytes,
    // starting from 0 (the lowest uint8).
    %axis0 = "nnapi.constant"() <{value = dense<[0]> : tensor<1xi32>}> : () -> tensor<1xi32>
    %false = "nnapi.constant"() <{value = dense<false> : tensor<i1>}> : () -> i1
    %r_m = "nnapi.reduce_max"(%q, %axis0, %false) : (tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>, tensor<1xi32>, i1) -> tensor<3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>
    // REDUCE_ALL over axis -1 with keep_dims: true (1) until a zero byte.
    %axisl = "nnapi.constant"() <{value = dense<[-1]> : tensor<1xi32>}> : () -> tensor<1xi32>
    %true = "nnapi.constant"() <{value = dense<true> : tensor<i1>}> : () -> i1
    %r_b = "nnapi.reduce_all"(%b, %axisl, %true) : (tensor<2x3xi1>, tensor<1xi32>, i1) -> tensor<2x1xi1>
    func.return %r_a, %r_m, %r_b : tensor<2xi32>, tensor<3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>, tensor<2x1xi1>
  }
}

// CHECK-LABEL: func.func @reduce(
// CHECK-SAME:    %[[X:[0-9]+]]: memref<2x3xf32>, %[[Q:[0-9]+]]: memref<2x3xi8>, %[[B:[0-9]+]]: memref<2x3xi8>, %[[R_A:[0-9]+]]: memref<2xi32>, %[[R_M:[0-9]+]]: memref<3xi8>, %[[R_B:[0-9]+]]: memref<2x1xi8>

// ARGMAX: the running maximum starts as column 0, the index as 0.
// CHECK:         %[[ACC:[0-9]+]] = memref.alloc() {{.*}} : memref<2xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0, 0)>, affine_map<(d0) -> (d0)>], {{.*}} ins(%[[X]] : memref<2x3xf32>) outs(%[[ACC]] : memref<2xf32>)
// CHECK:         outs(%[[R_A]] : memref<2xi32>)
// CHECK:         arith.constant 0 : i32
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : memref<2x3xf32>) outs(%[[ACC]], %[[R_A]] : memref<2xf32>, memref<2xi32>)
// CHECK:           %[[I:[0-9]+]] = linalg.index 1 : index
// CHECK:           %[[GT:[0-9]+]] = arith.cmpf ogt, %{{[0-9]+}}, %{{[0-9]+}} : f32
// CHECK:           %[[I32:[0-9]+]] = arith.index_cast %[[I]] : index to i32
// CHECK:           arith.select %[[GT]], %[[I32]], %{{[0-9]+}} : i32

// REDUCE_MAX of uint8 bytes: init 0, unsigned compare, axis 0 reduced.
// CHECK:         outs(%[[R_M]] : memref<3xi8>)
// CHECK:         arith.constant 0 : i8
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%[[Q]] : memref<2x3xi8>) outs(%[[R_M]] : memref<3xi8>)
// CHECK:           arith.cmpi ugt

// REDUCE_ALL with keep_dims: init true, a zero byte makes it false.
// CHECK:         outs(%[[R_B]] : memref<2x1xi8>)
// CHECK:         arith.constant 1 : i8
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]} ins(%[[B]] : memref<2x3xi8>) outs(%[[R_B]] : memref<2x1xi8>)
// CHECK:           arith.cmpi eq
