// RUN: nnc-opt %s -p nnc-fuse-elementwise,convert-nnapi-to-linalg | filecheck %s

// A long fused group (the tanh form of GELU) is cut before LOGISTIC and runs
// tile by tile (passes/lowering/staged.py): per tile of 512 elements, one
// loop computes the five multiplies and adds into a stack buffer, a second
// reads it back, computes LOGISTIC and the last MUL and writes the result.
// The loop over the 65 full tiles is parallel (its buffer is allocated in
// the iteration); the last 20 elements follow with a buffer of their own.
builtin.module {
  func.func @gelu(%x: tensor<1x100x333xf32>) -> tensor<1x100x333xf32> {
    %none = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %k0 = "nnapi.constant"() <{value = dense<0.044715> : tensor<1xf32>}> : () -> tensor<1xf32>
    %k1 = "nnapi.constant"() <{value = dense<1.5957691> : tensor<1xf32>}> : () -> tensor<1xf32>
    %sq = "nnapi.mul"(%x, %x, %none) : (tensor<1x100x333xf32>, tensor<1x100x333xf32>, i32) -> tensor<1x100x333xf32>
    %cu = "nnapi.mul"(%sq, %x, %none) : (tensor<1x100x333xf32>, tensor<1x100x333xf32>, i32) -> tensor<1x100x333xf32>
    %t = "nnapi.mul"(%cu, %k0, %none) : (tensor<1x100x333xf32>, tensor<1xf32>, i32) -> tensor<1x100x333xf32>
    %u = "nnapi.add"(%x, %t, %none) : (tensor<1x100x333xf32>, tensor<1x100x333xf32>, i32) -> tensor<1x100x333xf32>
    %v = "nnapi.mul"(%u, %k1, %none) : (tensor<1x100x333xf32>, tensor<1xf32>, i32) -> tensor<1x100x333xf32>
    %s = "nnapi.logistic"(%v) : (tensor<1x100x333xf32>) -> tensor<1x100x333xf32>
    %y = "nnapi.mul"(%x, %s, %none) : (tensor<1x100x333xf32>, tensor<1x100x333xf32>, i32) -> tensor<1x100x333xf32>
    func.return %y : tensor<1x100x333xf32>
  }
}

// CHECK-LABEL: func.func @gelu(
// CHECK-SAME:    %[[X:[0-9]+]]: memref<1x100x333xf32>, %[[Y:[0-9]+]]: memref<1x100x333xf32>
// CHECK-NOT:     linalg.generic
// CHECK-DAG:     %[[K0:[0-9]+]] = memref.get_global @__nnc_const_gelu_0 : memref<1xf32>
// CHECK-DAG:     %[[K1:[0-9]+]] = memref.get_global @__nnc_const_gelu_1 : memref<1xf32>
// CHECK-DAG:     %[[XF:[0-9]+]] = builtin.unrealized_conversion_cast %[[X]] : memref<1x100x333xf32> to memref<33300xf32>
// CHECK-DAG:     %[[YF:[0-9]+]] = builtin.unrealized_conversion_cast %[[Y]] : memref<1x100x333xf32> to memref<33300xf32>
// CHECK-DAG:     %[[TILE:[0-9]+]] = arith.constant 512 : index
// CHECK-DAG:     %[[FULL:[0-9]+]] = arith.constant 65 : index
// CHECK:         scf.for %[[T:[0-9]+]] = %{{[0-9]+}} to %[[FULL]] step %{{[0-9]+}} {
// CHECK-NEXT:      %[[LO:[0-9]+]] = arith.muli %[[T]], %[[TILE]] : index
// CHECK-NEXT:      %[[BUF:[0-9]+]] = memref.alloca() {alignment = 64 : i64} : memref<512xf32>
// The prefix: x*x*x, *0.044715, +x, *1.5957691, stored into the tile buffer.
// CHECK-NEXT:      scf.for %[[J:[0-9]+]] = %{{[0-9]+}} to %[[TILE]] step %{{[0-9]+}} {
// CHECK-NEXT:        %[[I:[0-9]+]] = arith.addi %[[LO]], %[[J]] : index
// CHECK-NEXT:        %[[A:[0-9]+]] = memref.load %[[XF]][%[[I]]] : memref<33300xf32>
// CHECK-NEXT:        %[[SQ:[0-9]+]] = arith.mulf %[[A]], %[[A]] : f32
// CHECK-NEXT:        %[[CU:[0-9]+]] = arith.mulf %[[SQ]], %[[A]] : f32
// CHECK-NEXT:        %[[C0:[0-9]+]] = memref.load %[[K0]][%{{[0-9]+}}] : memref<1xf32>
// CHECK-NEXT:        %[[P:[0-9]+]] = arith.mulf %[[CU]], %[[C0]] : f32
// CHECK-NEXT:        %[[U:[0-9]+]] = arith.addf %[[A]], %[[P]] : f32
// CHECK-NEXT:        %[[C1:[0-9]+]] = memref.load %[[K1]][%{{[0-9]+}}] : memref<1xf32>
// CHECK-NEXT:        %[[V:[0-9]+]] = arith.mulf %[[U]], %[[C1]] : f32
// CHECK-NEXT:        memref.store %[[V]], %[[BUF]][%[[J]]] : memref<512xf32>
// CHECK-NEXT:      }
// LOGISTIC of the staged value, then the MUL by x into the result.
// CHECK-NEXT:      scf.for %[[J2:[0-9]+]] = %{{[0-9]+}} to %[[TILE]] step %{{[0-9]+}} {
// CHECK-NEXT:        %[[I2:[0-9]+]] = arith.addi %[[LO]], %[[J2]] : index
// CHECK-NEXT:        %[[V2:[0-9]+]] = memref.load %[[BUF]][%[[J2]]] : memref<512xf32>
// CHECK-NEXT:        %{{[0-9]+}} = arith.bitcast %[[V2]] : f32 to i32
// CHECK:             %[[S:[0-9]+]] = arith.divf %{{[0-9]+}}, %{{[0-9]+}} : f32
// CHECK-NEXT:        %[[A2:[0-9]+]] = memref.load %[[XF]][%[[I2]]] : memref<33300xf32>
// CHECK-NEXT:        %[[R:[0-9]+]] = arith.mulf %[[A2]], %[[S]] : f32
// CHECK-NEXT:        memref.store %[[R]], %[[YF]][%[[I2]]] : memref<33300xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    } {nnc.parallel}
// The last 20 elements, from 33280.
// CHECK-NEXT:    %[[TBUF:[0-9]+]] = memref.alloca() {alignment = 64 : i64} : memref<20xf32>
// CHECK-DAG:     %{{[0-9]+}} = arith.constant 33280 : index
// CHECK-DAG:     %[[N:[0-9]+]] = arith.constant 20 : index
// CHECK:         scf.for %{{[0-9]+}} = %{{[0-9]+}} to %[[N]] step
// CHECK:           memref.store %{{[0-9]+}}, %[[TBUF]][%{{[0-9]+}}] : memref<20xf32>
// CHECK:         scf.for %{{[0-9]+}} = %{{[0-9]+}} to %[[N]] step
// CHECK:           memref.load %[[TBUF]]
// CHECK:           memref.store %{{[0-9]+}}, %[[YF]][%{{[0-9]+}}] : memref<33300xf32>
// CHECK-NOT:     scf.for
// CHECK:         func.return
