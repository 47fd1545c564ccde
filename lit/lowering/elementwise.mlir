// RUN: nnc-opt %s -p convert-nnapi-to-linalg | filecheck %s

// Element-wise operations of passes/lowering/elementwise.py, one function
// each: one linalg.generic over the output, written in place, whose body is
// the operation's scalar arithmetic (see also elementwise_types.mlir).
builtin.module {
  // NNAPI's integer division: floor division that cannot trap; a divisor
  // of 0 gives 0 and of -1 gives the negation (INT_MIN wraps).
  func.func @div(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
    %act = "nnapi.constant"() <{value = dense<0> : tensor<i32>}> : () -> i32
    %r = "nnapi.div"(%a, %b, %act) : (tensor<4xi32>, tensor<4xi32>, i32) -> tensor<4xi32>
    func.return %r : tensor<4xi32>
  }

  // Float DIV is divf, then the fused activation (1 = RELU).
  func.func @div_f32(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
    %act = "nnapi.constant"() <{value = dense<1> : tensor<i32>}> : () -> i32
    %r = "nnapi.div"(%a, %b, %act) : (tensor<4xf32>, tensor<4xf32>, i32) -> tensor<4xf32>
    func.return %r : tensor<4xf32>
  }

  // RELU: max(x, 0).
  func.func @relu(%x: tensor<4xf32>) -> tensor<4xf32> {
    %r = "nnapi.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    func.return %r : tensor<4xf32>
  }

  // RELU1: clamp to [-1, 1].
  func.func @relu1(%x: tensor<4xf32>) -> tensor<4xf32> {
    %r = "nnapi.relu1"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    func.return %r : tensor<4xf32>
  }

  // FLOOR: one math.floor per element.
  func.func @floor(%x: tensor<4xf32>) -> tensor<4xf32> {
    %r = "nnapi.floor"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    func.return %r : tensor<4xf32>
  }

  // ABS: one math.absf per element.
  func.func @abs(%x: tensor<4xf32>) -> tensor<4xf32> {
    %r = "nnapi.abs"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    func.return %r : tensor<4xf32>
  }

  // NEG: one arith.negf per element.
  func.func @neg(%x: tensor<4xf32>) -> tensor<4xf32> {
    %r = "nnapi.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    func.return %r : tensor<4xf32>
  }

  // EXP: one math.exp per element.
  func.func @exp(%x: tensor<4xf32>) -> tensor<4xf32> {
    %r = "nnapi.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    func.return %r : tensor<4xf32>
  }

  // LOG: one math.log per element.
  func.func @log(%x: tensor<4xf32>) -> tensor<4xf32> {
    %r = "nnapi.log"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    func.return %r : tensor<4xf32>
  }

  // RSQRT: one math.rsqrt per element.
  func.func @rsqrt(%x: tensor<4xf32>) -> tensor<4xf32> {
    %r = "nnapi.rsqrt"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    func.return %r : tensor<4xf32>
  }

  // SIN: one math.sin per element.
  func.func @sin(%x: tensor<4xf32>) -> tensor<4xf32> {
    %r = "nnapi.sin"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    func.return %r : tensor<4xf32>
  }

  // SQRT: one math.sqrt per element.
  func.func @sqrt(%x: tensor<4xf32>) -> tensor<4xf32> {
    %r = "nnapi.sqrt"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    func.return %r : tensor<4xf32>
  }

  // TANH: one math.tanh per element.
  func.func @tanh(%x: tensor<4xf32>) -> tensor<4xf32> {
    %r = "nnapi.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    func.return %r : tensor<4xf32>
  }

  // HARD_SWISH: x * min(max(x + 3, 0), 6) / 6.
  func.func @hard_swish(%x: tensor<4xf32>) -> tensor<4xf32> {
    %r = "nnapi.hard_swish"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    func.return %r : tensor<4xf32>
  }

  // ELU with alpha 0.5 (a compile-time constant): max(x, 0) + min(alpha * (exp(x) - 1), 0).
  func.func @elu(%x: tensor<4xf32>) -> tensor<4xf32> {
    %alpha = "nnapi.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> f32
    %r = "nnapi.elu"(%x, %alpha) : (tensor<4xf32>, f32) -> tensor<4xf32>
    func.return %r : tensor<4xf32>
  }

  // MINIMUM: b < a ? b : a (an ordered compare and a select, std::min).
  func.func @minimum(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
    %r = "nnapi.minimum"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    func.return %r : tensor<4xf32>
  }

  // POW: math.powf.
  func.func @pow(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
    %r = "nnapi.pow"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    func.return %r : tensor<4xf32>
  }

  // PRELU: x >= 0 ? x : x * alpha.
  func.func @prelu(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
    %r = "nnapi.prelu"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    func.return %r : tensor<4xf32>
  }

  // LOGICAL_AND of stored bool bytes: each byte != 0, arith.andi, back to a 0/1 byte.
  func.func @logical_and(%a: tensor<4xi1>, %b: tensor<4xi1>) -> tensor<4xi1> {
    %r = "nnapi.logical_and"(%a, %b) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
    func.return %r : tensor<4xi1>
  }

  // LOGICAL_OR of stored bool bytes: each byte != 0, arith.ori, back to a 0/1 byte.
  func.func @logical_or(%a: tensor<4xi1>, %b: tensor<4xi1>) -> tensor<4xi1> {
    %r = "nnapi.logical_or"(%a, %b) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
    func.return %r : tensor<4xi1>
  }

  // EQUAL: arith.cmpf oeq, stored as a 0/1 byte.
  func.func @equal(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
    %r = "nnapi.equal"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    func.return %r : tensor<4xi1>
  }

  // NOT_EQUAL: arith.cmpf une, stored as a 0/1 byte.
  func.func @not_equal(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
    %r = "nnapi.not_equal"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    func.return %r : tensor<4xi1>
  }

  // GREATER_EQUAL: arith.cmpf oge, stored as a 0/1 byte.
  func.func @greater_equal(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
    %r = "nnapi.greater_equal"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    func.return %r : tensor<4xi1>
  }

  // LESS_EQUAL: arith.cmpf ole, stored as a 0/1 byte.
  func.func @less_equal(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
    %r = "nnapi.less_equal"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    func.return %r : tensor<4xi1>
  }

  // SELECT: the condition byte != 0 picks the element of the first or the second input.
  func.func @select(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
    %r = "nnapi.select"(%c, %a, %b) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    func.return %r : tensor<4xf32>
  }
}


// CHECK-LABEL: func.func @div(
// CHECK-SAME:    %[[A:[0-9]+]]: memref<4xi32>, %[[B:[0-9]+]]: memref<4xi32>, %[[R:[0-9]+]]: memref<4xi32>
// CHECK:         linalg.generic {{.*}} ins(%[[A]], %[[B]] : memref<4xi32>, memref<4xi32>) outs(%[[R]] : memref<4xi32>)
// CHECK-NEXT:    ^bb0(%[[X:[0-9]+]]: i32, %[[Y:[0-9]+]]: i32, %{{[0-9]+}}: i32):
// CHECK-NEXT:      %[[ZERO:[0-9]+]] = arith.constant 0 : i32
// CHECK-NEXT:      %[[ONE:[0-9]+]] = arith.constant 1 : i32
// CHECK-NEXT:      %[[M1:[0-9]+]] = arith.constant -1 : i32
// CHECK-NEXT:      %[[BY0:[0-9]+]] = arith.cmpi eq, %[[Y]], %[[ZERO]] : i32
// CHECK-NEXT:      %[[BYM1:[0-9]+]] = arith.cmpi eq, %[[Y]], %[[M1]] : i32
// CHECK-NEXT:      %[[BAD:[0-9]+]] = arith.ori %[[BY0]], %[[BYM1]] : i1
// CHECK-NEXT:      %[[SAFE:[0-9]+]] = arith.select %[[BAD]], %[[ONE]], %[[Y]] : i32
// CHECK-NEXT:      %[[Q:[0-9]+]] = arith.floordivsi %[[X]], %[[SAFE]] : i32
// CHECK-NEXT:      %[[NEG:[0-9]+]] = arith.subi %[[ZERO]], %[[X]] : i32
// CHECK-NEXT:      %[[Q1:[0-9]+]] = arith.select %[[BYM1]], %[[NEG]], %[[Q]] : i32
// CHECK-NEXT:      %[[Q2:[0-9]+]] = arith.select %[[BY0]], %[[ZERO]], %[[Q1]] : i32
// CHECK-NEXT:      linalg.yield %[[Q2]] : i32

// CHECK-LABEL: func.func @div_f32(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%{{[0-9]+}}, %{{[0-9]+}} : memref<4xf32>, memref<4xf32>) outs(%{{[0-9]+}} : memref<4xf32>)
// CHECK-NEXT:    ^bb0(%[[A:[0-9]+]]: f32, %[[B:[0-9]+]]: f32, %{{[0-9]+}}: f32):
// CHECK-NEXT:      %[[Q:[0-9]+]] = arith.divf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[Z:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[M:[0-9]+]] = arith.maxnumf %[[Q]], %[[Z]] : f32
// CHECK-NEXT:      linalg.yield %[[M]] : f32

// CHECK-LABEL: func.func @relu(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%{{[0-9]+}} : memref<4xf32>) outs(%{{[0-9]+}} : memref<4xf32>)
// CHECK-NEXT:    ^bb0(%[[X:[0-9]+]]: f32, %{{[0-9]+}}: f32):
// CHECK-NEXT:      %[[Z:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[M:[0-9]+]] = arith.maxnumf %[[X]], %[[Z]] : f32
// CHECK-NEXT:      linalg.yield %[[M]] : f32

// CHECK-LABEL: func.func @relu1(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%{{[0-9]+}} : memref<4xf32>) outs(%{{[0-9]+}} : memref<4xf32>)
// CHECK-NEXT:    ^bb0(%[[X:[0-9]+]]: f32, %{{[0-9]+}}: f32):
// CHECK-NEXT:      %[[LO:[0-9]+]] = arith.constant -1.000000e+00 : f32
// CHECK-NEXT:      %[[M:[0-9]+]] = arith.maxnumf %[[X]], %[[LO]] : f32
// CHECK-NEXT:      %[[HI:[0-9]+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[N:[0-9]+]] = arith.minnumf %[[M]], %[[HI]] : f32
// CHECK-NEXT:      linalg.yield %[[N]] : f32

// CHECK-LABEL: func.func @floor(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%{{[0-9]+}} : memref<4xf32>) outs(%{{[0-9]+}} : memref<4xf32>)
// CHECK-NEXT:    ^bb0(%[[X:[0-9]+]]: f32, %{{[0-9]+}}: f32):
// CHECK-NEXT:      %[[V:[0-9]+]] = math.floor %[[X]] : f32
// CHECK-NEXT:      linalg.yield %[[V]] : f32

// CHECK-LABEL: func.func @abs(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%{{[0-9]+}} : memref<4xf32>) outs(%{{[0-9]+}} : memref<4xf32>)
// CHECK-NEXT:    ^bb0(%[[X:[0-9]+]]: f32, %{{[0-9]+}}: f32):
// CHECK-NEXT:      %[[V:[0-9]+]] = math.absf %[[X]] : f32
// CHECK-NEXT:      linalg.yield %[[V]] : f32

// CHECK-LABEL: func.func @neg(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%{{[0-9]+}} : memref<4xf32>) outs(%{{[0-9]+}} : memref<4xf32>)
// CHECK-NEXT:    ^bb0(%[[X:[0-9]+]]: f32, %{{[0-9]+}}: f32):
// CHECK-NEXT:      %[[V:[0-9]+]] = arith.negf %[[X]] : f32
// CHECK-NEXT:      linalg.yield %[[V]] : f32

// CHECK-LABEL: func.func @exp(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%{{[0-9]+}} : memref<4xf32>) outs(%{{[0-9]+}} : memref<4xf32>)
// CHECK-NEXT:    ^bb0(%[[X:[0-9]+]]: f32, %{{[0-9]+}}: f32):
// CHECK-NEXT:      %[[V:[0-9]+]] = math.exp %[[X]] : f32
// CHECK-NEXT:      linalg.yield %[[V]] : f32

// CHECK-LABEL: func.func @log(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%{{[0-9]+}} : memref<4xf32>) outs(%{{[0-9]+}} : memref<4xf32>)
// CHECK-NEXT:    ^bb0(%[[X:[0-9]+]]: f32, %{{[0-9]+}}: f32):
// CHECK-NEXT:      %[[V:[0-9]+]] = math.log %[[X]] : f32
// CHECK-NEXT:      linalg.yield %[[V]] : f32

// CHECK-LABEL: func.func @rsqrt(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%{{[0-9]+}} : memref<4xf32>) outs(%{{[0-9]+}} : memref<4xf32>)
// CHECK-NEXT:    ^bb0(%[[X:[0-9]+]]: f32, %{{[0-9]+}}: f32):
// CHECK-NEXT:      %[[V:[0-9]+]] = math.rsqrt %[[X]] : f32
// CHECK-NEXT:      linalg.yield %[[V]] : f32

// CHECK-LABEL: func.func @sin(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%{{[0-9]+}} : memref<4xf32>) outs(%{{[0-9]+}} : memref<4xf32>)
// CHECK-NEXT:    ^bb0(%[[X:[0-9]+]]: f32, %{{[0-9]+}}: f32):
// CHECK-NEXT:      %[[V:[0-9]+]] = math.sin %[[X]] : f32
// CHECK-NEXT:      linalg.yield %[[V]] : f32

// CHECK-LABEL: func.func @sqrt(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%{{[0-9]+}} : memref<4xf32>) outs(%{{[0-9]+}} : memref<4xf32>)
// CHECK-NEXT:    ^bb0(%[[X:[0-9]+]]: f32, %{{[0-9]+}}: f32):
// CHECK-NEXT:      %[[V:[0-9]+]] = math.sqrt %[[X]] : f32
// CHECK-NEXT:      linalg.yield %[[V]] : f32

// CHECK-LABEL: func.func @tanh(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%{{[0-9]+}} : memref<4xf32>) outs(%{{[0-9]+}} : memref<4xf32>)
// CHECK-NEXT:    ^bb0(%[[X:[0-9]+]]: f32, %{{[0-9]+}}: f32):
// CHECK-NEXT:      %[[V:[0-9]+]] = math.tanh %[[X]] : f32
// CHECK-NEXT:      linalg.yield %[[V]] : f32

// CHECK-LABEL: func.func @hard_swish(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%{{[0-9]+}} : memref<4xf32>) outs(%{{[0-9]+}} : memref<4xf32>)
// CHECK-NEXT:    ^bb0(%[[X:[0-9]+]]: f32, %{{[0-9]+}}: f32):
// CHECK-NEXT:      %[[C3:[0-9]+]] = arith.constant 3.000000e+00 : f32
// CHECK-NEXT:      %[[S:[0-9]+]] = arith.addf %[[X]], %[[C3]] : f32
// CHECK-NEXT:      %[[C0:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[LO:[0-9]+]] = arith.maxnumf %[[S]], %[[C0]] : f32
// CHECK-NEXT:      %[[C6:[0-9]+]] = arith.constant 6.000000e+00 : f32
// CHECK-NEXT:      %[[HI:[0-9]+]] = arith.minnumf %[[LO]], %[[C6]] : f32
// CHECK-NEXT:      %[[P:[0-9]+]] = arith.mulf %[[X]], %[[HI]] : f32
// CHECK-NEXT:      %[[D:[0-9]+]] = arith.constant 6.000000e+00 : f32
// CHECK-NEXT:      %[[Q:[0-9]+]] = arith.divf %[[P]], %[[D]] : f32
// CHECK-NEXT:      linalg.yield %[[Q]] : f32

// CHECK-LABEL: func.func @elu(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%{{[0-9]+}} : memref<4xf32>) outs(%{{[0-9]+}} : memref<4xf32>)
// CHECK-NEXT:    ^bb0(%[[X:[0-9]+]]: f32, %{{[0-9]+}}: f32):
// CHECK-NEXT:      %[[AL:[0-9]+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      %[[E:[0-9]+]] = math.exp %[[X]] : f32
// CHECK-NEXT:      %[[ONE:[0-9]+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[EM1:[0-9]+]] = arith.subf %[[E]], %[[ONE]] : f32
// CHECK-NEXT:      %[[NEG:[0-9]+]] = arith.mulf %[[AL]], %[[EM1]] : f32
// CHECK-NEXT:      %[[Z:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[POS:[0-9]+]] = arith.maxnumf %[[X]], %[[Z]] : f32
// CHECK-NEXT:      %[[Z2:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[NEGP:[0-9]+]] = arith.minnumf %[[NEG]], %[[Z2]] : f32
// CHECK-NEXT:      %[[S:[0-9]+]] = arith.addf %[[POS]], %[[NEGP]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32

// CHECK-LABEL: func.func @minimum(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%{{[0-9]+}}, %{{[0-9]+}} : memref<4xf32>, memref<4xf32>) outs(%{{[0-9]+}} : memref<4xf32>)
// CHECK-NEXT:    ^bb0(%[[A:[0-9]+]]: f32, %[[B:[0-9]+]]: f32, %{{[0-9]+}}: f32):
// CHECK-NEXT:      %[[LT:[0-9]+]] = arith.cmpf olt, %[[B]], %[[A]] : f32
// CHECK-NEXT:      %[[M:[0-9]+]] = arith.select %[[LT]], %[[B]], %[[A]] : f32
// CHECK-NEXT:      linalg.yield %[[M]] : f32

// CHECK-LABEL: func.func @pow(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%{{[0-9]+}}, %{{[0-9]+}} : memref<4xf32>, memref<4xf32>) outs(%{{[0-9]+}} : memref<4xf32>)
// CHECK-NEXT:    ^bb0(%[[A:[0-9]+]]: f32, %[[B:[0-9]+]]: f32, %{{[0-9]+}}: f32):
// CHECK-NEXT:      %[[P:[0-9]+]] = math.powf %[[A]], %[[B]] : f32
// CHECK-NEXT:      linalg.yield %[[P]] : f32

// CHECK-LABEL: func.func @prelu(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%{{[0-9]+}}, %{{[0-9]+}} : memref<4xf32>, memref<4xf32>) outs(%{{[0-9]+}} : memref<4xf32>)
// CHECK-NEXT:    ^bb0(%[[A:[0-9]+]]: f32, %[[B:[0-9]+]]: f32, %{{[0-9]+}}: f32):
// CHECK-NEXT:      %[[Z:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[GE:[0-9]+]] = arith.cmpf oge, %[[A]], %[[Z]] : f32
// CHECK-NEXT:      %[[M:[0-9]+]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[S:[0-9]+]] = arith.select %[[GE]], %[[A]], %[[M]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32

// CHECK-LABEL: func.func @logical_and(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%{{[0-9]+}}, %{{[0-9]+}} : memref<4xi8>, memref<4xi8>) outs(%{{[0-9]+}} : memref<4xi8>)
// CHECK-NEXT:    ^bb0(%[[A:[0-9]+]]: i8, %[[B:[0-9]+]]: i8, %{{[0-9]+}}: i8):
// CHECK-NEXT:      %[[Z:[0-9]+]] = arith.constant 0 : i8
// CHECK-NEXT:      %[[TA:[0-9]+]] = arith.cmpi ne, %[[A]], %[[Z]] : i8
// CHECK-NEXT:      %[[Z2:[0-9]+]] = arith.constant 0 : i8
// CHECK-NEXT:      %[[TB:[0-9]+]] = arith.cmpi ne, %[[B]], %[[Z2]] : i8
// CHECK-NEXT:      %[[R:[0-9]+]] = arith.andi %[[TA]], %[[TB]] : i1
// CHECK-NEXT:      %[[BYTE:[0-9]+]] = arith.extui %[[R]] : i1 to i8
// CHECK-NEXT:      linalg.yield %[[BYTE]] : i8

// CHECK-LABEL: func.func @logical_or(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%{{[0-9]+}}, %{{[0-9]+}} : memref<4xi8>, memref<4xi8>) outs(%{{[0-9]+}} : memref<4xi8>)
// CHECK-NEXT:    ^bb0(%[[A:[0-9]+]]: i8, %[[B:[0-9]+]]: i8, %{{[0-9]+}}: i8):
// CHECK-NEXT:      %[[Z:[0-9]+]] = arith.constant 0 : i8
// CHECK-NEXT:      %[[TA:[0-9]+]] = arith.cmpi ne, %[[A]], %[[Z]] : i8
// CHECK-NEXT:      %[[Z2:[0-9]+]] = arith.constant 0 : i8
// CHECK-NEXT:      %[[TB:[0-9]+]] = arith.cmpi ne, %[[B]], %[[Z2]] : i8
// CHECK-NEXT:      %[[R:[0-9]+]] = arith.ori %[[TA]], %[[TB]] : i1
// CHECK-NEXT:      %[[BYTE:[0-9]+]] = arith.extui %[[R]] : i1 to i8
// CHECK-NEXT:      linalg.yield %[[BYTE]] : i8

// CHECK-LABEL: func.func @equal(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%{{[0-9]+}}, %{{[0-9]+}} : memref<4xf32>, memref<4xf32>) outs(%{{[0-9]+}} : memref<4xi8>)
// CHECK-NEXT:    ^bb0(%[[A:[0-9]+]]: f32, %[[B:[0-9]+]]: f32, %{{[0-9]+}}: i8):
// CHECK-NEXT:      %[[C:[0-9]+]] = arith.cmpf oeq, %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[BYTE:[0-9]+]] = arith.extui %[[C]] : i1 to i8
// CHECK-NEXT:      linalg.yield %[[BYTE]] : i8

// CHECK-LABEL: func.func @not_equal(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%{{[0-9]+}}, %{{[0-9]+}} : memref<4xf32>, memref<4xf32>) outs(%{{[0-9]+}} : memref<4xi8>)
// CHECK-NEXT:    ^bb0(%[[A:[0-9]+]]: f32, %[[B:[0-9]+]]: f32, %{{[0-9]+}}: i8):
// CHECK-NEXT:      %[[C:[0-9]+]] = arith.cmpf une, %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[BYTE:[0-9]+]] = arith.extui %[[C]] : i1 to i8
// CHECK-NEXT:      linalg.yield %[[BYTE]] : i8

// CHECK-LABEL: func.func @greater_equal(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%{{[0-9]+}}, %{{[0-9]+}} : memref<4xf32>, memref<4xf32>) outs(%{{[0-9]+}} : memref<4xi8>)
// CHECK-NEXT:    ^bb0(%[[A:[0-9]+]]: f32, %[[B:[0-9]+]]: f32, %{{[0-9]+}}: i8):
// CHECK-NEXT:      %[[C:[0-9]+]] = arith.cmpf oge, %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[BYTE:[0-9]+]] = arith.extui %[[C]] : i1 to i8
// CHECK-NEXT:      linalg.yield %[[BYTE]] : i8

// CHECK-LABEL: func.func @less_equal(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%{{[0-9]+}}, %{{[0-9]+}} : memref<4xf32>, memref<4xf32>) outs(%{{[0-9]+}} : memref<4xi8>)
// CHECK-NEXT:    ^bb0(%[[A:[0-9]+]]: f32, %[[B:[0-9]+]]: f32, %{{[0-9]+}}: i8):
// CHECK-NEXT:      %[[C:[0-9]+]] = arith.cmpf ole, %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[BYTE:[0-9]+]] = arith.extui %[[C]] : i1 to i8
// CHECK-NEXT:      linalg.yield %[[BYTE]] : i8

// CHECK-LABEL: func.func @select(
// CHECK-SAME:    %[[C:[0-9]+]]: memref<4xi8>, %[[A:[0-9]+]]: memref<4xf32>, %[[B:[0-9]+]]: memref<4xf32>, %[[R:[0-9]+]]: memref<4xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[C]], %[[A]], %[[B]] : memref<4xi8>, memref<4xf32>, memref<4xf32>) outs(%[[R]] : memref<4xf32>)
// CHECK-NEXT:    ^bb0(%[[VC:[0-9]+]]: i8, %[[VA:[0-9]+]]: f32, %[[VB:[0-9]+]]: f32, %{{[0-9]+}}: f32):
// CHECK-NEXT:      %[[Z:[0-9]+]] = arith.constant 0 : i8
// CHECK-NEXT:      %[[T:[0-9]+]] = arith.cmpi ne, %[[VC]], %[[Z]] : i8
// CHECK-NEXT:      %[[S:[0-9]+]] = arith.select %[[T]], %[[VA]], %[[VB]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
