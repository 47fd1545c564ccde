// RUN: nnc-opt %s -p lower-affine | filecheck %s

// (xDSL's pass.)  affine.apply, as the lowerings' index maps leave it,
// becomes index arithmetic.
func.func @f(%i: index, %j: index) -> index {
  %r = affine.apply affine_map<(d0, d1) -> (d0 * 3 + d1)>(%i, %j)
  func.return %r : index
}

// CHECK-LABEL: func.func @f(%i: index, %j: index) -> index
// CHECK-NOT:     affine.apply
// CHECK:         %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[M:.*]] = arith.muli %i, %[[C3]] : index
// CHECK-NEXT:    %[[A:.*]] = arith.addi %[[M]], %j : index
// CHECK-NEXT:    func.return %[[A]] : index
