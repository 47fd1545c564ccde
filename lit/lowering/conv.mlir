// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// CONV_2D, implicit SAME padding, stride 2, fused RELU (NHWC, float32).
// Android's calculateExplicitPadding gives 1 row/column of padding on each
// side here (out 3, (3-1)*2 + 3 - 5 = 2 in total, head 1), so the input is
// first copied into the interior of a zero-filled 1x7x7x2 buffer.  The GEMM
// over pixels x output channels has one block of channels (2 + 1 lanes):
// the filter is an input of the model, so its weight rows [3, 3x3x2] are
// transposed at run time into a panel [18, 3] (too small for vector blocks:
// element by element), then one use of a shared GEMM kernel per output row
// (scf.for over the 3 rows, the GEMM's tiles) keeps 3 pixels x (2 + 1)
// channels in vector accumulators started from the bias, reduces over the
// kh, kw, ic loops with one weight vector per width and one broadcast input
// per pixel (multiply-adds that LLVM may fuse: fastmath<contract>), clamps
// (RELU) and stores once.  Kernel uses are
// scf.execute_region ops marked nnc.kernel whose first op casts the
// arguments to the kernel's parameter types (nnc-outline-kernels makes them
// functions).
builtin.module {
  func.func @main(%x: tensor<1x5x5x2xf32>, %w: tensor<3x3x3x2xf32>, %b: tensor<3xf32>) -> tensor<1x3x3x3xf32> {
    %same = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %stride = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %relu = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %r = "nnapi.conv_2d"(%x, %w, %b, %same, %stride, %stride, %relu) : (tensor<1x5x5x2xf32>, tensor<3x3x3x2xf32>, tensor<3xf32>, i32, i32, i32, i32) -> tensor<1x3x3x3xf32>
    func.return %r : tensor<1x3x3x3xf32>
  }

  func.func @depthwise(%x: tensor<1x4x9x16xf32>, %w: tensor<1x3x3x16xf32>, %b: tensor<16xf32>) -> tensor<1x4x9x16xf32> {
    %same = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %relu6 = "nnapi.constant"() <{value = dense<3> : tensor<i32>}> : () -> i32
    %r = "nnapi.depthwise_conv_2d"(%x, %w, %b, %same, %one, %one, %one, %relu6) : (tensor<1x4x9x16xf32>, tensor<1x3x3x16xf32>, tensor<16xf32>, i32, i32, i32, i32, i32) -> tensor<1x4x9x16xf32>
    func.return %r : tensor<1x4x9x16xf32>
  }
  func.func @fully_connected(%x: tensor<1x20xf32>, %w: tensor<5x20xf32>, %b: tensor<5xf32>) -> tensor<1x5xf32> {
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %r = "nnapi.fully_connected"(%x, %w, %b, %none) : (tensor<1x20xf32>, tensor<5x20xf32>, tensor<5xf32>, i32) -> tensor<1x5xf32>
    func.return %r : tensor<1x5xf32>
  }

  // Quantised CONV_2D (TENSOR_QUANT8_ASYMM input and filter), SAME padding
  // (one row/column on each side), fused RELU, computed like Android's
  // reference: the padding holds the input zero point (128, the i8 -128), so a
  // tap outside the input adds nothing; an i32 accumulator starts from the i32
  // bias and sums (x - 128) * (w - 120) over the zero-extended 8-bit values;
  // the epilogue applies MultiplyByQuantizedMultiplier for the real multiplier
  // 0.5 * 0.5 / 1.0 = 0.25 (QuantizeMultiplier: 2^30, shift -1: a rounding
  // doubling high multiply, then a rounding right shift by one), adds the
  // output zero point 100 and clamps to RELU's quantised range [100, 255].
  func.func @conv_quant8(%x: tensor<1x3x3x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>, %w: tensor<2x3x3x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<120>>>, %b: tensor<2x!nnapi.quant<"TENSOR_INT32", 2.500000e-01 : f64, #builtin.int<0>>>) -> tensor<1x3x3x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e+00 : f64, #builtin.int<100>>> {
    %same = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %stride = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %relu = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %r = "nnapi.conv_2d"(%x, %w, %b, %same, %stride, %stride, %relu) : (tensor<1x3x3x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<128>>>, tensor<2x3x3x1x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<120>>>, tensor<2x!nnapi.quant<"TENSOR_INT32", 2.500000e-01 : f64, #builtin.int<0>>>, i32, i32, i32, i32) -> tensor<1x3x3x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e+00 : f64, #builtin.int<100>>>
    func.return %r : tensor<1x3x3x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e+00 : f64, #builtin.int<100>>>
  }
}

// CHECK:      func.func @main(%[[X:[^:]*]]: memref<1x5x5x2xf32>, %[[W:[^:]*]]: memref<3x3x3x2xf32>, %[[B:[^:]*]]: memref<3xf32>, %[[OUT:[^:]*]]: memref<1x3x3x3xf32>
// CHECK:        %[[PAD:.*]] = memref.alloc() {{.*}} : memref<1x7x7x2xf32>
// CHECK:        linalg.generic {{.*}} outs(%[[PAD]] : memref<1x7x7x2xf32>)
// CHECK:          arith.constant 0.000000e+00 : f32
// CHECK:        %[[IN:.*]] = memref.subview %[[PAD]][0, 1, 1, 0] [1, 5, 5, 2] [1, 1, 1, 1]
// CHECK:        linalg.generic {{.*}} ins(%[[X]] : memref<1x5x5x2xf32>) outs(%[[IN]] :
// CHECK:        %[[PANEL:.*]] = memref.alloc() {{.*}} : memref<54xf32>
// CHECK:        scf.execute_region {
// CHECK-NEXT:     builtin.unrealized_conversion_cast {{.*}} : memref<54xf32>, memref<54xf32>, index, index, index, index, index, index, index to memref<?xf32>, memref<?xf32>, index, index, index, index, index, index, index
// CHECK:            memref.load
// CHECK-NEXT:       arith.addi
// CHECK-NEXT:       arith.muli
// CHECK-NEXT:       arith.addi
// CHECK-NEXT:       memref.store
// CHECK:        }{nnc.kernel = "nnc_transpose_0"}
// CHECK:        scf.for
// CHECK:          scf.execute_region {
// CHECK:            %[[PA:[0-9]+]], %[[PW:[0-9]+]], %[[PB:[0-9]+]], %[[PO:[0-9]+]], {{.*}} = builtin.unrealized_conversion_cast {{.*}} : memref<98xf32>, memref<54xf32>, memref<3xf32>, memref<27xf32>, index, {{.*}} to memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, index,
// CHECK:            %[[B2:.*]] = vector.load %[[PB]][%{{.*}}] : memref<?xf32>, vector<2xf32>
// CHECK:            %[[B1:.*]] = vector.load %[[PB]][%{{.*}}] : memref<?xf32>, vector<1xf32>
// CHECK:            scf.for {{.*}} iter_args({{.*}} = %[[B2]], {{.*}} = %[[B1]], {{.*}}) -> (vector<2xf32>, vector<1xf32>, vector<2xf32>, vector<1xf32>, vector<2xf32>, vector<1xf32>)
// CHECK:              scf.for
// CHECK:                scf.for
// CHECK:                  %[[WV:.*]] = vector.load %[[PW]][%{{.*}}] : memref<?xf32>, vector<2xf32>
// CHECK:                  vector.load %[[PW]][%{{.*}}] : memref<?xf32>, vector<1xf32>
// CHECK:                  %[[XS:.*]] = memref.load %[[PA]][%{{.*}}] : memref<?xf32>
// CHECK:                  %[[XV:.*]] = vector.broadcast %[[XS]] : f32 to vector<2xf32>
// CHECK-NEXT:             %[[PR:.*]] = arith.mulf %[[XV]], %[[WV]] fastmath<contract> : vector<2xf32>
// CHECK-NEXT:             arith.addf %{{.*}}, %[[PR]] fastmath<contract> : vector<2xf32>
// CHECK:                  scf.yield
// CHECK:            arith.maxnumf %{{.*}}, %{{.*}} : vector<2xf32>
// CHECK-NEXT:       arith.addi
// CHECK-NEXT:       vector.store %{{.*}}, %[[PO]][%{{.*}}] : memref<?xf32>, vector<2xf32>
// CHECK:          }{nnc.kernel = "nnc_gemm_3x2_1_l3_relu"}
// CHECK-NOT:    linalg.generic
// CHECK:        func.return

// DEPTHWISE_CONV_2D 3x3, SAME, stride 1, RELU6 on 4x9x16 (float32, NHWC):
// no padded copy; the top and bottom output rows and the left and right
// columns see a clipped window and use the kernel that loops over the taps
// given at run time ("clip"), the interior 2x7 pixels (a block of 7 per
// row) the kernel with the 3x3 window unrolled; each keeps one accumulator
// per pixel for a vector of 16 channels.  The rows of all three runs (top border, interior, bottom
// border) are one loop marked parallel (each iteration writes its own output
// row), a chain of scf.if choosing the run.
// CHECK-LABEL: func.func @depthwise(
// CHECK-NOT:    memref.alloc
// CHECK:        scf.for
// CHECK:          scf.if
// CHECK:          }{nnc.kernel = "nnc_dw_1p_clip_t0_relu6"}
// CHECK:          }{nnc.kernel = "nnc_dw_7p_clip_t0_relu6"}
// CHECK:          }{nnc.kernel = "nnc_dw_1p_clip_t0_relu6"}
// CHECK:          scf.if
// CHECK:            }{nnc.kernel = "nnc_dw_1p_clip_t0_relu6"}
// CHECK:            scf.execute_region {
// CHECK-COUNT-63:     arith.addf {{.*}} fastmath<contract> : vector<16xf32>
// CHECK-NOT:          arith.addf
// CHECK:              arith.minnumf
// CHECK:            }{nnc.kernel = "nnc_dw_7p_3x3_t0_relu6"}
// CHECK:            }{nnc.kernel = "nnc_dw_1p_clip_t0_relu6"}
// CHECK:            }{nnc.kernel = "nnc_dw_1p_clip_t0_relu6"}
// CHECK:            }{nnc.kernel = "nnc_dw_7p_clip_t0_relu6"}
// CHECK:            }{nnc.kernel = "nnc_dw_1p_clip_t0_relu6"}
// CHECK:        } {nnc.parallel}
// CHECK:        func.return

// FULLY_CONNECTED of one row (20 inputs, 5 units): the dot-product kernel,
// one block of all 5 units (one row may keep the accumulators of three), a
// vector of 16 inputs per step and the 4 after it as the tail.
// CHECK-LABEL: func.func @fully_connected(
// CHECK-NOT:    memref.alloc
// CHECK:        scf.execute_region {
// CHECK:          scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK-COUNT-5:    arith.addf {{.*}} fastmath<contract>
// CHECK:          vector.shuffle {{.*}} [8, 9, 10, 11, 12, 13, 14, 15]
// CHECK:          vector.load {{.*}} vector<4xf32>
// CHECK:          arith.mulf {{.*}} : vector<4xf32>
// CHECK:          memref.store
// CHECK:        }{nnc.kernel = "nnc_dot_1x5_t4_none"}
// CHECK-NOT:    nnc.kernel
// CHECK:        func.return


// CHECK-LABEL: func.func @conv_quant8(
// CHECK-SAME:    %[[QX:[^:]*]]: memref<1x3x3x1xi8>, %[[QW:[^:]*]]: memref<2x3x3x1xi8>, %[[QB:[^:]*]]: memref<2xi32>, %[[QOUT:[^:]*]]: memref<1x3x3x2xi8>
// CHECK:        %[[QPAD:.*]] = memref.alloc() {{.*}} : memref<1x5x5x1xi8>
// CHECK:        linalg.generic {{.*}} outs(%[[QPAD]] : memref<1x5x5x1xi8>)
// CHECK:          arith.constant -128 : i8
// CHECK:        %[[QIN:.*]] = memref.subview %[[QPAD]][0, 1, 1, 0] [1, 3, 3, 1] [1, 1, 1, 1]
// CHECK:        linalg.generic {{.*}} ins(%[[QX]] : memref<1x3x3x1xi8>) outs(%[[QIN]] :
// CHECK:        %[[ACC:.*]] = memref.alloc() {{.*}} : memref<1x3x3x2xi32>
// CHECK:        linalg.generic {{.*}} ins(%[[QB]] : memref<2xi32>) outs(%[[ACC]] : memref<1x3x3x2xi32>)
// CHECK:        %[[QWT:.*]] = memref.alloc() {{.*}} : memref<3x3x1x2xi8>
// CHECK:        linalg.generic {{.*}} ins(%[[QW]] : memref<2x3x3x1xi8>) outs(%[[QWT]] : memref<3x3x1x2xi8>)
// CHECK:        linalg.generic {{.*}} ins(%[[QPAD]], %[[QWT]] : memref<1x5x5x1xi8>, memref<3x3x1x2xi8>) outs(%[[ACC]] : memref<1x3x3x2xi32>)
// CHECK-NEXT:   ^{{.*}}(%[[QXV:.*]]: i8, %[[QWV:.*]]: i8, %[[QACC:.*]]: i32):
// CHECK-NEXT:     %[[XE:.*]] = arith.extui %[[QXV]] : i8 to i32
// CHECK-NEXT:     %[[XZ:.*]] = arith.constant 128 : i32
// CHECK-NEXT:     %[[XC:.*]] = arith.subi %[[XE]], %[[XZ]] : i32
// CHECK-NEXT:     %[[WE:.*]] = arith.extui %[[QWV]] : i8 to i32
// CHECK-NEXT:     %[[WZ:.*]] = arith.constant 120 : i32
// CHECK-NEXT:     %[[WC:.*]] = arith.subi %[[WE]], %[[WZ]] : i32
// CHECK-NEXT:     %[[QP:.*]] = arith.muli %[[XC]], %[[WC]] : i32
// CHECK-NEXT:     %[[QS:.*]] = arith.addi %[[QACC]], %[[QP]] : i32
// CHECK-NEXT:     linalg.yield %[[QS]] : i32
// CHECK:        linalg.generic {{.*}} ins(%[[ACC]] : memref<1x3x3x2xi32>) outs(%[[QOUT]] : memref<1x3x3x2xi8>)
// CHECK:          arith.constant 1073741824 : i64
// CHECK:          arith.shrsi %{{.*}}, %{{.*}} : i64
// CHECK:          %[[HI:.*]] = arith.trunci %{{.*}} : i64 to i32
// CHECK:          arith.andi %[[HI]], %{{.*}} : i32
// CHECK:          arith.shrsi %[[HI]], %{{.*}} : i32
// CHECK:          arith.constant 100 : i32
// CHECK:          arith.constant 255 : i32
// CHECK:          arith.minsi
// CHECK:          arith.constant 100 : i32
// CHECK:          arith.maxsi
// CHECK:          arith.trunci %{{.*}} : i32 to i8
// CHECK:        func.return
