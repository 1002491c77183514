"""Numba flags, set in one place so every kernel compiles the same way.

cache=True writes compiled kernels to disk (NUMBA_CACHE_DIR or __pycache__), so spawned
self-play workers load them instead of compiling again. fastmath stays off: the search must give
the same result in a worker as in a test.
"""

JIT = {"cache": True, "nogil": True}
