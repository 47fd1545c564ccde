"""nnc's version string (``nnc.__version__``).

A module of its own at the bottom of the import graph, so the compilation
cache (:mod:`nnc.runtime.cache`, which keys entries by it) reads it without
importing the public API above it."""

__version__ = "0.1.0"
