// RUN: nnc-opt %s -p 'convert-nnapi-to-linalg{profile=true}' | filecheck %s && nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s --check-prefix=PLAIN

// Profiling (nnc.passes.profile): the lowering dispatch of @main reads the
// clock before each operation and after the last into one buffer of N + 1
// slots, marked nnc.profile for the buffer planner.  The RESHAPE is a view
// (no code): its slot and the next are written back to back.  Without the
// option there is no buffer and no clock.
builtin.module {
  func.func @main(%a: tensor<1x4x4x2xf32>) -> tensor<1x32xf32> {
    %r = "nnapi.logistic"(%a) : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
    %s = "nnapi.constant"() <{value = dense<[1, 32]> : tensor<2xi32>}> : () -> tensor<2xi32>
    %v = "nnapi.reshape"(%r, %s) : (tensor<1x4x4x2xf32>, tensor<2xi32>) -> tensor<1x32xf32>
    %t = "nnapi.tanh"(%v) : (tensor<1x32xf32>) -> tensor<1x32xf32>
    func.return %t : tensor<1x32xf32>
  }
}

// CHECK-LABEL: func.func @main
// CHECK:         %[[ST:.*]] = memref.alloc() {alignment = 64 : i64, nnc.profile} : memref<4xi64>
// CHECK-NEXT:    %[[T0:.*]] = func.call @nnc_monotonic_ns() : () -> i64
// CHECK-NEXT:    %[[K0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    memref.store %[[T0]], %[[ST]][%[[K0]]] : memref<4xi64>
// CHECK:         linalg.generic
// CHECK:           arith.divf
// CHECK:         %[[T1:.*]] = func.call @nnc_monotonic_ns() : () -> i64
// CHECK-NEXT:    %[[K1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    memref.store %[[T1]], %[[ST]][%[[K1]]] : memref<4xi64>
// CHECK-NEXT:    builtin.unrealized_conversion_cast
// CHECK-NEXT:    %[[T2:.*]] = func.call @nnc_monotonic_ns() : () -> i64
// CHECK-NEXT:    %[[K2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    memref.store %[[T2]], %[[ST]][%[[K2]]] : memref<4xi64>
// CHECK:         linalg.generic
// CHECK:           math.tanh
// CHECK:         %[[T3:.*]] = func.call @nnc_monotonic_ns() : () -> i64
// CHECK-NEXT:    %[[K3:.*]] = arith.constant 3 : index
// CHECK-NEXT:    memref.store %[[T3]], %[[ST]][%[[K3]]] : memref<4xi64>
// CHECK-NEXT:    func.return
// CHECK:       func.func @nnc_monotonic_ns() -> i64

// PLAIN-NOT: nnc.profile
// PLAIN-NOT: nnc_monotonic_ns
