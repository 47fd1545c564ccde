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

  // ARGMIN and the other REDUCE_*: each reduction first fills the output
  // with its identity (0 for SUM, 1 for PROD, the largest float for MIN,
  // false for ANY), then one linalg.generic reduces the axis into it.
  func.func @reduce_more(%x: tensor<2x3xf32>, %b: tensor<2x3xi1>) -> (tensor<2xi32>, tensor<2xf32>, tensor<3xf32>, tensor<2x1xf32>, tensor<2xi1>) {
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %r_i = "nnapi.argmin"(%x, %one) : (tensor<2x3xf32>, i32) -> tensor<2xi32>
    %axis1 = "nnapi.constant"() <{value = dense<[1]> : tensor<1xi32>}> : () -> tensor<1xi32>
    %axis0 = "nnapi.constant"() <{value = dense<[0]> : tensor<1xi32>}> : () -> tensor<1xi32>
    %false = "nnapi.constant"() <{value = dense<false> : tensor<i1>}> : () -> i1
    %true = "nnapi.constant"() <{value = dense<true> : tensor<i1>}> : () -> i1
    %r_s = "nnapi.reduce_sum"(%x, %axis1, %false) : (tensor<2x3xf32>, tensor<1xi32>, i1) -> tensor<2xf32>
    %r_p = "nnapi.reduce_prod"(%x, %axis0, %false) : (tensor<2x3xf32>, tensor<1xi32>, i1) -> tensor<3xf32>
    %r_m = "nnapi.reduce_min"(%x, %axis1, %true) : (tensor<2x3xf32>, tensor<1xi32>, i1) -> tensor<2x1xf32>
    %r_a = "nnapi.reduce_any"(%b, %axis1, %false) : (tensor<2x3xi1>, tensor<1xi32>, i1) -> tensor<2xi1>
    func.return %r_i, %r_s, %r_p, %r_m, %r_a : tensor<2xi32>, tensor<2xf32>, tensor<3xf32>, tensor<2x1xf32>, tensor<2xi1>
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

// CHECK-LABEL: func.func @reduce_more(
// CHECK-SAME:    %[[X:[0-9]+]]: memref<2x3xf32>, %[[B:[0-9]+]]: memref<2x3xi8>, %[[R_I:[0-9]+]]: memref<2xi32>, %[[R_S:[0-9]+]]: memref<2xf32>, %[[R_P:[0-9]+]]: memref<3xf32>, %[[R_M:[0-9]+]]: memref<2x1xf32>, %[[R_A:[0-9]+]]: memref<2xi8>

// ARGMIN: as ARGMAX, seeded with column 0 and index 0, keeping the first
// index of a strictly smaller element.
// CHECK:         %[[ACC:[0-9]+]] = memref.alloc() {{.*}} : memref<2xf32>
// CHECK:         ins(%[[X]] : memref<2x3xf32>) outs(%[[ACC]] : memref<2xf32>)
// CHECK:         outs(%[[R_I]] : memref<2xi32>)
// CHECK:           arith.constant 0 : i32
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : memref<2x3xf32>) outs(%[[ACC]], %[[R_I]] : memref<2xf32>, memref<2xi32>)
// CHECK-NEXT:    ^bb0(%[[V:[0-9]+]]: f32, %[[CUR:[0-9]+]]: f32, %[[IDX:[0-9]+]]: i32):
// CHECK-NEXT:      %[[I:[0-9]+]] = linalg.index 1 : index
// CHECK-NEXT:      %[[LT:[0-9]+]] = arith.cmpf olt, %[[V]], %[[CUR]] : f32
// CHECK-NEXT:      %[[I32:[0-9]+]] = arith.index_cast %[[I]] : index to i32
// CHECK-NEXT:      %[[NV:[0-9]+]] = arith.select %[[LT]], %[[V]], %[[CUR]] : f32
// CHECK-NEXT:      %[[NI:[0-9]+]] = arith.select %[[LT]], %[[I32]], %[[IDX]] : i32
// CHECK-NEXT:      linalg.yield %[[NV]], %[[NI]] : f32, i32

// REDUCE_SUM over axis 1: init 0, addf.
// CHECK:         outs(%[[R_S]] : memref<2xf32>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.constant 0.000000e+00 : f32
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : memref<2x3xf32>) outs(%[[R_S]] : memref<2xf32>)
// CHECK-NEXT:    ^bb0(%[[V:[0-9]+]]: f32, %[[ACC:[0-9]+]]: f32):
// CHECK-NEXT:      %[[SUM:[0-9]+]] = arith.addf %[[ACC]], %[[V]] : f32
// CHECK-NEXT:      linalg.yield %[[SUM]] : f32

// REDUCE_PROD over axis 0: init 1, mulf.
// CHECK:         outs(%[[R_P]] : memref<3xf32>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.constant 1.000000e+00 : f32
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%[[X]] : memref<2x3xf32>) outs(%[[R_P]] : memref<3xf32>)
// CHECK-NEXT:    ^bb0(%[[V:[0-9]+]]: f32, %[[ACC:[0-9]+]]: f32):
// CHECK-NEXT:      %[[PROD:[0-9]+]] = arith.mulf %[[ACC]], %[[V]] : f32
// CHECK-NEXT:      linalg.yield %[[PROD]] : f32

// REDUCE_MIN with keep_dims: init the largest float, keep the smaller.
// CHECK:         outs(%[[R_M]] : memref<2x1xf32>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.constant 3.40282347e+38 : f32
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : memref<2x3xf32>) outs(%[[R_M]] : memref<2x1xf32>)
// CHECK-NEXT:    ^bb0(%[[V:[0-9]+]]: f32, %[[ACC:[0-9]+]]: f32):
// CHECK-NEXT:      %[[LT:[0-9]+]] = arith.cmpf olt, %[[V]], %[[ACC]] : f32
// CHECK-NEXT:      %[[MIN:[0-9]+]] = arith.select %[[LT]], %[[V]], %[[ACC]] : f32
// CHECK-NEXT:      linalg.yield %[[MIN]] : f32

// REDUCE_ANY: init false (0), a nonzero byte makes it true (1).
// CHECK:         outs(%[[R_A]] : memref<2xi8>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.constant 0 : i8
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[B]] : memref<2x3xi8>) outs(%[[R_A]] : memref<2xi8>)
// CHECK-NEXT:    ^bb0(%[[V:[0-9]+]]: i8, %[[ACC:[0-9]+]]: i8):
// CHECK-NEXT:      %[[Z:[0-9]+]] = arith.constant 0 : i8
// CHECK-NEXT:      %[[NZ:[0-9]+]] = arith.cmpi ne, %[[V]], %[[Z]] : i8
// CHECK-NEXT:      %[[ONE:[0-9]+]] = arith.constant 1 : i8
// CHECK-NEXT:      %[[ANY:[0-9]+]] = arith.select %[[NZ]], %[[ONE]], %[[ACC]] : i8
// CHECK-NEXT:      linalg.yield %[[ANY]] : i8
