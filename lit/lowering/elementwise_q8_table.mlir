// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// An element-wise operation from one int8 tensor to another of at least
// 256 elements (TABLE_MIN_ELEMENTS) is a lookup in the 256 results of its
// scalar body, evaluated at compile time (passes/lowering/byte_table.py):
// the generic's body zero-extends the stored byte and loads the table, with
// none of the body's arithmetic.  A smaller tensor keeps the body, and so
// does a body of fewer than 8 operations (a RELU between the same
// quantisations is a clamp, which LLVM vectorises).
builtin.module {
  func.func @hard_swish_table(%x: tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-02 : f64, #builtin.int<3>>>) -> tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 4.000000e-02 : f64, #builtin.int<-5>>> {
    %r = "nnapi.hard_swish"(%x) : (tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-02 : f64, #builtin.int<3>>>) -> tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 4.000000e-02 : f64, #builtin.int<-5>>>
    func.return %r : tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 4.000000e-02 : f64, #builtin.int<-5>>>
  }

  func.func @hard_swish_small(%x: tensor<255x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-02 : f64, #builtin.int<3>>>) -> tensor<255x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 4.000000e-02 : f64, #builtin.int<-5>>> {
    %r = "nnapi.hard_swish"(%x) : (tensor<255x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-02 : f64, #builtin.int<3>>>) -> tensor<255x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 4.000000e-02 : f64, #builtin.int<-5>>>
    func.return %r : tensor<255x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 4.000000e-02 : f64, #builtin.int<-5>>>
  }

  func.func @relu_clamp(%x: tensor<1024x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-02 : f64, #builtin.int<3>>>) -> tensor<1024x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-02 : f64, #builtin.int<3>>> {
    %r = "nnapi.relu"(%x) : (tensor<1024x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-02 : f64, #builtin.int<3>>>) -> tensor<1024x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-02 : f64, #builtin.int<3>>>
    func.return %r : tensor<1024x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-02 : f64, #builtin.int<3>>>
  }
}

// CHECK-LABEL: func.func @hard_swish_table(
// CHECK:         %[[TABLE:.*]] = memref.get_global @{{.*}} : memref<256xi8>
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : memref<1024xi8>) outs(%{{.*}} : memref<1024xi8>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: i8, %{{.*}}: i8):
// CHECK-NEXT:      %[[W:.*]] = arith.extui %[[X]] : i8 to i32
// CHECK-NEXT:      %[[K:.*]] = arith.index_cast %[[W]] : i32 to index
// CHECK-NEXT:      %[[Y:.*]] = memref.load %[[TABLE]][%[[K]]] : memref<256xi8>
// CHECK-NEXT:      linalg.yield %[[Y]] : i8

// CHECK-LABEL: func.func @hard_swish_small(
// CHECK-NOT:     memref<256xi8>
// CHECK:         arith.divsi

// CHECK-LABEL: func.func @relu_clamp(
// CHECK-NOT:     memref<256xi8>
// CHECK:         arith.maxsi
