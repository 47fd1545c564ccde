// RUN: nnc-opt %s -p dce | filecheck %s

// (xDSL's pass.)  Pure operations whose results are unused are removed;
// stores stay.
func.func @f(%a: f32, %m: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %unused = arith.mulf %a, %a : f32
  %e = math.exp %a : f32
  memref.store %a, %m[%c0] : memref<1xf32>
  func.return
}

// CHECK-LABEL: func.func @f(%a: f32, %m: memref<1xf32>)
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    memref.store %a, %m[%[[C0]]] : memref<1xf32>
// CHECK-NEXT:    func.return
