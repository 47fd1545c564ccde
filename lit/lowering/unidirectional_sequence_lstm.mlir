// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// UNIDIRECTIONAL_SEQUENCE_LSTM, batch-major [batch 2, 3 steps, 2 features],
// 4 units, no peephole/projection/layer norm, 3 outputs.  The batch-major
// input is transposed once to a time-major temporary; the state is carried in
// the output_state_out/cell_state_out outputs (initialised from the state
// inputs); one scf.for runs LSTM's cell on [batch, size] steps taken with
// memref.view at t * batch * size elements; each step's output is copied into
// the hidden state; a last transpose writes the batch-major output.
builtin.module {
  func.func @main(%x: tensor<2x3x2xf32>, %wi: tensor<4x2xf32>, %wf: tensor<4x2xf32>, %wc: tensor<4x2xf32>, %wo: tensor<4x2xf32>, %ri: tensor<4x4xf32>, %rf: tensor<4x4xf32>, %rc: tensor<4x4xf32>, %ro: tensor<4x4xf32>, %bi: tensor<4xf32>, %bf: tensor<4xf32>, %bc: tensor<4xf32>, %bo: tensor<4xf32>, %h: tensor<2x4xf32>, %c: tensor<2x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
    %none = "nnapi.no_value"() : () -> tensor<?xf32>
    %none2 = "nnapi.no_value"() : () -> tensor<?x?xf32>
    %act = "nnapi.constant"() <{value = dense<4> : tensor<i32>}> : () -> i32
    %cclip = "nnapi.constant"() <{value = dense<10.0> : tensor<f32>}> : () -> f32
    %pclip = "nnapi.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> f32
    %tm = "nnapi.constant"() <{value = dense<false> : tensor<i1>}> : () -> i1
    %o, %ho, %co = "nnapi.unidirectional_sequence_lstm"(%x, %wi, %wf, %wc, %wo, %ri, %rf, %rc, %ro, %none, %none, %none, %bi, %bf, %bc, %bo, %none2, %none, %h, %c, %act, %cclip, %pclip, %tm, %none, %none, %none, %none) : (tensor<2x3x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<?x?xf32>, tensor<?xf32>, tensor<2x4xf32>, tensor<2x4xf32>, i32, f32, f32, i1, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) -> (tensor<2x3x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
    func.return %o, %ho, %co : tensor<2x3x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
  }
}

// CHECK:      func.func @main(%[[X:[^:]*]]: memref<2x3x2xf32>, %[[WI:[^:]*]]: memref<4x2xf32>, %{{[^:]*}}: memref<4x2xf32>, %{{[^:]*}}: memref<4x2xf32>, %{{[^:]*}}: memref<4x2xf32>, %[[RI:[^:]*]]: memref<4x4xf32>, %{{[^:]*}}: memref<4x4xf32>, %{{[^:]*}}: memref<4x4xf32>, %{{[^:]*}}: memref<4x4xf32>, %[[BI:[^:]*]]: memref<4xf32>, %{{[^:]*}}: memref<4xf32>, %{{[^:]*}}: memref<4xf32>, %{{[^:]*}}: memref<4xf32>, %[[H0:[^:]*]]: memref<2x4xf32>, %[[C0:[^:]*]]: memref<2x4xf32>, %[[OUT:[^:]*]]: memref<2x3x4xf32>, %[[HOUT:[^:]*]]: memref<2x4xf32>, %[[COUT:[^:]*]]: memref<2x4xf32>, %{{.*}}: memref<1xi8>, %{{.*}}: memref<1xi32>)
// CHECK:        %[[XT:.*]] = memref.alloc() {{.*}} : memref<3x2x2xf32>
// CHECK-NEXT:   linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], {{.*}} ins(%[[X]] : memref<2x3x2xf32>) outs(%[[XT]] : memref<3x2x2xf32>)
// CHECK:        %[[YT:.*]] = memref.alloc() {{.*}} : memref<3x2x4xf32>
// CHECK:        linalg.generic {{.*}} ins(%[[H0]] : memref<2x4xf32>) outs(%[[HOUT]] : memref<2x4xf32>)
// CHECK:        linalg.generic {{.*}} ins(%[[C0]] : memref<2x4xf32>) outs(%[[COUT]] : memref<2x4xf32>)
// CHECK:        %[[G:.*]] = memref.alloc() {{.*}} : memref<4x2x4xf32>
// CHECK-NEXT:   %[[XB:.*]] = builtin.unrealized_conversion_cast %[[XT]] : memref<3x2x2xf32> to memref<48xi8>
// CHECK-NEXT:   %[[YB:.*]] = builtin.unrealized_conversion_cast %[[YT]] : memref<3x2x4xf32> to memref<96xi8>
// CHECK:        scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:     %[[YS:.*]] = arith.constant 32 : index
// CHECK-NEXT:     %[[YOFF:.*]] = arith.muli %[[T]], %[[YS]] : index
// CHECK-NEXT:     %[[Y:.*]] = memref.view %[[YB]][%[[YOFF]]][] : memref<96xi8> to memref<2x4xf32>
// CHECK-NEXT:     %[[XS:.*]] = arith.constant 16 : index
// CHECK-NEXT:     %[[XOFF:.*]] = arith.muli %[[T]], %[[XS]] : index
// CHECK-NEXT:     %[[XV:.*]] = memref.view %[[XB]][%[[XOFF]]][] : memref<48xi8> to memref<2x2xf32>
// Input gate (block 0) = bias, += W_i x_t, ..., += R_i h.
// CHECK:          linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (0, d0, d1)>], {{.*}} ins(%[[BI]] : memref<4xf32>) outs(%[[G]] : memref<4x2x4xf32>)
// CHECK:          linalg.generic {{.*}} ins(%[[XV]], %[[WI]] : memref<2x2xf32>, memref<4x2xf32>) outs(%[[G]] : memref<4x2x4xf32>)
// CHECK:          linalg.generic {{.*}} ins(%[[HOUT]], %[[RI]] : memref<2x4xf32>, memref<4x4xf32>) outs(%[[G]] : memref<4x2x4xf32>)
// The cell clip of 10 on the carried cell state.
// CHECK:          linalg.generic {{.*}} outs(%[[COUT]] : memref<2x4xf32>)
// CHECK:            arith.constant -1.000000e+01 : f32
// The step's output is o * tanh(c), then the new hidden state.
// CHECK:          linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (3, d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], {{.*}} ins(%[[G]] : memref<4x2x4xf32>) outs(%[[Y]] : memref<2x4xf32>)
// CHECK:          linalg.generic {{.*}} ins(%[[Y]] : memref<2x4xf32>) outs(%[[HOUT]] : memref<2x4xf32>)
// After the loop (at function level), the transpose back to batch-major.
// CHECK:        {{^    }}linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d0, d2)>], {{.*}} ins(%[[YT]] : memref<3x2x4xf32>) outs(%[[OUT]] : memref<2x3x4xf32>)
// CHECK:        func.return
