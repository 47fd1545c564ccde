"""Hand-blocked vector kernels shared by the lowerings.

Layout (one convention: what a kernel *is* apart from *when* it is used and
*how large* its blocks are):

* :mod:`~nnc.passes.kernels.vector`: the mechanism every kernel is built
  with: a shared kernel's use (a marked ``scf.execute_region`` that
  ``nnc-outline-kernels`` turns into a call), vector arithmetic and loops;
* :mod:`~nnc.passes.kernels.f32`: the float32 kernels (GEMM, dot products,
  weight-panel transposition, depthwise), each built for the block shape it
  is given;
* :mod:`~nnc.passes.kernels.q8`: the quantised 8-bit kernels (GEMM of int16
  pairs, depthwise) with int32 accumulators and the requantisation epilogue;
* :mod:`~nnc.passes.kernels.tiles`: the tile policy, a pure function from a
  target description to the block shapes, carried by the lowering context.

The lowerings in :mod:`nnc.passes.lowering` (``conv.py``, ``recurrent.py``)
decide which kernel serves an operation; this package knows nothing of NNAPI
operations.  Importing this package imports none of its modules, so the
lowering context may depend on :mod:`~nnc.passes.kernels.tiles` (a leaf)
while the kernels depend on the lowering context.
"""
