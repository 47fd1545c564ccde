// RUN: nnc-opt %s -p nnc-expand-math | filecheck %s

// float32 exp, log and tanh become polynomials (nnc.passes.kernels.vmath):
// arith only, no math operation left, so LLVM can vectorise the loops they
// sit in; each result keeps its name.  exp also on vectors (its expansion has no compare); float64 and
// vector tanh keep their operations.
func.func @f(%x: f32, %v: vector<8xf32>, %d: f64) -> (f32, f32, f32, vector<8xf32>, vector<8xf32>, f64) {
  %e = math.exp %x : f32
  %l = math.log %x : f32
  %t = math.tanh %x : f32
  %ve = math.exp %v : vector<8xf32>
  %vt = math.tanh %v : vector<8xf32>
  %k = math.exp %d : f64
  func.return %e, %l, %t, %ve, %vt, %k : f32, f32, f32, vector<8xf32>, vector<8xf32>, f64
}

// exp: clamp (compares and selects that keep NaN), n = round(x log2 e) by the 1.5 * 2**23 trick,
// t = x - n ln 2 in two steps, a degree-5 polynomial, the scale 2**n from
// the exponent bits.
// CHECK-LABEL: func.func @f(
// CHECK-SAME:    %[[X:.*]]: f32, %[[V:.*]]: vector<8xf32>, %[[D:.*]]: f64)
// CHECK-NOT:     math.exp %[[X]]
// CHECK:         arith.cmpf olt, %[[X]], %{{.*}} : f32
// CHECK:         arith.constant 1.44269502 : f32
// CHECK:         arith.constant 0x4B400000 : f32
// CHECK:         arith.constant -0.693115234 : f32
// CHECK:         arith.bitcast %{{.*}} : f32 to i32
// CHECK:         arith.shli
// CHECK:         %e = arith.mulf %{{[0-9]+}}, %{{[0-9]+}} : f32
// log: the exponent and the mantissa from the bits, Cephes' polynomial.
// CHECK-NOT:     math.log
// CHECK:         arith.cmpf olt, %[[X]], %{{.*}} : f32
// CHECK:         arith.shrui
// CHECK:         arith.constant 0.0703768358 : f32
// CHECK:         arith.constant 0.693359375 : f32
// CHECK:         %l = arith.select %{{[0-9]+}}, %[[X]], %{{[0-9]+}} : f32
// tanh: the small-argument polynomial and 1 - 2 / (exp(2|x|) + 1).
// CHECK-NOT:     math.tanh %[[X]]
// CHECK:         arith.constant 6.250000e-01 : f32
// CHECK:         %t = arith.select %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} : f32
// the vector exp: the same expansion on vector<8xf32>
// CHECK:         arith.maximumf %[[V]], %{{.*}} : vector<8xf32>
// CHECK:         arith.bitcast %{{.*}} : vector<8xf32> to vector<8xi32>
// CHECK:         %ve = arith.mulf %{{[0-9]+}}, %{{[0-9]+}} : vector<8xf32>
// CHECK:         %vt = math.tanh %[[V]] : vector<8xf32>
// CHECK:         %k = math.exp %[[D]] : f64
// CHECK:         func.return %e, %l, %t, %ve, %vt, %k
