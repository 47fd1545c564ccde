// RUN: not nnc-opt %s --split-input-file -p convert-nnapi-to-linalg 2>&1 | filecheck %s

// IR that convert-nnapi-to-linalg must refuse, one case per chunk.

// An output shape that is still unknown: lowering allocates static buffers,
// so shapes must have been inferred first.  The error names the operation.
builtin.module {
  func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %r = "nnapi.tanh"(%a) : (tensor<2x3xf32>) -> tensor<?x3xf32>
    %s = "nnapi.tanh"(%r) : (tensor<?x3xf32>) -> tensor<2x3xf32>
    func.return %s : tensor<2x3xf32>
  }
}
// CHECK: nnc-opt: error: convert-nnapi-to-linalg: operation 0 (TANH) output 0 has shape tensor<?x3xf32>, not static: run nnapi-shape-inference first

// -----

// The same for a model output.
builtin.module {
  func.func @main(%a: tensor<2x3xf32>) -> tensor<?x3xf32> {
    %r = "nnapi.tanh"(%a) : (tensor<2x3xf32>) -> tensor<?x3xf32>
    func.return %r : tensor<?x3xf32>
  }
}
// CHECK: nnc-opt: error: convert-nnapi-to-linalg: @main result 0 has shape tensor<?x3xf32>, not static: run nnapi-shape-inference first

// -----

// Model outputs are ranked tensors (buffers the caller passes) or scalars
// (RANK's), never of unknown rank.
builtin.module {
  func.func @main(%a: tensor<2x3xf32>) -> tensor<*xf32> {
    %r = "nnapi.tanh"(%a) : (tensor<2x3xf32>) -> tensor<*xf32>
    func.return %r : tensor<*xf32>
  }
}
// CHECK: nnc-opt: error: convert-nnapi-to-linalg: @main result 0 is tensor<*xf32>, expected a ranked tensor

// -----

// An operation with no lowering.
builtin.module {
  func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    %r = "nnapi.oem_operation"(%x) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    func.return %r : tensor<2x4xf32>
  }
}
// CHECK: nnc-opt: error: operation 0 (OEM_OPERATION): no lowering for this operation

// -----

// An operand type the operation's lowering does not implement (TANH of
// int32 is not an NNAPI signature either).
builtin.module {
  func.func @main(%a: tensor<2x3xi32>) -> tensor<2x3xi32> {
    %r = "nnapi.tanh"(%a) : (tensor<2x3xi32>) -> tensor<2x3xi32>
    func.return %r : tensor<2x3xi32>
  }
}
// CHECK: nnc-opt: error: operation 0 (TANH): operand type TENSOR_INT32 not implemented for TANH

// -----

// Only nnapi operations (and func.return) may appear in a model function.
builtin.module {
  func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %r = "nnapi.tanh"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %c = arith.constant 1 : i32
    func.return %r : tensor<2x3xf32>
  }
}
// CHECK: nnc-opt: error: convert-nnapi-to-linalg: unexpected op arith.constant

// -----

// A scalar operand computed at run time (a function argument) where the
// lowering needs its value at compile time: ADD's fused activation code.
builtin.module {
  func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %act: i32) -> tensor<2x3xf32> {
    %r = "nnapi.add"(%a, %b, %act) : (tensor<2x3xf32>, tensor<2x3xf32>, i32) -> tensor<2x3xf32>
    func.return %r : tensor<2x3xf32>
  }
}
// CHECK: nnc-opt: error: convert-nnapi-to-linalg: @main argument 2 is i32, expected a ranked tensor
// -----

// An unrolled WHILE (nnc.unrolled, set by shape inference) must name its
// per-iteration bodies, which must be referenced models in the module.
builtin.module {
  func.func @main(%x: tensor<1xf32>) -> tensor<1xf32> {
    %cond = "nnapi.constant"() <{value = @main_op0_cond}> : () -> none
    %body = "nnapi.constant"() <{value = @main_op0_body}> : () -> none
    %y = "nnapi.while"(%cond, %body, %x) {nnc.unrolled = [@main_op0_body_it0]} : (none, none, tensor<1xf32>) -> tensor<1xf32>
    func.return %y : tensor<1xf32>
  }
}
// CHECK: nnc-opt: error: operation 0 (WHILE): nnc.unrolled names @main_op0_body_it0, which is not a referenced model
// -----

// The module's target (nnc.target) must be three strings: triple, cpu, features.
builtin.module attributes {nnc.target = "avx2"} {
  func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
    func.return %a : tensor<2xf32>
  }
}
// CHECK: nnc-opt: error: convert-nnapi-to-linalg: module attribute nnc.target must be {triple = "...", cpu = "...", features = "..."}
// CHECK-NOT: Traceback
