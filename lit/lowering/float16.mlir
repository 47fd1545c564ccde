// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s --check-prefix=F16C && nnc-opt %s -p 'convert-nnapi-to-linalg{target-features="+sse2"}' | filecheck %s --check-prefix=BITS

// Float16 operations (passes/lowering/float16.py): the float32 lowering on
// float32 temporaries, the float16 input widened before it and the result
// rounded once into the float16 output; the FLOAT16 alpha is a float32
// constant.  With F16C (implied by the default AVX-512 target) the
// conversions are extf/truncf; without it (SSE2 only) they are integer
// arithmetic on the half's bits, read through an i16 view.
builtin.module {
  func.func @elu_f16(%x: tensor<4xf16>) -> tensor<4xf16> {
    %alpha = "nnapi.constant"() <{value = dense<5.000000e-01> : tensor<f16>}> : () -> f16
    %r = "nnapi.elu"(%x, %alpha) : (tensor<4xf16>, f16) -> tensor<4xf16>
    func.return %r : tensor<4xf16>
  }
}

// F16C:      func.func @elu_f16(%0: memref<4xf16>, %1: memref<4xf16>,
// F16C:        ins(%0 : memref<4xf16>) outs(%[[WIDE:.*]] : memref<4xf32>)
// F16C:        arith.extf %{{.*}} : f16 to f32
// F16C:        ins(%[[WIDE]] : memref<4xf32>) outs(%[[RES:.*]] : memref<4xf32>)
// F16C:        arith.constant 5.000000e-01 : f32
// F16C:        math.exp
// F16C:        ins(%[[RES]] : memref<4xf32>) outs(%1 : memref<4xf16>)
// F16C-NEXT:   ^{{.*}}(%{{.*}}: f32, %{{.*}}: f16):
// F16C-NEXT:     arith.truncf %{{.*}} : f32 to f16

// BITS:      func.func @elu_f16(
// BITS:        builtin.unrealized_conversion_cast %0 : memref<4xf16> to memref<4xi16>
// BITS:        arith.bitcast %{{.*}} : i32 to f32
// BITS-NOT:    arith.extf
// BITS:        math.exp
// BITS:        builtin.unrealized_conversion_cast %1 : memref<4xf16> to memref<4xi16>
// BITS:        arith.bitcast %{{.*}} : f32 to i32
// BITS:        arith.trunci %{{.*}} : i32 to i16
// BITS-NOT:    arith.truncf
