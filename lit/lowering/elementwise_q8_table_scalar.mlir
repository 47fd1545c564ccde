// RUN: nnc-opt %s -p 'convert-nnapi-to-linalg{target-cpu="x86-64" target-features="+sse2"}' | filecheck %s

// A byte table lookup (passes/lowering/byte_table.py) on a target without
// a byte shuffle (baseline x86-64 has no SSSE3): the generic's body
// zero-extends the stored byte and loads the 256-entry table.
builtin.module {
  func.func @hard_swish_table(%x: tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-02 : f64, #builtin.int<3>>>) -> tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 4.000000e-02 : f64, #builtin.int<-5>>> {
    %r = "nnapi.hard_swish"(%x) : (tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-02 : f64, #builtin.int<3>>>) -> tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 4.000000e-02 : f64, #builtin.int<-5>>>
    func.return %r : tensor<16x64x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 4.000000e-02 : f64, #builtin.int<-5>>>
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
// CHECK-NOT:     pshuf
