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

  func.func @tensor_ops_more(%x: tensor<2x4xf32>, %y: tensor<3xf32>, %d: tensor<2xi32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x1x4xf32>, tensor<7xf32>, tensor<2x4xf32>, tensor<2x3xf32>) {
    %axis1 = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %two = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    // SPLIT along axis 1 into 2: a copy of each half (a subview).
    %s0, %s1 = "nnapi.split"(%x, %axis1, %two) : (tensor<2x4xf32>, i32, i32) -> (tensor<2x2xf32>, tensor<2x2xf32>)
    // EXPAND_DIMS: a flat copy (same elements, one more dimension of 1).
    %e = "nnapi.expand_dims"(%x, %axis1) : (tensor<2x4xf32>, i32) -> tensor<2x1x4xf32>
    // MIRROR_PAD (REFLECT, 2 on each side) of 3 elements: output o reads
    // i = o - 2 reflected at both edges (-i below 0, 4 - i from 3 on).
    %pads = "nnapi.constant"() <{value = dense<[[2, 2]]> : tensor<1x2xi32>}> : () -> tensor<1x2xi32>
    %mode = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %m = "nnapi.mirror_pad"(%y, %pads, %mode) : (tensor<3xf32>, tensor<1x2xi32>, i32) -> tensor<7xf32>
    // REVERSE along axis 1: column j reads column 3 - j.
    %axes = "nnapi.constant"() <{value = dense<[1]> : tensor<1xi32>}> : () -> tensor<1xi32>
    %r = "nnapi.reverse"(%x, %axes) : (tensor<2x4xf32>, tensor<1xi32>) -> tensor<2x4xf32>
    // FILL a 2x3 output with 1.5.
    %dims = "nnapi.constant"() <{value = dense<[2, 3]> : tensor<2xi32>}> : () -> tensor<2xi32>
    %v = "nnapi.constant"() <{value = dense<1.500000e+00> : tensor<f32>}> : () -> f32
    %f = "nnapi.fill"(%dims, %v) : (tensor<2xi32>, f32) -> tensor<2x3xf32>
    func.return %s0, %s1, %e, %m, %r, %f : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x1x4xf32>, tensor<7xf32>, tensor<2x4xf32>, tensor<2x3xf32>
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

// CHECK-LABEL: func.func @tensor_ops_more(
// CHECK-SAME:    %[[X:[0-9]+]]: memref<2x4xf32>, %[[Y:[0-9]+]]: memref<3xf32>, %{{[0-9]+}}: memref<2xi32>, %[[S0:[0-9]+]]: memref<2x2xf32>, %[[S1:[0-9]+]]: memref<2x2xf32>, %[[E:[0-9]+]]: memref<2x1x4xf32>, %[[M:[0-9]+]]: memref<7xf32>, %[[R:[0-9]+]]: memref<2x4xf32>, %[[F:[0-9]+]]: memref<2x3xf32>

// SPLIT
// CHECK:         %[[H0:[0-9]+]] = memref.subview %[[X]][0, 0] [2, 2] [1, 1] : memref<2x4xf32> to memref<2x2xf32, strided<[4, 1]>>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[H0]] : memref<2x2xf32, strided<[4, 1]>>) outs(%[[S0]] : memref<2x2xf32>)
// CHECK:         %[[H1:[0-9]+]] = memref.subview %[[X]][0, 2] [2, 2] [1, 1] : memref<2x4xf32> to memref<2x2xf32, strided<[4, 1], offset: 2>>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[H1]] : memref<2x2xf32, strided<[4, 1], offset: 2>>) outs(%[[S1]] : memref<2x2xf32>)

// EXPAND_DIMS
// CHECK:         %[[XF:[0-9]+]] = builtin.unrealized_conversion_cast %[[X]] : memref<2x4xf32> to memref<8xf32>
// CHECK-NEXT:    %[[EF:[0-9]+]] = builtin.unrealized_conversion_cast %[[E]] : memref<2x1x4xf32> to memref<8xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[XF]] : memref<8xf32>) outs(%[[EF]] : memref<8xf32>)

// MIRROR_PAD
// CHECK:         linalg.generic {{.*}} outs(%[[M]] : memref<7xf32>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %[[O:[0-9]+]] = linalg.index 0 : index
// CHECK-NEXT:      %[[C2:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT:      %[[I:[0-9]+]] = arith.subi %[[O]], %[[C2]] : index
// CHECK-NEXT:      %[[C0:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:      %[[LOW:[0-9]+]] = arith.subi %[[C0]], %[[I]] : index
// CHECK-NEXT:      %[[C4:[0-9]+]] = arith.constant 4 : index
// CHECK-NEXT:      %[[HIGH:[0-9]+]] = arith.subi %[[C4]], %[[I]] : index
// CHECK-NEXT:      %[[Z:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:      %[[BELOW:[0-9]+]] = arith.cmpi slt, %[[I]], %[[Z]] : index
// CHECK-NEXT:      %[[I1:[0-9]+]] = arith.select %[[BELOW]], %[[LOW]], %[[I]] : index
// CHECK-NEXT:      %[[N:[0-9]+]] = arith.constant 3 : index
// CHECK-NEXT:      %[[ABOVE:[0-9]+]] = arith.cmpi sge, %[[I1]], %[[N]] : index
// CHECK-NEXT:      %[[I2:[0-9]+]] = arith.select %[[ABOVE]], %[[HIGH]], %[[I1]] : index
// CHECK-NEXT:      %[[V:[0-9]+]] = memref.load %[[Y]][%[[I2]]] : memref<3xf32>
// CHECK-NEXT:      linalg.yield %[[V]] : f32

// REVERSE
// CHECK:         linalg.generic {{.*}} outs(%[[R]] : memref<2x4xf32>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %[[I:[0-9]+]] = linalg.index 0 : index
// CHECK-NEXT:      %[[J:[0-9]+]] = linalg.index 1 : index
// CHECK-NEXT:      %[[C3:[0-9]+]] = arith.constant 3 : index
// CHECK-NEXT:      %[[RJ:[0-9]+]] = arith.subi %[[C3]], %[[J]] : index
// CHECK-NEXT:      %[[V:[0-9]+]] = memref.load %[[X]][%[[I]], %[[RJ]]] : memref<2x4xf32>
// CHECK-NEXT:      linalg.yield %[[V]] : f32

// FILL
// CHECK:         linalg.generic {{.*}} outs(%[[F]] : memref<2x3xf32>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %[[V:[0-9]+]] = arith.constant 1.500000e+00 : f32
// CHECK-NEXT:      linalg.yield %[[V]] : f32
