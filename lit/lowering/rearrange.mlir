// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// The element permutations (passes/lowering/rearrange.py).
builtin.module {
  // TRANSPOSE reads the input through the inverse permutation of perm;
  // without perm it reverses the dimensions.
  func.func @transpose(%t: tensor<2x3x4xf32>) -> (tensor<4x2x3xf32>, tensor<4x3x2xf32>) {
    %perm = "nnapi.constant"() <{value = dense<[2, 0, 1]> : tensor<3xi32>}> : () -> tensor<3xi32>
    %r_t = "nnapi.transpose"(%t, %perm) : (tensor<2x3x4xf32>, tensor<3xi32>) -> tensor<4x2x3xf32>
    %none = "nnapi.no_value"() : () -> tensor<0xi32>
    %r_td = "nnapi.transpose"(%t, %none) : (tensor<2x3x4xf32>, tensor<0xi32>) -> tensor<4x3x2xf32>
    func.return %r_t, %r_td : tensor<4x2x3xf32>, tensor<4x3x2xf32>
  }

  // A float32 batch of matrices at least 8 x 8 ([0, 2, 1]) goes to the
  // register-blocked transposition kernel, one band of 16 rows per
  // iteration; a permutation that keeps the last axis moves rows (a generic).
  func.func @transpose_matrix(%m: tensor<1x16x24xf32>, %k: tensor<16x16x8xf32>) -> (tensor<1x24x16xf32>, tensor<16x16x8xf32>) {
    %perm = "nnapi.constant"() <{value = dense<[0, 2, 1]> : tensor<3xi32>}> : () -> tensor<3xi32>
    %r_m = "nnapi.transpose"(%m, %perm) : (tensor<1x16x24xf32>, tensor<3xi32>) -> tensor<1x24x16xf32>
    %rows = "nnapi.constant"() <{value = dense<[1, 0, 2]> : tensor<3xi32>}> : () -> tensor<3xi32>
    %r_k = "nnapi.transpose"(%k, %rows) : (tensor<16x16x8xf32>, tensor<3xi32>) -> tensor<16x16x8xf32>
    func.return %r_m, %r_k : tensor<1x24x16xf32>, tensor<16x16x8xf32>
  }

  // BATCH_TO_SPACE_ND in NCHW gathers with unsigned div/rem by the block.
  func.func @batch_to_space_nd(%bs: tensor<4x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
    %block = "nnapi.constant"() <{value = dense<[2, 2]> : tensor<2xi32>}> : () -> tensor<2xi32>
    %nchw = "nnapi.constant"() <{value = dense<true> : tensor<i1>}> : () -> i1
    %r_bs = "nnapi.batch_to_space_nd"(%bs, %block, %nchw) : (tensor<4x1x2x2xf32>, tensor<2xi32>, i1) -> tensor<1x1x4x4xf32>
    func.return %r_bs : tensor<1x1x4x4xf32>
  }

  // SPACE_TO_BATCH_ND with top/left padding: padded positions select 0.0
  // instead of the (clamped, in-bounds) load.
  func.func @space_to_batch_nd(%sb: tensor<1x5x2x1xf32>) -> tensor<6x2x2x1xf32> {
    %block2 = "nnapi.constant"() <{value = dense<[3, 2]> : tensor<2xi32>}> : () -> tensor<2xi32>
    %pads2 = "nnapi.constant"() <{value = dense<[[1, 0], [2, 0]]> : tensor<2x2xi32>}> : () -> tensor<2x2xi32>
    %r_sb = "nnapi.space_to_batch_nd"(%sb, %block2, %pads2) : (tensor<1x5x2x1xf32>, tensor<2xi32>, tensor<2x2xi32>) -> tensor<6x2x2x1xf32>
    func.return %r_sb : tensor<6x2x2x1xf32>
  }

  // DEPTH_TO_SPACE in NCHW gathers from the input with computed indices.
  func.func @depth_to_space(%a: tensor<1x8x2x2xf32>) -> tensor<1x2x4x4xf32> {
    %bs = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %nchw = "nnapi.constant"() <{value = dense<true> : tensor<i1>}> : () -> i1
    %r = "nnapi.depth_to_space"(%a, %bs, %nchw) : (tensor<1x8x2x2xf32>, i32, i1) -> tensor<1x2x4x4xf32>
    func.return %r : tensor<1x2x4x4xf32>
  }

  // SPACE_TO_DEPTH (NHWC by default).
  func.func @space_to_depth(%a: tensor<1x4x4x2xf32>) -> tensor<1x2x2x8xf32> {
    %bs = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %r = "nnapi.space_to_depth"(%a, %bs) : (tensor<1x4x4x2xf32>, i32) -> tensor<1x2x2x8xf32>
    func.return %r : tensor<1x2x2x8xf32>
  }

  // CHANNEL_SHUFFLE of 6 channels in 2 groups along axis -1:
  // output channel c reads (c % 2) * 3 + c / 2.
  func.func @channel_shuffle(%c: tensor<1x6xf32>) -> tensor<1x6xf32> {
    %groups = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %axis = "nnapi.constant"() <{value = dense<-1> : tensor<i32>}> : () -> i32
    %r_c = "nnapi.channel_shuffle"(%c, %groups, %axis) : (tensor<1x6xf32>, i32, i32) -> tensor<1x6xf32>
    func.return %r_c : tensor<1x6xf32>
  }

  // REVERSE along axis 1: column j reads column 3 - j.
  func.func @reverse(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    %axes = "nnapi.constant"() <{value = dense<[1]> : tensor<1xi32>}> : () -> tensor<1xi32>
    %r = "nnapi.reverse"(%x, %axes) : (tensor<2x4xf32>, tensor<1xi32>) -> tensor<2x4xf32>
    func.return %r : tensor<2x4xf32>
  }
}

// TRANSPOSE: output (d0, d1, d2) reads input (d1, d2, d0); the default perm reverses.
// CHECK-LABEL: func.func @transpose(
// CHECK-SAME:    %[[T:[0-9]+]]: memref<2x3x4xf32>, %[[R_T:[0-9]+]]: memref<4x2x3xf32>, %[[R_TD:[0-9]+]]: memref<4x3x2xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2, d0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], {{.*}} ins(%[[T]] : memref<2x3x4xf32>) outs(%[[R_T]] : memref<4x2x3xf32>)
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d1, d0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], {{.*}} ins(%[[T]] : memref<2x3x4xf32>) outs(%[[R_TD]] : memref<4x3x2xf32>)

// TRANSPOSE of float32 matrices: vector loads and shuffles in a kernel, no generic for it.
// CHECK-LABEL: func.func @transpose_matrix(
// CHECK-SAME:    %[[M:[0-9]+]]: memref<1x16x24xf32>, %[[K:[0-9]+]]: memref<16x16x8xf32>, %[[R_M:[0-9]+]]: memref<1x24x16xf32>, %[[R_K:[0-9]+]]: memref<16x16x8xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         builtin.unrealized_conversion_cast %[[M]] : memref<1x16x24xf32> to memref<384xf32>
// CHECK:         scf.execute_region
// CHECK:           vector.load {{.*}} : memref<?xf32>, vector<{{[0-9]+}}xf32>
// CHECK:           vector.shuffle
// CHECK:           vector.store
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], {{.*}} ins(%[[K]] : memref<16x16x8xf32>) outs(%[[R_K]] : memref<16x16x8xf32>)

// BATCH_TO_SPACE_ND (NCHW, one output batch): in[(y%2)*2 + x%2, c, y/2, x/2].
// CHECK-LABEL: func.func @batch_to_space_nd(
// CHECK-SAME:    %[[BS:[0-9]+]]: memref<4x1x2x2xf32>, %[[R_BS:[0-9]+]]: memref<1x1x4x4xf32>
// CHECK:         linalg.generic {{.*}} outs(%[[R_BS]] : memref<1x1x4x4xf32>)
// CHECK:           %[[CH:[0-9]+]] = linalg.index 1 : index
// CHECK:           %[[OY:[0-9]+]] = linalg.index 2 : index
// CHECK:           %[[OX:[0-9]+]] = linalg.index 3 : index
// CHECK:           arith.remui %[[OY]]
// CHECK:           arith.remui %[[OX]]
// CHECK:           %[[IB:[0-9]+]] = arith.addi
// CHECK:           %[[IY:[0-9]+]] = arith.divui %[[OY]]
// CHECK:           %[[IX:[0-9]+]] = arith.divui %[[OX]]
// CHECK:           memref.load %[[BS]][%[[IB]], %[[CH]], %[[IY]], %[[IX]]] : memref<4x1x2x2xf32>

// SPACE_TO_BATCH_ND: bounds checks on both padded dimensions, a clamped load, a select.
// CHECK-LABEL: func.func @space_to_batch_nd(
// CHECK-SAME:    %[[SB:[0-9]+]]: memref<1x5x2x1xf32>, %[[R_SB:[0-9]+]]: memref<6x2x2x1xf32>
// CHECK:         linalg.generic {{.*}} outs(%[[R_SB]] : memref<6x2x2x1xf32>)
// CHECK-COUNT-2:   arith.cmpi sge
// CHECK:           %[[LD:[0-9]+]] = memref.load %[[SB]]
// CHECK:           %[[PADV:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK:           arith.select %{{[0-9]+}}, %[[LD]], %[[PADV]] : f32

// CHECK-LABEL: func.func @depth_to_space(
// CHECK-SAME:    %[[IN:[0-9]+]]: memref<1x8x2x2xf32>, %[[OUT:[0-9]+]]: memref<1x2x4x4xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], {{.*}} outs(%[[OUT]] : memref<1x2x4x4xf32>)
// CHECK:           arith.remsi
// CHECK:           arith.divsi
// CHECK:           memref.load %[[IN]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<1x8x2x2xf32>
// CHECK:           linalg.yield

// CHECK-LABEL: func.func @space_to_depth(
// CHECK-SAME:    %[[IN:[0-9]+]]: memref<1x4x4x2xf32>, %[[OUT:[0-9]+]]: memref<1x2x2x8xf32>
// CHECK:         linalg.generic {{.*}} outs(%[[OUT]] : memref<1x2x2x8xf32>)
// CHECK:           memref.load %[[IN]]
// CHECK:           linalg.yield

// CHECK-LABEL: func.func @channel_shuffle(
// CHECK-SAME:    %[[C:[0-9]+]]: memref<1x6xf32>, %[[R_C:[0-9]+]]: memref<1x6xf32>
// CHECK:         outs(%[[R_C]] : memref<1x6xf32>)
// CHECK:           %[[CH:[0-9]+]] = linalg.index 1 : index
// CHECK:           arith.remui %[[CH]], %{{[0-9]+}} : index
// CHECK:           arith.muli
// CHECK:           arith.divui %[[CH]], %{{[0-9]+}} : index
// CHECK:           memref.load %[[C]]

// CHECK-LABEL: func.func @reverse(
// CHECK-SAME:    %[[X:[0-9]+]]: memref<2x4xf32>, %[[R:[0-9]+]]: memref<2x4xf32>
// CHECK:         linalg.generic {{.*}} outs(%[[R]] : memref<2x4xf32>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %[[I:[0-9]+]] = linalg.index 0 : index
// CHECK-NEXT:      %[[J:[0-9]+]] = linalg.index 1 : index
// CHECK-NEXT:      %[[C3:[0-9]+]] = arith.constant 3 : index
// CHECK-NEXT:      %[[RJ:[0-9]+]] = arith.subi %[[C3]], %[[J]] : index
// CHECK-NEXT:      %[[V:[0-9]+]] = memref.load %[[X]][%[[I]], %[[RJ]]] : memref<2x4xf32>
// CHECK-NEXT:      linalg.yield %[[V]] : f32
