// RUN: not nnc-opt %s --split-input-file -p nnc-outline-kernels 2>&1 | filecheck %s

// Kernel uses that nnc-outline-kernels must refuse, one case per chunk (see
// outline_kernels.mlir for the form of a use; uses are in generic form).

// A use whose region does not start with the parameter cast.
builtin.module {
  func.func @main(%a: memref<16xf32>) {
    "scf.execute_region"() ({
      %c0 = arith.constant 0 : index
      scf.yield
    }) {nnc.kernel = "nnc_scale"} : () -> ()
    func.return
  }
}
// CHECK: nnc-opt: error: nnc-outline-kernels: kernel use "nnc_scale" has no parameter cast

// -----

// A kernel body that reads a value (%c0) that is not one of its parameters.
builtin.module {
  func.func @main(%a: memref<16xf32>) {
    %c0 = arith.constant 0 : index
    "scf.execute_region"() ({
      %p0 = builtin.unrealized_conversion_cast %a : memref<16xf32> to memref<?xf32>
      %v = vector.load %p0[%c0] : memref<?xf32>, vector<8xf32>
      scf.yield
    }) {nnc.kernel = "nnc_scale"} : () -> ()
    func.return
  }
}
// CHECK: nnc-opt: error: nnc-outline-kernels: kernel nnc_scale reads a value from outside

// -----

// Only the first use of a kernel name needs to carry the code, so the first
// use must have a body.
builtin.module {
  func.func @main(%a: memref<16xf32>) {
    "scf.execute_region"() ({
      %p0 = builtin.unrealized_conversion_cast %a : memref<16xf32> to memref<?xf32>
      scf.yield
    }) {nnc.kernel = "nnc_scale"} : () -> ()
    func.return
  }
}
// CHECK: nnc-opt: error: nnc-outline-kernels: the first use of kernel nnc_scale has no body

// -----

// Two uses of one kernel name with different parameter types.
builtin.module {
  func.func @main(%a: memref<16xf32>, %i: memref<16xi32>) {
    "scf.execute_region"() ({
      %p0 = builtin.unrealized_conversion_cast %a : memref<16xf32> to memref<?xf32>
      %c0 = arith.constant 0 : index
      %v = vector.load %p0[%c0] : memref<?xf32>, vector<8xf32>
      scf.yield
    }) {nnc.kernel = "nnc_scale"} : () -> ()
    "scf.execute_region"() ({
      %q0 = builtin.unrealized_conversion_cast %i : memref<16xi32> to memref<?xi32>
      scf.yield
    }) {nnc.kernel = "nnc_scale"} : () -> ()
    func.return
  }
}
// CHECK: nnc-opt: error: nnc-outline-kernels: kernel nnc_scale used with other parameter types

// -----

// Two uses of one kernel name whose bodies differ.
builtin.module {
  func.func @main(%a: memref<16xf32>) {
    "scf.execute_region"() ({
      %p0 = builtin.unrealized_conversion_cast %a : memref<16xf32> to memref<?xf32>
      %c0 = arith.constant 0 : index
      %v = vector.load %p0[%c0] : memref<?xf32>, vector<8xf32>
      scf.yield
    }) {nnc.kernel = "nnc_scale"} : () -> ()
    "scf.execute_region"() ({
      %q0 = builtin.unrealized_conversion_cast %a : memref<16xf32> to memref<?xf32>
      %c8 = arith.constant 8 : index
      %w = vector.load %q0[%c8] : memref<?xf32>, vector<8xf32>
      %s = arith.addf %w, %w : vector<8xf32>
      scf.yield
    }) {nnc.kernel = "nnc_scale"} : () -> ()
    func.return
  }
}
// CHECK: nnc-opt: error: nnc-outline-kernels: two uses of kernel nnc_scale differ

// -----

// The kernel name is a string.
builtin.module {
  func.func @main(%a: memref<16xf32>) {
    "scf.execute_region"() ({
      %p0 = builtin.unrealized_conversion_cast %a : memref<16xf32> to memref<?xf32>
      scf.yield
    }) {nnc.kernel = 1 : i32} : () -> ()
    func.return
  }
}
// CHECK: nnc-opt: error: nnc-outline-kernels: nnc.kernel is 1 : i32, expected a string
// CHECK-NOT: Traceback
