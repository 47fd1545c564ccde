// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// Float32 SOFTMAX along the last axis and MEAN over the trailing axes use
// the vector row kernels (passes/kernels/rows.py): one kernel call per
// row, rows in a loop marked nnc.parallel.  Without target options the
// lowering assumes AVX-512F: 16 lanes, so a row of 20 is one full vector
// and a tail of 4, a row of 15 only the tails 8, 4, 2, 1.
builtin.module {
  func.func @softmax_last(%x: tensor<3x20xf32>) -> tensor<3x20xf32> {
    %beta = "nnapi.constant"() <{value = dense<0.5> : tensor<f32>}> : () -> f32
    %axis = "nnapi.constant"() <{value = dense<-1> : tensor<i32>}> : () -> i32
    %r = "nnapi.softmax"(%x, %beta, %axis) : (tensor<3x20xf32>, f32, i32) -> tensor<3x20xf32>
    func.return %r : tensor<3x20xf32>
  }

  // MEAN over axes {1, 2} of 2x3x5: each output is the mean of one
  // contiguous row of 15.
  func.func @mean_trailing(%x: tensor<2x3x5xf32>) -> tensor<2x1x1xf32> {
    %axes = "nnapi.constant"() <{value = dense<[2, 1]> : tensor<2xi32>}> : () -> tensor<2xi32>
    %keep = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %r = "nnapi.mean"(%x, %axes, %keep) : (tensor<2x3x5xf32>, tensor<2xi32>, i32) -> tensor<2x1x1xf32>
    func.return %r : tensor<2x1x1xf32>
  }

  // MEAN over axes {1, 2} of 1x3x4x136: each output channel is the mean of
  // a column of 12 elements 136 apart, summed in vectors of channels.
  func.func @mean_middle(%x: tensor<1x3x4x136xf32>) -> tensor<1x136xf32> {
    %axes = "nnapi.constant"() <{value = dense<[1, 2]> : tensor<2xi32>}> : () -> tensor<2xi32>
    %keep = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %r = "nnapi.mean"(%x, %axes, %keep) : (tensor<1x3x4x136xf32>, tensor<2xi32>, i32) -> tensor<1x136xf32>
    func.return %r : tensor<1x136xf32>
  }
}

// CHECK-LABEL: func.func @softmax_last(
// CHECK:         %[[BETA:.*]] = arith.constant 5.000000e-01 : f32
// CHECK:         %[[NFULL:.*]] = arith.constant 16 : index
// CHECK:         scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           %[[BASE:.*]] = arith.muli %[[R]], %{{.*}} : index
// CHECK:           scf.execute_region {
// CHECK:             builtin.unrealized_conversion_cast %{{.*}}, %{{.*}}, %[[BASE]], %[[NFULL]], %[[BETA]]
// The maximum: maxnum over the vectors, then over the lanes.
// CHECK:             arith.maxnumf %{{.*}} : vector<16xf32>
// CHECK:             arith.maxnumf %{{.*}} : vector<4xf32>
// The exponentials: (x - max) * beta, clamped (maximumf keeps NaN), the
// exponent bits of 2**n, the polynomial; stored and summed.
// CHECK:             scf.for
// CHECK:               arith.subf %{{.*}} : vector<16xf32>
// CHECK:               arith.mulf %{{.*}} : vector<16xf32>
// CHECK:               arith.maximumf %{{.*}} : vector<16xf32>
// CHECK:               arith.bitcast %{{.*}} : vector<16xf32> to vector<16xi32>
// CHECK:               arith.maxsi %{{.*}} : vector<16xi32>
// CHECK:               arith.shli %{{.*}} : vector<16xi32>
// CHECK-NOT:           math.exp
// CHECK:               vector.store
// CHECK:               arith.addf %{{.*}} : vector<16xf32>
// The division by the sum.
// CHECK:             arith.divf %{{.*}} : vector<16xf32>
// CHECK:             arith.divf %{{.*}} : vector<4xf32>
// CHECK:           }{nnc.kernel = "nnc_softmax_16_t4_beta"}
// CHECK:         } {nnc.parallel}

// CHECK-LABEL: func.func @mean_trailing(
// CHECK:         %[[COUNT:.*]] = arith.constant 1.500000e+01 : f32
// CHECK:         scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           scf.execute_region {
// CHECK:             builtin.unrealized_conversion_cast %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[R]], %[[COUNT]]
// CHECK:             vector<8xf32>
// CHECK:             vector<4xf32>
// CHECK:             vector<2xf32>
// CHECK:             vector<1xf32>
// CHECK:             arith.divf %{{.*}} : f32
// CHECK:             memref.store
// CHECK:           }{nnc.kernel = "nnc_mean_16_t8_4_2_1"}
// CHECK:         } {nnc.parallel}

// CHECK-LABEL: func.func @mean_middle(
// CHECK:         %[[COUNTF:.*]] = arith.constant 1.200000e+01 : f32
// CHECK:         %[[COUNT:.*]] = arith.constant 12 : index
// CHECK:         %[[STRIDE:.*]] = arith.constant 136 : index
// CHECK:         scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           scf.execute_region {
// CHECK:             builtin.unrealized_conversion_cast %{{.*}}, %{{.*}}, %[[C]], %[[C]], %[[COUNT]], %[[STRIDE]], %[[COUNTF]]
// CHECK:             scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK-COUNT-4:       arith.addf %{{.*}} : vector<16xf32>
// CHECK:             }
// CHECK-COUNT-4:     arith.divf %{{.*}} : vector<16xf32>
// CHECK:           }{nnc.kernel = "nnc_mean_cols_16_16_16_16"}
// CHECK:         } {nnc.parallel}
// The tail of 8 channels: one call, no loop.
// CHECK:         scf.execute_region {
// CHECK:           arith.addf %{{.*}} : vector<8xf32>
// CHECK:           arith.divf %{{.*}} : vector<8xf32>
// CHECK:         }{nnc.kernel = "nnc_mean_cols_8"}
