// RUN: nnc-opt %s -p nnc-plan-buffers | filecheck %s

// A buffer is live until the last use of any view of it: %t0 is only read
// again through a memref.view of its bytes after %t1 is allocated and
// written, so the two cannot share memory (the recurrent lowerings view
// their gate blocks this way).
builtin.module {
  func.func @main(%in: memref<16xf32>, %out: memref<16xf32>) {
    %zero = arith.constant 0 : index
    %t0 = memref.alloc() {alignment = 64 : i64} : memref<64xi8>
    %block = memref.view %t0[%zero][] : memref<64xi8> to memref<16xf32>
    "test.op"(%in, %block) : (memref<16xf32>, memref<16xf32>) -> ()
    %t1 = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
    "test.op"(%in, %t1) : (memref<16xf32>, memref<16xf32>) -> ()
    "test.op"(%block, %t1, %out) : (memref<16xf32>, memref<16xf32>, memref<16xf32>) -> ()
    func.return
  }
}

// CHECK:      nnc.arena_size = #builtin.int<128>
// CHECK:        %[[O0:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:   %t0 = memref.view %{{.*}}[%[[O0]]][] : memref<128xi8> to memref<64xi8>
// CHECK:        %[[O1:[0-9]+]] = arith.constant 64 : index
// CHECK-NEXT:   %t1 = memref.view %{{.*}}[%[[O1]]][] : memref<128xi8> to memref<16xf32>
// CHECK-NOT:    memref.alloc
