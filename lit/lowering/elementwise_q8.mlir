// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// Quantised element-wise ops (passes/lowering/elementwise_q8.py): integer
// arithmetic with Android's fixed-point multipliers (passes/lowering/quant.py).
builtin.module {
  // ADD uint8 with RELU: inputs zero-extended and offset by -zp, shifted left by
  // 20, each scaled by SaturatingRoundingDoublingHighMul (an i64 product
  // rounded with +2^30 >> 31; each constant made once) and RoundingDivideByPOT
  // (branch-free, on sign bits); the sum is rescaled,
  // offset by the output zero point and clamped to the RELU range [3, 255].
  // Multipliers: 0.5/1.0 -> 2^30, 0.25/1.0 -> 2^30 >> 1, 1.0/(2^20 * 1.0) -> 2^30 >> 19.
  // CHECK-LABEL: func.func @add(
  // CHECK:         ^bb0(%[[A:.*]]: i8, %[[B:.*]]: i8, %{{.*}}: i8):
  // CHECK-NEXT:      %[[AX:.*]] = arith.extui %[[A]] : i8 to i32
  // CHECK-NEXT:      %[[BX:.*]] = arith.extui %[[B]] : i8 to i32
  // CHECK-NEXT:      %[[ZA:.*]] = arith.constant -128 : i32
  // CHECK-NEXT:      %[[AC:.*]] = arith.addi %[[AX]], %[[ZA]] : i32
  // CHECK-NEXT:      %[[L:.*]] = arith.constant 20 : i32
  // CHECK-NEXT:      %{{.*}} = arith.shli %[[AC]], %[[L]] : i32
  // CHECK:           %[[W:.*]] = arith.extsi %{{.*}} : i32 to i64
  // CHECK-NEXT:      %[[M:.*]] = arith.constant 1073741824 : i64
  // CHECK-NEXT:      %[[P:.*]] = arith.muli %[[W]], %[[M]] : i64
  // CHECK-NEXT:      %[[PN:.*]] = arith.addi %[[P]], %[[M]] : i64
  // CHECK-NEXT:      %[[S:.*]] = arith.constant 31 : i64
  // CHECK-NEXT:      %[[H:.*]] = arith.shrsi %[[PN]], %[[S]] : i64
  // CHECK-NEXT:      %{{.*}} = arith.trunci %[[H]] : i64 to i32
  // CHECK:           arith.constant 524287 : i32
  // CHECK:           arith.constant 19 : i32
  // CHECK:           %[[ZO:.*]] = arith.constant 3 : i32
  // CHECK-NEXT:      %[[O:.*]] = arith.addi %{{.*}}, %[[ZO]] : i32
  // CHECK-NEXT:      %[[C1:.*]] = arith.maxsi %[[O]], %[[ZO]] : i32
  // CHECK-NEXT:      %[[HI:.*]] = arith.constant 255 : i32
  // CHECK-NEXT:      %[[C2:.*]] = arith.minsi %[[C1]], %[[HI]] : i32
  // CHECK-NEXT:      %[[R:.*]] = arith.trunci %[[C2]] : i32 to i8
  // CHECK-NEXT:      linalg.yield %[[R]] : i8
  func.func @add(%a: tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>, %b: tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 2.500000e-01 : f64, #builtin.int<100>>>) -> tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e+00 : f64, #builtin.int<3>>> {
    %act = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %r = "nnapi.add"(%a, %b, %act) : (tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>, tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 2.500000e-01 : f64, #builtin.int<100>>>, i32) -> tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e+00 : f64, #builtin.int<3>>>
    func.return %r : tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e+00 : f64, #builtin.int<3>>>
  }

  // SUB int8 with broadcasting: sign extension, and input 2's multiplier is
  // negated (-2^30) so that the ADD kernel computes the difference.
  // CHECK-LABEL: func.func @sub_signed(
  // CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>]
  // CHECK:           arith.extsi %{{.*}} : i8 to i32
  // CHECK-NEXT:      arith.extsi %{{.*}} : i8 to i32
  // CHECK:           arith.constant 1073741824 : i64
  // CHECK:           arith.constant -1073741824 : i64
  // CHECK:           arith.constant -128 : i32
  // CHECK-NEXT:      arith.maxsi
  // CHECK-NEXT:      arith.constant 127 : i32
  // CHECK-NEXT:      arith.minsi
  // CHECK-NEXT:      arith.trunci %{{.*}} : i32 to i8
  func.func @sub_signed(%a: tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, %b: tensor<3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<2>>>) -> tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<0>>> {
    %act = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %r = "nnapi.sub"(%a, %b, %act) : (tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-1>>>, tensor<3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<2>>>, i32) -> tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<0>>>
    func.return %r : tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<0>>>
  }

  // MUL: one multiplier 0.5 * 0.5 / 1.0 = 0.25 -> 2^30 with a rounding right
  // shift (by 1), applied to the product of the centred inputs (zero points 0).
  // CHECK-LABEL: func.func @mul(
  // CHECK:           %[[X:.*]] = arith.extui %{{.*}} : i8 to i32
  // CHECK-NEXT:      %[[Y:.*]] = arith.extui %{{.*}} : i8 to i32
  // CHECK-NEXT:      %[[XY:.*]] = arith.muli %[[X]], %[[Y]] : i32
  // CHECK-NEXT:      arith.extsi %[[XY]] : i32 to i64
  // CHECK-NEXT:      arith.constant 1073741824 : i64
  // CHECK:           %[[H:.*]] = arith.trunci %{{.*}} : i64 to i32
  // CHECK:           arith.shrsi %[[H]], %{{.*}} : i32
  func.func @mul(%a: tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<0>>>, %b: tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<0>>>) -> tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e+00 : f64, #builtin.int<0>>> {
    %act = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %r = "nnapi.mul"(%a, %b, %act) : (tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<0>>>, tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<0>>>, i32) -> tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e+00 : f64, #builtin.int<0>>>
    func.return %r : tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e+00 : f64, #builtin.int<0>>>
  }

  // RELU6 int8 (scale 0.5, zero point -10): a clamp to [zp, zp + 6 / 0.5] = [-10, 2].
  // CHECK-LABEL: func.func @relu6(
  // CHECK:           %[[X:.*]] = arith.extsi %{{.*}} : i8 to i32
  // CHECK-NEXT:      %[[LO:.*]] = arith.constant -10 : i32
  // CHECK-NEXT:      %[[C:.*]] = arith.maxsi %[[X]], %[[LO]] : i32
  // CHECK-NEXT:      %[[HI:.*]] = arith.constant 2 : i32
  // CHECK-NEXT:      %[[D:.*]] = arith.minsi %[[C]], %[[HI]] : i32
  // CHECK-NEXT:      %[[R:.*]] = arith.trunci %[[D]] : i32 to i8
  // CHECK-NEXT:      linalg.yield %[[R]] : i8
  func.func @relu6(%a: tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-10>>>) -> tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-10>>> {
    %r = "nnapi.relu6"(%a) : (tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-10>>>) -> tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-10>>>
    func.return %r : tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-10>>>
  }

  // LOGISTIC uint8, input scale 0.5: the input is rescaled to Q4.27 (multiplier
  // 2^30, left shift 27), gemmlowp's fixed-point logistic runs inline (its exp
  // barrel shifter multiplies by exp(-1/4) = 1672461947 in Q0.31), the Q0.31
  // result is divided by 2^23, and inputs beyond the radius 15 saturate.
  // CHECK-LABEL: func.func @logistic(
  // CHECK:           arith.extui %{{.*}} : i8 to i32
  // CHECK-NEXT:      arith.constant 27 : i32
  // CHECK-NEXT:      arith.shli
  // CHECK:           arith.constant 1672461947 : i64
  // CHECK:           arith.constant 23 : i32
  // CHECK:           arith.constant 256 : i32
  // CHECK:           arith.constant -15 : i32
  // CHECK-NEXT:      arith.cmpi slt
  // CHECK-NEXT:      arith.constant 15 : i32
  // CHECK-NEXT:      arith.cmpi sgt
  // CHECK:           arith.trunci %{{.*}} : i32 to i8
  func.func @logistic(%a: tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<0>>>) -> tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 3.906250e-03 : f64, #builtin.int<0>>> {
    %r = "nnapi.logistic"(%a) : (tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<0>>>) -> tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 3.906250e-03 : f64, #builtin.int<0>>>
    func.return %r : tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 3.906250e-03 : f64, #builtin.int<0>>>
  }

  // QUANTIZE to int8: divide in float32, std::round, add the zero point, clamp
  // with std::min/std::max semantics (ordered compares), convert.
  // CHECK-LABEL: func.func @quantize(
  // CHECK:         ^bb0(%[[X:.*]]: f32, %{{.*}}: i8):
  // CHECK-NEXT:      %[[S:.*]] = arith.constant 5.000000e-01 : f32
  // CHECK-NEXT:      %[[D:.*]] = arith.divf %[[X]], %[[S]] : f32
  // CHECK-NEXT:      %[[R:.*]] = math.round %[[D]] : f32
  // CHECK-NEXT:      %[[Z:.*]] = arith.constant -3.000000e+00 : f32
  // CHECK-NEXT:      %[[V:.*]] = arith.addf %[[Z]], %[[R]] : f32
  // CHECK-NEXT:      %[[HI:.*]] = arith.constant 1.270000e+02 : f32
  // CHECK-NEXT:      %[[LT:.*]] = arith.cmpf olt, %[[V]], %[[HI]] : f32
  // CHECK-NEXT:      %[[MN:.*]] = arith.select %[[LT]], %[[V]], %[[HI]] : f32
  // CHECK-NEXT:      %[[LO:.*]] = arith.constant -1.280000e+02 : f32
  // CHECK-NEXT:      %[[GT:.*]] = arith.cmpf olt, %[[LO]], %[[MN]] : f32
  // CHECK-NEXT:      %[[MX:.*]] = arith.select %[[GT]], %[[MN]], %[[LO]] : f32
  // CHECK-NEXT:      %[[I:.*]] = arith.fptosi %[[MX]] : f32 to i32
  // CHECK-NEXT:      %[[Q:.*]] = arith.trunci %[[I]] : i32 to i8
  // CHECK-NEXT:      linalg.yield %[[Q]] : i8
  func.func @quantize(%a: tensor<4xf32>) -> tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-3>>> {
    %r = "nnapi.quantize"(%a) : (tensor<4xf32>) -> tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-3>>>
    func.return %r : tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-3>>>
  }

  // DEQUANTIZE uint8: scale * (q - zero_point) in float32.
  // CHECK-LABEL: func.func @dequantize(
  // CHECK:           %[[X:.*]] = arith.extui %{{.*}} : i8 to i32
  // CHECK-NEXT:      %[[Z:.*]] = arith.constant 128 : i32
  // CHECK-NEXT:      %[[C:.*]] = arith.subi %[[X]], %[[Z]] : i32
  // CHECK-NEXT:      %[[S:.*]] = arith.constant 2.500000e-01 : f32
  // CHECK-NEXT:      %[[F:.*]] = arith.sitofp %[[C]] : i32 to f32
  // CHECK-NEXT:      %[[R:.*]] = arith.mulf %[[S]], %[[F]] : f32
  // CHECK-NEXT:      linalg.yield %[[R]] : f32
  func.func @dequantize(%a: tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 2.500000e-01 : f64, #builtin.int<128>>>) -> tensor<4xf32> {
    %r = "nnapi.dequantize"(%a) : (tensor<4x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 2.500000e-01 : f64, #builtin.int<128>>>) -> tensor<4xf32>
    func.return %r : tensor<4xf32>
  }

  // DEQUANTIZE per channel (axis 1): the scales are stored into a small table
  // that the generic reads along d1.
  // CHECK-LABEL: func.func @dequantize_per_channel(
  // CHECK:         %[[T:.*]] = memref.alloc() {alignment = 64 : i64} : memref<3xf32>
  // CHECK:         memref.store %{{.*}}, %[[T]][%{{.*}}] : memref<3xf32>
  // CHECK:         memref.store %{{.*}}, %[[T]][%{{.*}}] : memref<3xf32>
  // CHECK:         memref.store %{{.*}}, %[[T]][%{{.*}}] : memref<3xf32>
  // CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>]
  // CHECK:         ^bb0(%[[Q:.*]]: i8, %[[S:.*]]: f32, %{{.*}}: f32):
  // CHECK-NEXT:      %[[X:.*]] = arith.extsi %[[Q]] : i8 to i32
  // CHECK-NEXT:      %[[F:.*]] = arith.sitofp %[[X]] : i32 to f32
  // CHECK-NEXT:      %[[R:.*]] = arith.mulf %[[S]], %[[F]] : f32
  // CHECK-NEXT:      linalg.yield %[[R]] : f32
  func.func @dequantize_per_channel(%a: tensor<2x3x!nnapi.quant_per_channel<array<f32: 5.000000e-01, 2.500000e-01, 2.000000e+00>, #builtin.int<1>>>) -> tensor<2x3xf32> {
    %r = "nnapi.dequantize"(%a) : (tensor<2x3x!nnapi.quant_per_channel<array<f32: 5.000000e-01, 2.500000e-01, 2.000000e+00>, #builtin.int<1>>>) -> tensor<2x3xf32>
    func.return %r : tensor<2x3xf32>
  }
}
