"""The NNAPI NDK C API as a shared library: ``libneuralnetworks.so``.

:mod:`nnc.ndk.build` compiles the library with cffi's embedding mode; the
library's functions are the Python functions of :mod:`nnc.ndk.entry`, which
translate C arguments into calls on nnc's one runtime (Model, Compilation,
Execution, ...) and exceptions back into result codes.
"""
