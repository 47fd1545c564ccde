// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// LOG_SOFTMAX and INSTANCE_NORMALIZATION (passes/lowering/normalization.py).
builtin.module {
  func.func @log_softmax_instance(%x: tensor<2x5xf32>, %y: tensor<1x2x2x3xf32>) -> (tensor<2x5xf32>, tensor<1x2x2x3xf32>) {
    // LOG_SOFTMAX along axis 1 with beta 2: max, sum of exp((x - max) * 2),
    // then (x - max) * 2 - log(sum).
    %beta = "nnapi.constant"() <{value = dense<2.0> : tensor<f32>}> : () -> f32
    %axis = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %r_l = "nnapi.log_softmax"(%x, %beta, %axis) : (tensor<2x5xf32>, f32, i32) -> tensor<2x5xf32>
    // INSTANCE_NORMALIZATION in NHWC: mean and variance over (h, w) = dims 1, 2.
    %gamma = "nnapi.constant"() <{value = dense<1.5> : tensor<f32>}> : () -> f32
    %b = "nnapi.constant"() <{value = dense<0.5> : tensor<f32>}> : () -> f32
    %eps = "nnapi.constant"() <{value = dense<1.0e-3> : tensor<f32>}> : () -> f32
    %nhwc = "nnapi.constant"() <{value = dense<false> : tensor<i1>}> : () -> i1
    %r_i = "nnapi.instance_normalization"(%y, %gamma, %b, %eps, %nhwc) : (tensor<1x2x2x3xf32>, f32, f32, f32, i1) -> tensor<1x2x2x3xf32>
    func.return %r_l, %r_i : tensor<2x5xf32>, tensor<1x2x2x3xf32>
  }
}

// CHECK-LABEL: func.func @log_softmax_instance(
// CHECK-SAME:    %[[X:[0-9]+]]: memref<2x5xf32>, %[[Y:[0-9]+]]: memref<1x2x2x3xf32>, %[[R_L:[0-9]+]]: memref<2x5xf32>, %[[R_I:[0-9]+]]: memref<1x2x2x3xf32>

// LOG_SOFTMAX
// CHECK:         %[[MX:[0-9]+]] = memref.alloc() {{.*}} : memref<2x1xf32>
// CHECK:         ins(%[[X]] : memref<2x5xf32>) outs(%[[MX]] : memref<2x1xf32>)
// CHECK:           ^{{.*}}(%[[XV:.*]]: f32, %[[ACCV:.*]]: f32):
// CHECK:             %[[GT:.*]] = arith.cmpf ogt, %[[XV]], %[[ACCV]] : f32
// CHECK:             arith.select %[[GT]], %[[XV]], %[[ACCV]] : f32
// CHECK:         %[[SUM:[0-9]+]] = memref.alloc() {{.*}} : memref<2x1xf32>
// CHECK:         ins(%[[X]], %[[MX]] : memref<2x5xf32>, memref<2x1xf32>) outs(%[[SUM]] : memref<2x1xf32>)
// CHECK:           math.exp
// CHECK:         ins(%[[X]], %[[MX]], %[[SUM]] : memref<2x5xf32>, memref<2x1xf32>, memref<2x1xf32>) outs(%[[R_L]] : memref<2x5xf32>)
// CHECK:           %[[D:[0-9]+]] = arith.mulf %{{[0-9]+}}, %{{[0-9]+}} : f32
// CHECK:           %[[LG:[0-9]+]] = math.log %{{[0-9]+}} : f32
// CHECK:           arith.subf %[[D]], %[[LG]] : f32

// INSTANCE_NORMALIZATION: sums over dims 1 and 2, mean = sum / 4,
// sigma = sqrt(var + eps), out = (x - mean) * gamma / sigma + beta.
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>], iterator_types = ["parallel", "reduction", "reduction", "parallel"]} ins(%[[Y]] : memref<1x2x2x3xf32>)
// CHECK:           math.sqrt
// CHECK:         outs(%[[R_I]] : memref<1x2x2x3xf32>)
// CHECK:           arith.constant 1.500000e+00 : f32
// CHECK:           arith.divf
// CHECK:           arith.constant 5.000000e-01 : f32

