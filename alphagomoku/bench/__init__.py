"""Benchmarks behind ``scripts/benchmark.py``: one module per subsystem.

Each module defines ``add_arguments(parser)`` and ``run(args) -> dict``; the dict holds the
figures (and the machine they were taken on) and is printed as text or, with ``--json``, as JSON.
"""

BENCHMARKS = ("game", "mcts", "nn", "selfplay", "arch", "cache", "vcf")
# Benchmarks that take minutes to hours, start Ray (``scale``) or time a GPU recipe's trainer
# (``train``): a subcommand each, never part of ``all``.
LONG_BENCHMARKS = ("learning", "scale", "train")


class UsageError(ValueError):
    """Benchmark options that cannot work; scripts/benchmark.py prints the message and exits 2."""
