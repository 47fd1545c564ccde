// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// 2-D pooling (passes/lowering/pool.py): one linalg.generic over the output
// whose body walks the window with two scf.for loops clipped to the input
// (max(0, origin) .. min(size, origin + filter)), so padding is never read
// and the average counts only the in-bounds elements.
builtin.module {
  // AVERAGE_POOL_2D, implicit SAME padding, stride 1, 4x4 filter on 4x4:
  // the total padding is 3 and Android puts 3/2 = 1 at the head.  The sum is
  // divided by the clipped window size, then RELU6 clamps.
  func.func @avg(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
    %same = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %four = "nnapi.constant"() <{value = dense<4> : tensor<i32>}> : () -> i32
    %relu6 = "nnapi.constant"() <{value = dense<3> : tensor<i32>}> : () -> i32
    %r = "nnapi.average_pool_2d"(%x, %same, %one, %one, %four, %four, %relu6) : (tensor<1x4x4x2xf32>, i32, i32, i32, i32, i32, i32) -> tensor<1x4x4x2xf32>
    func.return %r : tensor<1x4x4x2xf32>
  }

  // MAX_POOL_2D, explicit padding 1 on every side, 3x3 filter, NCHW layout:
  // loads index the input as [n, c, y, x]; no element count is needed.
  func.func @max(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %three = "nnapi.constant"() <{value = dense<3> : tensor<i32>}> : () -> i32
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %nchw = "nnapi.constant"() <{value = dense<true> : tensor<i1>}> : () -> i1
    %r = "nnapi.max_pool_2d"(%x, %one, %one, %one, %one, %one, %one, %three, %three, %none, %nchw) : (tensor<1x2x3x3xf32>, i32, i32, i32, i32, i32, i32, i32, i32, i32, i1) -> tensor<1x2x3x3xf32>
    func.return %r : tensor<1x2x3x3xf32>
  }

  // L2_POOL_2D, implicit VALID padding, stride 2, 2x2 filter: the square
  // root of the mean of squares.
  func.func @l2(%x: tensor<1x4x4x1xf32>) -> tensor<1x2x2x1xf32> {
    %valid = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %two = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %r = "nnapi.l2_pool_2d"(%x, %valid, %two, %two, %two, %two, %none) : (tensor<1x4x4x1xf32>, i32, i32, i32, i32, i32, i32) -> tensor<1x2x2x1xf32>
    func.return %r : tensor<1x2x2x1xf32>
  }

  // AVERAGE_POOL_2D, int8, VALID 2x2 stride 2, RELU: the int32 window sum is
  // divided by the clipped count rounding half away from zero (C's truncating
  // division of sum +- count/2), then clamped to [zero point, 127].
  func.func @avg_q8(%x: tensor<1x4x4x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-3>>>) -> tensor<1x2x2x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-3>>> {
    %valid = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %two = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %relu = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %r = "nnapi.average_pool_2d"(%x, %valid, %two, %two, %two, %two, %relu) : (tensor<1x4x4x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-3>>>, i32, i32, i32, i32, i32, i32) -> tensor<1x2x2x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-3>>>
    func.return %r : tensor<1x2x2x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-3>>>
  }

  // MAX_POOL_2D, uint8, padding 1 and a 3x3 window, RELU6 with scale 0.5 and
  // zero point 128: the running maximum starts at 0 and the result is clamped
  // to [128, 140].
  func.func @max_q8(%x: tensor<1x3x3x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>) -> tensor<1x3x3x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>> {
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %three = "nnapi.constant"() <{value = dense<3> : tensor<i32>}> : () -> i32
    %relu6 = "nnapi.constant"() <{value = dense<3> : tensor<i32>}> : () -> i32
    %r = "nnapi.max_pool_2d"(%x, %one, %one, %one, %one, %one, %one, %three, %three, %relu6) : (tensor<1x3x3x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>, i32, i32, i32, i32, i32, i32, i32, i32, i32) -> tensor<1x3x3x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>
    func.return %r : tensor<1x3x3x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>
  }
}

// CHECK-LABEL: func.func @avg(
// CHECK-SAME:    %[[X:.*]]: memref<1x4x4x2xf32>, %[[OUT:.*]]: memref<1x4x4x2xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%[[OUT]] : memref<1x4x4x2xf32>)
// CHECK:           %[[N:.*]] = linalg.index 0 : index
// CHECK:           %[[OY:.*]] = linalg.index 1 : index
// CHECK:           %[[OX:.*]] = linalg.index 2 : index
// CHECK:           %[[C:.*]] = linalg.index 3 : index
// CHECK:           %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:           %[[HEAD:.*]] = arith.constant 1 : index
// CHECK:           %[[Y:.*]] = arith.subi %[[OY]], %[[HEAD]] : index
// CHECK:           %[[Y0:.*]] = arith.maxsi %[[Y]], %{{.*}} : index
// CHECK:           %[[YE:.*]] = arith.addi %[[Y]], %{{.*}} : index
// CHECK:           %[[Y1:.*]] = arith.minsi %[[YE]], %{{.*}} : index
// CHECK:           %[[X0:.*]] = arith.maxsi
// CHECK:           %[[X1:.*]] = arith.minsi
// CHECK:           %[[SUM:.*]] = scf.for %[[I:.*]] = %[[Y0]] to %[[Y1]] step %{{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (f32) {
// CHECK:             scf.for %[[J:.*]] = %[[X0]] to %[[X1]] step
// CHECK:               memref.load %[[X]][%[[N]], %[[I]], %[[J]], %[[C]]] : memref<1x4x4x2xf32>
// CHECK:               arith.addf
// CHECK:           arith.subi %[[Y1]], %[[Y0]] : index
// CHECK:           arith.subi %[[X1]], %[[X0]] : index
// CHECK:           %[[COUNT:.*]] = arith.sitofp
// CHECK:           %[[AVG:.*]] = arith.divf %[[SUM]], %[[COUNT]] : f32
// CHECK:           %[[LO:.*]] = arith.maxnumf %[[AVG]], %{{.*}} : f32
// CHECK:           %[[HI:.*]] = arith.minnumf %[[LO]], %{{.*}} : f32
// CHECK:           linalg.yield %[[HI]] : f32

// CHECK-LABEL: func.func @max(
// CHECK-SAME:    %[[X:.*]]: memref<1x2x3x3xf32>, %[[OUT:.*]]: memref<1x2x3x3xf32>
// CHECK:         linalg.generic {{.*}} outs(%[[OUT]] : memref<1x2x3x3xf32>)
// CHECK:           %[[N:.*]] = linalg.index 0 : index
// CHECK:           %[[C:.*]] = linalg.index 1 : index
// CHECK:           %[[LOWEST:.*]] = arith.constant -3.40282347e+38 : f32
// CHECK:           %[[M:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %[[LOWEST]]) -> (f32) {
// CHECK:             scf.for
// CHECK:               %[[V:.*]] = memref.load %[[X]][%[[N]], %[[C]], %{{.*}}, %{{.*}}] : memref<1x2x3x3xf32>
// The window maximum is compare-and-select, never llvm.maxnum (a
// llvm.maxnum reduction loop made LLVM's loop vectorizer assert on AVX CPUs).
// CHECK-NOT:           arith.maxnumf
// CHECK:               %[[GT:.*]] = arith.cmpf ogt, %[[V]], %{{.*}} : f32
// CHECK:               arith.select %[[GT]], %[[V]], %{{.*}} : f32
// CHECK-NOT:       arith.sitofp
// CHECK:           linalg.yield %[[M]] : f32

// CHECK-LABEL: func.func @l2(
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : memref<1x2x2x1xf32>)
// CHECK:           %[[OY:.*]] = linalg.index 1 : index
// CHECK:           %[[S:.*]] = arith.constant 2 : index
// CHECK:           arith.muli %[[OY]], %[[S]] : index
// CHECK:           %[[SUM:.*]] = scf.for
// CHECK:             scf.for
// CHECK:               %[[V:.*]] = memref.load
// CHECK:               %[[SQ:.*]] = arith.mulf %[[V]], %[[V]] : f32
// CHECK:               arith.addf %{{.*}}, %[[SQ]] : f32
// CHECK:           %[[COUNT:.*]] = arith.sitofp
// CHECK:           %[[MEAN:.*]] = arith.divf %[[SUM]], %[[COUNT]] : f32
// CHECK:           %[[R:.*]] = math.sqrt %[[MEAN]] : f32
// CHECK:           linalg.yield %[[R]] : f32

// CHECK-LABEL: func.func @avg_q8(
// CHECK-SAME:    %[[X:.*]]: memref<1x4x4x1xi8>, %[[OUT:.*]]: memref<1x2x2x1xi8>
// CHECK:         linalg.generic {{.*}} outs(%[[OUT]] : memref<1x2x2x1xi8>)
// CHECK:           %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK:           %[[SUM:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (i32) {
// CHECK:             scf.for
// CHECK:               %[[V:.*]] = memref.load %[[X]]
// CHECK:               %[[W:.*]] = arith.extsi %[[V]] : i8 to i32
// CHECK:               arith.addi %{{.*}}, %[[W]] : i32
// CHECK:           %[[COUNT:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK:           %[[HALF:.*]] = arith.divsi %[[COUNT]], %{{.*}} : i32
// CHECK:           %[[POS:.*]] = arith.cmpi sgt, %[[SUM]], %{{.*}} : i32
// CHECK:           %[[UP:.*]] = arith.addi %[[SUM]], %[[HALF]] : i32
// CHECK:           %[[DOWN:.*]] = arith.subi %[[SUM]], %[[HALF]] : i32
// CHECK:           %[[NUM:.*]] = arith.select %[[POS]], %[[UP]], %[[DOWN]] : i32
// CHECK:           %[[AVG:.*]] = arith.divsi %[[NUM]], %[[COUNT]] : i32
// CHECK:           %[[LO:.*]] = arith.constant -3 : i32
// CHECK:           %[[A:.*]] = arith.maxsi %[[AVG]], %[[LO]] : i32
// CHECK:           %[[HI:.*]] = arith.constant 127 : i32
// CHECK:           %[[B:.*]] = arith.minsi %[[A]], %[[HI]] : i32
// CHECK:           %[[R:.*]] = arith.trunci %[[B]] : i32 to i8
// CHECK:           linalg.yield %[[R]] : i8

// CHECK-LABEL: func.func @max_q8(
// CHECK-SAME:    %[[X:.*]]: memref<1x3x3x1xi8>, %[[OUT:.*]]: memref<1x3x3x1xi8>
// CHECK:         linalg.generic {{.*}} outs(%[[OUT]] : memref<1x3x3x1xi8>)
// CHECK:           %[[INIT:.*]] = arith.constant 0 : i32
// CHECK:           %[[MAX:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[INIT]]) -> (i32) {
// CHECK:               %[[V:.*]] = memref.load %[[X]]
// CHECK:               %[[W:.*]] = arith.extui %[[V]] : i8 to i32
// CHECK:               arith.maxsi %{{.*}}, %[[W]] : i32
// CHECK-NOT:       arith.divsi
// CHECK:           %[[LO:.*]] = arith.constant 128 : i32
// CHECK:           %[[A:.*]] = arith.maxsi %[[MAX]], %[[LO]] : i32
// CHECK:           %[[HI:.*]] = arith.constant 140 : i32
// CHECK:           %[[B:.*]] = arith.minsi %[[A]], %[[HI]] : i32
// CHECK:           arith.trunci %[[B]] : i32 to i8
