// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// UNIDIRECTIONAL_SEQUENCE_LSTM, batch-major [batch 2, 3 steps, 2 features],
// 4 units, no peephole/projection/layer norm, 3 outputs.  The batch-major
// input is transposed once to a time-major temporary; the state is carried in
// the output_state_out/cell_state_out outputs (initialised from the state
// inputs); the input products of all steps are computed before the loop
// (they do not depend on the state); one scf.for runs LSTM's cell on
// [batch, size] steps taken with memref.view at t * batch * size elements,
// adding the recurrent products to the step's input products; each step's
// output is copied into the hidden state; a last transpose writes the
// batch-major output.
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

  // Time-major, batch 1, 16 inputs and 16 units: deep enough for the shared
  // vector kernels of FULLY_CONNECTED.
  func.func @kernels(%x: tensor<4x1x16xf32>, %wi: tensor<16x16xf32>, %wf: tensor<16x16xf32>, %wc: tensor<16x16xf32>, %wo: tensor<16x16xf32>, %ri: tensor<16x16xf32>, %rf: tensor<16x16xf32>, %rc: tensor<16x16xf32>, %ro: tensor<16x16xf32>, %bi: tensor<16xf32>, %bf: tensor<16xf32>, %bc: tensor<16xf32>, %bo: tensor<16xf32>, %h: tensor<1x16xf32>, %c: tensor<1x16xf32>) -> (tensor<4x1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>) {
    %none = "nnapi.no_value"() : () -> tensor<?xf32>
    %none2 = "nnapi.no_value"() : () -> tensor<?x?xf32>
    %act = "nnapi.constant"() <{value = dense<4> : tensor<i32>}> : () -> i32
    %cclip = "nnapi.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> f32
    %pclip = "nnapi.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> f32
    %tm = "nnapi.constant"() <{value = dense<true> : tensor<i1>}> : () -> i1
    %o, %ho, %co = "nnapi.unidirectional_sequence_lstm"(%x, %wi, %wf, %wc, %wo, %ri, %rf, %rc, %ro, %none, %none, %none, %bi, %bf, %bc, %bo, %none2, %none, %h, %c, %act, %cclip, %pclip, %tm, %none, %none, %none, %none) : (tensor<4x1x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<?x?xf32>, tensor<?xf32>, tensor<1x16xf32>, tensor<1x16xf32>, i32, f32, f32, i1, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) -> (tensor<4x1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>)
    func.return %o, %ho, %co : tensor<4x1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>
  }
}

// CHECK:      func.func @main(%[[X:[^:]*]]: memref<2x3x2xf32>, %[[WI:[^:]*]]: memref<4x2xf32>, %{{[^:]*}}: memref<4x2xf32>, %{{[^:]*}}: memref<4x2xf32>, %{{[^:]*}}: memref<4x2xf32>, %[[RI:[^:]*]]: memref<4x4xf32>, %{{[^:]*}}: memref<4x4xf32>, %{{[^:]*}}: memref<4x4xf32>, %{{[^:]*}}: memref<4x4xf32>, %[[BI:[^:]*]]: memref<4xf32>, %{{[^:]*}}: memref<4xf32>, %{{[^:]*}}: memref<4xf32>, %{{[^:]*}}: memref<4xf32>, %[[H0:[^:]*]]: memref<2x4xf32>, %[[C0:[^:]*]]: memref<2x4xf32>, %[[OUT:[^:]*]]: memref<2x3x4xf32>, %[[HOUT:[^:]*]]: memref<2x4xf32>, %[[COUT:[^:]*]]: memref<2x4xf32>, %{{.*}}: memref<1xi8>, %{{.*}}: memref<1xi32>)
// CHECK:        %[[XT:.*]] = memref.alloc() {{.*}} : memref<3x2x2xf32>
// CHECK-NEXT:   linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], {{.*}} ins(%[[X]] : memref<2x3x2xf32>) outs(%[[XT]] : memref<3x2x2xf32>)
// CHECK:        %[[YT:.*]] = memref.alloc() {{.*}} : memref<3x2x4xf32>
// The initial states copied to the state outputs, each one loop of 8.
// CHECK:        %[[HOUT8:.*]] = builtin.unrealized_conversion_cast %[[HOUT]] : memref<2x4xf32> to memref<8xf32>
// CHECK-NEXT:   %[[H08:.*]] = builtin.unrealized_conversion_cast %[[H0]] : memref<2x4xf32> to memref<8xf32>
// CHECK-NEXT:   linalg.generic {{.*}} ins(%[[H08]] : memref<8xf32>) outs(%[[HOUT8]] : memref<8xf32>)
// CHECK:        %[[COUT8:.*]] = builtin.unrealized_conversion_cast %[[COUT]] : memref<2x4xf32> to memref<8xf32>
// CHECK-NEXT:   %[[C08:.*]] = builtin.unrealized_conversion_cast %[[C0]] : memref<2x4xf32> to memref<8xf32>
// CHECK-NEXT:   linalg.generic {{.*}} ins(%[[C08]] : memref<8xf32>) outs(%[[COUT8]] : memref<8xf32>)
// CHECK:        %[[G:.*]] = memref.alloc() {{.*}} : memref<4x2x4xf32>
// CHECK-NEXT:   %[[YB:.*]] = builtin.unrealized_conversion_cast %[[YT]] : memref<3x2x4xf32> to memref<96xi8>
// The input products of all steps before the loop, per gate a [time * batch,
// units] block of PRE (here generics: the input is too shallow for the vector
// kernels): input gate (block 0) = bias + x W_i^T.
// CHECK-NEXT:   %[[PRE:.*]] = memref.alloc() {{.*}} : memref<4x6x4xf32>
// CHECK-NEXT:   %[[XR:.*]] = builtin.unrealized_conversion_cast %[[XT]] : memref<3x2x2xf32> to memref<6x2xf32>
// CHECK-NEXT:   %[[PB:.*]] = builtin.unrealized_conversion_cast %[[PRE]] : memref<4x6x4xf32> to memref<384xi8>
// CHECK-NEXT:   %[[P0OFF:.*]] = arith.constant 0 : index
// CHECK-NEXT:   %[[P0:.*]] = memref.view %[[PB]][%[[P0OFF]]][] : memref<384xi8> to memref<6x4xf32>
// CHECK:        linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], {{.*}} ins(%[[BI]] : memref<4xf32>) outs(%[[P0]] : memref<6x4xf32>)
// CHECK-NEXT:     ^bb
// CHECK-NEXT:       linalg.yield
// CHECK-NEXT:   }
// CHECK-NEXT:   linalg.generic {{.*}} ins(%[[XR]], %[[WI]] : memref<6x2xf32>, memref<4x2xf32>) outs(%[[P0]] : memref<6x4xf32>)
// CHECK:        scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:     %[[YS:.*]] = arith.constant 32 : index
// CHECK-NEXT:     %[[YOFF:.*]] = arith.muli %[[T]], %[[YS]] : index
// CHECK-NEXT:     %[[Y:.*]] = memref.view %[[YB]][%[[YOFF]]][] : memref<96xi8> to memref<2x4xf32>
// Step t's input products: block 0 of PRE at element t * batch * units.
// CHECK-NEXT:     %[[TS:.*]] = arith.constant 8 : index
// CHECK-NEXT:     %[[TOFF:.*]] = arith.muli %[[T]], %[[TS]] : index
// CHECK-NEXT:     %[[K0:.*]] = arith.constant 0 : index
// CHECK-NEXT:     %[[E0:.*]] = arith.addi %[[TOFF]], %[[K0]] : index
// CHECK-NEXT:     %[[PB2:.*]] = builtin.unrealized_conversion_cast %[[PRE]] : memref<4x6x4xf32> to memref<384xi8>
// CHECK-NEXT:     %[[W4:.*]] = arith.constant 4 : index
// CHECK-NEXT:     %[[B0:.*]] = arith.muli %[[E0]], %[[W4]] : index
// CHECK-NEXT:     %[[XP0:.*]] = memref.view %[[PB2]][%[[B0]]][] : memref<384xi8> to memref<2x4xf32>
// Gate block 0 of G as a [batch, units] view.
// CHECK:          %[[GB:.*]] = builtin.unrealized_conversion_cast %[[G]] : memref<4x2x4xf32> to memref<128xi8>
// CHECK-NEXT:     %[[G0OFF:.*]] = arith.constant 0 : index
// CHECK-NEXT:     %[[G0:.*]] = memref.view %[[GB]][%[[G0OFF]]][] : memref<128xi8> to memref<2x4xf32>
// += R_i h (a generic, in place), then the sum goes into the gate block.
// CHECK:          linalg.generic {{.*}} ins(%[[HOUT]], %[[RI]] : memref<2x4xf32>, memref<4x4xf32>) outs(%[[XP0]] : memref<2x4xf32>)
// CHECK:          %[[G08:.*]] = builtin.unrealized_conversion_cast %[[G0]] : memref<2x4xf32> to memref<8xf32>
// CHECK-NEXT:     %[[XP08:.*]] = builtin.unrealized_conversion_cast %[[XP0]] : memref<2x4xf32> to memref<8xf32>
// CHECK-NEXT:     linalg.generic {{.*}} ins(%[[XP08]] : memref<8xf32>) outs(%[[G08]] : memref<8xf32>)
// The input gate's sigmoid on block 0 of G.
// CHECK:          linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d0, d1)>], {{.*}} outs(%[[G]] : memref<4x2x4xf32>)
// CHECK:            arith.cmpi slt
// The cell clip of 10 on the carried cell state.
// CHECK:          linalg.generic {{.*}} outs(%[[COUT]] : memref<2x4xf32>)
// CHECK:            arith.constant -1.000000e+01 : f32
// The step's output is o * tanh(c), then the new hidden state.
// CHECK:          linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (3, d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], {{.*}} ins(%[[G]] : memref<4x2x4xf32>) outs(%[[Y]] : memref<2x4xf32>)
// CHECK:          %[[HOUT8:.*]] = builtin.unrealized_conversion_cast %[[HOUT]] : memref<2x4xf32> to memref<8xf32>
// CHECK-NEXT:     %[[Y8:.*]] = builtin.unrealized_conversion_cast %[[Y]] : memref<2x4xf32> to memref<8xf32>
// CHECK-NEXT:     linalg.generic {{.*}} ins(%[[Y8]] : memref<8xf32>) outs(%[[HOUT8]] : memref<8xf32>)
// After the loop (at function level), the transpose back to batch-major.
// CHECK:        {{^    }}linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d0, d2)>], {{.*}} ins(%[[YT]] : memref<3x2x4xf32>) outs(%[[OUT]] : memref<2x3x4xf32>)
// CHECK:        func.return

// With 16 inputs and 16 units the gate products use FULLY_CONNECTED's shared
// vector kernels: before the loop, per gate, one GEMM over all 4 time steps
// (a weight panel transposition, then the 4-row GEMM kernel from the bias) into
// PRE [gate, time * batch, units]; in the loop, per gate, dot products of h
// with R_g starting from the step's input products (a block of 12 units and
// one of 4), written into the gate block of G.
// CHECK:      func.func @kernels(%[[KX:[^:]*]]: memref<4x1x16xf32>,
// CHECK:        %[[KG:.*]] = memref.alloc() {{.*}} : memref<4x1x16xf32>
// CHECK:        %[[KPRE:.*]] = memref.alloc() {{.*}} : memref<4x4x16xf32>
// CHECK-COUNT-4: }{nnc.kernel = "nnc_gemm_4x16_l1_none"}
// CHECK:        scf.for %[[KT:[^ ]*]] =
// Step t's input products of gate 0: PRE at element t * 16 (bytes * 4).
// CHECK-NEXT:     arith.constant 64 : index
// CHECK-NEXT:     arith.muli %[[KT]]
// CHECK-NEXT:     memref.view
// CHECK-NEXT:     %[[KS:.*]] = arith.constant 16 : index
// CHECK-NEXT:     %[[KTOFF:.*]] = arith.muli %[[KT]], %[[KS]] : index
// CHECK-NEXT:     %[[KZ:.*]] = arith.constant 0 : index
// CHECK-NEXT:     %[[KE:.*]] = arith.addi %[[KTOFF]], %[[KZ]] : index
// CHECK-NEXT:     %[[KPB:.*]] = builtin.unrealized_conversion_cast %[[KPRE]] : memref<4x4x16xf32> to memref<1024xi8>
// CHECK-NEXT:     %[[K4:.*]] = arith.constant 4 : index
// CHECK-NEXT:     %[[KB:.*]] = arith.muli %[[KE]], %[[K4]] : index
// CHECK-NEXT:     %[[KXP0:.*]] = memref.view %[[KPB]][%[[KB]]][] : memref<1024xi8> to memref<1x16xf32>
// Gate 0 (the bias argument of the dot kernel is row 0 of the step's input products).
// CHECK:          builtin.unrealized_conversion_cast %[[KG]] : memref<4x1x16xf32> to memref<256xi8>
// CHECK:          %[[KXPB:.*]] = builtin.unrealized_conversion_cast %[[KXP0]] : memref<1x16xf32> to memref<64xi8>
// CHECK-NEXT:     %[[KZ2:.*]] = arith.constant 0 : index
// CHECK-NEXT:     %[[KBIAS:.*]] = memref.view %[[KXPB]][%[[KZ2]]][] : memref<64xi8> to memref<16xf32>
// CHECK:          scf.execute_region {
// CHECK-NEXT:       builtin.unrealized_conversion_cast %{{.*}}, %{{.*}}, %[[KBIAS]], %{{.*}} :
// CHECK:            }{nnc.kernel = "nnc_dot_1x12_t0_none"}
// CHECK:            }{nnc.kernel = "nnc_dot_1x4_t0_none"}
// CHECK-COUNT-3:    }{nnc.kernel = "nnc_dot_1x12_t0_none"}
// The cell's element-wise part on G as before, then the step's output.
// CHECK:          linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d0, d1)>], {{.*}} outs(%[[KG]] : memref<4x1x16xf32>)
// CHECK:        func.return
