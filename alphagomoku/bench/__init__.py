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


def load_recipe(name: str, *, one_board: bool = False, **changes):
    """The TrainConfig of training recipe ``name`` with ``changes`` applied. ``one_board`` drops
    the recipe's mix of boards and rules, keeping its main one, for benchmarks that time a single
    setting. An unknown recipe or an impossible change is a UsageError that says why."""
    from alphagomoku.train.config import ConfigError, TrainConfig
    from alphagomoku.train.recipes import recipe_path

    if one_board:
        changes.update(board_sizes="", rules="", variant_mix="")
    try:
        return TrainConfig.from_file(recipe_path(name), **changes)
    except ConfigError as e:
        raise UsageError(str(e)) from None
