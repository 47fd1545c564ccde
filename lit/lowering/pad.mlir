// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// The padding operations (passes/lowering/pad.py).
builtin.module {
  // PAD of a signed quantised tensor fills with the zero point (-5), then
  // copies the input into the subview at offsets (1, 0).
  func.func @pad(%pd: tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<-5>>>) -> tensor<4x5x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<-5>>> {
    %pads = "nnapi.constant"() <{value = dense<[[1, 1], [0, 2]]> : tensor<2x2xi32>}> : () -> tensor<2x2xi32>
    %r_pd = "nnapi.pad"(%pd, %pads) : (tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<-5>>>, tensor<2x2xi32>) -> tensor<4x5x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<-5>>>
    func.return %r_pd : tensor<4x5x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<-5>>>
  }

  // PAD_V2 of QUANT8_ASYMM with the stored pad value 200 (i8 -56).
  func.func @pad_v2(%q: tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>) -> tensor<4x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>> {
    %pads = "nnapi.constant"() <{value = dense<[[1, 1], [0, 0]]> : tensor<2x2xi32>}> : () -> tensor<2x2xi32>
    %pv = "nnapi.constant"() <{value = dense<200> : tensor<i32>}> : () -> i32
    %r_p = "nnapi.pad_v2"(%q, %pads, %pv) : (tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>, tensor<2x2xi32>, i32) -> tensor<4x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>
    func.return %r_p : tensor<4x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>
  }

  // MIRROR_PAD (REFLECT, 2 on each side) of 3 elements: output o reads
  // i = o - 2 reflected at both edges (-i below 0, 4 - i from 3 on).
  func.func @mirror_pad(%y: tensor<3xf32>) -> tensor<7xf32> {
    %pads = "nnapi.constant"() <{value = dense<[[2, 2]]> : tensor<1x2xi32>}> : () -> tensor<1x2xi32>
    %mode = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %m = "nnapi.mirror_pad"(%y, %pads, %mode) : (tensor<3xf32>, tensor<1x2xi32>, i32) -> tensor<7xf32>
    func.return %m : tensor<7xf32>
  }
}

// CHECK-LABEL: func.func @pad(
// CHECK-SAME:    %[[PD:[0-9]+]]: memref<2x3xi8>, %[[R_PD:[0-9]+]]: memref<4x5xi8>
// CHECK:         linalg.generic {{.*}} outs(%[[R_PD]] : memref<4x5xi8>)
// CHECK:           arith.constant -5 : i8
// CHECK:         %[[VIEW:[0-9]+]] = memref.subview %[[R_PD]][1, 0] [2, 3] [1, 1] : memref<4x5xi8> to memref<2x3xi8, strided<[5, 1], offset: 5>>
// CHECK:         linalg.generic {{.*}} ins(%[[PD]] : memref<2x3xi8>) outs(%[[VIEW]] : memref<2x3xi8, strided<[5, 1], offset: 5>>)

// CHECK-LABEL: func.func @pad_v2(
// CHECK-SAME:    %[[Q:[0-9]+]]: memref<2x3xi8>, %[[R_P:[0-9]+]]: memref<4x3xi8>
// CHECK:         outs(%[[R_P]] : memref<4x3xi8>)
// CHECK:           arith.constant -56 : i8
// CHECK:         %[[PV:[0-9]+]] = memref.subview %[[R_P]][1, 0] [2, 3] [1, 1]
// CHECK:         ins(%[[Q]] : memref<2x3xi8>) outs(%[[PV]] :

// CHECK-LABEL: func.func @mirror_pad(
// CHECK-SAME:    %[[Y:[0-9]+]]: memref<3xf32>, %[[M:[0-9]+]]: memref<7xf32>
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
