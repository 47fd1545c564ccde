// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// GATHER along axis -2 (= 1) of a [2, 5, 3] input with 4 indices: a first
// loop records any index outside [0, 5) in the status word (operation 0 ->
// code 1), then one generic over the output reads the index through a
// projection map, clamps a bad one to 0 for the load (never out of bounds)
// and zeroes that element.
builtin.module {
  func.func @main(%x: tensor<2x5x3xf32>, %idx: tensor<4xi32>) -> tensor<2x4x3xf32> {
    %axis = "nnapi.constant"() <{value = dense<-2> : tensor<i32>}> : () -> i32
    %o = "nnapi.gather"(%x, %axis, %idx) : (tensor<2x5x3xf32>, i32, tensor<4xi32>) -> tensor<2x4x3xf32>
    func.return %o : tensor<2x4x3xf32>
  }
}

// CHECK:      func.func @main(%[[X:.*]]: memref<2x5x3xf32>, %[[IDX:.*]]: memref<4xi32>, %[[OUT:.*]]: memref<2x4x3xf32>, %{{.*}}: memref<1xi8>, %[[STATUS:.*]]: memref<1xi32>)
// CHECK:        scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:     %[[V:.*]] = memref.load %[[IDX]][%[[I]]] : memref<4xi32>
// CHECK-NEXT:     %[[N:.*]] = arith.constant 5 : i32
// CHECK-NEXT:     %[[BAD:.*]] = arith.cmpi uge, %[[V]], %[[N]] : i32
// CHECK-NEXT:     %[[CODE:.*]] = arith.constant 1 : i32
// CHECK:          %[[OLD:.*]] = memref.load %[[STATUS]]
// CHECK-NEXT:     %[[NEW:.*]] = arith.select %[[BAD]], %[[CODE]], %[[OLD]] : i32
// CHECK:          memref.store %[[NEW]], %[[STATUS]]
// CHECK:        linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[IDX]] : memref<4xi32>) outs(%[[OUT]] : memref<2x4x3xf32>)
// CHECK-NEXT:   ^{{.*}}(%[[K:.*]]: i32, %{{.*}}: f32):
// CHECK-NEXT:     %[[D0:.*]] = linalg.index 0 : index
// CHECK-NEXT:     %[[D2:.*]] = linalg.index 2 : index
// CHECK:          %[[OOR:.*]] = arith.cmpi uge, %[[K]], %{{.*}} : i32
// CHECK:          %[[SAFE:.*]] = arith.select %[[OOR]], %{{.*}}, %[[K]] : i32
// CHECK-NEXT:     %[[J:.*]] = arith.index_cast %[[SAFE]] : i32 to index
// CHECK-NEXT:     %[[E:.*]] = memref.load %[[X]][%[[D0]], %[[J]], %[[D2]]] : memref<2x5x3xf32>
// CHECK:          %[[R:.*]] = arith.select %[[OOR]], %{{.*}}, %[[E]] : f32
// CHECK-NEXT:     linalg.yield %[[R]] : f32
// CHECK:        func.return
