// RUN: nnc-opt %s -p convert-nnc-to-llvm | filecheck %s

// 1-D vectors stay LLVM vectors: vector.load/store are element-aligned
// vector accesses through a getelementptr, a scalar broadcast is
// insertelement + a zero-mask shufflevector, vector.fma is llvm.fma, arith
// intrinsics are mangled by vector type, a lane extract is a one-lane shuffle
// and a bitcast.
builtin.module {
  func.func @main(%a: memref<4x16xf32>, %out: memref<4x16xf32>) {
    %i = arith.constant 1 : index
    %j = arith.constant 0 : index
    %s = memref.load %a[%j, %j] : memref<4x16xf32>
    %v = vector.load %a[%i, %j] : memref<4x16xf32>, vector<16xf32>
    %b = vector.broadcast %s : f32 to vector<16xf32>
    %f = vector.fma %v, %b, %v : vector<16xf32>
    %z = arith.constant dense<0.0> : vector<16xf32>
    %m = arith.maxnumf %f, %z : vector<16xf32>
    %h = vector.shuffle %m, %m [8, 9, 10, 11, 12, 13, 14, 15] : vector<16xf32>, vector<16xf32>
    %e = vector.extract %h[3] : f32 from vector<8xf32>
    vector.store %m, %out[%i, %j] : memref<4x16xf32>, vector<16xf32>
    memref.store %e, %out[%j, %j] : memref<4x16xf32>
    func.return
  }
  // Fast-math flags of arith float ops carry over: a contractable multiply
  // and add (what the conv kernels emit) become llvm.fmul/llvm.fadd with
  // fastmath<contract>, which LLVM fuses only where the target has FMA.
  func.func @contract(%a: vector<8xf32>, %b: vector<8xf32>, %c: vector<8xf32>) -> vector<8xf32> {
    %p = arith.mulf %a, %b fastmath<contract> : vector<8xf32>
    %s = arith.addf %c, %p fastmath<contract> : vector<8xf32>
    func.return %s : vector<8xf32>
  }
}

// CHECK:      llvm.func @main(%[[A:.*]]: !llvm.ptr {llvm.noalias}, %[[OUT:.*]]: !llvm.ptr {llvm.noalias})
// CHECK:        llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK:        %[[P:.*]] = llvm.getelementptr inbounds %[[A]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:   %[[V:.*]] = llvm.load %[[P]] {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK:        %[[U:.*]] = llvm.mlir.undef : vector<16xf32>
// CHECK:        %[[ONE:.*]] = llvm.insertelement %{{.*}}, %[[U]][%{{.*}} : i32] : vector<16xf32>
// CHECK-NEXT:   %[[B:.*]] = llvm.shufflevector %[[ONE]], %[[ONE]] [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] : vector<16xf32>
// CHECK-NEXT:   %[[F:.*]] = llvm.intr.fma(%[[V]], %[[B]], %[[V]]) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK:        %[[M:.*]] = llvm.call_intrinsic "llvm.maxnum.v16f32"(%[[F]], %{{.*}})
// CHECK:        %[[H:.*]] = llvm.shufflevector %[[M]], %[[M]] [8, 9, 10, 11, 12, 13, 14, 15] : vector<16xf32>
// CHECK-NEXT:   %[[L:.*]] = llvm.shufflevector %[[H]], %[[H]] [3] : vector<8xf32>
// CHECK-NEXT:   %[[E:.*]] = llvm.bitcast %[[L]] : vector<1xf32> to f32
// CHECK:        llvm.store %[[M]], %{{.*}} {alignment = 4 : i64} : vector<16xf32>, !llvm.ptr
// CHECK:        llvm.store %[[E]]

// CHECK-LABEL: llvm.func @contract(
// CHECK:         %[[P:.*]] = llvm.fmul %{{.*}}, %{{.*}} {fastmathFlags = #llvm.fastmath<contract>} : vector<8xf32>
// CHECK-NEXT:    llvm.fadd %{{.*}}, %[[P]] {fastmathFlags = #llvm.fastmath<contract>} : vector<8xf32>
