// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// The operations that join tensors or repeat one (passes/lowering/concat.py).
builtin.module {
  // CONCATENATION on a negative axis: each input is copied into a static
  // subview of the output at its offset along the axis.
  func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x2xf32>) -> tensor<2x5xf32> {
    %axis = "nnapi.constant"() <{value = dense<-1> : tensor<i32>}> : () -> i32
    %r = "nnapi.concatenation"(%a, %b, %axis) : (tensor<2x3xf32>, tensor<2x2xf32>, i32) -> tensor<2x5xf32>
    func.return %r : tensor<2x5xf32>
  }

  // TILE by (2, 1): dimension 0 reads index % 4; dimension 1 is unchanged.
  func.func @tile(%x: tensor<4x6xf32>) -> tensor<8x6xf32> {
    %mult = "nnapi.constant"() <{value = dense<[2, 1]> : tensor<2xi32>}> : () -> tensor<2xi32>
    %r_t = "nnapi.tile"(%x, %mult) : (tensor<4x6xf32>, tensor<2xi32>) -> tensor<8x6xf32>
    func.return %r_t : tensor<8x6xf32>
  }

  // PACK of two 4x6 tensors along axis 0: each is copied into its window.
  func.func @pack(%x: tensor<4x6xf32>) -> tensor<2x4x6xf32> {
    %zero = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %r_k = "nnapi.pack"(%zero, %x, %x) : (i32, tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<2x4x6xf32>
    func.return %r_k : tensor<2x4x6xf32>
  }

  // CONCATENATION, uint8: input 0 has the output's scale and zero point and
  // is copied; input 1 (scale 1/4, zero point 10) is requantised in float32:
  // round(q * 0.5 + (-10 * 0.5)) + 128, clamped to [0, 255].
  func.func @concat_q8(%a: tensor<2x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>, %b: tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 2.500000e-01 : f64, #builtin.int<10>>>) -> tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>> {
    %axis = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %r = "nnapi.concatenation"(%a, %b, %axis) : (tensor<2x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>, tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 2.500000e-01 : f64, #builtin.int<10>>>, i32) -> tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>
    func.return %r : tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>
  }
}

// CHECK-LABEL: func.func @concat(
// CHECK-SAME:    %[[A:[0-9]+]]: memref<2x3xf32>, %[[B:[0-9]+]]: memref<2x2xf32>, %[[OUT:[0-9]+]]: memref<2x5xf32>
// CHECK:         %[[V0:[0-9]+]] = memref.subview %[[OUT]][0, 0] [2, 3] [1, 1] : memref<2x5xf32> to memref<2x3xf32, strided<[5, 1]>>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[A]] : memref<2x3xf32>) outs(%[[V0]] : memref<2x3xf32, strided<[5, 1]>>)
// CHECK:         %[[V1:[0-9]+]] = memref.subview %[[OUT]][0, 3] [2, 2] [1, 1] : memref<2x5xf32> to memref<2x2xf32, strided<[5, 1], offset: 3>>
// CHECK:         linalg.generic {{.*}} ins(%[[B]] : memref<2x2xf32>) outs(%[[V1]] : memref<2x2xf32, strided<[5, 1], offset: 3>>)
// CHECK:         func.return

// CHECK-LABEL: func.func @tile(
// CHECK-SAME:    %[[X:[0-9]+]]: memref<4x6xf32>, %[[R_T:[0-9]+]]: memref<8x6xf32>
// CHECK:         outs(%[[R_T]] : memref<8x6xf32>)
// CHECK:           %[[I0:[0-9]+]] = linalg.index 0 : index
// CHECK:           %[[I1:[0-9]+]] = linalg.index 1 : index
// CHECK:           %[[FOUR:[0-9]+]] = arith.constant 4 : index
// CHECK:           %[[M:[0-9]+]] = arith.remui %[[I0]], %[[FOUR]] : index
// CHECK:           memref.load %[[X]][%[[M]], %[[I1]]] : memref<4x6xf32>

// PACK: input 1 into window 0, input 2 into window 1 along axis 0.
// CHECK-LABEL: func.func @pack(
// CHECK-SAME:    %[[X:[0-9]+]]: memref<4x6xf32>, %[[R_K:[0-9]+]]: memref<2x4x6xf32>
// CHECK:         memref.subview %[[R_K]][0, 0, 0] [1, 4, 6] [1, 1, 1]
// CHECK:         memref.subview %[[R_K]][1, 0, 0] [1, 4, 6] [1, 1, 1]

// CHECK-LABEL: func.func @concat_q8(
// CHECK-SAME:    %[[A:.*]]: memref<2x1xi8>, %[[B:.*]]: memref<2x2xi8>, %[[OUT:.*]]: memref<2x3xi8>
// CHECK:         %[[VA:.*]] = memref.subview %[[OUT]][0, 0] [2, 1] [1, 1]
// CHECK:         linalg.generic {{.*}} ins(%[[A]] : memref<2x1xi8>) outs(%[[VA]] : {{.*}})
// CHECK-NEXT:    ^bb0(%[[E:.*]]: i8, %{{.*}}: i8):
// CHECK-NEXT:      linalg.yield %[[E]] : i8
// CHECK:         %[[VB:.*]] = memref.subview %[[OUT]][0, 1] [2, 2] [1, 1]
// CHECK:         linalg.generic {{.*}} ins(%[[B]] : memref<2x2xi8>) outs(%[[VB]] : {{.*}})
// CHECK:           %[[U:.*]] = arith.extui %{{.*}} : i8 to i32
// CHECK:           %[[F:.*]] = arith.sitofp %[[U]] : i32 to f32
// CHECK:           %[[S:.*]] = arith.constant 5.000000e-01 : f32
// CHECK:           %[[P:.*]] = arith.mulf %[[F]], %[[S]] : f32
// CHECK:           %[[BIAS:.*]] = arith.constant -5.000000e+00 : f32
// CHECK:           %[[Y:.*]] = arith.addf %[[P]], %[[BIAS]] : f32
// CHECK:           math.round %[[Y]] : f32
// CHECK:           arith.fptosi
// CHECK:           arith.constant 128 : i32
// CHECK:           arith.constant 0 : i32
// CHECK:           arith.constant 255 : i32
// CHECK:           arith.trunci %{{.*}} : i32 to i8
