// RUN: nnc-opt %s -p 'nnc-mark-cold{min-work=20 max-work=100}' | filecheck %s

// The band of W is an option.  @copy (W = 4 + 4 * (1 + 8 * 3) = 104) is
// over max-work = 100; @half (W = 4 + 4 * (1 + 4 * 3) = 56) is within it;
// @main, a hot caller of @half, keeps it hot although one call is short
// (each call of @half counts in @main's W: 2 + 2 * 57 = 116).
func.func @copy(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %a[%i, %j] : memref<4x8xf32>
      memref.store %v, %b[%i, %j] : memref<4x8xf32>
    }
  }
  func.return
}

func.func private @half(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %v = memref.load %a[%i, %j] : memref<4x8xf32>
      memref.store %v, %b[%i, %j] : memref<4x8xf32>
    }
  }
  func.return
}

func.func @main(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  func.call @half(%a, %b) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
  func.call @half(%b, %a) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
  func.return
}

func.func @alone(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %v = memref.load %a[%i, %j] : memref<4x8xf32>
      memref.store %v, %b[%i, %j] : memref<4x8xf32>
    }
  }
  func.return
}

// CHECK:      func.func @copy(%{{.*}}: memref<4x8xf32>, %{{.*}}: memref<4x8xf32>) {
// CHECK:      func.func private @half(%{{.*}}: memref<4x8xf32>, %{{.*}}: memref<4x8xf32>) {
// CHECK:      func.func @main(%{{.*}}: memref<4x8xf32>, %{{.*}}: memref<4x8xf32>) {
// CHECK:      func.func @alone(%{{.*}}: memref<4x8xf32>, %{{.*}}: memref<4x8xf32>) attributes {nnc.cold} {
