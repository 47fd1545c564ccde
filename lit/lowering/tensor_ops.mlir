// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// NNAPI 1.2+ tensor operations (passes/lowering/tensor_ops.py).
builtin.module {
  func.func @tensor_ops(%x: tensor<4x6xf32>, %q: tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>, %c: tensor<1x6xf32>) -> (tensor<2x3xf32>, tensor<8x6xf32>, tensor<4x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>, tensor<1x6xf32>, tensor<2x4x6xf32>) {
    // SLICE: a copy of the subview at offsets (1, 2) with sizes (2, 3).
    %begin = "nnapi.constant"() <{value = dense<[1, 2]> : tensor<2xi32>}> : () -> tensor<2xi32>
    %size = "nnapi.constant"() <{value = dense<[2, 3]> : tensor<2xi32>}> : () -> tensor<2xi32>
    %r_s = "nnapi.slice"(%x, %begin, %size) : (tensor<4x6xf32>, tensor<2xi32>, tensor<2xi32>) -> tensor<2x3xf32>
    // TILE by (2, 1): dimension 0 reads index % 4; dimension 1 is unchanged.
    %mult = "nnapi.constant"() <{value = dense<[2, 1]> : tensor<2xi32>}> : () -> tensor<2xi32>
    %r_t = "nnapi.tile"(%x, %mult) : (tensor<4x6xf32>, tensor<2xi32>) -> tensor<8x6xf32>
    // PAD_V2 of QUANT8_ASYMM with the stored pad value 200 (i8 -56).
    %pads = "nnapi.constant"() <{value = dense<[[1, 1], [0, 0]]> : tensor<2x2xi32>}> : () -> tensor<2x2xi32>
    %pv = "nnapi.constant"() <{value = dense<200> : tensor<i32>}> : () -> i32
    %r_p = "nnapi.pad_v2"(%q, %pads, %pv) : (tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>, tensor<2x2xi32>, i32) -> tensor<4x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>
    // CHANNEL_SHUFFLE of 6 channels in 2 groups along axis -1:
    // output channel c reads (c % 2) * 3 + c / 2.
    %groups = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %axis = "nnapi.constant"() <{value = dense<-1> : tensor<i32>}> : () -> i32
    %r_c = "nnapi.channel_shuffle"(%c, %groups, %axis) : (tensor<1x6xf32>, i32, i32) -> tensor<1x6xf32>
    // PACK of two 4x6 tensors along axis 0: each is copied into its window.
    %zero = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %r_k = "nnapi.pack"(%zero, %x, %x) : (i32, tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<2x4x6xf32>
    func.return %r_s, %r_t, %r_p, %r_c, %r_k : tensor<2x3xf32>, tensor<8x6xf32>, tensor<4x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>, tensor<1x6xf32>, tensor<2x4x6xf32>
  }
}

// CHECK-LABEL: func.func @tensor_ops(
// CHECK-SAME:    %[[X:[0-9]+]]: memref<4x6xf32>, %[[Q:[0-9]+]]: memref<2x3xi8>, %[[C:[0-9]+]]: memref<1x6xf32>, %[[R_S:[0-9]+]]: memref<2x3xf32>, %[[R_T:[0-9]+]]: memref<8x6xf32>, %[[R_P:[0-9]+]]: memref<4x3xi8>, %[[R_C:[0-9]+]]: memref<1x6xf32>, %[[R_K:[0-9]+]]: memref<2x4x6xf32>

// SLICE
// CHECK:         %[[SV:[0-9]+]] = memref.subview %[[X]][1, 2] [2, 3] [1, 1]
// CHECK:         linalg.generic {{.*}} ins(%[[SV]] : {{.*}}) outs(%[[R_S]] : memref<2x3xf32>)

// TILE
// CHECK:         outs(%[[R_T]] : memref<8x6xf32>)
// CHECK:           %[[I0:[0-9]+]] = linalg.index 0 : index
// CHECK:           %[[I1:[0-9]+]] = linalg.index 1 : index
// CHECK:           %[[FOUR:[0-9]+]] = arith.constant 4 : index
// CHECK:           %[[M:[0-9]+]] = arith.remui %[[I0]], %[[FOUR]] : index
// CHECK:           memref.load %[[X]][%[[M]], %[[I1]]] : memref<4x6xf32>

// PAD_V2: fill with the stored pad value, then copy into the window at row 1.
// CHECK:         outs(%[[R_P]] : memref<4x3xi8>)
// CHECK:           arith.constant -56 : i8
// CHECK:         %[[PV:[0-9]+]] = memref.subview %[[R_P]][1, 0] [2, 3] [1, 1]
// CHECK:         ins(%[[Q]] : memref<2x3xi8>) outs(%[[PV]] :

// CHANNEL_SHUFFLE
// CHECK:         outs(%[[R_C]] : memref<1x6xf32>)
// CHECK:           %[[CH:[0-9]+]] = linalg.index 1 : index
// CHECK:           arith.remui %[[CH]], %{{[0-9]+}} : index
// CHECK:           arith.muli
// CHECK:           arith.divui %[[CH]], %{{[0-9]+}} : index
// CHECK:           memref.load %[[C]]

// PACK: input 1 into window 0, input 2 into window 1 along axis 0.
// CHECK:         memref.subview %[[R_K]][0, 0, 0] [1, 4, 6] [1, 1, 1]
// CHECK:         memref.subview %[[R_K]][1, 0, 0] [1, 4, 6] [1, 1, 1]
