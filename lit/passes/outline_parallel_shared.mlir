// RUN: nnc-opt %s -p nnc-outline-parallel | filecheck %s

// Outlined bodies that differ only in value constants share one function.
// @scale_a and @scale_b compute the same requantisation of flat buffers of
// different sizes with different zero points and the same multiplier: one
// function, the zero point its last parameter (each dispatch passes its
// own), the multiplier still a constant, the buffers memref<?xi8> (each
// dispatch casts its own).  @scale_c is @scale_a again: the same function
// with the same zero point.  @shift differs in a shift amount, which stays
// a constant, so it keeps a function of its own; so does @rows2d, whose
// two-dimensional buffers are not flat.

builtin.module {
  func.func @scale_a(%a: memref<40000xi8>, %out: memref<40000xi8>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 40000 : index
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %a[%i] : memref<40000xi8>
      %zp = arith.constant 3 : i8
      %m = arith.constant 5 : i8
      %d = arith.subi %v, %zp : i8
      %w = arith.muli %d, %m : i8
      memref.store %w, %out[%i] : memref<40000xi8>
    } {nnc.parallel}
    func.return
  }

  func.func @scale_b(%a: memref<30000xi8>, %out: memref<30000xi8>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 30000 : index
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %a[%i] : memref<30000xi8>
      %zp = arith.constant 7 : i8
      %m = arith.constant 5 : i8
      %d = arith.subi %v, %zp : i8
      %w = arith.muli %d, %m : i8
      memref.store %w, %out[%i] : memref<30000xi8>
    } {nnc.parallel}
    func.return
  }

  func.func @scale_c(%a: memref<40000xi8>, %out: memref<40000xi8>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 40000 : index
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %a[%i] : memref<40000xi8>
      %zp = arith.constant 3 : i8
      %m = arith.constant 5 : i8
      %d = arith.subi %v, %zp : i8
      %w = arith.muli %d, %m : i8
      memref.store %w, %out[%i] : memref<40000xi8>
    } {nnc.parallel}
    func.return
  }

  func.func @shift(%a: memref<40000xi8>, %out: memref<40000xi8>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 40000 : index
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %a[%i] : memref<40000xi8>
      %zp = arith.constant 3 : i8
      %m = arith.constant 2 : i8
      %d = arith.subi %v, %zp : i8
      %w = arith.shrsi %d, %m : i8
      memref.store %w, %out[%i] : memref<40000xi8>
    } {nnc.parallel}
    func.return
  }

  func.func @rows2d(%a: memref<200x200xi8>, %out: memref<200x200xi8>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 200 : index
    scf.for %i = %c0 to %n step %c1 {
      scf.for %j = %c0 to %n step %c1 {
        %v = memref.load %a[%i, %j] : memref<200x200xi8>
        %zp = arith.constant 3 : i8
        %m = arith.constant 5 : i8
        %d = arith.subi %v, %zp : i8
        %w = arith.muli %d, %m : i8
        memref.store %w, %out[%i, %j] : memref<200x200xi8>
      }
    } {nnc.parallel}
    func.return
  }
}

// CHECK-LABEL: func.func @scale_a(
// CHECK:         %[[ZP:.*]] = arith.constant 3 : i8
// CHECK-NEXT:    %[[A:.*]] = builtin.unrealized_conversion_cast %a : memref<40000xi8> to memref<?xi8>
// CHECK-NEXT:    %[[OUT:.*]] = builtin.unrealized_conversion_cast %out : memref<40000xi8> to memref<?xi8>
// CHECK-NEXT:    func.call @nnc_par_0(%{{.*}}, %{{.*}}, %[[A]], %[[OUT]], %[[ZP]]) {nnc.parallel_dispatch} : (index, index, memref<?xi8>, memref<?xi8>, i8) -> ()

// CHECK-LABEL: func.func @scale_b(
// CHECK:         %[[ZP:.*]] = arith.constant 7 : i8
// CHECK-NEXT:    %[[A:.*]] = builtin.unrealized_conversion_cast %a : memref<30000xi8> to memref<?xi8>
// CHECK-NEXT:    %[[OUT:.*]] = builtin.unrealized_conversion_cast %out : memref<30000xi8> to memref<?xi8>
// CHECK-NEXT:    func.call @nnc_par_0(%{{.*}}, %{{.*}}, %[[A]], %[[OUT]], %[[ZP]]) {nnc.parallel_dispatch}

// CHECK-LABEL: func.func @scale_c(
// CHECK:         func.call @nnc_par_0(

// CHECK-LABEL: func.func @shift(
// CHECK:         func.call @nnc_par_3(

// CHECK-LABEL: func.func @rows2d(
// CHECK:         func.call @nnc_par_4(

// The shared function: the zero point a parameter, the multiplier a constant.
// CHECK:       func.func private @nnc_par_0(%{{.*}}: index, %{{.*}}: index, %[[A:.*]]: memref<?xi8>, %[[OUT:.*]]: memref<?xi8>, %[[ZP:.*]]: i8) attributes {nnc.parallel_body} {
// CHECK:           %[[V:.*]] = memref.load %[[A]][%{{.*}}] : memref<?xi8>
// CHECK:           %[[M:.*]] = arith.constant 5 : i8
// CHECK:           %[[D:.*]] = arith.subi %[[V]], %[[ZP]] : i8
// CHECK-NEXT:      arith.muli %[[D]], %[[M]] : i8
// CHECK-NOT:   func.func private @nnc_par_1(
// CHECK-NOT:   func.func private @nnc_par_2(
// CHECK:       func.func private @nnc_par_3(%{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<40000xi8>, %{{.*}}: memref<40000xi8>)
// CHECK:         arith.constant 2 : i8
// CHECK:       func.func private @nnc_par_4(%{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<200x200xi8>, %{{.*}}: memref<200x200xi8>)
