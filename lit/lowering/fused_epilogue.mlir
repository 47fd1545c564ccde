// RUN: nnc-opt %s -p nnc-fuse-epilogues,convert-nnapi-to-linalg | filecheck %s

// A FULLY_CONNECTED whose result (through a RESHAPE) is added to a residual
// (nnc-fuse-epilogues): the GEMM kernel takes the residual as a buffer after
// the output, adds it to each stored vector after the FC's own activation and
// applies the ADD's (RELU: maxnumf with 0), writing straight into the ADD's
// result; the ADD itself emits nothing.
builtin.module {
  func.func @fc_residual(%x: tensor<8x4xf32>, %r: tensor<1x8x6xf32>) -> tensor<1x8x6xf32> {
    %w = "nnapi.constant"() <{value = dense<1.0> : tensor<6x4xf32>}> : () -> tensor<6x4xf32>
    %b = "nnapi.constant"() <{value = dense<0.5> : tensor<6xf32>}> : () -> tensor<6xf32>
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %relu = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %shape = "nnapi.constant"() <{value = dense<[1, 8, 6]> : tensor<3xi32>}> : () -> tensor<3xi32>
    %y = "nnapi.fully_connected"(%x, %w, %b, %none) : (tensor<8x4xf32>, tensor<6x4xf32>, tensor<6xf32>, i32) -> tensor<8x6xf32>
    %v = "nnapi.reshape"(%y, %shape) : (tensor<8x6xf32>, tensor<3xi32>) -> tensor<1x8x6xf32>
    %z = "nnapi.add"(%r, %v, %relu) : (tensor<1x8x6xf32>, tensor<1x8x6xf32>, i32) -> tensor<1x8x6xf32>
    func.return %z : tensor<1x8x6xf32>
  }
}

// CHECK-LABEL: func.func @fc_residual(
// CHECK-SAME:    %[[X:[^:]*]]: memref<8x4xf32>, %[[R:[^:]*]]: memref<1x8x6xf32>, %[[OUT:[^:]*]]: memref<1x8x6xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         %[[OUT2:.*]] = builtin.unrealized_conversion_cast %[[OUT]] : memref<1x8x6xf32> to memref<8x6xf32>
// CHECK:         %[[R2:.*]] = builtin.unrealized_conversion_cast %[[R]] : memref<1x8x6xf32> to memref<8x6xf32>
// CHECK:         %[[OF:.*]] = builtin.unrealized_conversion_cast %[[OUT2]] : memref<8x6xf32> to memref<48xf32>
// CHECK:         %[[RF:.*]] = builtin.unrealized_conversion_cast %[[R2]] : memref<8x6xf32> to memref<48xf32>
// CHECK:         scf.execute_region {
// CHECK:           builtin.unrealized_conversion_cast %{{.*}}, %{{.*}}, %{{.*}}, %[[OF]], %[[RF]], {{.*}} to memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>,
// CHECK:           %[[ACC:[^,]*]], {{.*}} = scf.for
// CHECK:             scf.yield
// CHECK-NEXT:      }
// CHECK:           %[[RV:.*]] = vector.load %{{.*}}[%{{.*}}] : memref<?xf32>, vector<4xf32>
// CHECK:           %[[SUM:.*]] = arith.addf %[[ACC]], %[[RV]] : vector<4xf32>
// CHECK:           %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<4xf32>
// CHECK:           %[[Y:.*]] = arith.maxnumf %[[SUM]], %[[ZERO]] : vector<4xf32>
// CHECK:           vector.store %[[Y]], %{{.*}}[%{{.*}}] : memref<?xf32>, vector<4xf32>
// CHECK:         }{nnc.kernel = "nnc_gemm_8x4_2_l1_none_add_relu"}
// CHECK-NOT:     linalg.generic
// CHECK:         func.return
