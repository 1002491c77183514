"""alphagomoku: an AlphaZero-style self-play engine that learns Gomoku from zero.

Submodules are imported on demand so that `import alphagomoku` stays cheap (no torch, no Numba
compilation) in spawned worker processes until they need them.
"""

__version__ = "0.1.0"
