// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// Quantised ADD and MUL of at least 256 elements whose shapes are rows of
// elements (each input whole, or one row broadcast) run the shared vector
// kernels of passes/kernels/q8_binary.py: Android's integer arithmetic in
// int32 lanes, the operation's numbers read from a table at run time, so
// every such operation of a model shares one kernel per kind and 8-bit
// type.  The default target (AVX-512F) has 16 float32 lanes, and a step
// takes 32 elements; a row's last elements take at most one step of each
// narrower power of two (16, 8, 4, 2, 1).  A SUB (its
// input multiplier negated) keeps the scalar loop, as do small tensors
// (elementwise_q8.mlir).
builtin.module {
  // Both inputs whole: one row of 1024 elements; input 1 (the larger scale)
  // needs no rescaling (the kernel name's p1).
  // CHECK-LABEL: func.func @add_whole(
  // CHECK:         %[[T:.*]] = memref.get_global @{{.*}} : memref<21xi32>
  // CHECK:         scf.execute_region {
  // CHECK:           builtin.unrealized_conversion_cast %{{.*}}, %{{.*}}, %{{.*}}, %[[T]],
  // CHECK:           scf.for
  // CHECK:             scf.for
  // CHECK:               vector.load %{{.*}} : memref<?xi8>, vector<32xi8>
  // CHECK:               vector.load %{{.*}} : memref<?xi8>, vector<32xi8>
  // CHECK:             scf.for
  // CHECK:               vector.load %{{.*}} : memref<?xi8>, vector<16xi8>
  // CHECK:             scf.for
  // CHECK:               vector.load %{{.*}} : memref<?xi8>, vector<8xi8>
  // CHECK:             scf.for
  // CHECK:               vector.load %{{.*}} : memref<?xi8>, vector<1xi8>
  // CHECK:         }{nnc.kernel = "nnc_q8_add_s_p1_32"}
  func.func @add_whole(%a: tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-02 : f64, #builtin.int<3>>>, %b: tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.000000e-02 : f64, #builtin.int<-7>>>) -> tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 7.000000e-02 : f64, #builtin.int<-1>>> {
    %act = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %r = "nnapi.add"(%a, %b, %act) : (tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-02 : f64, #builtin.int<3>>>, tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.000000e-02 : f64, #builtin.int<-7>>>, i32) -> tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 7.000000e-02 : f64, #builtin.int<-1>>>
    func.return %r : tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 7.000000e-02 : f64, #builtin.int<-1>>>
  }

  // A per-channel MUL (squeeze-and-excitation): 100 rows of 37, input 2 one
  // row (its row stride 0); the centred product, exact in int32, rescaled.
  // CHECK-LABEL: func.func @mul_channels(
  // CHECK:         %[[ZERO:.*]] = arith.constant 0 : index
  // CHECK:         %[[ROWS:.*]] = arith.constant 100 : index
  // CHECK:         %[[COLS:.*]] = arith.constant 37 : index
  // CHECK:         scf.execute_region {
  // CHECK:           builtin.unrealized_conversion_cast %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ROWS]], %[[COLS]], %[[COLS]], %[[ZERO]] :
  // CHECK:               arith.muli %{{.*}}, %{{.*}} : vector<32xi32>
  // CHECK:         }{nnc.kernel = "nnc_q8_mul_u_32"}
  func.func @mul_channels(%a: tensor<1x10x10x37x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-02 : f64, #builtin.int<128>>>, %b: tensor<1x1x1x37x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 3.906250e-03 : f64, #builtin.int<0>>>) -> tensor<1x10x10x37x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-02 : f64, #builtin.int<128>>> {
    %act = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %r = "nnapi.mul"(%a, %b, %act) : (tensor<1x10x10x37x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-02 : f64, #builtin.int<128>>>, tensor<1x1x1x37x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 3.906250e-03 : f64, #builtin.int<0>>>, i32) -> tensor<1x10x10x37x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-02 : f64, #builtin.int<128>>>
    func.return %r : tensor<1x10x10x37x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-02 : f64, #builtin.int<128>>>
  }

  // The same MUL over 1600 rows: cut into pieces for the thread pool, of
  // at least 4096 elements (111 rows) each: 14 of 111 rows and the 46 left
  // (min(111, 1600 - start)), in one marked loop.
  // CHECK-LABEL: func.func @mul_pieces(
  // CHECK:         %[[ZERO:.*]] = arith.constant 0 : index
  // CHECK:         %[[COLS:.*]] = arith.constant 37 : index
  // CHECK:         %[[PIECES:.*]] = arith.constant 15 : index
  // CHECK:         scf.for %[[T:.*]] = %{{.*}} to %[[PIECES]] step %{{.*}} {
  // CHECK-NEXT:      %[[SIZE:.*]] = arith.constant 111 : index
  // CHECK-NEXT:      %[[START:.*]] = arith.muli %[[T]], %[[SIZE]] : index
  // CHECK-NEXT:      %[[SIZE2:.*]] = arith.constant 111 : index
  // CHECK-NEXT:      %[[N:.*]] = arith.constant 1600 : index
  // CHECK-NEXT:      %[[LEFT:.*]] = arith.subi %[[N]], %[[START]] : index
  // CHECK-NEXT:      %[[ROWS:.*]] = arith.minsi %[[SIZE2]], %[[LEFT]] : index
  // CHECK:           %[[A:.*]] = arith.muli %[[START]], %{{.*}} : index
  // CHECK:           %[[OUT:.*]] = arith.muli %[[START]], %{{.*}} : index
  // CHECK:           scf.execute_region {
  // CHECK:             builtin.unrealized_conversion_cast %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[A]], %[[ZERO]], %[[OUT]], %[[ROWS]], %[[COLS]], %[[COLS]], %[[ZERO]] :
  // CHECK:           }{nnc.kernel = "nnc_q8_mul_u_32"}
  // CHECK-NEXT:    } {nnc.parallel, nnc.parallel_sizes}
  func.func @mul_pieces(%a: tensor<1x40x40x37x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-02 : f64, #builtin.int<128>>>, %b: tensor<1x1x1x37x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 3.906250e-03 : f64, #builtin.int<0>>>) -> tensor<1x40x40x37x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-02 : f64, #builtin.int<128>>> {
    %act = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %r = "nnapi.mul"(%a, %b, %act) : (tensor<1x40x40x37x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-02 : f64, #builtin.int<128>>>, tensor<1x1x1x37x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 3.906250e-03 : f64, #builtin.int<0>>>, i32) -> tensor<1x40x40x37x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-02 : f64, #builtin.int<128>>>
    func.return %r : tensor<1x40x40x37x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-02 : f64, #builtin.int<128>>>
  }

  // CHECK-LABEL: func.func @sub_stays(
  // CHECK-NOT:     nnc.kernel
  // CHECK:         linalg.generic
  func.func @sub_stays(%a: tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-02 : f64, #builtin.int<3>>>, %b: tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.000000e-02 : f64, #builtin.int<-7>>>) -> tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 7.000000e-02 : f64, #builtin.int<-1>>> {
    %act = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %r = "nnapi.sub"(%a, %b, %act) : (tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-02 : f64, #builtin.int<3>>>, tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.000000e-02 : f64, #builtin.int<-7>>>, i32) -> tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 7.000000e-02 : f64, #builtin.int<-1>>>
    func.return %r : tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 7.000000e-02 : f64, #builtin.int<-1>>>
  }
}
