// RUN: nnc-opt %s -p 'nnc-outline-loops{min-ops=1}' | filecheck %s

// Every top-level loop nest of main becomes a private function called in its
// place; constants are cloned into it, buffers are its parameters.  The two
// sigmoid nests on buffers of the same type share one function; the first
// nest's buffers are disjoint arena slices, so it is nnc.noalias, and the
// third reads and writes overlapping slices, so its function is not.

// CHECK-LABEL: func.func @main(
// CHECK:         func.call @nnc_loop_0(%{{.*}}, %{{.*}}) : (memref<64xf32>, memref<64xf32>) -> ()
// CHECK-NEXT:    func.call @nnc_loop_0(%{{.*}}, %{{.*}}) : (memref<64xf32>, memref<64xf32>) -> ()
// CHECK-NEXT:    func.call @nnc_loop_1(%{{.*}}, %{{.*}}) : (memref<64xf32>, memref<64xf32>) -> ()
// CHECK-NOT:     scf.for
// CHECK:         func.return
// CHECK:       func.func private @nnc_loop_0(%{{.*}}: memref<64xf32>, %{{.*}}: memref<64xf32>) attributes {nnc.outlined_loop, nnc.noalias} {
// CHECK:         arith.constant 1.000000e+00 : f32
// CHECK:         scf.for
// CHECK:           math.exp
// CHECK:       func.func private @nnc_loop_1(%{{.*}}: memref<64xf32>, %{{.*}}: memref<64xf32>) attributes {nnc.outlined_loop} {
// CHECK:           arith.addf

builtin.module {
  func.func @main(%arena: memref<1024xi8>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %o0 = arith.constant 0 : index
    %o256 = arith.constant 256 : index
    %o512 = arith.constant 512 : index
    %o128 = arith.constant 128 : index
    %one = arith.constant 1.0 : f32
    %a = memref.view %arena[%o0][] : memref<1024xi8> to memref<64xf32>
    %b = memref.view %arena[%o256][] : memref<1024xi8> to memref<64xf32>
    %c = memref.view %arena[%o512][] : memref<1024xi8> to memref<64xf32>
    %d = memref.view %arena[%o128][] : memref<1024xi8> to memref<64xf32>
    scf.for %i = %c0 to %c64 step %c1 {
      %x = memref.load %a[%i] : memref<64xf32>
      %n = arith.negf %x : f32
      %e = math.exp %n : f32
      %s = arith.addf %one, %e : f32
      %y = arith.divf %one, %s : f32
      memref.store %y, %b[%i] : memref<64xf32>
    }
    scf.for %i = %c0 to %c64 step %c1 {
      %x = memref.load %b[%i] : memref<64xf32>
      %n = arith.negf %x : f32
      %e = math.exp %n : f32
      %s = arith.addf %one, %e : f32
      %y = arith.divf %one, %s : f32
      memref.store %y, %c[%i] : memref<64xf32>
    }
    scf.for %i = %c0 to %c64 step %c1 {
      %x = memref.load %a[%i] : memref<64xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %d[%i] : memref<64xf32>
    }
    func.return
  }
}
