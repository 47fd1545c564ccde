// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// Weights packed at compile time: a 1x1 CONV_2D whose filter is a constant
// of the model.  Its 3 output channels are one block of the GEMM (2 + 1
// lanes), so the kernel reads the panel w^T ([K = 2, 3]): filter rows
// [1, 2], [3, 4], [5, 6] become [1, 3, 5, 2, 4, 6], laid out by the
// compiler (a memref.global here, as nnc-opt has no constant pool; a view
// into %weights when the driver compiles a model), and no transposition
// runs at execution time.  The 16 output pixels are one run, in blocks of
// 8 rows: two tiles, the iterations of one scf.for (the GEMM's outermost
// loop, whose iterations are independent).
builtin.module {
  func.func @main(%x: tensor<1x4x4x2xf32>, %b: tensor<3xf32>) -> tensor<1x4x4x3xf32> {
    %w = "nnapi.constant"() <{value = dense<[[[[1.0, 2.0]]], [[[3.0, 4.0]]], [[[5.0, 6.0]]]]> : tensor<3x1x1x2xf32>}> : () -> tensor<3x1x1x2xf32>
    %valid = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %r = "nnapi.conv_2d"(%x, %w, %b, %valid, %one, %one, %none) : (tensor<1x4x4x2xf32>, tensor<3x1x1x2xf32>, tensor<3xf32>, i32, i32, i32, i32) -> tensor<1x4x4x3xf32>
    func.return %r : tensor<1x4x4x3xf32>
  }
}

// CHECK:      "memref.global"() <{sym_name = "__nnc_const_main_1", {{.*}}initial_value = dense<[1.000000e+00, 3.000000e+00, 5.000000e+00, 2.000000e+00, 4.000000e+00, 6.000000e+00]> : tensor<6xf32>
// CHECK-LABEL: func.func @main(
// CHECK:        %[[PANELS:.*]] = memref.get_global @__nnc_const_main_1 : memref<6xf32>
// CHECK-NOT:    nnc_transpose
// CHECK:        scf.for
// CHECK:          scf.execute_region {
// CHECK:            builtin.unrealized_conversion_cast {{.*}}, %[[PANELS]], {{.*}} : memref<32xf32>, memref<6xf32>, memref<3xf32>, memref<48xf32>
// CHECK:          }{nnc.kernel = "nnc_gemm_8x2_1_l1_none"}
// CHECK-NOT:    nnc_transpose
// CHECK:        func.return
