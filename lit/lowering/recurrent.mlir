// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// RNN: output = relu(bias + W x + R h), computed in place in the output:
// the bias is broadcast over the batch, each product is a reduction over
// the last loop, and hidden_state_out is a copy of the output.
builtin.module {
  func.func @main(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>, %r: tensor<4x4xf32>, %b: tensor<4xf32>, %h: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
    %act = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %hs, %o = "nnapi.rnn"(%x, %w, %r, %b, %h, %act) : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<2x4xf32>, i32) -> (tensor<2x4xf32>, tensor<2x4xf32>)
    func.return %hs, %o : tensor<2x4xf32>, tensor<2x4xf32>
  }

// CHECK:      func.func @main(%[[X:.*]]: memref<2x3xf32>, %[[W:.*]]: memref<4x3xf32>, %[[R:.*]]: memref<4x4xf32>, %[[B:.*]]: memref<4xf32>, %[[H:.*]]: memref<2x4xf32>, %[[HS:.*]]: memref<2x4xf32>, %[[OUT:.*]]: memref<2x4xf32>
// CHECK:        linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[B]] : memref<4xf32>) outs(%[[OUT]] : memref<2x4xf32>)
// CHECK:        linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[W]] : memref<2x3xf32>, memref<4x3xf32>) outs(%[[OUT]] : memref<2x4xf32>)
// CHECK:          arith.mulf
// CHECK-NEXT:     arith.addf
// CHECK:        linalg.generic {{.*}} ins(%[[H]], %[[R]] : memref<2x4xf32>, memref<4x4xf32>) outs(%[[OUT]] : memref<2x4xf32>)
// CHECK:        linalg.generic {{.*}} outs(%[[OUT]] : memref<2x4xf32>)
// CHECK:          arith.maxnumf
// The copy to the state output, over the elements in a row (one loop of 8).
// CHECK:        %[[HS8:[0-9]+]] = builtin.unrealized_conversion_cast %[[HS]] : memref<2x4xf32> to memref<8xf32>
// CHECK-NEXT:   %[[OUT8:[0-9]+]] = builtin.unrealized_conversion_cast %[[OUT]] : memref<2x4xf32> to memref<8xf32>
// CHECK-NEXT:   linalg.generic {{.*}} ins(%[[OUT8]] : memref<8xf32>) outs(%[[HS8]] : memref<8xf32>)
// CHECK:        func.return

// LSTM with CIFG (no input gate), peephole, projection and a cell clip: the
// three gates (cell, forget, output) are blocks of the scratch buffer, viewed
// as [3, batch, num_units], so the scratch output holds them as in Android.

  func.func @lstm(%x: tensor<1x2xf32>, %wf: tensor<4x2xf32>, %wc: tensor<4x2xf32>, %wo: tensor<4x2xf32>, %rf: tensor<4x3xf32>, %rc: tensor<4x3xf32>, %ro: tensor<4x3xf32>, %pf: tensor<4xf32>, %po: tensor<4xf32>, %bf: tensor<4xf32>, %bc: tensor<4xf32>, %bo: tensor<4xf32>, %pw: tensor<3x4xf32>, %h: tensor<1x3xf32>, %c: tensor<1x4xf32>) -> (tensor<1x12xf32>, tensor<1x3xf32>, tensor<1x4xf32>, tensor<1x3xf32>) {
    %none = "nnapi.no_value"() : () -> tensor<?xf32>
    %none2 = "nnapi.no_value"() : () -> tensor<?x?xf32>
    %act = "nnapi.constant"() <{value = dense<4> : tensor<i32>}> : () -> i32
    %cclip = "nnapi.constant"() <{value = dense<3.0> : tensor<f32>}> : () -> f32
    %pclip = "nnapi.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> f32
    %s, %ho, %co, %o = "nnapi.lstm"(%x, %none2, %wf, %wc, %wo, %none2, %rf, %rc, %ro, %none, %pf, %po, %none, %bf, %bc, %bo, %pw, %none, %h, %c, %act, %cclip, %pclip) : (tensor<1x2xf32>, tensor<?x?xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<?x?xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<?xf32>, tensor<4xf32>, tensor<4xf32>, tensor<?xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3x4xf32>, tensor<?xf32>, tensor<1x3xf32>, tensor<1x4xf32>, i32, f32, f32) -> (tensor<1x12xf32>, tensor<1x3xf32>, tensor<1x4xf32>, tensor<1x3xf32>)
    func.return %s, %ho, %co, %o : tensor<1x12xf32>, tensor<1x3xf32>, tensor<1x4xf32>, tensor<1x3xf32>
  }

// CHECK:      func.func @lstm(%[[LX:[^:]*]]: memref<1x2xf32>, %[[WF:[^:]*]]: memref<4x2xf32>, %{{[^:]*}}: memref<4x2xf32>, %{{[^:]*}}: memref<4x2xf32>, %[[RF:[^:]*]]: memref<4x3xf32>, {{.*}}, %[[PW:[^:]*]]: memref<3x4xf32>, %[[LH:[^:]*]]: memref<1x3xf32>, %[[LC:[^:]*]]: memref<1x4xf32>, %[[SCRATCH:[^:]*]]: memref<1x12xf32>, %[[HOUT:[^:]*]]: memref<1x3xf32>, %[[COUT:[^:]*]]: memref<1x4xf32>, %[[LOUT:[^:]*]]: memref<1x3xf32>
// CHECK:        %[[G:.*]] = builtin.unrealized_conversion_cast %[[SCRATCH]] : memref<1x12xf32> to memref<3x1x4xf32>
// The gate products work on [batch, num_units] views of the blocks (at
// bytes 0, 16, 32); these inputs are too shallow for the vector kernels
// (depth < 16), so they are generics accumulating in place.
// CHECK:        %[[OFF1:.*]] = arith.constant 16 : index
// CHECK-NEXT:   %[[GF:.*]] = memref.view %{{.*}}[%[[OFF1]]][] : memref<48xi8> to memref<1x4xf32>
// Forget gate (block 1) = bias, then += W_f x, later += R_f h.
// CHECK:        linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], {{.*}} outs(%[[GF]] : memref<1x4xf32>)
// CHECK:        linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], {{.*}} ins(%[[LX]], %[[WF]] : memref<1x2xf32>, memref<4x2xf32>) outs(%[[GF]] : memref<1x4xf32>)
// CHECK:        linalg.generic {{.*}} ins(%[[LH]], %[[RF]] : memref<1x3xf32>, memref<4x3xf32>) outs(%[[GF]] : memref<1x4xf32>)
// Peephole on the forget gate, then its sigmoid.
// CHECK:        linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (1, d0, d1)>], {{.*}} ins(%{{.*}}, %[[LC]] : memref<4xf32>, memref<1x4xf32>) outs(%[[G]] : memref<3x1x4xf32>)
// CHECK:        linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (1, d0, d1)>], {{.*}} outs(%[[G]] : memref<3x1x4xf32>)
// CHECK:          arith.cmpi slt
// c_out = f * c_in; the cell gate's tanh; CIFG's input gate is 1 - f.
// CHECK:        linalg.generic {{.*}} ins(%[[G]], %[[LC]] : memref<3x1x4xf32>, memref<1x4xf32>) outs(%[[COUT]] : memref<1x4xf32>)
// CHECK:        linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d0, d1)>], {{.*}} outs(%[[G]] : memref<3x1x4xf32>)
// CHECK:          math.tanh
// CHECK:        linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (1, d0, d1)>], {{.*}} outs(%[[G]] : memref<3x1x4xf32>)
// CHECK:          arith.subf
// CHECK:        linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d0, d1)>, affine_map<(d0, d1) -> (1, d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], {{.*}} outs(%[[COUT]] : memref<1x4xf32>)
// The cell clip of 3.
// CHECK:        linalg.generic {{.*}} outs(%[[COUT]] : memref<1x4xf32>)
// CHECK:          arith.constant -3.000000e+00 : f32
// CHECK:          arith.maxnumf
// CHECK:          arith.minnumf
// Projection of the output gate block (2) into the output, then the state copy.
// CHECK:        linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (2, d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[G]], %[[PW]] : memref<3x1x4xf32>, memref<3x4xf32>) outs(%[[LOUT]] : memref<1x3xf32>)
// CHECK:        linalg.generic {{.*}} ins(%[[LOUT]] : memref<1x3xf32>) outs(%[[HOUT]] : memref<1x3xf32>)
// CHECK:        func.return

// LSH_PROJECTION (dense): one bit per seed; the body loops over the input rows
// and hashes seed ++ row with farmhash's Fingerprint64 in i64 arithmetic.

  func.func @lsh(%hash: tensor<4x2xf32>, %in: tensor<3x2xi32>, %w: tensor<3xf32>) -> tensor<8xi32> {
    %type = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %r = "nnapi.lsh_projection"(%hash, %in, %w, %type) : (tensor<4x2xf32>, tensor<3x2xi32>, tensor<3xf32>, i32) -> tensor<8xi32>
    func.return %r : tensor<8xi32>
  }
}

// CHECK:      func.func @lsh(%[[HASH:[^:]*]]: memref<4x2xf32>, %[[IN:[^:]*]]: memref<3x2xi32>, %[[WT:[^:]*]]: memref<3xf32>, %[[BITS:[^:]*]]: memref<8xi32>
// CHECK:        %[[BYTES:.*]] = builtin.unrealized_conversion_cast %[[IN]] : memref<3x2xi32> to memref<24xi8>
// CHECK:        %[[SEED:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1xf32>
// CHECK:        %[[FLAT:.*]] = builtin.unrealized_conversion_cast %[[HASH]] : memref<4x2xf32> to memref<8xf32>
// CHECK:        linalg.generic {{.*}} ins(%[[FLAT]] : memref<8xf32>) outs(%[[BITS]] : memref<8xi32>)
// CHECK:          memref.store %{{.*}}, %[[SEED]]
// CHECK:          scf.for
// CHECK:            memref.load %[[BYTES]]
// CHECK:            arith.xori
// CHECK:            arith.muli
// CHECK:            arith.sitofp %{{.*}} : i64 to f64
// CHECK:            arith.extf
// CHECK:            scf.yield
// CHECK:          arith.cmpf ogt
// CHECK:          arith.extui %{{.*}} : i1 to i32
// CHECK:          linalg.yield
