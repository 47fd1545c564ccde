// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// BATCH_MATMUL (passes/lowering/matmul.py).
builtin.module {
  // TENSOR_INT32 with adj_y and input 1's batch dimension broadcast: one
  // reduction generic; y is read as y[0, j, k] (transposed, batch 0).
  func.func @batch_matmul_int32(%x: tensor<2x4x3xi32>, %y: tensor<1x5x3xi32>) -> tensor<2x4x5xi32> {
    %f = "nnapi.constant"() <{value = dense<false> : tensor<i1>}> : () -> i1
    %t = "nnapi.constant"() <{value = dense<true> : tensor<i1>}> : () -> i1
    %r = "nnapi.batch_matmul"(%x, %y, %f, %t) : (tensor<2x4x3xi32>, tensor<1x5x3xi32>, i1, i1) -> tensor<2x4x5xi32>
    func.return %r : tensor<2x4x5xi32>
  }

  // TENSOR_QUANT8_ASYMM_SIGNED with adj_x: int32 accumulation of
  // (x - 0) * (y + 64), then the requantisation into the int8 output.
  func.func @batch_matmul_q8s(%x: tensor<3x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>, %y: tensor<3x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-64>>>) -> tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<-128>>> {
    %f = "nnapi.constant"() <{value = dense<false> : tensor<i1>}> : () -> i1
    %t = "nnapi.constant"() <{value = dense<true> : tensor<i1>}> : () -> i1
    %r = "nnapi.batch_matmul"(%x, %y, %t, %f) : (tensor<3x2x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 2.500000e-01 : f64, #builtin.int<0>>>, tensor<3x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 5.000000e-01 : f64, #builtin.int<-64>>>, i1, i1) -> tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<-128>>>
    func.return %r : tensor<2x4x!nnapi.quant<"TENSOR_QUANT8_ASYMM_SIGNED", 1.000000e+00 : f64, #builtin.int<-128>>>
  }

  // TENSOR_FLOAT32: the GEMM kernel with a zero bias, y's rows read in place.
  func.func @batch_matmul_f32(%x: tensor<2x5x3xf32>, %y: tensor<2x3x20xf32>) -> tensor<2x5x20xf32> {
    %f = "nnapi.constant"() <{value = dense<false> : tensor<i1>}> : () -> i1
    %r = "nnapi.batch_matmul"(%x, %y, %f, %f) : (tensor<2x5x3xf32>, tensor<2x3x20xf32>, i1, i1) -> tensor<2x5x20xf32>
    func.return %r : tensor<2x5x20xf32>
  }
}

// CHECK-LABEL: func.func @batch_matmul_int32(
// CHECK-SAME:    %[[X:[0-9]+]]: memref<2x4x3xi32>, %[[Y:[0-9]+]]: memref<1x5x3xi32>, %[[OUT:[0-9]+]]: memref<2x4x5xi32>
// CHECK:         linalg.generic {{.*}} outs(%[[OUT]] : memref<2x4x5xi32>)
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[X]], %[[Y]] : {{.*}}) outs(%[[OUT]] : memref<2x4x5xi32>)
// CHECK:           arith.muli
// CHECK-NEXT:      arith.addi

// CHECK-LABEL: func.func @batch_matmul_q8s(
// CHECK-SAME:    %[[X:[0-9]+]]: memref<3x2xi8>, %[[Y:[0-9]+]]: memref<3x4xi8>, %[[OUT:[0-9]+]]: memref<2x4xi8>
// CHECK:         %[[ACC:[0-9]+]] = memref.alloc() {{.*}} : memref<2x4xi32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], {{.*}} ins(%[[X]], %[[Y]] : {{.*}}) outs(%[[ACC]] : memref<2x4xi32>)
// CHECK:           arith.constant -64 : i32
// CHECK:           arith.subi
// CHECK:         linalg.generic {{.*}} ins(%[[ACC]] : memref<2x4xi32>) outs(%[[OUT]] : memref<2x4xi8>)
// CHECK:           arith.trunci {{.*}} : i32 to i8

// CHECK-LABEL: func.func @batch_matmul_f32(
// CHECK:         scf.for
// CHECK:         nnc.kernel = "nnc_gemm_5x16_l1_none"
// CHECK:         nnc.kernel = "nnc_gemm_5x4_l1_none"
