// RUN: nnc-opt %s -p nnc-add-entry-point | filecheck %s

// Code compiled for profiling: nnc-add-entry-point exports where the
// timestamps are in the arena (nnc.profile = [offset, count], recorded by
// nnc-plan-buffers) as the constant nnc_profile_layout the runtime reads.
builtin.module attributes {nnc.num_inputs = #builtin.int<1>, nnc.num_outputs = #builtin.int<1>, nnc.profile = [#builtin.int<128>, #builtin.int<4>]} {
  llvm.func @main(%in: !llvm.ptr, %out: !llvm.ptr, %w: !llvm.ptr, %st: !llvm.ptr, %arena: !llvm.ptr) {
    llvm.return
  }
}

// CHECK: llvm.mlir.global external constant @nnc_profile_layout(dense<[128, 4]> : tensor<2xi64>) {addr_space = 0 : i32, alignment = 8 : i64} : !llvm.array<2 x i64>
