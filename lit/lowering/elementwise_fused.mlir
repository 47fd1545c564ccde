// RUN: nnc-opt %s -p nnc-fuse-elementwise,convert-nnapi-to-linalg | filecheck %s

// A fused group (nnc-fuse-elementwise) lowers as one linalg.generic at its
// root: swish (LOGISTIC then MUL) and a broadcast ADD read the input and the
// bias once, compute the three bodies in order and write only the result.
builtin.module {
  func.func @swish(%a: tensor<1x4x4x8xf32>, %b: tensor<8xf32>) -> tensor<1x4x4x8xf32> {
    %s = "nnapi.logistic"(%a) : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %m = "nnapi.mul"(%a, %s, %none) : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, i32) -> tensor<1x4x4x8xf32>
    %relu = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %r = "nnapi.add"(%m, %b, %relu) : (tensor<1x4x4x8xf32>, tensor<8xf32>, i32) -> tensor<1x4x4x8xf32>
    func.return %r : tensor<1x4x4x8xf32>
  }
}

// CHECK-LABEL: func.func @swish(
// CHECK-SAME:    %[[A:[0-9]+]]: memref<1x4x4x8xf32>, %[[B:[0-9]+]]: memref<8xf32>, %[[OUT:[0-9]+]]: memref<1x4x4x8xf32>
// CHECK-NOT:     memref.alloc
// The loop runs over [16, 8]: the pixels merged, the bias broadcast over them.
// CHECK-NEXT:    %[[OUT2:[0-9]+]] = builtin.unrealized_conversion_cast %[[OUT]] : memref<1x4x4x8xf32> to memref<16x8xf32>
// CHECK-NEXT:    %[[A2:[0-9]+]] = builtin.unrealized_conversion_cast %[[A]] : memref<1x4x4x8xf32> to memref<16x8xf32>
// CHECK-NEXT:    %[[B2:[0-9]+]] = builtin.unrealized_conversion_cast %[[B]] : memref<8xf32> to memref<1x8xf32>
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], {{.*}} ins(%[[A2]], %[[B2]] : memref<16x8xf32>, memref<1x8xf32>) outs(%[[OUT2]] : memref<16x8xf32>)
// CHECK-NEXT:    ^bb0(%[[X:[0-9]+]]: f32, %[[BIAS:[0-9]+]]: f32, %{{[0-9]+}}: f32):
// LOGISTIC (vmath.logistic): t = exp(-|x|), then (sign bit of x ? t : 1) / (1 + t)
// CHECK:           %[[XBITS:[0-9]+]] = arith.bitcast %[[X]] : f32 to i32
// CHECK:           %{{[0-9]+}} = arith.ori %[[XBITS]], %{{[0-9]+}} : i32
// CHECK:           %[[NEG:[0-9]+]] = arith.cmpi slt, %[[XBITS]], %{{[0-9]+}} : i32
// CHECK:           %[[NUM:[0-9]+]] = arith.select %[[NEG]], %[[T:[0-9]+]], %{{[0-9]+}} : f32
// CHECK:           %[[D:[0-9]+]] = arith.addf %[[T]], %{{[0-9]+}} : f32
// CHECK-NEXT:      %[[S:[0-9]+]] = arith.divf %[[NUM]], %[[D]] : f32
// CHECK-NEXT:      %[[M:[0-9]+]] = arith.mulf %[[X]], %[[S]] : f32
// CHECK-NEXT:      %[[SUM:[0-9]+]] = arith.addf %[[M]], %[[BIAS]] : f32
// CHECK:           %[[R:[0-9]+]] = arith.maxnumf %[[SUM]], %{{[0-9]+}} : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32
// CHECK-NOT:     linalg.generic
// CHECK:         func.return
