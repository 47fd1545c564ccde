// RUN: nnc-opt %s -p nnc-outline-parallel | filecheck %s

// Outlined bodies that differ only in float constants and the sizes of flat
// buffers share one function.  @scale_a and @scale_b compute the same
// affine map of flat buffers of different sizes with different offsets and
// the same scale: one function, the offset its last parameter (each
// dispatch passes its own), the scale still a constant, the buffers
// memref<?xf32> (each dispatch casts its own).  @scale_c is @scale_a again:
// the same function with the same offset.  @int_a and @int_b differ in an
// integer constant, which stays a constant (LLVM specialises integer code
// on it), so each keeps a function of its own; so does @rows2d, whose
// two-dimensional buffers are not flat.  Loops marked nnc.parallel_sizes
// (their integers only sizes of kernel calls) share despite their integers.

builtin.module {
  func.func @scale_a(%a: memref<40000xf32>, %out: memref<40000xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 40000 : index
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %a[%i] : memref<40000xf32>
      %zp = arith.constant 5.000000e-01 : f32
      %m = arith.constant 2.000000e+00 : f32
      %d = arith.subf %v, %zp : f32
      %w = arith.mulf %d, %m : f32
      memref.store %w, %out[%i] : memref<40000xf32>
    } {nnc.parallel}
    func.return
  }

  func.func @scale_b(%a: memref<30000xf32>, %out: memref<30000xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 30000 : index
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %a[%i] : memref<30000xf32>
      %zp = arith.constant 1.500000e+00 : f32
      %m = arith.constant 2.000000e+00 : f32
      %d = arith.subf %v, %zp : f32
      %w = arith.mulf %d, %m : f32
      memref.store %w, %out[%i] : memref<30000xf32>
    } {nnc.parallel}
    func.return
  }

  func.func @scale_c(%a: memref<40000xf32>, %out: memref<40000xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 40000 : index
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %a[%i] : memref<40000xf32>
      %zp = arith.constant 5.000000e-01 : f32
      %m = arith.constant 2.000000e+00 : f32
      %d = arith.subf %v, %zp : f32
      %w = arith.mulf %d, %m : f32
      memref.store %w, %out[%i] : memref<40000xf32>
    } {nnc.parallel}
    func.return
  }

  func.func @int_a(%a: memref<40000xi8>, %out: memref<40000xi8>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 40000 : index
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %a[%i] : memref<40000xi8>
      %zp = arith.constant 3 : i8
      %d = arith.subi %v, %zp : i8
      %m = arith.constant 5 : i8
      %w = arith.muli %d, %m : i8
      memref.store %w, %out[%i] : memref<40000xi8>
    } {nnc.parallel}
    func.return
  }

  func.func @int_b(%a: memref<40000xi8>, %out: memref<40000xi8>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 40000 : index
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %a[%i] : memref<40000xi8>
      %zp = arith.constant 7 : i8
      %d = arith.subi %v, %zp : i8
      %m = arith.constant 5 : i8
      %w = arith.muli %d, %m : i8
      memref.store %w, %out[%i] : memref<40000xi8>
    } {nnc.parallel}
    func.return
  }

  func.func @rows2d(%a: memref<200x200xf32>, %out: memref<200x200xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 200 : index
    scf.for %i = %c0 to %n step %c1 {
      scf.for %j = %c0 to %n step %c1 {
        %v = memref.load %a[%i, %j] : memref<200x200xf32>
        %zp = arith.constant 5.000000e-01 : f32
        %m = arith.constant 2.000000e+00 : f32
        %d = arith.subf %v, %zp : f32
        %w = arith.mulf %d, %m : f32
        memref.store %w, %out[%i, %j] : memref<200x200xf32>
      }
    } {nnc.parallel}
    func.return
  }

  // Pieces of a kernel's range (nnc.parallel_sizes: the body's integers are
  // only the sizes of its calls): @sizes_a and @sizes_b differ in the piece
  // size, which becomes a parameter of one shared function.
  func.func private @fill(%buf: memref<?xf32>, %start: index, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %z = arith.constant 0.0 : f32
    scf.for %i = %c0 to %n step %c1 {
      %k = arith.addi %start, %i : index
      memref.store %z, %buf[%k] : memref<?xf32>
    }
    func.return
  }

  func.func @sizes_a(%a: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    scf.for %t = %c0 to %c8 step %c1 {
      %size = arith.constant 4096 : index
      %start = arith.muli %t, %size : index
      func.call @fill(%a, %start, %size) : (memref<?xf32>, index, index) -> ()
    } {nnc.parallel, nnc.parallel_sizes}
    func.return
  }

  func.func @sizes_b(%a: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    scf.for %t = %c0 to %c8 step %c1 {
      %size = arith.constant 5000 : index
      %start = arith.muli %t, %size : index
      func.call @fill(%a, %start, %size) : (memref<?xf32>, index, index) -> ()
    } {nnc.parallel, nnc.parallel_sizes}
    func.return
  }
}

// CHECK-LABEL: func.func @scale_a(
// CHECK:         %[[ZP:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:    %[[A:.*]] = builtin.unrealized_conversion_cast %a : memref<40000xf32> to memref<?xf32>
// CHECK-NEXT:    %[[OUT:.*]] = builtin.unrealized_conversion_cast %out : memref<40000xf32> to memref<?xf32>
// CHECK-NEXT:    func.call @nnc_par_0(%{{.*}}, %{{.*}}, %[[A]], %[[OUT]], %[[ZP]]) {nnc.parallel_dispatch} : (index, index, memref<?xf32>, memref<?xf32>, f32) -> ()

// CHECK-LABEL: func.func @scale_b(
// CHECK:         %[[ZP:.*]] = arith.constant 1.500000e+00 : f32
// CHECK-NEXT:    %[[A:.*]] = builtin.unrealized_conversion_cast %a : memref<30000xf32> to memref<?xf32>
// CHECK-NEXT:    %[[OUT:.*]] = builtin.unrealized_conversion_cast %out : memref<30000xf32> to memref<?xf32>
// CHECK-NEXT:    func.call @nnc_par_0(%{{.*}}, %{{.*}}, %[[A]], %[[OUT]], %[[ZP]]) {nnc.parallel_dispatch}

// CHECK-LABEL: func.func @scale_c(
// CHECK:         func.call @nnc_par_0(

// CHECK-LABEL: func.func @int_a(
// CHECK:         func.call @nnc_par_3(%{{.*}}, %{{.*}}, %a, %out) {nnc.parallel_dispatch}
// CHECK-LABEL: func.func @int_b(
// CHECK:         func.call @nnc_par_4(%{{.*}}, %{{.*}}, %a, %out) {nnc.parallel_dispatch}
// CHECK-LABEL: func.func @rows2d(
// CHECK:         func.call @nnc_par_5(%{{.*}}, %{{.*}}, %a, %out) {nnc.parallel_dispatch}
// CHECK-LABEL: func.func @sizes_a(
// CHECK:         %[[S:.*]] = arith.constant 4096 : index
// CHECK-NEXT:    %[[S2:.*]] = arith.constant 4096 : index
// CHECK-NEXT:    func.call @nnc_par_6(%{{.*}}, %{{.*}}, %a, %[[S]], %[[S2]]) {nnc.parallel_dispatch}
// CHECK-LABEL: func.func @sizes_b(
// CHECK:         %[[S:.*]] = arith.constant 5000 : index
// CHECK-NEXT:    %[[S2:.*]] = arith.constant 5000 : index
// CHECK-NEXT:    func.call @nnc_par_6(%{{.*}}, %{{.*}}, %a, %[[S]], %[[S2]]) {nnc.parallel_dispatch}

// The shared function: the offset a parameter, the scale a constant.
// CHECK:       func.func private @nnc_par_0(%{{.*}}: index, %{{.*}}: index, %[[A:.*]]: memref<?xf32>, %[[OUT:.*]]: memref<?xf32>, %[[ZP:.*]]: f32) attributes {nnc.parallel_body} {
// CHECK:           %[[V:.*]] = memref.load %[[A]][%{{.*}}] : memref<?xf32>
// CHECK-NEXT:      %[[M:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[V]], %[[ZP]] : f32
// CHECK-NEXT:      arith.mulf %[[D]], %[[M]] : f32
// CHECK-NOT:   func.func private @nnc_par_1(
// CHECK-NOT:   func.func private @nnc_par_2(
// CHECK:       func.func private @nnc_par_3(%{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<40000xi8>, %{{.*}}: memref<40000xi8>)
// CHECK:         arith.constant 3 : i8
// CHECK:       func.func private @nnc_par_4(%{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<40000xi8>, %{{.*}}: memref<40000xi8>)
// CHECK:         arith.constant 7 : i8
// CHECK:       func.func private @nnc_par_5(%{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<200x200xf32>, %{{.*}}: memref<200x200xf32>)

// CHECK:       func.func private @nnc_par_6(%{{.*}}: index, %{{.*}}: index, %[[A:.*]]: memref<?xf32>, %[[SIZE:.*]]: index, %[[SIZE2:.*]]: index) attributes {nnc.parallel_body, nnc.parallel_sizes} {
// CHECK:           %[[START:.*]] = arith.muli %{{.*}}, %[[SIZE2]] : index
// CHECK-NEXT:      func.call @fill(%[[A]], %[[START]], %[[SIZE]])
// CHECK-NOT:   func.func private @nnc_par_7(
