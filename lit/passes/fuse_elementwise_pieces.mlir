// RUN: nnc-opt %s -p 'nnc-fuse-elementwise{max-group-ops=2}' | filecheck %s

// A group longer than max-group-ops is cut into pieces of at least that many
// members, each cut where only its last member is read after it.  @chain:
// four operations in a row, cut after every second.  @graph: %a is read by
// %c, so no cut can follow %b; the first cut follows %c, and %d and %e form
// the second piece.
builtin.module {
  func.func @chain(%x: tensor<4xf32>) -> tensor<4xf32> {
    %a = "nnapi.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %b = "nnapi.abs"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    %c = "nnapi.relu"(%b) : (tensor<4xf32>) -> tensor<4xf32>
    %d = "nnapi.neg"(%c) : (tensor<4xf32>) -> tensor<4xf32>
    func.return %d : tensor<4xf32>
  }
  func.func @graph(%x: tensor<4xf32>) -> tensor<4xf32> {
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %a = "nnapi.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %b = "nnapi.abs"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    %c = "nnapi.add"(%a, %b, %none) : (tensor<4xf32>, tensor<4xf32>, i32) -> tensor<4xf32>
    %d = "nnapi.relu"(%c) : (tensor<4xf32>) -> tensor<4xf32>
    %e = "nnapi.neg"(%d) : (tensor<4xf32>) -> tensor<4xf32>
    func.return %e : tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @chain(
// CHECK-NEXT:    %{{.*}} = "nnapi.neg"(%x) {nnc.fused_group = #builtin.int<0>}
// CHECK-NEXT:    %{{.*}} = "nnapi.abs"(%{{.*}}) {nnc.fused_group = #builtin.int<0>, nnc.fused_root}
// CHECK-NEXT:    %{{.*}} = "nnapi.relu"(%{{.*}}) {nnc.fused_group = #builtin.int<1>}
// CHECK-NEXT:    %{{.*}} = "nnapi.neg"(%{{.*}}) {nnc.fused_group = #builtin.int<1>, nnc.fused_root}
// CHECK-LABEL: func.func @graph(
// CHECK:         %{{.*}} = "nnapi.neg"(%x) {nnc.fused_group = #builtin.int<2>}
// CHECK-NEXT:    %{{.*}} = "nnapi.abs"(%{{.*}}) {nnc.fused_group = #builtin.int<2>}
// CHECK-NEXT:    %{{.*}} = "nnapi.add"(%{{.*}}, %{{.*}}, %{{.*}}) {nnc.fused_group = #builtin.int<2>, nnc.fused_root}
// CHECK-NEXT:    %{{.*}} = "nnapi.relu"(%{{.*}}) {nnc.fused_group = #builtin.int<3>}
// CHECK-NEXT:    %{{.*}} = "nnapi.neg"(%{{.*}}) {nnc.fused_group = #builtin.int<3>, nnc.fused_root}
