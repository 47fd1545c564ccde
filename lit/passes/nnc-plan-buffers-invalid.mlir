// RUN: not nnc-opt %s --split-input-file -p nnc-plan-buffers 2>&1 | filecheck %s

// IR that nnc-plan-buffers must refuse, one case per chunk: the arena is laid
// out at compile time, from the top-level allocations of each function.

// A temporary whose size is only known at run time.
builtin.module {
  func.func @main(%in: memref<16xf32>, %n: index) {
    %t = memref.alloc(%n) {alignment = 64 : i64} : memref<?xf32>
    "test.op"(%in, %t) : (memref<16xf32>, memref<?xf32>) -> ()
    func.return
  }
}
// CHECK: nnc-opt: error: nnc-plan-buffers: memref.alloc of memref<?xf32> has dynamic sizes

// -----

// A temporary allocated inside a loop (lowerings hoist theirs to the top).
builtin.module {
  func.func @main(%in: memref<16xf32>, %lo: index, %hi: index, %st: index) {
    scf.for %i = %lo to %hi step %st {
      %t = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
      "test.op"(%in, %t) : (memref<16xf32>, memref<16xf32>) -> ()
    }
    func.return
  }
}
// CHECK: nnc-opt: error: nnc-plan-buffers: memref.alloc inside scf.for: temporaries must be allocated at the top level of the function
// CHECK-NOT: Traceback
