// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// Sequence RNN/LSTM and SVDF lowerings (passes/lowering/recurrent.py); see
// recurrent.mlir for RNN, LSTM and LSH_PROJECTION and
// recurrent_unidirectional_lstm.mlir.
builtin.module {
  // UNIDIRECTIONAL_SEQUENCE_RNN (time-major, RELU): the hidden state is copied
  // to a temporary, then an scf.for over the 2 time steps computes, in a view
  // of the output at step t (t * 12 bytes), bias + x_t W + h R, its RELU, and
  // copies the result back to the hidden state.
  func.func @unidirectional_sequence_rnn(%x: tensor<2x1x2xf32>, %w: tensor<3x2xf32>, %r: tensor<3x3xf32>, %b: tensor<3xf32>, %h: tensor<1x3xf32>) -> tensor<2x1x3xf32> {
    %act = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %tmajor = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %o = "nnapi.unidirectional_sequence_rnn"(%x, %w, %r, %b, %h, %act, %tmajor) : (tensor<2x1x2xf32>, tensor<3x2xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<1x3xf32>, i32, i32) -> tensor<2x1x3xf32>
    func.return %o : tensor<2x1x3xf32>
  }

  // BIDIRECTIONAL_SEQUENCE_RNN without auxiliary input, outputs not merged:
  // the forward RNN runs over t = 0, 1 into the first output, the backward
  // one over 1 - t into the second, each with its own weights and state.
  func.func @bidirectional_sequence_rnn(%x: tensor<2x1x2xf32>, %fw_w: tensor<3x2xf32>, %fw_r: tensor<3x3xf32>, %fw_b: tensor<3xf32>, %fw_h: tensor<1x3xf32>, %bw_w: tensor<3x2xf32>, %bw_r: tensor<3x3xf32>, %bw_b: tensor<3xf32>, %bw_h: tensor<1x3xf32>) -> (tensor<2x1x3xf32>, tensor<2x1x3xf32>) {
    %none3 = "nnapi.no_value"() : () -> tensor<?x?x?xf32>
    %none2 = "nnapi.no_value"() : () -> tensor<?x?xf32>
    %act = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %tmajor = "nnapi.constant"() <{value = dense<true> : tensor<i1>}> : () -> i1
    %merge = "nnapi.constant"() <{value = dense<false> : tensor<i1>}> : () -> i1
    %fw, %bw = "nnapi.bidirectional_sequence_rnn"(%x, %fw_w, %fw_r, %fw_b, %fw_h, %bw_w, %bw_r, %bw_b, %bw_h, %none3, %none2, %none2, %act, %tmajor, %merge) : (tensor<2x1x2xf32>, tensor<3x2xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<1x3xf32>, tensor<3x2xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<1x3xf32>, tensor<?x?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, i32, i1, i1) -> (tensor<2x1x3xf32>, tensor<2x1x3xf32>)
    func.return %fw, %bw : tensor<2x1x3xf32>, tensor<2x1x3xf32>
  }

  // SVDF of rank 2 with 4 filters, memory 5 and 2 units: the feature
  // projection x Wf, the memory (state with the new feature as its last
  // column), the time projection summed over the memory, the sum over each
  // unit's rank filters plus the bias, RELU; the state output is the memory
  // shifted by one, a zero at the end.
  func.func @svdf(%x: tensor<2x3xf32>, %wf: tensor<4x3xf32>, %wt: tensor<4x5xf32>, %b: tensor<2xf32>, %s: tensor<2x20xf32>) -> (tensor<2x20xf32>, tensor<2x2xf32>) {
    %rank = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %act = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %so, %o = "nnapi.svdf"(%x, %wf, %wt, %b, %s, %rank, %act) : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4x5xf32>, tensor<2xf32>, tensor<2x20xf32>, i32, i32) -> (tensor<2x20xf32>, tensor<2x2xf32>)
    func.return %so, %o : tensor<2x20xf32>, tensor<2x2xf32>
  }

  // BIDIRECTIONAL_SEQUENCE_LSTM with CIFG (no input gate), no peephole,
  // projection, auxiliary input or layer norm; time-major, outputs not
  // merged.  For each direction, the input products of all time steps are
  // computed up front (cell, forget and output gate blocks of a [3, T*B, n]
  // buffer, each seeded with its bias), then an scf.for over time (reversed
  // for the backward direction) adds the recurrent products and applies the
  // gates.
  func.func @bidirectional_sequence_lstm(%x: tensor<2x1x2xf32>, %fw_wf: tensor<2x2xf32>, %fw_wc: tensor<2x2xf32>, %fw_wo: tensor<2x2xf32>, %fw_rf: tensor<2x2xf32>, %fw_rc: tensor<2x2xf32>, %fw_ro: tensor<2x2xf32>, %fw_bf: tensor<2xf32>, %fw_bc: tensor<2xf32>, %fw_bo: tensor<2xf32>, %bw_wf: tensor<2x2xf32>, %bw_wc: tensor<2x2xf32>, %bw_wo: tensor<2x2xf32>, %bw_rf: tensor<2x2xf32>, %bw_rc: tensor<2x2xf32>, %bw_ro: tensor<2x2xf32>, %bw_bf: tensor<2xf32>, %bw_bc: tensor<2xf32>, %bw_bo: tensor<2xf32>, %fw_h: tensor<1x2xf32>, %fw_c: tensor<1x2xf32>, %bw_h: tensor<1x2xf32>, %bw_c: tensor<1x2xf32>) -> (tensor<2x1x2xf32>, tensor<2x1x2xf32>) {
    %none1 = "nnapi.no_value"() : () -> tensor<?xf32>
    %none2 = "nnapi.no_value"() : () -> tensor<?x?xf32>
    %none3 = "nnapi.no_value"() : () -> tensor<?x?x?xf32>
    %act = "nnapi.constant"() <{value = dense<4> : tensor<i32>}> : () -> i32
    %cclip = "nnapi.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> f32
    %pclip = "nnapi.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> f32
    %merge = "nnapi.constant"() <{value = dense<false> : tensor<i1>}> : () -> i1
    %tmajor = "nnapi.constant"() <{value = dense<true> : tensor<i1>}> : () -> i1
    %fw, %bw = "nnapi.bidirectional_sequence_lstm"(%x, %none2, %fw_wf, %fw_wc, %fw_wo, %none2, %fw_rf, %fw_rc, %fw_ro, %none1, %none1, %none1, %none1, %fw_bf, %fw_bc, %fw_bo, %none2, %none1, %none2, %bw_wf, %bw_wc, %bw_wo, %none2, %bw_rf, %bw_rc, %bw_ro, %none1, %none1, %none1, %none1, %bw_bf, %bw_bc, %bw_bo, %none2, %none1, %fw_h, %fw_c, %bw_h, %bw_c, %none3, %none2, %none2, %none2, %none2, %none2, %none2, %none2, %none2, %act, %cclip, %pclip, %merge, %tmajor, %none1, %none1, %none1, %none1, %none1, %none1, %none1, %none1) : (tensor<2x1x2xf32>, tensor<?x?xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<?x?xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<?x?xf32>, tensor<?xf32>, tensor<?x?xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<?x?xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<?x?xf32>, tensor<?xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<?x?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, i32, f32, f32, i1, i1, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) -> (tensor<2x1x2xf32>, tensor<2x1x2xf32>)
    func.return %fw, %bw : tensor<2x1x2xf32>, tensor<2x1x2xf32>
  }
}


// CHECK-LABEL: func.func @unidirectional_sequence_rnn(
// CHECK-SAME:    %[[X:[0-9]+]]: memref<2x1x2xf32>, %[[W:[0-9]+]]: memref<3x2xf32>, %[[R:[0-9]+]]: memref<3x3xf32>, %[[B:[0-9]+]]: memref<3xf32>, %[[H0:[0-9]+]]: memref<1x3xf32>, %[[OUT:[0-9]+]]: memref<2x1x3xf32>
// CHECK:         %[[H:[0-9]+]] = memref.alloc() {{.*}} : memref<1x3xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[H0]] : memref<1x3xf32>) outs(%[[H]] : memref<1x3xf32>)
// CHECK:         %[[XB:[0-9]+]] = builtin.unrealized_conversion_cast %[[X]] : memref<2x1x2xf32> to memref<16xi8>
// CHECK-NEXT:    %[[OB:[0-9]+]] = builtin.unrealized_conversion_cast %[[OUT]] : memref<2x1x3xf32> to memref<24xi8>
// CHECK:         scf.for %[[T:[0-9]+]] = %{{[0-9]+}} to %{{[0-9]+}} step %{{[0-9]+}} {
// CHECK-NEXT:      %[[C12:[0-9]+]] = arith.constant 12 : index
// CHECK-NEXT:      %[[OOFF:[0-9]+]] = arith.muli %[[T]], %[[C12]] : index
// CHECK-NEXT:      %[[OT:[0-9]+]] = memref.view %[[OB]][%[[OOFF]]][] : memref<24xi8> to memref<1x3xf32>
// CHECK-NEXT:      %[[C8:[0-9]+]] = arith.constant 8 : index
// CHECK-NEXT:      %[[XOFF:[0-9]+]] = arith.muli %[[T]], %[[C8]] : index
// CHECK-NEXT:      %[[XT:[0-9]+]] = memref.view %[[XB]][%[[XOFF]]][] : memref<16xi8> to memref<1x2xf32>
// CHECK-NEXT:      linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], {{.*}} ins(%[[B]] : memref<3xf32>) outs(%[[OT]] : memref<1x3xf32>)
// CHECK:           linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[XT]], %[[W]] : memref<1x2xf32>, memref<3x2xf32>) outs(%[[OT]] : memref<1x3xf32>)
// CHECK:             arith.mulf
// CHECK-NEXT:        arith.addf
// CHECK:           linalg.generic {{.*}} ins(%[[H]], %[[R]] : memref<1x3xf32>, memref<3x3xf32>) outs(%[[OT]] : memref<1x3xf32>)
// CHECK:           linalg.generic {{.*}} outs(%[[OT]] : memref<1x3xf32>)
// CHECK:             arith.maxnumf
// CHECK:           linalg.generic {{.*}} ins(%[[OT]] : memref<1x3xf32>) outs(%[[H]] : memref<1x3xf32>)
// CHECK:         func.return


// CHECK-LABEL: func.func @bidirectional_sequence_rnn(
// CHECK-SAME:    %[[X:[0-9]+]]: memref<2x1x2xf32>, %[[FW_W:[0-9]+]]: memref<3x2xf32>, %[[FW_R:[0-9]+]]: memref<3x3xf32>, %[[FW_B:[0-9]+]]: memref<3xf32>, %[[FW_H0:[0-9]+]]: memref<1x3xf32>, %[[BW_W:[0-9]+]]: memref<3x2xf32>, %[[BW_R:[0-9]+]]: memref<3x3xf32>, %[[BW_B:[0-9]+]]: memref<3xf32>, %[[BW_H0:[0-9]+]]: memref<1x3xf32>, %[[FW_OUT:[0-9]+]]: memref<2x1x3xf32>, %[[BW_OUT:[0-9]+]]: memref<2x1x3xf32>
// Forward: t = 0, 1 into the first output.
// CHECK:         %[[FW_H:[0-9]+]] = memref.alloc() {{.*}} : memref<1x3xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[FW_H0]] : memref<1x3xf32>) outs(%[[FW_H]] : memref<1x3xf32>)
// CHECK:         %[[FW_OB:[0-9]+]] = builtin.unrealized_conversion_cast %[[FW_OUT]] : memref<2x1x3xf32> to memref<24xi8>
// CHECK:         scf.for %[[T:[0-9]+]] = %{{[0-9]+}} to %{{[0-9]+}} step %{{[0-9]+}} {
// CHECK-NEXT:      %[[C12:[0-9]+]] = arith.constant 12 : index
// CHECK-NEXT:      %[[OFF:[0-9]+]] = arith.muli %[[T]], %[[C12]] : index
// CHECK-NEXT:      %[[OT:[0-9]+]] = memref.view %[[FW_OB]][%[[OFF]]][] : memref<24xi8> to memref<1x3xf32>
// CHECK:           ins(%[[FW_B]] : memref<3xf32>) outs(%[[OT]] : memref<1x3xf32>)
// CHECK:           ins(%{{[0-9]+}}, %[[FW_W]] : memref<1x2xf32>, memref<3x2xf32>) outs(%[[OT]] : memref<1x3xf32>)
// CHECK:           ins(%[[FW_H]], %[[FW_R]] : memref<1x3xf32>, memref<3x3xf32>) outs(%[[OT]] : memref<1x3xf32>)
// CHECK:             arith.maxnumf
// CHECK:           ins(%[[OT]] : memref<1x3xf32>) outs(%[[FW_H]] : memref<1x3xf32>)
// Backward: step t reads and writes time 1 - t of the second output.
// CHECK:         %[[BW_H:[0-9]+]] = memref.alloc() {{.*}} : memref<1x3xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[BW_H0]] : memref<1x3xf32>) outs(%[[BW_H]] : memref<1x3xf32>)
// CHECK:         %[[BW_OB:[0-9]+]] = builtin.unrealized_conversion_cast %[[BW_OUT]] : memref<2x1x3xf32> to memref<24xi8>
// CHECK:         scf.for %[[T:[0-9]+]] = %{{[0-9]+}} to %{{[0-9]+}} step %{{[0-9]+}} {
// CHECK-NEXT:      %[[LAST:[0-9]+]] = arith.constant 1 : index
// CHECK-NEXT:      %[[RT:[0-9]+]] = arith.subi %[[LAST]], %[[T]] : index
// CHECK-NEXT:      %[[C12:[0-9]+]] = arith.constant 12 : index
// CHECK-NEXT:      %[[OFF:[0-9]+]] = arith.muli %[[RT]], %[[C12]] : index
// CHECK-NEXT:      %[[OT:[0-9]+]] = memref.view %[[BW_OB]][%[[OFF]]][] : memref<24xi8> to memref<1x3xf32>
// CHECK:           ins(%[[BW_B]] : memref<3xf32>) outs(%[[OT]] : memref<1x3xf32>)
// CHECK:           ins(%{{[0-9]+}}, %[[BW_W]] : memref<1x2xf32>, memref<3x2xf32>) outs(%[[OT]] : memref<1x3xf32>)
// CHECK:           ins(%[[BW_H]], %[[BW_R]] : memref<1x3xf32>, memref<3x3xf32>) outs(%[[OT]] : memref<1x3xf32>)
// CHECK:             arith.maxnumf
// CHECK:           ins(%[[OT]] : memref<1x3xf32>) outs(%[[BW_H]] : memref<1x3xf32>)
// CHECK:         func.return


// CHECK-LABEL: func.func @svdf(
// CHECK-SAME:    %[[X:[0-9]+]]: memref<2x3xf32>, %[[WF:[0-9]+]]: memref<4x3xf32>, %[[WT:[0-9]+]]: memref<4x5xf32>, %[[B:[0-9]+]]: memref<2xf32>, %[[S:[0-9]+]]: memref<2x20xf32>, %[[SO:[0-9]+]]: memref<2x20xf32>, %[[OUT:[0-9]+]]: memref<2x2xf32>
// Feature projection: 0, then += x Wf over the input.
// CHECK:         %[[FEAT:[0-9]+]] = memref.alloc() {{.*}} : memref<2x4xf32>
// CHECK:           arith.constant 0.000000e+00 : f32
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[WF]] : memref<2x3xf32>, memref<4x3xf32>) outs(%[[FEAT]] : memref<2x4xf32>)
// The memory: the state, with the feature in the last column (4).
// CHECK:         %[[MEM:[0-9]+]] = memref.alloc() {{.*}} : memref<2x4x5xf32>
// CHECK-NEXT:    %[[S3:[0-9]+]] = builtin.unrealized_conversion_cast %[[S]] : memref<2x20xf32> to memref<2x4x5xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[S3]], %[[FEAT]] : memref<2x4x5xf32>, memref<2x4xf32>) outs(%[[MEM]] : memref<2x4x5xf32>)
// CHECK-NEXT:    ^bb0(%[[OLD:[0-9]+]]: f32, %[[NEW:[0-9]+]]: f32, %{{[0-9]+}}: f32):
// CHECK-NEXT:      %[[K:[0-9]+]] = linalg.index 2 : index
// CHECK-NEXT:      %[[C4:[0-9]+]] = arith.constant 4 : index
// CHECK-NEXT:      %[[LASTCOL:[0-9]+]] = arith.cmpi eq, %[[K]], %[[C4]] : index
// CHECK-NEXT:      %[[V:[0-9]+]] = arith.select %[[LASTCOL]], %[[NEW]], %[[OLD]] : f32
// CHECK-NEXT:      linalg.yield %[[V]] : f32
// Time projection: sum over the memory of memory * Wt.
// CHECK:         %[[TIME:[0-9]+]] = memref.alloc() {{.*}} : memref<2x4xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[MEM]], %[[WT]] : memref<2x4x5xf32>, memref<4x5xf32>) outs(%[[TIME]] : memref<2x4xf32>)
// Bias, plus the sum over each unit's 2 filters, then RELU into the output.
// CHECK:         %[[ACC:[0-9]+]] = memref.alloc() {{.*}} : memref<2x2xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[B]] : memref<2xf32>) outs(%[[ACC]] : memref<2x2xf32>)
// CHECK:         %[[T3:[0-9]+]] = builtin.unrealized_conversion_cast %[[TIME]] : memref<2x4xf32> to memref<2x2x2xf32>
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[T3]] : memref<2x2x2xf32>) outs(%[[ACC]] : memref<2x2xf32>)
// CHECK:             arith.addf
// CHECK:         %[[OUT4:[0-9]+]] = builtin.unrealized_conversion_cast %[[OUT]] : memref<2x2xf32> to memref<4xf32>
// CHECK-NEXT:    %[[ACC4:[0-9]+]] = builtin.unrealized_conversion_cast %[[ACC]] : memref<2x2xf32> to memref<4xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[ACC4]] : memref<4xf32>) outs(%[[OUT4]] : memref<4xf32>)
// CHECK:           arith.maxnumf
// State output: memory column k + 1 (at most 4), 0 in the last column.
// CHECK:         %[[SO3:[0-9]+]] = builtin.unrealized_conversion_cast %[[SO]] : memref<2x20xf32> to memref<2x4x5xf32>
// CHECK-NEXT:    linalg.generic {{.*}} outs(%[[SO3]] : memref<2x4x5xf32>)
// CHECK:           %[[K:[0-9]+]] = linalg.index 2 : index
// CHECK-NEXT:      %[[ONE:[0-9]+]] = arith.constant 1 : index
// CHECK-NEXT:      %[[K1:[0-9]+]] = arith.addi %[[K]], %[[ONE]] : index
// CHECK-NEXT:      %[[C4:[0-9]+]] = arith.constant 4 : index
// CHECK-NEXT:      %[[KC:[0-9]+]] = arith.minsi %[[K1]], %[[C4]] : index
// CHECK-NEXT:      %[[V:[0-9]+]] = memref.load %[[MEM]][%{{[0-9]+}}, %{{[0-9]+}}, %[[KC]]] : memref<2x4x5xf32>
// CHECK-NEXT:      %[[C4B:[0-9]+]] = arith.constant 4 : index
// CHECK-NEXT:      %[[LASTCOL:[0-9]+]] = arith.cmpi eq, %[[K]], %[[C4B]] : index
// CHECK-NEXT:      %[[Z:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[R:[0-9]+]] = arith.select %[[LASTCOL]], %[[Z]], %[[V]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32


// CHECK-LABEL: func.func @bidirectional_sequence_lstm(
// CHECK-SAME:    %[[X:[0-9]+]]: memref<2x1x2xf32>, %[[FW_WF:[0-9]+]]: memref<2x2xf32>, %[[FW_WC:[0-9]+]]: memref<2x2xf32>, %[[FW_WO:[0-9]+]]: memref<2x2xf32>, %[[FW_RF:[0-9]+]]: memref<2x2xf32>, %[[FW_RC:[0-9]+]]: memref<2x2xf32>, %[[FW_RO:[0-9]+]]: memref<2x2xf32>, %[[FW_BF:[0-9]+]]: memref<2xf32>, %[[FW_BC:[0-9]+]]: memref<2xf32>, %[[FW_BO:[0-9]+]]: memref<2xf32>, %[[BW_WF:[0-9]+]]: memref<2x2xf32>, %[[BW_WC:[0-9]+]]: memref<2x2xf32>, %[[BW_WO:[0-9]+]]: memref<2x2xf32>, %[[BW_RF:[0-9]+]]: memref<2x2xf32>, %[[BW_RC:[0-9]+]]: memref<2x2xf32>, %[[BW_RO:[0-9]+]]: memref<2x2xf32>, %[[BW_BF:[0-9]+]]: memref<2xf32>, %[[BW_BC:[0-9]+]]: memref<2xf32>, %[[BW_BO:[0-9]+]]: memref<2xf32>, %[[FW_H0:[0-9]+]]: memref<1x2xf32>, %[[FW_C0:[0-9]+]]: memref<1x2xf32>, %[[BW_H0:[0-9]+]]: memref<1x2xf32>, %[[BW_C0:[0-9]+]]: memref<1x2xf32>, %[[FW_OUT:[0-9]+]]: memref<2x1x2xf32>, %[[BW_OUT:[0-9]+]]: memref<2x1x2xf32>
// Forward direction, t = 0, 1.
// CHECK:         %[[FW_H:[0-9]+]] = memref.alloc() {{.*}} : memref<1x2xf32>
// CHECK-NEXT:    %[[FW_C:[0-9]+]] = memref.alloc() {{.*}} : memref<1x2xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[FW_H0]] : memref<1x2xf32>) outs(%[[FW_H]] : memref<1x2xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[FW_C0]] : memref<1x2xf32>) outs(%[[FW_C]] : memref<1x2xf32>)
// CHECK:         %[[FW_G:[0-9]+]] = memref.alloc() {{.*}} : memref<3x1x2xf32>
// CHECK-NEXT:    %[[FW_OB:[0-9]+]] = builtin.unrealized_conversion_cast %[[FW_OUT]] : memref<2x1x2xf32> to memref<16xi8>
// CHECK-NEXT:    %[[FW_XG:[0-9]+]] = memref.alloc() {{.*}} : memref<3x2x2xf32>
// CHECK-NEXT:    %[[FW_XF:[0-9]+]] = builtin.unrealized_conversion_cast %[[X]] : memref<2x1x2xf32> to memref<2x2xf32>
// CHECK:         %[[FW_XC:[0-9]+]] = memref.view %{{[0-9]+}}[%{{[0-9]+}}][] : memref<48xi8> to memref<2x2xf32>
// CHECK:         %[[FW_XFG:[0-9]+]] = memref.view %{{[0-9]+}}[%{{[0-9]+}}][] : memref<48xi8> to memref<2x2xf32>
// CHECK:         %[[FW_XO:[0-9]+]] = memref.view %{{[0-9]+}}[%{{[0-9]+}}][] : memref<48xi8> to memref<2x2xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[FW_BC]] : memref<2xf32>) outs(%[[FW_XC]] : memref<2x2xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[FW_XF]], %[[FW_WC]] : memref<2x2xf32>, memref<2x2xf32>) outs(%[[FW_XC]] : memref<2x2xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[FW_BF]] : memref<2xf32>) outs(%[[FW_XFG]] : memref<2x2xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[FW_XF]], %[[FW_WF]] : memref<2x2xf32>, memref<2x2xf32>) outs(%[[FW_XFG]] : memref<2x2xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[FW_BO]] : memref<2xf32>) outs(%[[FW_XO]] : memref<2x2xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[FW_XF]], %[[FW_WO]] : memref<2x2xf32>, memref<2x2xf32>) outs(%[[FW_XO]] : memref<2x2xf32>)
// CHECK:         scf.for %[[T:[0-9]+]] = %{{[0-9]+}} to %{{[0-9]+}} step %{{[0-9]+}} {
// CHECK-NEXT:      %[[C8:[0-9]+]] = arith.constant 8 : index
// CHECK-NEXT:      %[[OFF:[0-9]+]] = arith.muli %[[T]], %[[C8]] : index
// CHECK-NEXT:      %[[OT:[0-9]+]] = memref.view %[[FW_OB]][%[[OFF]]][] : memref<16xi8> to memref<1x2xf32>
// Recurrent products into the gate blocks (cell, forget, output).
// CHECK:           linalg.generic {{.*}} ins(%[[FW_H]], %[[FW_RC]] : memref<1x2xf32>, memref<2x2xf32>)
// CHECK:           linalg.generic {{.*}} ins(%[[FW_H]], %[[FW_RF]] : memref<1x2xf32>, memref<2x2xf32>)
// CHECK:           linalg.generic {{.*}} ins(%[[FW_H]], %[[FW_RO]] : memref<1x2xf32>, memref<2x2xf32>)
// Forget gate: sigmoid; c = f * c.
// CHECK:           linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (1, d0, d1)>]{{.*}} outs(%[[FW_G]] : memref<3x1x2xf32>)
// CHECK:             arith.cmpi slt
// CHECK:             arith.divf
// CHECK:           linalg.generic {{.*}} ins(%[[FW_G]], %[[FW_C]] : memref<3x1x2xf32>, memref<1x2xf32>) outs(%[[FW_C]] : memref<1x2xf32>)
// CHECK:             arith.mulf
// Cell gate: tanh; CIFG's input gate 1 - f; c += i * g.
// CHECK:           linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d0, d1)>]{{.*}} outs(%[[FW_G]] : memref<3x1x2xf32>)
// CHECK:             math.tanh
// CHECK:           linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (1, d0, d1)>]{{.*}} outs(%[[FW_G]] : memref<3x1x2xf32>)
// CHECK:             arith.constant 1.000000e+00 : f32
// CHECK-NEXT:        arith.subf
// CHECK:           linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d0, d1)>, affine_map<(d0, d1) -> (1, d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>]{{.*}} outs(%[[FW_C]] : memref<1x2xf32>)
// CHECK:             arith.mulf
// CHECK-NEXT:        arith.addf
// Output gate: sigmoid; h = o * tanh(c), written to the output at this step
// and to the state.
// CHECK:           linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (2, d0, d1)>]{{.*}} outs(%[[FW_G]] : memref<3x1x2xf32>)
// CHECK:             arith.cmpi slt
// CHECK:           linalg.generic {{.*}} ins(%[[FW_C]] : memref<1x2xf32>) outs(%[[FW_G]] : memref<3x1x2xf32>)
// CHECK:             math.tanh
// CHECK:           linalg.generic {{.*}} ins(%[[FW_G]] : memref<3x1x2xf32>) outs(%[[FW_G]] : memref<3x1x2xf32>)
// CHECK:             arith.mulf
// CHECK:           linalg.generic {{.*}} ins(%[[FW_G]] : memref<3x1x2xf32>) outs(%[[OT]] : memref<1x2xf32>)
// CHECK:           linalg.generic {{.*}} ins(%[[OT]] : memref<1x2xf32>) outs(%[[FW_H]] : memref<1x2xf32>)
// Backward direction: step t is time 1 - t.
// CHECK:         %[[BW_H:[0-9]+]] = memref.alloc() {{.*}} : memref<1x2xf32>
// CHECK-NEXT:    %[[BW_C:[0-9]+]] = memref.alloc() {{.*}} : memref<1x2xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[BW_H0]] : memref<1x2xf32>) outs(%[[BW_H]] : memref<1x2xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[BW_C0]] : memref<1x2xf32>) outs(%[[BW_C]] : memref<1x2xf32>)
// CHECK:         %[[BW_G:[0-9]+]] = memref.alloc() {{.*}} : memref<3x1x2xf32>
// CHECK-NEXT:    %[[BW_OB:[0-9]+]] = builtin.unrealized_conversion_cast %[[BW_OUT]] : memref<2x1x2xf32> to memref<16xi8>
// CHECK-NEXT:    %[[BW_XG:[0-9]+]] = memref.alloc() {{.*}} : memref<3x2x2xf32>
// CHECK-NEXT:    %[[BW_XF:[0-9]+]] = builtin.unrealized_conversion_cast %[[X]] : memref<2x1x2xf32> to memref<2x2xf32>
// CHECK:         %[[BW_XC:[0-9]+]] = memref.view %{{[0-9]+}}[%{{[0-9]+}}][] : memref<48xi8> to memref<2x2xf32>
// CHECK:         %[[BW_XFG:[0-9]+]] = memref.view %{{[0-9]+}}[%{{[0-9]+}}][] : memref<48xi8> to memref<2x2xf32>
// CHECK:         %[[BW_XO:[0-9]+]] = memref.view %{{[0-9]+}}[%{{[0-9]+}}][] : memref<48xi8> to memref<2x2xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[BW_BC]] : memref<2xf32>) outs(%[[BW_XC]] : memref<2x2xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[BW_XF]], %[[BW_WC]] : memref<2x2xf32>, memref<2x2xf32>) outs(%[[BW_XC]] : memref<2x2xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[BW_BF]] : memref<2xf32>) outs(%[[BW_XFG]] : memref<2x2xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[BW_XF]], %[[BW_WF]] : memref<2x2xf32>, memref<2x2xf32>) outs(%[[BW_XFG]] : memref<2x2xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[BW_BO]] : memref<2xf32>) outs(%[[BW_XO]] : memref<2x2xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[BW_XF]], %[[BW_WO]] : memref<2x2xf32>, memref<2x2xf32>) outs(%[[BW_XO]] : memref<2x2xf32>)
// CHECK:         scf.for %[[T:[0-9]+]] = %{{[0-9]+}} to %{{[0-9]+}} step %{{[0-9]+}} {
// CHECK-NEXT:      %[[LAST:[0-9]+]] = arith.constant 1 : index
// CHECK-NEXT:      %[[RT:[0-9]+]] = arith.subi %[[LAST]], %[[T]] : index
// CHECK-NEXT:      %[[C8:[0-9]+]] = arith.constant 8 : index
// CHECK-NEXT:      %[[OFF:[0-9]+]] = arith.muli %[[RT]], %[[C8]] : index
// CHECK-NEXT:      %[[OT:[0-9]+]] = memref.view %[[BW_OB]][%[[OFF]]][] : memref<16xi8> to memref<1x2xf32>
// Recurrent products into the gate blocks (cell, forget, output).
// CHECK:           linalg.generic {{.*}} ins(%[[BW_H]], %[[BW_RC]] : memref<1x2xf32>, memref<2x2xf32>)
// CHECK:           linalg.generic {{.*}} ins(%[[BW_H]], %[[BW_RF]] : memref<1x2xf32>, memref<2x2xf32>)
// CHECK:           linalg.generic {{.*}} ins(%[[BW_H]], %[[BW_RO]] : memref<1x2xf32>, memref<2x2xf32>)
// Forget gate: sigmoid; c = f * c.
// CHECK:           linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (1, d0, d1)>]{{.*}} outs(%[[BW_G]] : memref<3x1x2xf32>)
// CHECK:             arith.cmpi slt
// CHECK:             arith.divf
// CHECK:           linalg.generic {{.*}} ins(%[[BW_G]], %[[BW_C]] : memref<3x1x2xf32>, memref<1x2xf32>) outs(%[[BW_C]] : memref<1x2xf32>)
// CHECK:             arith.mulf
// Cell gate: tanh; CIFG's input gate 1 - f; c += i * g.
// CHECK:           linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d0, d1)>]{{.*}} outs(%[[BW_G]] : memref<3x1x2xf32>)
// CHECK:             math.tanh
// CHECK:           linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (1, d0, d1)>]{{.*}} outs(%[[BW_G]] : memref<3x1x2xf32>)
// CHECK:             arith.constant 1.000000e+00 : f32
// CHECK-NEXT:        arith.subf
// CHECK:           linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d0, d1)>, affine_map<(d0, d1) -> (1, d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>]{{.*}} outs(%[[BW_C]] : memref<1x2xf32>)
// CHECK:             arith.mulf
// CHECK-NEXT:        arith.addf
// Output gate: sigmoid; h = o * tanh(c), written to the output at this step
// and to the state.
// CHECK:           linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (2, d0, d1)>]{{.*}} outs(%[[BW_G]] : memref<3x1x2xf32>)
// CHECK:             arith.cmpi slt
// CHECK:           linalg.generic {{.*}} ins(%[[BW_C]] : memref<1x2xf32>) outs(%[[BW_G]] : memref<3x1x2xf32>)
// CHECK:             math.tanh
// CHECK:           linalg.generic {{.*}} ins(%[[BW_G]] : memref<3x1x2xf32>) outs(%[[BW_G]] : memref<3x1x2xf32>)
// CHECK:             arith.mulf
// CHECK:           linalg.generic {{.*}} ins(%[[BW_G]] : memref<3x1x2xf32>) outs(%[[OT]] : memref<1x2xf32>)
// CHECK:           linalg.generic {{.*}} ins(%[[OT]] : memref<1x2xf32>) outs(%[[BW_H]] : memref<1x2xf32>)
// CHECK:         func.return
