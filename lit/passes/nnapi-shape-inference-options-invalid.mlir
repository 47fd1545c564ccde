// RUN: not nnc-opt %s -p 'nnapi-shape-inference{max-unrolled-iterations=4}' 2>&1 | filecheck %s

// An unrolled loop runs at most max-unrolled-iterations iterations (default
// 1024; each is a copy of the body in the generated code): this one would
// run 6 (xs grows by one element per iteration).
builtin.module {
  func.func @main(%x: tensor<1xf32>) -> tensor<?xf32> {
    %cond = "nnapi.constant"() <{value = @main_op0_cond}> : () -> none
    %body = "nnapi.constant"() <{value = @main_op0_body}> : () -> none
    %zero = "nnapi.constant"() <{value = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
    %n = "nnapi.constant"() <{value = dense<6> : tensor<1xi32>}> : () -> tensor<1xi32>
    %xs, %i = "nnapi.while"(%cond, %body, %x, %zero, %n) : (none, none, tensor<1xf32>, tensor<1xi32>, tensor<1xi32>) -> (tensor<?xf32>, tensor<?xi32>)
    func.return %xs : tensor<?xf32>
  }
  func.func private @main_op0_cond(%xs: tensor<?xf32>, %i: tensor<1xi32>, %n: tensor<1xi32>) -> tensor<1xi1> attributes {nnapi.subgraph} {
    %lt = "nnapi.less"(%i, %n) : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi1>
    func.return %lt : tensor<1xi1>
  }
  func.func private @main_op0_body(%xs: tensor<?xf32>, %i: tensor<1xi32>, %n: tensor<1xi32>) -> (tensor<?xf32>, tensor<1xi32>) attributes {nnapi.subgraph} {
    %act = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %axis = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %one = "nnapi.constant"() <{value = dense<1.0> : tensor<1xf32>}> : () -> tensor<1xf32>
    %grown = "nnapi.concatenation"(%xs, %one, %axis) : (tensor<?xf32>, tensor<1xf32>, i32) -> tensor<?xf32>
    %inc = "nnapi.constant"() <{value = dense<1> : tensor<1xi32>}> : () -> tensor<1xi32>
    %next = "nnapi.add"(%i, %inc, %act) : (tensor<1xi32>, tensor<1xi32>, i32) -> tensor<1xi32>
    func.return %grown, %next : tensor<?xf32>, tensor<1xi32>
  }
}
// CHECK: nnc-opt: error: operation 0 (WHILE): the loop state changes shape between iterations, so nnc unrolls the loop at compile time, and it runs more than 4 iterations (the limit)
// CHECK-NOT: Traceback
