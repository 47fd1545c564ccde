// RUN: nnc-opt %s -p nnapi-shape-inference,convert-nnapi-to-linalg | filecheck %s

// An unrolled WHILE (its state xs grows by one element per iteration; shape
// inference lists one body per iteration in nnc.unrolled): the bodies run in
// sequence, with no condition (its value at each iteration was folded at
// compile time).  Each iteration first checks the status and the loop
// timeout like a loop iteration (recording -4 when late), and runs its body
// in an scf.if; it reads the previous iteration's buffers (the first reads
// the WHILE's input %x) and writes new ones of its own shapes: xs is 2
// elements after iteration 0 and goes straight into the model's 3-element
// output in iteration 1, the last.
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

// CHECK:      func.func @main(%[[X:[^:]*]]: memref<1xf32>, %[[OUT:[^:]*]]: memref<3xf32>, %{{[^:]*}}: memref<1xi8>, %[[ST:[^:]*]]: memref<1xi32>, %[[TIMEOUT:[^:]*]]: i64)
// CHECK:        %[[START:.*]] = func.call @nnc_monotonic_ns() : () -> i64
// CHECK:        %[[XS1:.*]] = memref.alloc() {{.*}} : memref<2xf32>
// CHECK:        %[[NOW0:.*]] = func.call @nnc_monotonic_ns() : () -> i64
// CHECK:        %[[EL0:.*]] = arith.subi %[[NOW0]], %[[START]] : i64
// CHECK:        arith.cmpi ule, %[[EL0]], %[[TIMEOUT]] : i64
// CHECK:        arith.constant -4 : i32
// CHECK:        memref.store %{{.*}}, %[[ST]][%{{.*}}] : memref<1xi32>
// CHECK-NEXT:   %[[GO0:.*]] = arith.andi
// CHECK:        scf.if %[[GO0]] {
// CHECK:          memref.subview %[[X]][0] [1] [1]
// CHECK:          %[[A0:.*]] = memref.subview %[[XS1]][0] [1] [1] : memref<2xf32> to memref<1xf32, strided<[1]>>
// CHECK:          linalg.generic {{.*}} ins(%[[X]] : memref<1xf32>) outs(%[[A0]] : memref<1xf32, strided<[1]>>)
// CHECK:        %[[NOW1:.*]] = func.call @nnc_monotonic_ns() : () -> i64
// CHECK:        arith.subi %[[NOW1]], %[[START]] : i64
// CHECK:        memref.store %{{.*}}, %[[ST]][%{{.*}}] : memref<1xi32>
// CHECK-NEXT:   %[[GO1:.*]] = arith.andi
// CHECK-NOT:    scf.while
// CHECK:        scf.if %[[GO1]] {
// CHECK:          memref.subview %[[XS1]][1] [1] [1] : memref<2xf32> to memref<1xf32, strided<[1], offset: 1>>
// CHECK:          %[[A1:.*]] = memref.subview %[[OUT]][0] [2] [1] : memref<3xf32> to memref<2xf32, strided<[1]>>
// CHECK:          linalg.generic {{.*}} ins(%[[XS1]] : memref<2xf32>) outs(%[[A1]] : memref<2xf32, strided<[1]>>)
// CHECK:        func.return
// CHECK-NOT:  nnapi.subgraph
