// RUN: nnc-opt %s -p nnapi-shape-inference,convert-nnapi-to-linalg,nnc-plan-buffers | filecheck %s

// IF and WHILE inline their referenced models (one function per use, marked
// nnapi.subgraph; shape inference specialises their `?` dimensions) into
// scf.if / scf.while.  IF's branches write straight into the IF's output (here
// the model's output argument).  WHILE keeps its state in buffers: s in the
// model's output, i in the arena; the body computes into temporaries and
// copies them to the state at the end.  The condition region also checks the
// loop timeout (main's i64 argument after %status) against the monotonic clock
// and records -4 in the status word when it is over.  Buffers of inlined
// operations are allocated before the loop, so the planner places them.
builtin.module {
  func.func @main(%c: tensor<1xi1>, %x: tensor<2xf32>, %n: tensor<1xi32>) -> (tensor<?xf32>, tensor<?xi32>) {
    %then = "nnapi.constant"() <{value = @main_op0_then}> : () -> none
    %else = "nnapi.constant"() <{value = @main_op0_else}> : () -> none
    %y = "nnapi.if"(%c, %then, %else, %x) : (tensor<1xi1>, none, none, tensor<2xf32>) -> tensor<?xf32>
    %cond = "nnapi.constant"() <{value = @main_op1_cond}> : () -> none
    %body = "nnapi.constant"() <{value = @main_op1_body}> : () -> none
    %zero = "nnapi.constant"() <{value = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
    %i, %s = "nnapi.while"(%cond, %body, %zero, %zero, %n) : (none, none, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> (tensor<?xi32>, tensor<?xi32>)
    func.return %y, %s : tensor<?xf32>, tensor<?xi32>
  }
  func.func private @main_op0_then(%v: tensor<?xf32>) -> tensor<?xf32> attributes {nnapi.subgraph} {
    %act = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %r = "nnapi.add"(%v, %v, %act) : (tensor<?xf32>, tensor<?xf32>, i32) -> tensor<?xf32>
    func.return %r : tensor<?xf32>
  }
  func.func private @main_op0_else(%v: tensor<?xf32>) -> tensor<?xf32> attributes {nnapi.subgraph} {
    %act = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %r = "nnapi.mul"(%v, %v, %act) : (tensor<?xf32>, tensor<?xf32>, i32) -> tensor<?xf32>
    func.return %r : tensor<?xf32>
  }
  func.func private @main_op1_cond(%i: tensor<?xi32>, %s: tensor<?xi32>, %n: tensor<?xi32>) -> tensor<1xi1> attributes {nnapi.subgraph} {
    %lt = "nnapi.less"(%i, %n) : (tensor<?xi32>, tensor<?xi32>) -> tensor<1xi1>
    func.return %lt : tensor<1xi1>
  }
  func.func private @main_op1_body(%i: tensor<?xi32>, %s: tensor<?xi32>, %n: tensor<?xi32>) -> (tensor<?xi32>, tensor<?xi32>) attributes {nnapi.subgraph} {
    %one = "nnapi.constant"() <{value = dense<1> : tensor<1xi32>}> : () -> tensor<1xi32>
    %act = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %i2 = "nnapi.add"(%i, %one, %act) : (tensor<?xi32>, tensor<1xi32>, i32) -> tensor<?xi32>
    %s2 = "nnapi.add"(%s, %i, %act) : (tensor<?xi32>, tensor<?xi32>, i32) -> tensor<?xi32>
    func.return %i2, %s2 : tensor<?xi32>, tensor<?xi32>
  }
}

// CHECK:      builtin.module attributes {{.*}}nnc.loop_timeout_arg = #builtin.int<7>
// CHECK:      func.func @main(%[[C:[^:]*]]: memref<1xi8>, %[[X:[^:]*]]: memref<2xf32>, %[[N:[^:]*]]: memref<1xi32>, %[[Y:[^:]*]]: memref<2xf32>, %[[S:[^:]*]]: memref<1xi32>, %{{[^:]*}}: memref<1xi8>, %[[ST:[^:]*]]: memref<1xi32>, %[[TIMEOUT:[^:]*]]: i64, %[[ARENA:[^:]*]]: memref<{{[0-9]+}}xi8>)
// CHECK:        %[[CV:.*]] = memref.load %[[C]][%{{.*}}] : memref<1xi8>
// CHECK:        %[[CB:.*]] = arith.cmpi ne, %[[CV]], %{{.*}} : i8
// CHECK-NEXT:   scf.if %[[CB]] {
// CHECK:          linalg.generic {{.*}} ins(%[[X]], %[[X]] : memref<2xf32>, memref<2xf32>) outs(%[[Y]] : memref<2xf32>)
// CHECK:            arith.addf
// CHECK:        } else {
// CHECK:          linalg.generic {{.*}} ins(%[[X]], %[[X]] : memref<2xf32>, memref<2xf32>) outs(%[[Y]] : memref<2xf32>)
// CHECK:            arith.mulf
// CHECK:        }
// CHECK:        %[[I:.*]] = memref.view %[[ARENA]]
// CHECK:        linalg.generic {{.*}} outs(%[[I]] : memref<1xi32>)
// CHECK:        linalg.generic {{.*}} outs(%[[S]] : memref<1xi32>)
// CHECK:        %[[START:.*]] = func.call @nnc_monotonic_ns() : () -> i64
// CHECK:        %[[LESS:.*]] = memref.view %[[ARENA]]
// CHECK:        %[[I2:.*]] = memref.view %[[ARENA]]
// CHECK:        %[[S2:.*]] = memref.view %[[ARENA]]
// CHECK:        scf.while () : () -> () {
// CHECK:          linalg.generic {{.*}} ins(%[[I]], %[[N]] : memref<1xi32>, memref<1xi32>) outs(%[[LESS]] : memref<1xi8>)
// CHECK:          %[[NOW:.*]] = func.call @nnc_monotonic_ns() : () -> i64
// CHECK:          %[[ELAPSED:.*]] = arith.subi %[[NOW]], %[[START]] : i64
// CHECK:          %{{.*}} = arith.cmpi ule, %[[ELAPSED]], %[[TIMEOUT]] : i64
// CHECK:          %{{.*}} = arith.constant -4 : i32
// CHECK:          memref.store %{{.*}}, %[[ST]][%{{.*}}] : memref<1xi32>
// CHECK:          scf.condition(%{{.*}})
// CHECK:        } do {
// CHECK:          linalg.generic {{.*}} ins(%[[I]], %{{.*}} : memref<1xi32>, memref<1xi32>) outs(%[[I2]] : memref<1xi32>)
// CHECK:          linalg.generic {{.*}} ins(%[[S]], %[[I]] : memref<1xi32>, memref<1xi32>) outs(%[[S2]] : memref<1xi32>)
// CHECK:          linalg.generic {{.*}} ins(%[[I2]] : memref<1xi32>) outs(%[[I]] : memref<1xi32>)
// CHECK:          linalg.generic {{.*}} ins(%[[S2]] : memref<1xi32>) outs(%[[S]] : memref<1xi32>)
// CHECK:          scf.yield
// CHECK:        }
// CHECK:        func.return
// CHECK:      func.func @nnc_monotonic_ns() -> i64
// CHECK-NOT:  nnapi.subgraph
