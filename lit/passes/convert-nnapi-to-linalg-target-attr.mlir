// RUN: nnc-opt %s -p convert-nnapi-to-linalg,nnc-outline-kernels | filecheck %s && nnc-opt %s -p 'convert-nnapi-to-linalg{target-features="+avx512f"}' | filecheck %s --check-prefix=OPTIONS

// The target travels on the module: without options the lowering blocks its
// kernels for the module's nnc.target (here AVX2: 8 floats, 16 registers, as
// the driver sets it for such a CPU) and keeps the attribute.  Options name
// another target and win; the attribute then records the one used.
builtin.module attributes {nnc.target = {triple = "x86_64-unknown-linux-gnu", cpu = "haswell", features = "+avx,+avx2,+fma,+sse2,+sse3,+sse4.1,+sse4.2,+ssse3"}} {
  func.func @main(%x: tensor<1x4x4x24xf32>, %w: tensor<24x1x1x24xf32>, %b: tensor<24xf32>) -> tensor<1x4x4x24xf32> {
    %valid = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %r = "nnapi.conv_2d"(%x, %w, %b, %valid, %one, %one, %none) : (tensor<1x4x4x24xf32>, tensor<24x1x1x24xf32>, tensor<24xf32>, i32, i32, i32, i32) -> tensor<1x4x4x24xf32>
    func.return %r : tensor<1x4x4x24xf32>
  }
}

// CHECK:        nnc.target = {triple = "x86_64-unknown-linux-gnu", cpu = "haswell", features = "+avx,+avx2,+fma,+sse2,+sse3,+sse4.1,+sse4.2,+ssse3"}
// CHECK-LABEL: func.func @main
// CHECK:         func.call @nnc_gemm_6x8_8_l1_none(
// CHECK-NOT:     vector<16xf32>

// OPTIONS:      nnc.target = {triple = "x86_64-unknown-linux-gnu", cpu = "", features = "+avx,+avx2,+avx512f,+f16c,+fma,+sse2,+sse3,+sse4.1,+sse4.2,+ssse3"}
// OPTIONS:      vector<16xf32>
