// RUN: nnc-opt %s -p convert-linalg-to-loops | filecheck %s

// (xDSL's pass, in nnc's pipeline after the buffer planning.)  A
// linalg.generic on memrefs becomes one scf.for per loop of its domain, the
// body between a load of each input and a store of the yielded value.
func.func @f(%a: memref<2x3xf32>, %o: memref<2x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<2x3xf32>) outs(%o : memref<2x3xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  func.return
}

// CHECK-LABEL: func.func @f(%a: memref<2x3xf32>, %o: memref<2x3xf32>)
// CHECK-DAG:     %[[C2:[0-9]+]] = arith.constant 2 : index
// CHECK-DAG:     %[[C3:[0-9]+]] = arith.constant 3 : index
// CHECK-DAG:     %[[C0:[0-9]+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:[0-9]+]] = arith.constant 1 : index
// CHECK:         scf.for %[[I:[0-9]+]] = %[[C0]] to %[[C2]] step %[[C1]] {
// CHECK-NEXT:      scf.for %[[J:[0-9]+]] = %[[C0]] to %[[C3]] step %[[C1]] {
// CHECK-NEXT:        %[[X:.*]] = memref.load %a[%[[I]], %[[J]]] : memref<2x3xf32>
// CHECK-NEXT:        %[[E:.*]] = math.exp %[[X]] : f32
// CHECK-NEXT:        memref.store %[[E]], %o[%[[I]], %[[J]]] : memref<2x3xf32>
// CHECK-NOT:     linalg.generic
