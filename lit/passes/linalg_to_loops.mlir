// RUN: nnc-opt %s -p nnc-convert-linalg-to-loops | filecheck %s

// A linalg.generic on memrefs becomes one scf.for per loop of its domain
// (xDSL's convert-linalg-to-loops IR): the bound constants, then 0 and 1,
// before the nest; in the innermost body a load of each operand the body
// uses, the body, and a store of each yielded value.
func.func @f(%a: memref<2x3xf32>, %o: memref<2x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<2x3xf32>) outs(%o : memref<2x3xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  func.return
}

// CHECK-LABEL: func.func @f(%a: memref<2x3xf32>, %o: memref<2x3xf32>)
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %[[I:.*]] = %[[C0]] to %[[C2]] step %[[C1]] {
// CHECK-NEXT:      scf.for %[[J:.*]] = %[[C0]] to %[[C3]] step %[[C1]] {
// CHECK-NEXT:        %[[X:.*]] = memref.load %a[%[[I]], %[[J]]] : memref<2x3xf32>
// CHECK-NEXT:        %[[E:.*]] = math.exp %[[X]] : f32
// CHECK-NEXT:        memref.store %[[E]], %o[%[[I]], %[[J]]] : memref<2x3xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// A reduction over d1 into a 1-D output: the loop bounds come from the
// first operand indexed by each loop alone (%w); an index that is not a
// plain loop variable (d0 + d1 into %a) is an affine.apply over the
// dimensions it uses; the output is loaded because the body reads its block
// argument; a scalar operand is used as it is; linalg.index becomes the loop
// variable.
func.func @g(%w: memref<4x3xf32>, %a: memref<6xf32>, %s: f32, %o: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0 + d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%w, %a, %s : memref<4x3xf32>, memref<6xf32>, f32) outs(%o : memref<4xf32>) {
  ^bb0(%u: f32, %x: f32, %k: f32, %acc: f32):
    %i = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %p = arith.mulf %x, %k : f32
    %q = arith.addf %p, %fi : f32
    %r = arith.addf %acc, %q : f32
    linalg.yield %r : f32
  }
  func.return
}

// CHECK-LABEL: func.func @g(%w: memref<4x3xf32>, %a: memref<6xf32>, %s: f32, %o: memref<4xf32>)
// CHECK-NEXT:    %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %[[I:.*]] = %[[C0]] to %[[C4]] step %[[C1]] {
// CHECK-NEXT:      scf.for %[[K:.*]] = %[[C0]] to %[[C3]] step %[[C1]] {
// CHECK-NEXT:        %[[AI:.*]] = affine.apply affine_map<(d0, d1) -> ((d0 + d1))> (%[[I]], %[[K]])
// CHECK-NEXT:        %[[X:.*]] = memref.load %a[%[[AI]]] : memref<6xf32>
// CHECK-NEXT:        %[[ACC:.*]] = memref.load %o[%[[I]]] : memref<4xf32>
// CHECK-NEXT:        %{{.*}} = arith.index_cast %[[K]] : index to i32
// CHECK-NEXT:        %{{.*}} = arith.sitofp
// CHECK-NEXT:        %[[P:.*]] = arith.mulf %[[X]], %s : f32
// CHECK-NEXT:        %{{.*}} = arith.addf %[[P]]
// CHECK-NEXT:        %[[R:.*]] = arith.addf %[[ACC]], %{{.*}} : f32
// CHECK-NEXT:        memref.store %[[R]], %o[%[[I]]] : memref<4xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }

// A generic over an empty domain (rank-0 buffers) has no loops: its body
// takes its place.
func.func @h(%a: memref<f32>, %o: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%a : memref<f32>) outs(%o : memref<f32>) {
  ^bb0(%x: f32, %y: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  }
  func.return
}

// CHECK-LABEL: func.func @h(%a: memref<f32>, %o: memref<f32>)
// CHECK-NEXT:    %[[X:.*]] = memref.load %a[] : memref<f32>
// CHECK-NEXT:    %[[N:.*]] = arith.negf %[[X]] : f32
// CHECK-NEXT:    memref.store %[[N]], %o[] : memref<f32>
// CHECK-NEXT:    func.return

// A dynamic size bounds its loop by memref.dim of the operand it comes from.
func.func @d(%a: memref<?xf32>, %o: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : memref<?xf32>) outs(%o : memref<?xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  func.return
}

// CHECK-LABEL: func.func @d(%a: memref<?xf32>, %o: memref<?xf32>)
// CHECK-NEXT:    %[[K0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[N:.*]] = memref.dim %a, %[[K0]] : memref<?xf32>
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %[[I:.*]] = %[[C0]] to %[[N]] step %[[C1]] {
// CHECK-NEXT:      %[[X:.*]] = memref.load %a[%[[I]]] : memref<?xf32>
// CHECK-NEXT:      memref.store %[[X]], %o[%[[I]]] : memref<?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
