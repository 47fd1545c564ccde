// RUN: nnc-opt %s -p nnc-parallelize-generics | filecheck %s

// Top-level linalg.generic ops become the loop nests nnc-convert-linalg-to-loops
// makes, with the loop of the first dimension of extent above 1 marked
// {nnc.parallel} when that dimension is a parallel iterator indexing every
// output, no input overlaps an output (unless it is that output read
// through the same map) and no two outputs overlap (unless both are one
// buffer whose maps index one position by that dimension).  nnc-outline-parallel then decides with its work
// estimate whether a marked loop is worth a dispatch.

builtin.module {
  // An element-wise add over [1, 256, 1024]: the batch dimension has extent 1,
  // so the loop of dimension 1 (256 rows) is marked.
  func.func @add(%a: memref<1x256x1024xf32>, %b: memref<1x256x1024xf32>, %out: memref<1x256x1024xf32>) {
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%a, %b : memref<1x256x1024xf32>, memref<1x256x1024xf32>) outs(%out : memref<1x256x1024xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    }
    func.return
  }

  // In place (the input is the output, read through the same map): marked.
  func.func @relu_in_place(%a: memref<256x1024xf32>) {
    %z = arith.constant 0.0 : f32
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<256x1024xf32>) outs(%a : memref<256x1024xf32>) {
    ^bb0(%x: f32, %o: f32):
      %m = arith.maximumf %x, %z : f32
      linalg.yield %m : f32
    }
    func.return
  }

  // A row sum: dimension 0 is parallel and indexes the output; the
  // reduction stays inside each iteration, in order.
  func.func @row_sum(%a: memref<256x1024xf32>, %out: memref<256xf32>) {
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a : memref<256x1024xf32>) outs(%out : memref<256xf32>) {
    ^bb0(%x: f32, %o: f32):
      %s = arith.addf %o, %x : f32
      linalg.yield %s : f32
    }
    func.return
  }

  // Left as they are: a column sum (the first dimension is a reduction),
  // and a transpose in place (an element read by another iteration).
  func.func @left(%a: memref<512x512xf32>, %out: memref<512xf32>) {
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%a : memref<512x512xf32>) outs(%out : memref<512xf32>) {
    ^bb0(%x: f32, %o: f32):
      %s = arith.addf %o, %x : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<512x512xf32>) outs(%a : memref<512x512xf32>) {
    ^bb0(%x: f32, %o: f32):
      linalg.yield %x : f32
    }
    func.return
  }

  // Slices of one arena (as nnc-plan-buffers leaves temporaries): disjoint
  // slices are distinct buffers (marked); an output overlapping the input
  // read through another map is not.
  func.func @arena(%arena: memref<4194304xi8>) {
    %c0 = arith.constant 0 : index
    %c1048576 = arith.constant 1048576 : index
    %c524288 = arith.constant 524288 : index
    %x = memref.view %arena[%c0][] : memref<4194304xi8> to memref<512x512xf32>
    %y = memref.view %arena[%c1048576][] : memref<4194304xi8> to memref<512x512xf32>
    %z = memref.view %arena[%c524288][] : memref<4194304xi8> to memref<512x512xf32>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<512x512xf32>) outs(%y : memref<512x512xf32>) {
    ^bb0(%v: f32, %o: f32):
      %n = arith.negf %v : f32
      linalg.yield %n : f32
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<512x512xf32>) outs(%z : memref<512x512xf32>) {
    ^bb0(%v: f32, %o: f32):
      %n = arith.negf %v : f32
      linalg.yield %n : f32
    }
    func.return
  }

  // A table lookup (loads of a buffer no output overlaps) is marked; a body
  // that loads from its own output's buffer is not.
  func.func @lookup(%a: memref<262144xi8>, %table: memref<256xi8>, %out: memref<262144xi8>) {
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : memref<262144xi8>) outs(%out : memref<262144xi8>) {
    ^bb0(%v: i8, %o: i8):
      %w = arith.extui %v : i8 to i32
      %k = arith.index_cast %w : i32 to index
      %t = memref.load %table[%k] : memref<256xi8>
      linalg.yield %t : i8
    }
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : memref<262144xi8>) outs(%out : memref<262144xi8>) {
    ^bb0(%v: i8, %o: i8):
      %w = arith.extui %v : i8 to i32
      %k = arith.index_cast %w : i32 to index
      %t = memref.load %out[%k] : memref<262144xi8>
      linalg.yield %t : i8
    }
    func.return
  }

  // Two columns of each row written as separate outputs of one buffer (a
  // short-row SOFTMAX): both maps index the rows by d0, so each iteration
  // writes its own row (marked).  Outputs of one buffer whose maps put d0
  // at different positions (element (i, j) of one, (j, i) of the other)
  // could meet across iterations (not marked).
  func.func @columns(%a: memref<65536x2xf32>, %out: memref<65536x2xf32>, %sq: memref<256x256x2xf32>) {
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0, 0)>, affine_map<(d0) -> (d0, 1)>, affine_map<(d0) -> (d0, 1)>, affine_map<(d0) -> (d0, 0)>], iterator_types = ["parallel"]} ins(%a, %a : memref<65536x2xf32>, memref<65536x2xf32>) outs(%out, %out : memref<65536x2xf32>, memref<65536x2xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32, %p: f32):
      linalg.yield %x, %y : f32, f32
    }
    %z = arith.constant 0.0 : f32
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1, 0)>, affine_map<(d0, d1) -> (d1, d0, 1)>], iterator_types = ["parallel", "parallel"]} outs(%sq, %sq : memref<256x256x2xf32>, memref<256x256x2xf32>) {
    ^bb0(%o: f32, %p: f32):
      linalg.yield %z, %z : f32, f32
    }
    func.return
  }

  // Too little work to be worth a dispatch even before vectorisation
  // (see WIDEST_LANES): left to nnc-convert-linalg-to-loops.
  func.func @small(%a: memref<64x64xf32>, %out: memref<64x64xf32>) {
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<64x64xf32>) outs(%out : memref<64x64xf32>) {
    ^bb0(%v: f32, %o: f32):
      %n = arith.negf %v : f32
      linalg.yield %n : f32
    }
    func.return
  }
}

// CHECK-LABEL: func.func @add(
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        scf.for
// CHECK:               memref.store
// CHECK-NEXT:        }
// CHECK-NEXT:      } {nnc.parallel}
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// CHECK-LABEL: func.func @relu_in_place(
// CHECK:         arith.maximumf
// CHECK:         } {nnc.parallel}

// CHECK-LABEL: func.func @row_sum(
// CHECK:         memref.store %{{.*}}, %out[%{{.*}}] : memref<256xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    } {nnc.parallel}

// CHECK-LABEL: func.func @left(
// CHECK-NOT:     scf.for
// CHECK:         linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
// CHECK-NOT:     scf.for
// CHECK:         linalg.generic {{.*}}affine_map<(d0, d1) -> (d1, d0)>
// CHECK-NOT:     nnc.parallel
// CHECK:         func.return

// CHECK-LABEL: func.func @arena(
// CHECK:         arith.negf
// CHECK:         } {nnc.parallel}
// CHECK:         linalg.generic
// CHECK-NOT:     nnc.parallel
// CHECK:         func.return

// CHECK-LABEL: func.func @lookup(
// CHECK:         memref.load %table
// CHECK:         } {nnc.parallel}
// CHECK:         linalg.generic
// CHECK:           memref.load %out
// CHECK-NOT:     nnc.parallel
// CHECK:         func.return

// CHECK-LABEL: func.func @columns(
// CHECK:         memref.store %x, %out[%{{.*}}, %{{.*}}] : memref<65536x2xf32>
// CHECK:         memref.store %y, %out[%{{.*}}, %{{.*}}] : memref<65536x2xf32>
// CHECK-NEXT:    } {nnc.parallel}
// CHECK-NEXT:    %z = arith.constant
// CHECK-NEXT:    linalg.generic
// CHECK-NOT:     nnc.parallel
// CHECK:         func.return

// CHECK-LABEL: func.func @small(
// CHECK-NEXT:    linalg.generic
