// RUN: nnc-opt %s -p nnc-outline-kernels | filecheck %s

// Two uses of the kernel "nnc_scale" (the second without a body: only the
// first use of a name needs to carry the code) and one of "nnc_copy".  The
// cast at the top of each region is the kernel's parameter list: its results
// become the arguments of one private function per name (buffers as
// memref<?xf32>, marked nnc.noalias), its operands the arguments of the call
// that replaces each use; a buffer is cast to memref<?xf32> once, where it
// is defined.  (The uses are written in generic form: xDSL's
// custom syntax of scf.execute_region drops the attribute when parsing.)
builtin.module {
  func.func @main(%a: memref<16xf32>, %b: memref<8xf32>, %out: memref<16xf32>) {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    "scf.execute_region"() ({
      %p0, %p1, %p2 = builtin.unrealized_conversion_cast %a, %out, %c0 : memref<16xf32>, memref<16xf32>, index to memref<?xf32>, memref<?xf32>, index
      %v = vector.load %p0[%p2] : memref<?xf32>, vector<8xf32>
      %s = arith.addf %v, %v : vector<8xf32>
      vector.store %s, %p1[%p2] : memref<?xf32>, vector<8xf32>
      scf.yield
    }) {nnc.kernel = "nnc_scale"} : () -> ()
    "scf.execute_region"() ({
      %q0, %q1, %q2 = builtin.unrealized_conversion_cast %a, %out, %c8 : memref<16xf32>, memref<16xf32>, index to memref<?xf32>, memref<?xf32>, index
      scf.yield
    }) {nnc.kernel = "nnc_scale"} : () -> ()
    "scf.execute_region"() ({
      %r0, %r1 = builtin.unrealized_conversion_cast %b, %out : memref<8xf32>, memref<16xf32> to memref<?xf32>, memref<?xf32>
      %z = arith.constant 0 : index
      %w = vector.load %r0[%z] : memref<?xf32>, vector<8xf32>
      vector.store %w, %r1[%z] : memref<?xf32>, vector<8xf32>
      scf.yield
    }) {nnc.kernel = "nnc_copy"} : () -> ()
    func.return
  }
}

// CHECK:      func.func @main(%[[A:.*]]: memref<16xf32>, %[[B:.*]]: memref<8xf32>, %[[OUT:.*]]: memref<16xf32>) {
// CHECK-DAG:    %[[A1:.*]] = "memref.cast"(%[[A]]) : (memref<16xf32>) -> memref<?xf32>
// CHECK-DAG:    %[[B1:.*]] = "memref.cast"(%[[B]]) : (memref<8xf32>) -> memref<?xf32>
// CHECK-DAG:    %[[O1:.*]] = "memref.cast"(%[[OUT]]) : (memref<16xf32>) -> memref<?xf32>
// CHECK:        %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:   %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT:   func.call @nnc_scale(%[[A1]], %[[O1]], %[[C0]]) : (memref<?xf32>, memref<?xf32>, index) -> ()
// CHECK-NEXT:   func.call @nnc_scale(%[[A1]], %[[O1]], %[[C8]]) : (memref<?xf32>, memref<?xf32>, index) -> ()
// CHECK-NEXT:   func.call @nnc_copy(%[[B1]], %[[O1]]) : (memref<?xf32>, memref<?xf32>) -> ()
// CHECK-NEXT:   func.return
// CHECK:      func.func private @nnc_scale(%[[X:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?xf32>, %[[I:.*]]: index) attributes {nnc.noalias} {
// CHECK-NEXT:   %[[V:.*]] = vector.load %[[X]][%[[I]]] : memref<?xf32>, vector<8xf32>
// CHECK-NEXT:   %[[S:.*]] = arith.addf %[[V]], %[[V]] : vector<8xf32>
// CHECK-NEXT:   vector.store %[[S]], %[[Y]][%[[I]]] : memref<?xf32>, vector<8xf32>
// CHECK-NEXT:   func.return
// CHECK:      func.func private @nnc_copy(%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>) attributes {nnc.noalias} {
// CHECK-NOT:  scf.execute_region
