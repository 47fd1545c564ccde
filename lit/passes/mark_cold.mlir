// RUN: nnc-opt %s -p nnc-mark-cold | filecheck %s

// W (the operations one call executes at most) against the default band
// 0 <= W <= 65536 of a function no function calls.
// @copy: 3 + 16 * (1 + 16 * (1 + 2)) = 787, cold.
func.func @copy(%a: memref<16x16xf32>, %b: memref<16x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %v = memref.load %a[%i, %j] : memref<16x16xf32>
      memref.store %v, %b[%i, %j] : memref<16x16xf32>
    }
  }
  func.return
}

// 256 x 256: W = 3 + 256 * (1 + 256 * 3) = 196867, over max-work: hot.
func.func @big(%a: memref<256x256xf32>, %b: memref<256x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  scf.for %i = %c0 to %c256 step %c1 {
    scf.for %j = %c0 to %c256 step %c1 {
      %v = memref.load %a[%i, %j] : memref<256x256xf32>
      memref.store %v, %b[%i, %j] : memref<256x256xf32>
    }
  }
  func.return
}

// W = 3: the shortest functions are cold too (the default min-work is 0;
// lit/passes/mark_cold_band.mlir tests a band that excludes them).
func.func @tiny(%a: memref<1xf32>, %b: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0] : memref<1xf32>
  memref.store %v, %b[%c0] : memref<1xf32>
  func.return
}

// A window clamped to the input, as pooling computes it: the inner loop
// runs from max(0, 2i - 1) to min(2i + 2, 129), bounded though not
// constant (intervals: from [0, 125] to [2, 128], at most 128 iterations).
func.func @window(%a: memref<129xf32>, %b: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c64 = arith.constant 64 : index
  %c129 = arith.constant 129 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c64 step %c1 {
    %s = arith.muli %i, %c2 : index
    %p = arith.subi %s, %c1 : index
    %lo = arith.maxsi %p, %c0 : index
    %e = arith.addi %p, %c3 : index
    %hi = arith.minsi %e, %c129 : index
    %sum = scf.for %k = %lo to %hi step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %a[%k] : memref<129xf32>
      %n = arith.addf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %sum, %b[%i] : memref<64xf32>
  }
  func.return
}

// A kernel with its size as a parameter, called with a constant size from a
// cold function: its loop is bounded by the call's argument, and it is
// cold as all its callers are.
func.func private @scale(%m: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %m[%i] : memref<?xf32>
    %w = arith.mulf %v, %v : f32
    memref.store %w, %m[%i] : memref<?xf32>
  }
  func.return
}

func.func @calls_scale(%a: memref<?xf32>) {
  %c300 = arith.constant 300 : index
  func.call @scale(%a, %c300) : (memref<?xf32>, index) -> ()
  func.call @scale(%a, %c300) : (memref<?xf32>, index) -> ()
  func.return
}

// A kernel called from a loop of unknown trip count: one call is short,
// but its caller is hot, so it is hot too (it may run a million times).
func.func private @step(%m: memref<?xf32>, %i: index) {
  %v = memref.load %m[%i] : memref<?xf32>
  %w = arith.addf %v, %v : f32
  memref.store %w, %m[%i] : memref<?xf32>
  func.return
}

func.func @loop_of_unknown_length(%a: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    func.call @step(%a, %i) : (memref<?xf32>, index) -> ()
  }
  func.return
}

// A call of a declared (runtime or library) function: unbounded.
func.func private @runtime_hook()

func.func @calls_runtime(%a: memref<16x16xf32>, %b: memref<16x16xf32>) {
  func.call @runtime_hook() : () -> ()
  func.return
}

// CHECK:      func.func @copy(%{{.*}}: memref<16x16xf32>, %{{.*}}: memref<16x16xf32>) attributes {nnc.cold} {
// CHECK:      func.func @big(%{{.*}}: memref<256x256xf32>, %{{.*}}: memref<256x256xf32>) {
// CHECK:      func.func @tiny(%{{.*}}: memref<1xf32>, %{{.*}}: memref<1xf32>) attributes {nnc.cold} {
// CHECK:      func.func @window(%{{.*}}: memref<129xf32>, %{{.*}}: memref<64xf32>) attributes {nnc.cold} {
// CHECK:      func.func private @scale(%{{.*}}: memref<?xf32>, %{{.*}}: index) attributes {nnc.cold} {
// CHECK:      func.func @calls_scale(%{{.*}}: memref<?xf32>) attributes {nnc.cold} {
// CHECK:      func.func private @step(%{{.*}}: memref<?xf32>, %{{.*}}: index) {
// CHECK:      func.func @loop_of_unknown_length(%{{.*}}: memref<?xf32>, %{{.*}}: index) {
// CHECK:      func.func private @runtime_hook() -> ()
// CHECK:      func.func @calls_runtime(%{{.*}}: memref<16x16xf32>, %{{.*}}: memref<16x16xf32>) {
