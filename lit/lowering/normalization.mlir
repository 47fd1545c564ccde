// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// Normalizations along one axis (passes/lowering/normalization.py).  A
// reduction writes into a temporary of the input's shape with the axis set
// to 1, through a map that pins the axis to 0 and marks it "reduction".
builtin.module {
  // SOFTMAX with beta 2 on axis -2 of a rank-3 tensor (axis 1): the max,
  // then exp((x - max) * beta) stored in the output while summing, then a
  // division by the sum.
  func.func @softmax(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
    %beta = "nnapi.constant"() <{value = dense<2.0> : tensor<f32>}> : () -> f32
    %axis = "nnapi.constant"() <{value = dense<-2> : tensor<i32>}> : () -> i32
    %r = "nnapi.softmax"(%x, %beta, %axis) : (tensor<2x3x4xf32>, f32, i32) -> tensor<2x3x4xf32>
    func.return %r : tensor<2x3x4xf32>
  }

  // L2_NORMALIZATION on the default (last) axis: x / max(sqrt(sum(x*x)), 1e-6).
  func.func @l2(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %r = "nnapi.l2_normalization"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    func.return %r : tensor<2x3xf32>
  }

  // LOCAL_RESPONSE_NORMALIZATION on axis 1 with radius 2: the sum of squares
  // runs over [c - 2, c + 3) clipped to [0, 6), then
  // out = x * pow(bias + alpha * sum, -beta).
  func.func @lrn(%x: tensor<1x6x2xf32>) -> tensor<1x6x2xf32> {
    %radius = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %bias = "nnapi.constant"() <{value = dense<1.0> : tensor<f32>}> : () -> f32
    %alpha = "nnapi.constant"() <{value = dense<0.5> : tensor<f32>}> : () -> f32
    %beta = "nnapi.constant"() <{value = dense<0.75> : tensor<f32>}> : () -> f32
    %axis = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %r = "nnapi.local_response_normalization"(%x, %radius, %bias, %alpha, %beta, %axis) : (tensor<1x6x2xf32>, i32, f32, f32, f32, i32) -> tensor<1x6x2xf32>
    func.return %r : tensor<1x6x2xf32>
  }

  // SOFTMAX, uint8, beta 1 and input scale 1/4: a 256-entry table of
  // exp_on_negative_values (Q0.31) of max - q built at compile time (a constant; entry 0
  // is exp(0) = INT32_MAX), the row max, the sum of the entries rescaled to
  // Q12.19, the per-row reciprocal and exponent, then one generic writing
  // RoundingDivideByPOT(reciprocal * exp, exponent) clamped to [0, 255].
  func.func @softmax_q8(%x: tensor<2x9x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 2.500000e-01 : f64, #builtin.int<128>>>) -> tensor<2x9x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 3.906250e-03 : f64, #builtin.int<0>>> {
    %beta = "nnapi.constant"() <{value = dense<1.0> : tensor<f32>}> : () -> f32
    %r = "nnapi.softmax"(%x, %beta) : (tensor<2x9x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 2.500000e-01 : f64, #builtin.int<128>>>, f32) -> tensor<2x9x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 3.906250e-03 : f64, #builtin.int<0>>>
    func.return %r : tensor<2x9x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 3.906250e-03 : f64, #builtin.int<0>>>
  }

  func.func @softmax_q8_short(%x: tensor<2x5x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 2.500000e-01 : f64, #builtin.int<128>>>) -> tensor<2x5x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 3.906250e-03 : f64, #builtin.int<0>>> {
    %beta = "nnapi.constant"() <{value = dense<1.0> : tensor<f32>}> : () -> f32
    %r = "nnapi.softmax"(%x, %beta) : (tensor<2x5x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 2.500000e-01 : f64, #builtin.int<128>>>, f32) -> tensor<2x5x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 3.906250e-03 : f64, #builtin.int<0>>>
    func.return %r : tensor<2x5x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 3.906250e-03 : f64, #builtin.int<0>>>
  }

  // L2_NORMALIZATION, int8 along the last axis: the per-row sum of squares
  // of q - zp, GetInvSqrtQuantizedMultiplierExp per row (Newton-Raphson, with
  // the constant sqrt(2)/2 = 1518500250 in Q0.31), then
  // MultiplyByQuantizedMultiplier(q - zp, m, shift + 7) as
  // reference_integer_ops::L2Normalization, clamped to [-128, 127].
  func.func @l2_q8(%x: tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e-01 : f64, #builtin.int<-5>>>) -> tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 7.812500e-03 : f64, #builtin.int<0>>> {
    %r = "nnapi.l2_normalization"(%x) : (tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e-01 : f64, #builtin.int<-5>>>) -> tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 7.812500e-03 : f64, #builtin.int<0>>>
    func.return %r : tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 7.812500e-03 : f64, #builtin.int<0>>>
  }
}

// CHECK-LABEL: func.func @softmax(
// CHECK-SAME:    %[[X:.*]]: memref<2x3x4xf32>, %[[OUT:.*]]: memref<2x3x4xf32>
// CHECK:         %[[MAX:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x1x4xf32>
// CHECK:         arith.constant -3.40282347e+38 : f32
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, 0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[X]] : memref<2x3x4xf32>) outs(%[[MAX]] : memref<2x1x4xf32>)
// CHECK:           ^{{.*}}(%[[XV:.*]]: f32, %[[ACCV:.*]]: f32):
// CHECK:             %[[GT:.*]] = arith.cmpf ogt, %[[XV]], %[[ACCV]] : f32
// CHECK:             arith.select %[[GT]], %[[XV]], %[[ACCV]] : f32
// CHECK:         %[[SUM:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x1x4xf32>
// CHECK:         arith.constant 0.000000e+00 : f32
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[X]], %[[MAX]] : memref<2x3x4xf32>, memref<2x1x4xf32>) outs(%[[OUT]], %[[SUM]] : memref<2x3x4xf32>, memref<2x1x4xf32>)
// CHECK:           ^{{.*}}(%[[V:.*]]: f32, %[[M:.*]]: f32, %{{.*}}: f32, %[[ACC:.*]]: f32):
// CHECK:             %[[D:.*]] = arith.subf %[[V]], %[[M]] : f32
// CHECK:             %[[BETA:.*]] = arith.constant 2.000000e+00 : f32
// CHECK:             %[[DB:.*]] = arith.mulf %[[D]], %[[BETA]] : f32
// CHECK:             %[[E:.*]] = math.exp %[[DB]] : f32
// CHECK:             %[[NEXT:.*]] = arith.addf %[[ACC]], %[[E]] : f32
// CHECK:             linalg.yield %[[E]], %[[NEXT]] : f32, f32
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, 0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[SUM]] : memref<2x1x4xf32>) outs(%[[OUT]] : memref<2x3x4xf32>)
// CHECK:           ^{{.*}}(%[[S:.*]]: f32, %[[EX:.*]]: f32):
// CHECK:             arith.divf %[[EX]], %[[S]] : f32

// CHECK-LABEL: func.func @l2(
// CHECK-SAME:    %[[X:.*]]: memref<2x3xf32>, %[[OUT:.*]]: memref<2x3xf32>
// CHECK:         %[[SQ:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x1xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : memref<2x3xf32>) outs(%[[SQ]] : memref<2x1xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         linalg.generic {{.*}} ins(%[[X]], %[[SQ]] : memref<2x3xf32>, memref<2x1xf32>) outs(%[[OUT]] : memref<2x3xf32>)
// CHECK:           ^{{.*}}(%[[V:.*]]: f32, %[[S:.*]]: f32, %{{.*}}: f32):
// CHECK:             %[[NORM:.*]] = math.sqrt %[[S]] : f32
// CHECK:             %[[EPS:.*]] = arith.constant 1.000000e-06 : f32
// CHECK:             %[[CLAMPED:.*]] = arith.maxnumf %[[NORM]], %[[EPS]] : f32
// CHECK:             arith.divf %[[V]], %[[CLAMPED]] : f32

// CHECK-LABEL: func.func @lrn(
// CHECK-SAME:    %[[X:.*]]: memref<1x6x2xf32>, %[[OUT:.*]]: memref<1x6x2xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[X]] : memref<1x6x2xf32>) outs(%[[OUT]] : memref<1x6x2xf32>)
// CHECK:           ^{{.*}}(%[[V:.*]]: f32, %{{.*}}: f32):
// CHECK:             %[[I0:.*]] = linalg.index 0 : index
// CHECK:             %[[C:.*]] = linalg.index 1 : index
// CHECK:             %[[I2:.*]] = linalg.index 2 : index
// CHECK:             %[[R:.*]] = arith.constant 2 : index
// CHECK:             %[[LO:.*]] = arith.subi %[[C]], %[[R]] : index
// CHECK:             %[[START:.*]] = arith.maxsi %[[LO]], %{{.*}} : index
// CHECK:             %[[R1:.*]] = arith.constant 3 : index
// CHECK:             %[[HI:.*]] = arith.addi %[[C]], %[[R1]] : index
// CHECK:             %[[SIZE:.*]] = arith.constant 6 : index
// CHECK:             %[[END:.*]] = arith.minsi %[[HI]], %[[SIZE]] : index
// CHECK:             %[[SUM:.*]] = scf.for %[[D:.*]] = %[[START]] to %[[END]] step
// CHECK:               %[[W:.*]] = memref.load %[[X]][%[[I0]], %[[D]], %[[I2]]] : memref<1x6x2xf32>
// CHECK:               arith.mulf %[[W]], %[[W]] : f32
// CHECK:             %[[BIAS:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:             %[[ALPHA:.*]] = arith.constant 5.000000e-01 : f32
// CHECK:             %[[AS:.*]] = arith.mulf %[[ALPHA]], %[[SUM]] : f32
// CHECK:             %[[BASE:.*]] = arith.addf %[[BIAS]], %[[AS]] : f32
// CHECK:             %[[NBETA:.*]] = arith.constant -7.500000e-01 : f32
// CHECK:             %[[P:.*]] = math.powf %[[BASE]], %[[NBETA]] : f32
// CHECK:             %[[RES:.*]] = arith.mulf %[[V]], %[[P]] : f32
// CHECK:             linalg.yield %[[RES]] : f32

// The table is a constant: entry 0 is 2147483647 (little-endian 0xFFFFFF7F).
// CHECK:       "memref.global"() <{sym_name = "[[TABLE_SYM:__nnc_const_softmax_q8_[0-9]+]]", type = memref<256xi32>, initial_value = dense<"0xFFFFFF7F{{[0-9A-F]*}}"> : tensor<256xi32>
// CHECK-LABEL: func.func @softmax_q8(
// CHECK-SAME:    %[[X:.*]]: memref<2x9xi8>, %[[OUT:.*]]: memref<2x9xi8>
// CHECK:         %[[TABLE:.*]] = memref.get_global @[[TABLE_SYM]] : memref<256xi32>
// CHECK:         %[[MAX:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x1xi32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : memref<2x9xi8>) outs(%[[MAX]] : memref<2x1xi32>)
// CHECK:           arith.extui %{{.*}} : i8 to i32
// CHECK:           arith.maxsi
// CHECK:         %[[SUM:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x1xi32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[MAX]] : memref<2x9xi8>, memref<2x1xi32>) outs(%[[SUM]] : memref<2x1xi32>)
// CHECK:           memref.load %[[TABLE]]
// CHECK:           arith.shrsi %{{.*}}, %{{.*}} : i32
// CHECK:         %[[SCALE:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x1xi32>
// CHECK:         %[[EXP:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x1xi32>
// CHECK:         linalg.generic {{.*}} ins(%[[SUM]] : memref<2x1xi32>) outs(%[[SCALE]], %[[EXP]] : memref<2x1xi32>, memref<2x1xi32>)
// CHECK:           arith.cmpi ult
// CHECK:           arith.shli
// CHECK:         linalg.generic {{.*}} ins(%[[X]], %[[MAX]], %[[SCALE]], %[[EXP]] : memref<2x9xi8>, memref<2x1xi32>, memref<2x1xi32>, memref<2x1xi32>) outs(%[[OUT]] : memref<2x9xi8>)
// CHECK:           memref.load %[[TABLE]]
// CHECK:           arith.shrsi %{{.*}}, %{{.*}} : i64
// CHECK:           arith.constant 255 : i32
// CHECK:           arith.trunci %{{.*}} : i32 to i8

// Rows of at most 8 (SHORT_ROW): one loop over the rows, each row's five
// elements separate operands of the same buffers; the maximum, the exps,
// their sum, the row's reciprocal and the five outputs in one body.
// CHECK-LABEL: func.func @softmax_q8_short(
// CHECK-SAME:    %[[X:.*]]: memref<2x5xi8>, %[[OUT:.*]]: memref<2x5xi8>
// CHECK-NOT:     memref.alloc
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0, 0)>, affine_map<(d0) -> (d0, 1)>, affine_map<(d0) -> (d0, 2)>, affine_map<(d0) -> (d0, 3)>, affine_map<(d0) -> (d0, 4)>, affine_map<(d0) -> (d0, 0)>, affine_map<(d0) -> (d0, 1)>, affine_map<(d0) -> (d0, 2)>, affine_map<(d0) -> (d0, 3)>, affine_map<(d0) -> (d0, 4)>], iterator_types = ["parallel"]} ins(%[[X]], %[[X]], %[[X]], %[[X]], %[[X]] : {{.*}}) outs(%[[OUT]], %[[OUT]], %[[OUT]], %[[OUT]], %[[OUT]] : {{.*}})
// CHECK-COUNT-5:   arith.maxsi
// CHECK-COUNT-5:   memref.load %{{.*}} : memref<256xi32>
// CHECK:           arith.cmpi ult
// CHECK-COUNT-5:   arith.trunci %{{.*}} : i32 to i8
// CHECK-NEXT:      linalg.yield

// CHECK-LABEL: func.func @l2_q8(
// CHECK-SAME:    %[[X:.*]]: memref<2x3xi8>, %[[OUT:.*]]: memref<2x3xi8>
// CHECK:         %[[SQ:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x1xi32>
// CHECK:         linalg.generic {{.*}} ins(%[[X]] : memref<2x3xi8>) outs(%[[SQ]] : memref<2x1xi32>)
// CHECK:           arith.extsi %{{.*}} : i8 to i32
// CHECK:           arith.muli %{{.*}}, %{{.*}} : i32
// CHECK:         %[[M:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x1xi32>
// CHECK:         %[[SH:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x1xi32>
// CHECK:         linalg.generic {{.*}} ins(%[[SQ]] : memref<2x1xi32>) outs(%[[M]], %[[SH]] : memref<2x1xi32>, memref<2x1xi32>)
// CHECK:           arith.constant 1518500250 : i64
// CHECK:         linalg.generic {{.*}} ins(%[[X]], %[[M]], %[[SH]] : memref<2x3xi8>, memref<2x1xi32>, memref<2x1xi32>) outs(%[[OUT]] : memref<2x3xi8>)
// CHECK-NEXT:    ^bb0(%[[V:.*]]: i8, %[[MUL:.*]]: i32, %[[SHIFT:.*]]: i32, %{{.*}}: i8):
// CHECK:           %[[Q:.*]] = arith.extsi %[[V]] : i8 to i32
// CHECK:           %[[ZP:.*]] = arith.constant -5 : i32
// CHECK:           %[[C:.*]] = arith.subi %[[Q]], %[[ZP]] : i32
// CHECK:           %[[SEVEN:.*]] = arith.constant 7 : i32
// CHECK:           arith.addi %[[SHIFT]], %[[SEVEN]] : i32
// CHECK:           arith.shli %[[C]], %{{.*}} : i32
// CHECK:           arith.constant -128 : i32
// CHECK:           arith.constant 127 : i32
// CHECK:           arith.trunci %{{.*}} : i32 to i8
