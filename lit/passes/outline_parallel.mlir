// RUN: nnc-opt %s -p nnc-outline-parallel | filecheck %s

// Loops marked {nnc.parallel} (independent iterations) become private
// functions running iterations [begin, end) of the loop, marked
// nnc.parallel_body, whose parameters after (begin, end) are the values the
// body captures (constants are cloned instead); the loop becomes a call
// marked nnc.parallel_dispatch over [0, trip count).  Only loops worth a
// dispatch (at least two iterations and MIN_PARALLEL_WORK estimated
// operations) are outlined, and only the outermost of a nest.

builtin.module {
  // Rows of a scaled copy: buffers and a scalar captured, constants cloned.
  func.func @rows(%a: memref<64x256xf32>, %out: memref<64x256xf32>, %s: f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %c256 = arith.constant 256 : index
    scf.for %i = %c0 to %c64 step %c1 {
      scf.for %j = %c0 to %c256 step %c1 {
        %v = memref.load %a[%i, %j] : memref<64x256xf32>
        %w = arith.mulf %v, %s : f32
        memref.store %w, %out[%i, %j] : memref<64x256xf32>
      }
    } {nnc.parallel}
    func.return
  }

  // A loop from 2 step 4: the body maps iteration k to 2 + 4 k.  The inner
  // marked loop is not outlined (only the outermost is).
  func.func @strided(%a: memref<130x256xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c130 = arith.constant 130 : index
    %c256 = arith.constant 256 : index
    %z = arith.constant 0.0 : f32
    scf.for %i = %c2 to %c130 step %c4 {
      scf.for %j = %c0 to %c256 step %c1 {
        memref.store %z, %a[%i, %j] : memref<130x256xf32>
      } {nnc.parallel}
    } {nnc.parallel}
    func.return
  }

  // Bounds known only at run time: the trip count is computed, and a
  // non-constant lower bound is passed like a capture.
  func.func @dynamic(%a: memref<64x1024xf32>, %lo: index, %hi: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c1024 = arith.constant 1024 : index
    %z = arith.constant 0.0 : f32
    scf.for %i = %lo to %hi step %c1 {
      scf.for %j = %c0 to %c1024 step %c1 {
        memref.store %z, %a[%i, %j] : memref<64x1024xf32>
      }
    } {nnc.parallel}
    func.return
  }

  // Inside an scf.if (an inlined IF branch): the loop is outlined where it
  // is, the condition's block keeps the dispatch.
  func.func @in_if(%a: memref<64x256xf32>, %c: i1) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %c256 = arith.constant 256 : index
    %z = arith.constant 0.0 : f32
    scf.if %c {
      scf.for %i = %c0 to %c64 step %c1 {
        scf.for %j = %c0 to %c256 step %c1 {
          memref.store %z, %a[%i, %j] : memref<64x256xf32>
        }
      } {nnc.parallel}
    }
    func.return
  }

  // A kernel whose loop ends at a bound computed from its size parameter
  // (its whole vectors: n - n % 16): the estimate folds the arithmetic on
  // the constant each call passes (8 x 4096 stores), and the loop is
  // outlined.  In @clipped the size is min(4096, unknown): the estimate
  // counts it as at most 4096, so the pieces are outlined too.
  func.func private @fill(%buf: memref<?xf32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %z = arith.constant 0.0 : f32
    %r = arith.remsi %n, %c16 : index
    %full = arith.subi %n, %r : index
    scf.for %i = %c0 to %full step %c1 {
      memref.store %z, %buf[%i] : memref<?xf32>
    }
    func.return
  }
  func.func @folded(%a: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c4096 = arith.constant 4096 : index
    scf.for %i = %c0 to %c8 step %c1 {
      func.call @fill(%a, %c4096) : (memref<?xf32>, index) -> ()
    } {nnc.parallel}
    func.return
  }
  func.func @clipped(%a: memref<?xf32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c4096 = arith.constant 4096 : index
    scf.for %i = %c0 to %c8 step %c1 {
      %left = arith.subi %n, %i : index
      %len = arith.minsi %c4096, %left : index
      func.call @fill(%a, %len) : (memref<?xf32>, index) -> ()
    } {nnc.parallel}
    func.return
  }
  // The same calls with the size unknown (a loop of 16 iterations assumed):
  // too little work, stays a loop.
  func.func @unknown(%a: memref<?xf32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    scf.for %i = %c0 to %c8 step %c1 {
      func.call @fill(%a, %n) : (memref<?xf32>, index) -> ()
    } {nnc.parallel}
    func.return
  }

  // A lookup table read at data-dependent indices (a quantised SOFTMAX's
  // exps) is fetched again inside the body, so that LLVM sees the global
  // (it cannot alias the stores) and vectorises the gathers; a scalar
  // global stays a capture (bodies differing only in such numbers share a
  // function).
  "memref.global"() <{sym_name = "table", type = memref<256xi32>, initial_value = dense<1> : tensor<256xi32>, sym_visibility = "private", constant}> : () -> ()
  "memref.global"() <{sym_name = "offset", type = memref<i32>, initial_value = dense<3> : tensor<i32>, sym_visibility = "private", constant}> : () -> ()
  func.func @tables(%a: memref<4096xi8>, %out: memref<4096xi32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4096 = arith.constant 4096 : index
    %t = memref.get_global @table : memref<256xi32>
    %o = memref.get_global @offset : memref<i32>
    scf.for %i = %c0 to %c4096 step %c1 {
      %x = memref.load %a[%i] : memref<4096xi8>
      %w = arith.extui %x : i8 to i32
      %k = arith.index_cast %w : i32 to index
      %v = memref.load %t[%k] : memref<256xi32>
      %d = memref.load %o[] : memref<i32>
      %r = arith.addi %v, %d : i32
      memref.store %r, %out[%i] : memref<4096xi32>
    } {nnc.parallel}
    func.return
  }

  // Too little work for a dispatch: stays a loop.
  func.func @small(%a: memref<64xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %z = arith.constant 0.0 : f32
    scf.for %i = %c0 to %c64 step %c1 {
      memref.store %z, %a[%i] : memref<64xf32>
    } {nnc.parallel}
    func.return
  }
}

// CHECK-LABEL: func.func @rows(
// CHECK-NOT:     scf.for
// CHECK:         %[[Z:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:    %[[N:[0-9]+]] = arith.constant 64 : index
// CHECK-NEXT:    func.call @nnc_par_0(%[[Z]], %[[N]], %a, %s, %out) {nnc.parallel_dispatch} : (index, index, memref<64x256xf32>, f32, memref<64x256xf32>) -> ()
// CHECK-NEXT:    func.return

// CHECK-LABEL: func.func @strided(
// CHECK-NOT:     scf.for
// CHECK:         %[[N:[0-9]+]] = arith.constant 32 : index
// CHECK-NEXT:    func.call @nnc_par_1(%{{.*}}, %[[N]], %a) {nnc.parallel_dispatch}

// CHECK-LABEL: func.func @dynamic(
// CHECK:         %[[Z:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:    %[[SPAN:.*]] = arith.subi %hi, %lo : index
// CHECK-NEXT:    %[[N:[0-9]+]] = arith.maxsi %[[SPAN]], %[[Z]] : index
// CHECK-NEXT:    func.call @nnc_par_2(%[[Z]], %[[N]], %a, %lo) {nnc.parallel_dispatch}

// CHECK-LABEL: func.func @in_if(
// CHECK:         scf.if %c {
// CHECK-NEXT:      %[[Z:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:      %[[N:[0-9]+]] = arith.constant 64 : index
// CHECK-NEXT:      func.call @nnc_par_3(%[[Z]], %[[N]], %a) {nnc.parallel_dispatch}
// CHECK-NEXT:    }

// CHECK-LABEL: func.func @folded(
// CHECK-NOT:     scf.for
// CHECK:         func.call @nnc_par_{{[0-9]+}}(%{{.*}}, %{{.*}}, %a) {nnc.parallel_dispatch}

// CHECK-LABEL: func.func @clipped(
// CHECK-NOT:     scf.for
// CHECK:         func.call @nnc_par_{{[0-9]+}}(%{{.*}}, %{{.*}}, %n, %a) {nnc.parallel_dispatch}

// CHECK-LABEL: func.func @unknown(
// CHECK:         scf.for
// CHECK:           func.call @fill(%a, %n)
// CHECK:         } {nnc.parallel}

// CHECK-LABEL: func.func @tables(
// CHECK:         %o = memref.get_global @offset : memref<i32>
// CHECK-NOT:     scf.for
// CHECK:         func.call @nnc_par_{{[0-9]+}}(%{{.*}}, %{{.*}}, %a, %o, %out) {nnc.parallel_dispatch}

// CHECK-LABEL: func.func @small(
// CHECK:         scf.for
// CHECK:         } {nnc.parallel}
// CHECK-NOT:     func.call

// CHECK-LABEL: func.func private @nnc_par_0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<64x256xf32>, %{{.*}}: f32, %{{.*}}: memref<64x256xf32>) attributes {nnc.parallel_body} {
// CHECK:         scf.for %[[K:.*]] = %0 to %1 step %{{.*}} {
// CHECK-NEXT:      scf.for %j = %c0 to %c256 step %c1 {
// CHECK-NEXT:        memref.load %2[%[[K]], %j]
// CHECK-NEXT:        arith.mulf %{{.*}}, %3 : f32
// CHECK-NEXT:        memref.store %{{.*}}, %4[%[[K]], %j]

// CHECK-LABEL: func.func private @nnc_par_1(
// CHECK:         scf.for %[[K:.*]] = %0 to %1 step %{{.*}} {
// CHECK-NEXT:      %[[S:.*]] = arith.muli %[[K]], %c4 : index
// CHECK-NEXT:      %[[I:.*]] = arith.addi %[[S]], %c2 : index
// CHECK-NEXT:      scf.for %j = %c0 to %c256 step %c1 {
// CHECK-NEXT:        memref.store %z, %2[%[[I]], %j]
// CHECK-NEXT:      } {nnc.parallel}

// CHECK-LABEL: func.func private @nnc_par_2(%{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<64x1024xf32>, %{{.*}}: index) attributes {nnc.parallel_body} {
// CHECK:         scf.for %[[K:.*]] = %0 to %1 step %{{.*}} {
// CHECK-NEXT:      %[[I:.*]] = arith.addi %[[K]], %3 : index

// CHECK-LABEL: func.func private @nnc_par_{{[0-9]+}}(%{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<4096xi8>, %{{.*}}: memref<i32>, %{{.*}}: memref<4096xi32>) attributes {nnc.parallel_body} {
// CHECK:         %[[T:.*]] = memref.get_global @table : memref<256xi32>
// CHECK:         scf.for
// CHECK:           memref.load %[[T]][%{{.*}}] : memref<256xi32>
