// RUN: nnc-opt %s -p nnc-plan-buffers | filecheck %s

// The profile's timestamp buffer (the alloc marked nnc.profile, see
// nnc.passes.profile) is placed like any temporary; its offset and slot
// count are recorded on the module for the entry point to export.  Live
// over the whole function, it shares its bytes with no other buffer.
builtin.module {
  func.func @main(%in: memref<16xf32>, %out: memref<16xf32>) {
    %st = memref.alloc() {alignment = 64 : i64, nnc.profile} : memref<3xi64>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %now = "test.op"() : () -> i64
    memref.store %now, %st[%c0] : memref<3xi64>
    %t0 = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
    "test.op"(%in, %t0) : (memref<16xf32>, memref<16xf32>) -> ()
    memref.store %now, %st[%c1] : memref<3xi64>
    "test.op"(%t0, %out) : (memref<16xf32>, memref<16xf32>) -> ()
    memref.store %now, %st[%c2] : memref<3xi64>
    func.return
  }
}

// CHECK:      nnc.profile = [#builtin.int<64>, #builtin.int<3>]
// CHECK-SAME: nnc.arena_size = #builtin.int<128>
// CHECK:      %[[OFF:.*]] = arith.constant 64 : index
// CHECK-NEXT: %{{.*}} = memref.view %{{.*}}[%[[OFF]]][] : memref<128xi8> to memref<3xi64>
