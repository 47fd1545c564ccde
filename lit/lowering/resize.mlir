// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// The resize operations (passes/lowering/resize.py).
builtin.module {
  // RESIZE_BILINEAR with half-pixel centers: (y + 0.5) * scale - 0.5, with
  // scale = 2/3 in float32, floor/ceil clamped to the input, computed at
  // compile time for every output row and column (one set of tables here:
  // both axes resize 2 -> 3, one channel).  NHWC: a parallel loop over the
  // output rows, each a kernel call looping over the row's pixels, the
  // four source pixels' channels loaded as vectors.
  func.func @resize_bilinear(%a: tensor<1x2x2x1xf32>) -> tensor<1x3x3x1xf32> {
    %w = "nnapi.constant"() <{value = dense<3> : tensor<i32>}> : () -> i32
    %h = "nnapi.constant"() <{value = dense<3> : tensor<i32>}> : () -> i32
    %l = "nnapi.constant"() <{value = dense<false> : tensor<i1>}> : () -> i1
    %ac = "nnapi.constant"() <{value = dense<false> : tensor<i1>}> : () -> i1
    %hp = "nnapi.constant"() <{value = dense<true> : tensor<i1>}> : () -> i1
    %r = "nnapi.resize_bilinear"(%a, %w, %h, %l, %ac, %hp) : (tensor<1x2x2x1xf32>, i32, i32, i1, i1, i1) -> tensor<1x3x3x1xf32>
    func.return %r : tensor<1x3x3x1xf32>
  }

  // RESIZE_BILINEAR, uint8, 2x2 -> 3x3: the float interpolation of the
  // zero-extended values, rounded to nearest (halves up: floor(v + 0.5),
  // whose int32 is read off the bits of it plus 1.5 x 2^23), clamped.
  func.func @resize_bilinear_q8(%x: tensor<1x2x2x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>) -> tensor<1x3x3x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>> {
    %three = "nnapi.constant"() <{value = dense<3> : tensor<i32>}> : () -> i32
    %r = "nnapi.resize_bilinear"(%x, %three, %three) : (tensor<1x2x2x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>, i32, i32) -> tensor<1x3x3x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>
    func.return %r : tensor<1x3x3x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>
  }

  // RESIZE_BILINEAR NCHW (two channels): the generic over the output, its
  // rows and columns from the tables, four gathered loads per element.
  func.func @resize_bilinear_nchw(%a: tensor<1x2x2x2xf32>) -> tensor<1x2x3x3xf32> {
    %w = "nnapi.constant"() <{value = dense<3> : tensor<i32>}> : () -> i32
    %h = "nnapi.constant"() <{value = dense<3> : tensor<i32>}> : () -> i32
    %l = "nnapi.constant"() <{value = dense<true> : tensor<i1>}> : () -> i1
    %r = "nnapi.resize_bilinear"(%a, %w, %h, %l) : (tensor<1x2x2x2xf32>, i32, i32, i1) -> tensor<1x2x3x3xf32>
    func.return %r : tensor<1x2x3x3xf32>
  }

  // RESIZE_NEAREST_NEIGHBOR 2x2 -> 3x3 of quantised bytes: in = min(floor(o * 2/3), 1).
  func.func @resize_nearest_neighbor(%r: tensor<1x2x2x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>) -> tensor<1x3x3x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>> {
    %nhwc = "nnapi.constant"() <{value = dense<false> : tensor<i1>}> : () -> i1
    %three = "nnapi.constant"() <{value = dense<3> : tensor<i32>}> : () -> i32
    %r_r = "nnapi.resize_nearest_neighbor"(%r, %three, %three, %nhwc) : (tensor<1x2x2x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>, i32, i32, i1) -> tensor<1x3x3x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>
    func.return %r_r : tensor<1x3x3x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>
  }
}

// CHECK:       "memref.global"() <{sym_name = "[[LO:__nnc_const_resize_bilinear_[0-9]+]]", type = memref<3xi32>, initial_value = dense<[0, 0, 1]>
// CHECK-NEXT:  "memref.global"() <{sym_name = "[[HI:__nnc_const_resize_bilinear_[0-9]+]]", type = memref<3xi32>, initial_value = dense<[0, 1, 1]>
// CHECK-NEXT:  "memref.global"() <{sym_name = "[[FRAC:__nnc_const_resize_bilinear_[0-9]+]]", type = memref<3xf32>, initial_value = dense<[-0.166666657, 5.000000e-01, 0.166666746]>
// CHECK-LABEL: func.func @resize_bilinear(
// CHECK-SAME:    %[[IN:[0-9]+]]: memref<1x2x2x1xf32>, %[[OUT:[0-9]+]]: memref<1x3x3x1xf32>
// CHECK:         %[[TLO:.*]] = memref.get_global @[[LO]]
// CHECK:         %[[THI:.*]] = memref.get_global @[[HI]]
// CHECK:         %[[TFRAC:.*]] = memref.get_global @[[FRAC]]
// CHECK-NOT:     memref.get_global
// CHECK:         scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           memref.load %[[TLO]][%[[ROW]]]
// CHECK:           memref.load %[[THI]][%[[ROW]]]
// CHECK:           memref.load %[[TFRAC]][%[[ROW]]]
// CHECK:           scf.execute_region {
// CHECK:             scf.for
// CHECK-COUNT-4:       vector.load %{{.*}} : memref<?xf32>, vector<1xf32>
// CHECK-NOT:           math.floor
// CHECK:               vector.store %{{.*}} : memref<?xf32>, vector<1xf32>
// CHECK:           }{nnc.kernel = "nnc_resize_bilinear_c1_w3_f32"}
// CHECK-NEXT:    } {nnc.parallel}

// CHECK-LABEL: func.func @resize_bilinear_q8(
// CHECK:           scf.execute_region {
// CHECK:               %[[V:.*]] = vector.load %{{.*}} : memref<?xi8>, vector<1xi8>
// CHECK-NEXT:          %[[U:.*]] = llvm.zext %[[V]] : vector<1xi8> to vector<1xi32>
// CHECK-NEXT:          llvm.sitofp %[[U]] : vector<1xi32> to vector<1xf32>
// CHECK-COUNT-3:       arith.addf %{{.*}} : vector<1xf32>
// CHECK:               %[[H:.*]] = arith.addf %{{.*}} : vector<1xf32>
// CHECK-NEXT:          %[[F:.*]] = math.floor %[[H]] : vector<1xf32>
// CHECK-NEXT:          %[[M:.*]] = arith.addf %[[F]], %{{.*}} : vector<1xf32>
// CHECK-NEXT:          %[[B:.*]] = llvm.bitcast %[[M]] : vector<1xf32> to vector<1xi32>
// CHECK-NEXT:          arith.subi %[[B]], %{{.*}} : vector<1xi32>
// CHECK:               arith.maxsi %{{.*}} : vector<1xi32>
// CHECK-NEXT:          llvm.trunc %{{.*}} : vector<1xi32> to vector<1xi8>
// CHECK:           }{nnc.kernel = "nnc_resize_bilinear_c1_w3_u8"}

// CHECK-LABEL: func.func @resize_bilinear_nchw(
// CHECK-SAME:    %[[NIN:[0-9]+]]: memref<1x2x2x2xf32>, %[[NOUT:[0-9]+]]: memref<1x2x3x3xf32>
// CHECK-NOT:     nnc.kernel
// CHECK:         linalg.generic {{.*}} outs(%[[NOUT]] : memref<1x2x3x3xf32>)
// CHECK-COUNT-4:   memref.load %[[NIN]]
// CHECK:           linalg.yield

// RESIZE_NEAREST_NEIGHBOR: floor(o * float(2/3)), clamped to 1, per spatial dim.
// CHECK-LABEL: func.func @resize_nearest_neighbor(
// CHECK-SAME:    %[[R:[0-9]+]]: memref<1x2x2x1xi8>, %[[R_R:[0-9]+]]: memref<1x3x3x1xi8>
// CHECK:         outs(%[[R_R]] : memref<1x3x3x1xi8>)
// CHECK:           arith.constant 0.666666687 : f32
// CHECK:           math.floor
// CHECK:           arith.minsi
// CHECK:           memref.load %[[R]]
