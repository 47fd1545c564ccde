// RUN: nnc-opt %s -p nnc-outline-loops | filecheck %s

// A parallel body that loads and stores memory itself gets its loop moved
// into <body>_nest, whatever the size of main, marked nnc.noalias and
// nnc.parallel_nest (LLVM may inline it back), when every dispatch's buffers
// are disjoint where one is written (@nnc_par_0: arena slices 0 and 256).
// A body a dispatch gives overlapping buffers to read and write (@nnc_par_1:
// slices 0 and 128 of 256-byte buffers) keeps its loop, and so does a body
// that only calls a kernel (@nnc_par_2).

// CHECK-LABEL: func.func @main(
// CHECK:         func.call @nnc_par_0(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {nnc.parallel_dispatch}
// CHECK:       func.func private @nnc_par_0(%[[B:.*]]: index, %[[E:.*]]: index, %[[X:.*]]: memref<64xf32>, %[[Y:.*]]: memref<64xf32>) attributes {nnc.parallel_body} {
// CHECK-NEXT:    func.call @nnc_par_0_nest(%[[X]], %[[Y]], %[[B]], %[[E]])
// CHECK-NEXT:    func.return
// CHECK:       func.func private @nnc_par_1(
// CHECK-NOT:     func.call
// CHECK:         scf.for
// CHECK:       func.func private @nnc_par_2(
// CHECK-NOT:     func.call @nnc_par_2_nest
// CHECK:         func.call @kernel(
// CHECK:       func.func private @nnc_par_0_nest(%{{.*}}: memref<64xf32>, %{{.*}}: memref<64xf32>, %{{.*}}: index, %{{.*}}: index) attributes {nnc.noalias, nnc.parallel_nest} {
// CHECK:         scf.for
// CHECK:           math.exp
// CHECK-NOT:   func.func private @nnc_par_1_nest

builtin.module {
  func.func @main(%arena: memref<1024xi8>) {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %o0 = arith.constant 0 : index
    %o128 = arith.constant 128 : index
    %o256 = arith.constant 256 : index
    %a = memref.view %arena[%o0][] : memref<1024xi8> to memref<64xf32>
    %b = memref.view %arena[%o256][] : memref<1024xi8> to memref<64xf32>
    %d = memref.view %arena[%o128][] : memref<1024xi8> to memref<64xf32>
    func.call @nnc_par_0(%c0, %c64, %a, %b) {nnc.parallel_dispatch} : (index, index, memref<64xf32>, memref<64xf32>) -> ()
    func.call @nnc_par_1(%c0, %c64, %a, %d) {nnc.parallel_dispatch} : (index, index, memref<64xf32>, memref<64xf32>) -> ()
    func.call @nnc_par_2(%c0, %c64, %a, %b) {nnc.parallel_dispatch} : (index, index, memref<64xf32>, memref<64xf32>) -> ()
    func.return
  }
  func.func private @nnc_par_0(%begin: index, %end: index, %x: memref<64xf32>, %y: memref<64xf32>) attributes {nnc.parallel_body} {
    %c1 = arith.constant 1 : index
    %one = arith.constant 1.0 : f32
    scf.for %i = %begin to %end step %c1 {
      %v = memref.load %x[%i] : memref<64xf32>
      %e = math.exp %v : f32
      %s = arith.addf %one, %e : f32
      memref.store %s, %y[%i] : memref<64xf32>
    }
    func.return
  }
  func.func private @nnc_par_1(%begin: index, %end: index, %x: memref<64xf32>, %y: memref<64xf32>) attributes {nnc.parallel_body} {
    %c1 = arith.constant 1 : index
    scf.for %i = %begin to %end step %c1 {
      %v = memref.load %x[%i] : memref<64xf32>
      %s = arith.addf %v, %v : f32
      memref.store %s, %y[%i] : memref<64xf32>
    }
    func.return
  }
  func.func private @nnc_par_2(%begin: index, %end: index, %x: memref<64xf32>, %y: memref<64xf32>) attributes {nnc.parallel_body} {
    %c1 = arith.constant 1 : index
    scf.for %i = %begin to %end step %c1 {
      func.call @kernel(%x, %y, %i) : (memref<64xf32>, memref<64xf32>, index) -> ()
    }
    func.return
  }
  func.func private @kernel(memref<64xf32>, memref<64xf32>, index) -> ()
}
