// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// The lookups (passes/lowering/lookup.py).
builtin.module {
  // EMBEDDING_LOOKUP with runtime lookups: a loop records an out-of-range
  // lookup in the status argument, and the gather loads from a clamped index.
  func.func @embedding_lookup(%l: tensor<3xi32>, %v: tensor<4x2xf32>) -> tensor<3x2xf32> {
    %r = "nnapi.embedding_lookup"(%l, %v) : (tensor<3xi32>, tensor<4x2xf32>) -> tensor<3x2xf32>
    func.return %r : tensor<3x2xf32>
  }

  // HASHTABLE_LOOKUP: an unrolled binary search (4 keys: 3 steps) writes hits
  // and a row index; a second generic gathers the rows and zeroes the misses.
  func.func @hashtable_lookup(%l: tensor<3xi32>, %k: tensor<4xi32>, %v: tensor<4x2xf32>) -> (tensor<3x2xf32>, tensor<3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e+00 : f64, #builtin.int<0>>>) {
    %r, %h = "nnapi.hashtable_lookup"(%l, %k, %v) : (tensor<3xi32>, tensor<4xi32>, tensor<4x2xf32>) -> (tensor<3x2xf32>, tensor<3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e+00 : f64, #builtin.int<0>>>)
    func.return %r, %h : tensor<3x2xf32>, tensor<3x!nnapi.quant<"TENSOR_QUANT8_ASYMM", 1.000000e+00 : f64, #builtin.int<0>>>
  }

  // GATHER along axis -2 (= 1) of a [2, 5, 3] input with 4 indices: a first
  // loop records any index outside [0, 5) in the status word (operation 0 ->
  // code 1), then one generic over the output reads the index through a
  // projection map, clamps a bad one to 0 for the load (never out of bounds)
  // and zeroes that element.
  func.func @gather(%x: tensor<2x5x3xf32>, %idx: tensor<4xi32>) -> tensor<2x4x3xf32> {
    %axis = "nnapi.constant"() <{value = dense<-2> : tensor<i32>}> : () -> i32
    %o = "nnapi.gather"(%x, %axis, %idx) : (tensor<2x5x3xf32>, i32, tensor<4xi32>) -> tensor<2x4x3xf32>
    func.return %o : tensor<2x4x3xf32>
  }
}

// CHECK-LABEL: func.func @embedding_lookup(
// CHECK-SAME:    %[[L:[0-9]+]]: memref<3xi32>, %[[V:[0-9]+]]: memref<4x2xf32>, %[[OUT:[0-9]+]]: memref<3x2xf32>, %{{.*}}: memref<1xi8>, %[[ST:[0-9]+]]: memref<1xi32>)
// CHECK:         scf.for
// CHECK:           %[[I:[0-9]+]] = memref.load %[[L]]
// CHECK:           %[[BAD:[0-9]+]] = arith.cmpi uge, %[[I]], %{{.*}} : i32
// CHECK:           arith.select %[[BAD]]
// CHECK:           memref.store %{{.*}}, %[[ST]]
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], {{.*}} ins(%[[L]] : memref<3xi32>) outs(%[[OUT]] : memref<3x2xf32>)
// CHECK:           %[[OOB:[0-9]+]] = arith.cmpi uge
// CHECK:           %[[SAFE:[0-9]+]] = arith.select %[[OOB]], %{{.*}}, %{{.*}} : i32
// CHECK:           %[[IDX:[0-9]+]] = arith.index_cast %[[SAFE]] : i32 to index
// CHECK:           memref.load %[[V]][%[[IDX]], %{{.*}}] : memref<4x2xf32>
// CHECK:           linalg.yield

// CHECK-LABEL: func.func @hashtable_lookup(
// CHECK-SAME:    %[[L:[0-9]+]]: memref<3xi32>, %[[K:[0-9]+]]: memref<4xi32>, %[[V:[0-9]+]]: memref<4x2xf32>, %[[OUT:[0-9]+]]: memref<3x2xf32>, %[[HITS:[0-9]+]]: memref<3xi8>
// CHECK:         %[[POS:[0-9]+]] = memref.alloc() {{.*}} : memref<3xi32>
// CHECK:         linalg.generic {{.*}} ins(%[[L]] : memref<3xi32>) outs(%[[HITS]], %[[POS]] : memref<3xi8>, memref<3xi32>)
// CHECK-COUNT-4:   memref.load %[[K]]
// CHECK-NOT:       memref.load %[[K]]
// CHECK:           linalg.yield %{{.*}}, %{{.*}} : i8, i32
// CHECK:         linalg.generic {{.*}} ins(%[[POS]], %[[HITS]] : memref<3xi32>, memref<3xi8>) outs(%[[OUT]] : memref<3x2xf32>)
// CHECK:           memref.load %[[V]]
// CHECK:           arith.cmpi eq, %{{.*}}, %{{.*}} : i8
// CHECK:           linalg.yield

// CHECK-LABEL: func.func @gather(
// CHECK-SAME:   %[[X:.*]]: memref<2x5x3xf32>, %[[IDX:.*]]: memref<4xi32>, %[[OUT:.*]]: memref<2x4x3xf32>, %{{.*}}: memref<1xi8>, %[[STATUS:.*]]: memref<1xi32>)
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
