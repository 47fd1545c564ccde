// RUN: nnc-opt %s -p nnapi-shape-inference | filecheck %s

// A WHILE whose loop state grows by one element per iteration (the body
// declares it tensor<?xf32>): shape inference unrolls it at compile time.
// The state is (xs, i) with n = 3 input-only; the condition i < n is folded
// at each iteration from the counter's known value, and each iteration's
// body is a copy specialised to that iteration's shapes, reading the
// counter as a constant (SLICE's begin is computed from it: folded too).
// With i = 1 at the start the body runs twice: xs goes 1 -> 2 -> 3 elements,
// listed in nnc.unrolled; the condition's copies are dropped once evaluated.
builtin.module {
  func.func @main(%x: tensor<1xf32>) -> tensor<?xf32> {
    %cond = "nnapi.constant"() <{value = @main_op0_cond}> : () -> none
    %body = "nnapi.constant"() <{value = @main_op0_body}> : () -> none
    %one = "nnapi.constant"() <{value = dense<1> : tensor<1xi32>}> : () -> tensor<1xi32>
    %n = "nnapi.constant"() <{value = dense<3> : tensor<1xi32>}> : () -> tensor<1xi32>
    %xs, %i = "nnapi.while"(%cond, %body, %x, %one, %n) : (none, none, tensor<1xf32>, tensor<1xi32>, tensor<1xi32>) -> (tensor<?xf32>, tensor<?xi32>)
    func.return %xs : tensor<?xf32>
  }
  func.func private @main_op0_cond(%xs: tensor<?xf32>, %i: tensor<1xi32>, %n: tensor<1xi32>) -> tensor<1xi1> attributes {nnapi.subgraph} {
    %lt = "nnapi.less"(%i, %n) : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi1>
    func.return %lt : tensor<1xi1>
  }
  func.func private @main_op0_body(%xs: tensor<?xf32>, %i: tensor<1xi32>, %n: tensor<1xi32>) -> (tensor<?xf32>, tensor<1xi32>) attributes {nnapi.subgraph} {
    %act = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %m1 = "nnapi.constant"() <{value = dense<-1> : tensor<1xi32>}> : () -> tensor<1xi32>
    %last = "nnapi.add"(%i, %m1, %act) : (tensor<1xi32>, tensor<1xi32>, i32) -> tensor<1xi32>
    %size = "nnapi.constant"() <{value = dense<1> : tensor<1xi32>}> : () -> tensor<1xi32>
    %tail = "nnapi.slice"(%xs, %last, %size) : (tensor<?xf32>, tensor<1xi32>, tensor<1xi32>) -> tensor<1xf32>
    %axis = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %grown = "nnapi.concatenation"(%xs, %tail, %axis) : (tensor<?xf32>, tensor<1xf32>, i32) -> tensor<?xf32>
    %inc = "nnapi.constant"() <{value = dense<1> : tensor<1xi32>}> : () -> tensor<1xi32>
    %next = "nnapi.add"(%i, %inc, %act) : (tensor<1xi32>, tensor<1xi32>, i32) -> tensor<1xi32>
    func.return %grown, %next : tensor<?xf32>, tensor<1xi32>
  }
}

// CHECK:      func.func @main(%{{.*}}: tensor<1xf32>) -> tensor<3xf32>
// CHECK:        "nnapi.while"({{.*}}) {nnc.unrolled = [@main_op0_body_it0, @main_op0_body_it1]} : ({{.*}}) -> (tensor<3xf32>, tensor<1xi32>)
// The originals stay as the importer made them (the WHILE still names them).
// CHECK:      func.func private @main_op0_cond(%{{.*}}: tensor<?xf32>,
// CHECK:      func.func private @main_op0_body(%{{.*}}: tensor<?xf32>,
// Iteration 0: i = 1 is a constant; the slice starts at the folded 0.
// CHECK:      func.func private @main_op0_body_it0(%{{.*}}: tensor<1xf32>, %{{.*}}: tensor<1xi32>, %{{.*}}: tensor<1xi32>) -> (tensor<2xf32>, tensor<1xi32>)
// CHECK:        %[[I0:.*]] = "nnapi.constant"() <{value = dense<1> : tensor<1xi32>}>
// CHECK:        %[[B0:.*]] = "nnapi.constant"() <{value = dense<0> : tensor<1xi32>}>
// CHECK-NEXT:   "nnapi.add"(%[[I0]],
// CHECK:        "nnapi.slice"(%{{.*}}, %[[B0]], %{{.*}}) : (tensor<1xf32>, tensor<1xi32>, tensor<1xi32>) -> tensor<1xf32>
// CHECK:        "nnapi.concatenation"({{.*}}) : (tensor<1xf32>, tensor<1xf32>, i32) -> tensor<2xf32>
// Iteration 1: i = 2, the slice starts at 1, the state grows to 3.
// CHECK:      func.func private @main_op0_body_it1(%{{.*}}: tensor<2xf32>, %{{.*}}: tensor<1xi32>, %{{.*}}: tensor<1xi32>) -> (tensor<3xf32>, tensor<1xi32>)
// CHECK:        "nnapi.constant"() <{value = dense<2> : tensor<1xi32>}>
// CHECK:        %[[B1:.*]] = "nnapi.constant"() <{value = dense<1> : tensor<1xi32>}>
// CHECK:        "nnapi.slice"(%{{.*}}, %[[B1]], %{{.*}}) : (tensor<2xf32>, tensor<1xi32>, tensor<1xi32>) -> tensor<1xf32>
// CHECK:        "nnapi.concatenation"({{.*}}) : (tensor<2xf32>, tensor<1xf32>, i32) -> tensor<3xf32>
// CHECK-NOT:  _cond_it
// CHECK-NOT:  _it2
