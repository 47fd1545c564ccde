// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// TOPK_V2 (passes/lowering/reduce.py): per row (a parallel loop), k scans of
// the row, each keeping the greatest (value, index) pair below the previous
// output; QUANT8_ASYMM values compare unsigned.
builtin.module {
  func.func @topk(%x: tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>) -> (tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>, tensor<2x2xi32>) {
    %k = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %v, %i = "nnapi.topk_v2"(%x, %k) : (tensor<2x3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>, i32) -> (tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>, tensor<2x2xi32>)
    func.return %v, %i : tensor<2x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 5.000000e-01 : f64, #builtin.int<3>>>, tensor<2x2xi32>
  }
}

// CHECK-LABEL: func.func @topk(
// CHECK-SAME:    %[[X:[0-9]+]]: memref<2x3xi8>, %[[V:[0-9]+]]: memref<2x2xi8>, %[[I:[0-9]+]]: memref<2x2xi32>
// CHECK:         scf.for %[[R:[0-9]+]] =
// CHECK:           scf.for %[[J:[0-9]+]] = {{.*}} iter_args({{.*}}) -> (i8, i32)
// CHECK:             scf.for {{.*}} -> (i8, i32)
// CHECK:               memref.load %[[X]][%[[R]], {{.*}}] : memref<2x3xi8>
// CHECK:               arith.cmpi ugt
// CHECK:             memref.store {{.*}}, %[[V]][%[[R]], %[[J]]] : memref<2x2xi8>
// CHECK:             memref.store {{.*}}, %[[I]][%[[R]], %[[J]]] : memref<2x2xi32>
// CHECK:         } {nnc.parallel}
