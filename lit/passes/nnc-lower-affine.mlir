// RUN: nnc-opt %s -p nnc-lower-affine | filecheck %s

// affine.apply, as nnc-convert-linalg-to-loops leaves it for a non-identity
// indexing map, becomes xDSL's lower-affine expansion: a constant and a
// muli per product, an addi per sum, in the order of the expression.  As in
// xDSL's pass, trivially dead operations (the unused apply and constant)
// are erased; the store and its operands stay.
func.func @f(%i: index, %j: index, %m: memref<16xf32>, %v: f32) -> index {
  %r = affine.apply affine_map<(d0, d1) -> (d0 * 3 + d1)>(%i, %j)
  %dead = affine.apply affine_map<(d0) -> (d0 floordiv 2)>(%i)
  %unused = arith.constant 7 : index
  %k = affine.apply affine_map<(d0) -> (d0 mod 4)>(%j)
  memref.store %v, %m[%k] : memref<16xf32>
  func.return %r : index
}

// CHECK-LABEL: func.func @f(%i: index, %j: index, %m: memref<16xf32>, %v: f32) -> index
// CHECK-NOT:     affine.apply
// CHECK:         %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[M:.*]] = arith.muli %i, %[[C3]] : index
// CHECK-NEXT:    %[[A:.*]] = arith.addi %[[M]], %j : index
// CHECK-NEXT:    %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[K:.*]] = arith.remsi %j, %[[C4]] : index
// CHECK-NEXT:    memref.store %v, %m[%[[K]]] : memref<16xf32>
// CHECK-NEXT:    func.return %[[A]] : index
