// RUN: nnc-opt %s -p convert-nnapi-to-linalg,nnc-outline-kernels | filecheck %s --check-prefix=AVX512 && nnc-opt %s -p 'convert-nnapi-to-linalg{target-cpu="znver3" target-features="+avx2,+fma"},nnc-outline-kernels' | filecheck %s --check-prefix=AVX2

// The same 1x1 CONV_2D (16 pixels x 24 output channels) lowered for two
// targets: the target's features decide the tile policy
// (nnc.passes.kernels.tiles).  Without options the pass assumes AVX-512
// (512-bit vectors: 16 floats, 32 registers): one block of a full vector of
// channels (16) and one of the 8-lane tail, each over 2 blocks of 8 pixels,
// panels (the filter is an input here) transposed in 16x16 and 8x8 blocks
// before the GEMM's tiles.  With AVX2 (256-bit: 8 floats,
// 16 registers) the 3 vectors of channels come in blocks of 2 vectors x 6
// pixels (12 accumulators + 2 weight vectors + 1 broadcast: 15 of the 16
// registers; 16 pixels = 6 + 5 + 5) and of 1 vector x 8 pixels.
builtin.module {
  func.func @main(%x: tensor<1x4x4x24xf32>, %w: tensor<24x1x1x24xf32>, %b: tensor<24xf32>) -> tensor<1x4x4x24xf32> {
    %valid = "nnapi.constant"() <{value = dense<2> : tensor<i32>}> : () -> i32
    %one = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %r = "nnapi.conv_2d"(%x, %w, %b, %valid, %one, %one, %none) : (tensor<1x4x4x24xf32>, tensor<24x1x1x24xf32>, tensor<24xf32>, i32, i32, i32, i32) -> tensor<1x4x4x24xf32>
    func.return %r : tensor<1x4x4x24xf32>
  }
}

// AVX512-LABEL: func.func @main
// AVX512:         func.call @nnc_transpose_16(
// AVX512:         func.call @nnc_transpose_8(
// AVX512:         func.call @nnc_gemm_8x16_l1_none(
// AVX512:         func.call @nnc_gemm_8x8_l1_none(
// AVX512-LABEL: func.func private @nnc_transpose_8(
// AVX512-LABEL: func.func private @nnc_gemm_8x16_l1_none(
// AVX512:         scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// AVX512:           vector.broadcast {{.*}} : f32 to vector<16xf32>
// AVX512:           arith.mulf {{.*}} : vector<16xf32>
// AVX512-NOT:   vector<8xf32>
// AVX512-LABEL: func.func private @nnc_gemm_8x8_l1_none(
// AVX512:           arith.mulf {{.*}} : vector<8xf32>

// AVX2-LABEL: func.func @main
// AVX2:         func.call @nnc_transpose_8(
// AVX2:         func.call @nnc_transpose_8(
// AVX2:         func.call @nnc_gemm_6x8_8_l1_none(
// AVX2:         func.call @nnc_gemm_5x8_8_l1_none(
// AVX2:         func.call @nnc_gemm_8x8_l1_none(
// AVX2-NOT:     vector<16xf32>
// AVX2-LABEL: func.func private @nnc_gemm_6x8_8_l1_none(
// AVX2:         scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// AVX2-COUNT-2:   vector.load {{.*}} vector<8xf32>
// AVX2-COUNT-6:   vector.broadcast {{.*}} : f32 to vector<8xf32>
// AVX2-NOT:     vector<16xf32>
