// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// The integer LSTM cells (passes/lowering/recurrent_q8.py), bit-exact with
// Android's QuantizedLSTMCell and QLSTM; every intermediate is an i32 holding
// the reference's int16/int32 value.

// QUANTIZED_16BIT_LSTM, batch 1, input 2, output 4: the fully connected node
// reads the concatenated row [input, prev output] (1x6) against each gate's
// weight row [recurrent, input] (4x6), as Android concatenates them; the
// gate sums start from the bias.  The gemmlowp int16 logistic and tanh are
// shared kernels: their code is emitted once, later uses only name them.
builtin.module {
  func.func @q16(%a0: tensor<1x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 7.812500e-03 : f64, #builtin.int<128>>>, %a1: tensor<4x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 4.000000e-03 : f64, #builtin.int<100>>>, %a2: tensor<4x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 4.000000e-03 : f64, #builtin.int<100>>>, %a3: tensor<4x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 4.000000e-03 : f64, #builtin.int<100>>>, %a4: tensor<4x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 4.000000e-03 : f64, #builtin.int<100>>>, %a5: tensor<4x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 4.000000e-03 : f64, #builtin.int<100>>>, %a6: tensor<4x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 4.000000e-03 : f64, #builtin.int<100>>>, %a7: tensor<4x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 4.000000e-03 : f64, #builtin.int<100>>>, %a8: tensor<4x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 4.000000e-03 : f64, #builtin.int<100>>>, %a9: tensor<4x!nnapi.quant<"TENSOR_INT32", 3.125000e-05 : f64, #builtin.int<0>>>, %a10: tensor<4x!nnapi.quant<"TENSOR_INT32", 3.125000e-05 : f64, #builtin.int<0>>>, %a11: tensor<4x!nnapi.quant<"TENSOR_INT32", 3.125000e-05 : f64, #builtin.int<0>>>, %a12: tensor<4x!nnapi.quant<"TENSOR_INT32", 3.125000e-05 : f64, #builtin.int<0>>>, %a13: tensor<1x4x!nnapi.quant<"TENSOR_QUANT16_SYMM", 4.8828125e-04 : f64, #builtin.int<0>>>, %a14: tensor<1x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 7.812500e-03 : f64, #builtin.int<128>>>) -> (tensor<1x4x!nnapi.quant<"TENSOR_QUANT16_SYMM", 4.8828125e-04 : f64, #builtin.int<0>>>, tensor<1x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 7.812500e-03 : f64, #builtin.int<128>>>) {
    %c, %o = "nnapi.quantized_16bit_lstm"(%a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7, %a8, %a9, %a10, %a11, %a12, %a13, %a14) : (tensor<1x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 7.812500e-03 : f64, #builtin.int<128>>>, tensor<4x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 4.000000e-03 : f64, #builtin.int<100>>>, tensor<4x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 4.000000e-03 : f64, #builtin.int<100>>>, tensor<4x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 4.000000e-03 : f64, #builtin.int<100>>>, tensor<4x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 4.000000e-03 : f64, #builtin.int<100>>>, tensor<4x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 4.000000e-03 : f64, #builtin.int<100>>>, tensor<4x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 4.000000e-03 : f64, #builtin.int<100>>>, tensor<4x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 4.000000e-03 : f64, #builtin.int<100>>>, tensor<4x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 4.000000e-03 : f64, #builtin.int<100>>>, tensor<4x!nnapi.quant<"TENSOR_INT32", 3.125000e-05 : f64, #builtin.int<0>>>, tensor<4x!nnapi.quant<"TENSOR_INT32", 3.125000e-05 : f64, #builtin.int<0>>>, tensor<4x!nnapi.quant<"TENSOR_INT32", 3.125000e-05 : f64, #builtin.int<0>>>, tensor<4x!nnapi.quant<"TENSOR_INT32", 3.125000e-05 : f64, #builtin.int<0>>>, tensor<1x4x!nnapi.quant<"TENSOR_QUANT16_SYMM", 4.8828125e-04 : f64, #builtin.int<0>>>, tensor<1x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 7.812500e-03 : f64, #builtin.int<128>>>) -> (tensor<1x4x!nnapi.quant<"TENSOR_QUANT16_SYMM", 4.8828125e-04 : f64, #builtin.int<0>>>, tensor<1x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 7.812500e-03 : f64, #builtin.int<128>>>)
    func.return %c, %o : tensor<1x4x!nnapi.quant<"TENSOR_QUANT16_SYMM", 4.8828125e-04 : f64, #builtin.int<0>>>, tensor<1x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 7.812500e-03 : f64, #builtin.int<128>>>
  }

// CHECK:      func.func @q16(%[[X:[^:]*]]: memref<1x2xi8>, {{.*}}, %[[C:[^:]*]]: memref<1x4xi16>, %[[H:[^:]*]]: memref<1x4xi8>, %[[COUT:[^:]*]]: memref<1x4xi16>, %[[OUT:[^:]*]]: memref<1x4xi8>,
// CHECK:        %[[ROW:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x6xi8>
// CHECK:          memref.load %[[X]]
// CHECK:          memref.load %[[H]]
// CHECK:        %[[WI:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x6xi8>
// CHECK:        %[[GI:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x4xi32>
// CHECK:        linalg.generic {{.*}} ins(%[[ROW]], %[[WI]] : memref<1x6xi8>, memref<4x6xi8>) outs(%[[GI]] : memref<1x4xi32>)
// uint8 minus 128 times weights minus their zero point (100), accumulated.
// CHECK:          arith.extui
// CHECK:          arith.constant -128 : i32
// CHECK:          arith.extui
// CHECK:          arith.constant -100 : i32
// CHECK:          arith.muli
// CHECK-NEXT:     arith.addi
// CHECK:        scf.execute_region {
// CHECK:          scf.for
// CHECK:        }{nnc.kernel = "q16_logistic_3"}
// CHECK:        scf.execute_region {
// CHECK-NEXT:     builtin.unrealized_conversion_cast
// CHECK-NEXT:   }{nnc.kernel = "q16_logistic_3"}
// CHECK:        }{nnc.kernel = "q16_tanh_3"}
// The new state (Q4.11) to cell_state_out, its Q3.12 rescaling to the tanh.
// CHECK:        linalg.generic {{.*}} outs(%[[COUT]], %{{.*}} : memref<1x4xi16>, memref<1x4xi32>)
// CHECK:          arith.trunci %{{.*}} : i32 to i16
// CHECK:        }{nnc.kernel = "q16_tanh_3"}
// CHECK:        linalg.generic {{.*}} outs(%[[OUT]] : memref<1x4xi8>)
// CHECK:          arith.trunci %{{.*}} : i32 to i8
// CHECK:        func.return

// QUANTIZED_LSTM with layer normalisation, no CIFG, peephole or projection,
// cell state scale 2^-15: each gate is the input and recurrent products,
// each rescaled and saturated to int16, then the shared layer-norm kernel
// (its scale and variance limit in a small constant) and the activation;
// the hidden state's tanh has 0 integer bits (cellShift + 15).
  func.func @qlstm(%x: tensor<1x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 7.812500e-03 : f64, #builtin.int<0>>>, %wi: tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_SYMM", 7.843140e-03 : f64, #builtin.int<0>>>, %wf: tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_SYMM", 7.843140e-03 : f64, #builtin.int<0>>>, %wc: tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_SYMM", 7.843140e-03 : f64, #builtin.int<0>>>, %wo: tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_SYMM", 7.843140e-03 : f64, #builtin.int<0>>>, %ri: tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_SYMM", 7.843140e-03 : f64, #builtin.int<0>>>, %rf: tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_SYMM", 7.843140e-03 : f64, #builtin.int<0>>>, %rc: tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_SYMM", 7.843140e-03 : f64, #builtin.int<0>>>, %ro: tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_SYMM", 7.843140e-03 : f64, #builtin.int<0>>>, %bi: tensor<2xi32>, %bf: tensor<2xi32>, %bc: tensor<2xi32>, %bo: tensor<2xi32>, %h: tensor<1x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 3.051758e-05 : f64, #builtin.int<0>>>, %c: tensor<1x2x!nnapi.quant<"TENSOR_QUANT16_SYMM", 3.0517578125e-05 : f64, #builtin.int<0>>>, %lni: tensor<2x!nnapi.quant<"TENSOR_QUANT16_SYMM", 3.051820e-05 : f64, #builtin.int<0>>>, %lnf: tensor<2x!nnapi.quant<"TENSOR_QUANT16_SYMM", 3.051820e-05 : f64, #builtin.int<0>>>, %lnc: tensor<2x!nnapi.quant<"TENSOR_QUANT16_SYMM", 3.051820e-05 : f64, #builtin.int<0>>>, %lno: tensor<2x!nnapi.quant<"TENSOR_QUANT16_SYMM", 3.051820e-05 : f64, #builtin.int<0>>>) -> (tensor<1x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 3.051758e-05 : f64, #builtin.int<0>>>, tensor<1x2x!nnapi.quant<"TENSOR_QUANT16_SYMM", 3.0517578125e-05 : f64, #builtin.int<0>>>, tensor<1x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 3.051758e-05 : f64, #builtin.int<0>>>) {
    %none1 = "nnapi.no_value"() : () -> tensor<?xi32>
    %none2 = "nnapi.no_value"() : () -> tensor<?x?xi32>
    %cclip = "nnapi.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> f32
    %pclip = "nnapi.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> f32
    %si = "nnapi.constant"() <{value = dense<7.0e-03> : tensor<f32>}> : () -> f32
    %sf = "nnapi.constant"() <{value = dense<7.0e-03> : tensor<f32>}> : () -> f32
    %sc = "nnapi.constant"() <{value = dense<7.0e-03> : tensor<f32>}> : () -> f32
    %so = "nnapi.constant"() <{value = dense<7.0e-03> : tensor<f32>}> : () -> f32
    %hzp = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %hs = "nnapi.constant"() <{value = dense<7.0e-03> : tensor<f32>}> : () -> f32
    %ho, %co, %o = "nnapi.quantized_lstm"(%x, %wi, %wf, %wc, %wo, %ri, %rf, %rc, %ro, %none1, %none1, %none1, %bi, %bf, %bc, %bo, %none2, %none1, %h, %c, %lni, %lnf, %lnc, %lno, %cclip, %pclip, %si, %sf, %sc, %so, %hzp, %hs) : (tensor<1x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 7.812500e-03 : f64, #builtin.int<0>>>, tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_SYMM", 7.843140e-03 : f64, #builtin.int<0>>>, tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_SYMM", 7.843140e-03 : f64, #builtin.int<0>>>, tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_SYMM", 7.843140e-03 : f64, #builtin.int<0>>>, tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_SYMM", 7.843140e-03 : f64, #builtin.int<0>>>, tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_SYMM", 7.843140e-03 : f64, #builtin.int<0>>>, tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_SYMM", 7.843140e-03 : f64, #builtin.int<0>>>, tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_SYMM", 7.843140e-03 : f64, #builtin.int<0>>>, tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_SYMM", 7.843140e-03 : f64, #builtin.int<0>>>, tensor<?xi32>, tensor<?xi32>, tensor<?xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<?x?xi32>, tensor<?xi32>, tensor<1x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 3.051758e-05 : f64, #builtin.int<0>>>, tensor<1x2x!nnapi.quant<"TENSOR_QUANT16_SYMM", 3.0517578125e-05 : f64, #builtin.int<0>>>, tensor<2x!nnapi.quant<"TENSOR_QUANT16_SYMM", 3.051820e-05 : f64, #builtin.int<0>>>, tensor<2x!nnapi.quant<"TENSOR_QUANT16_SYMM", 3.051820e-05 : f64, #builtin.int<0>>>, tensor<2x!nnapi.quant<"TENSOR_QUANT16_SYMM", 3.051820e-05 : f64, #builtin.int<0>>>, tensor<2x!nnapi.quant<"TENSOR_QUANT16_SYMM", 3.051820e-05 : f64, #builtin.int<0>>>, f32, f32, f32, f32, f32, f32, i32, f32) -> (tensor<1x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 3.051758e-05 : f64, #builtin.int<0>>>, tensor<1x2x!nnapi.quant<"TENSOR_QUANT16_SYMM", 3.0517578125e-05 : f64, #builtin.int<0>>>, tensor<1x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 3.051758e-05 : f64, #builtin.int<0>>>)
    func.return %ho, %co, %o : tensor<1x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 3.051758e-05 : f64, #builtin.int<0>>>, tensor<1x2x!nnapi.quant<"TENSOR_QUANT16_SYMM", 3.0517578125e-05 : f64, #builtin.int<0>>>, tensor<1x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 3.051758e-05 : f64, #builtin.int<0>>>
  }
}

// CHECK:      func.func @qlstm(%[[QX:[^:]*]]: memref<1x2xi8>, {{.*}}, %[[HO:[^:]*]]: memref<1x2xi8>, %[[CO:[^:]*]]: memref<1x2xi16>, %[[QO:[^:]*]]: memref<1x2xi8>,
// CHECK:        linalg.generic {{.*}} ins(%[[QX]], %{{.*}} : memref<1x2xi8>, memref<2x2xi8>) outs(%{{.*}} : memref<1x2xi32>)
// CHECK:          arith.extsi
// CHECK:        arith.constant -32768 : i32
// CHECK:        arith.constant 32767 : i32
// CHECK:        }{nnc.kernel = "qlstm_layer_norm"}
// CHECK:        }{nnc.kernel = "q16_logistic_3"}
// CHECK:        }{nnc.kernel = "qlstm_layer_norm"}
// CHECK:        }{nnc.kernel = "q16_tanh_3"}
// CHECK:        }{nnc.kernel = "q16_logistic_3"}
// The cell state: CwiseMul by 2^-15, CwiseAdd saturated, stored as int16.
// CHECK:        linalg.generic {{.*}} outs(%[[CO]] : memref<1x2xi16>)
// CHECK:        }{nnc.kernel = "q16_logistic_3"}
// CHECK:        }{nnc.kernel = "q16_tanh_0"}
// CHECK:        linalg.generic {{.*}} outs(%[[QO]] : memref<1x2xi8>)
// CHECK:        linalg.generic {{.*}} ins(%[[QO]] : memref<1x2xi8>) outs(%[[HO]] : memref<1x2xi8>)
// CHECK:        func.return
