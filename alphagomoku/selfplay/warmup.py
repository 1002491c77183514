"""Compile the self-play and training kernels once, in the parent, before any worker starts.

Every kernel is cached on disk after its first compilation. Without this step, on a machine with
an empty cache each spawned worker compiles the same kernels at once (tens of seconds each, all
cores busy); with it, the workers find them compiled. Numba compiles a kernel once for each set
of argument types it meets, so the warm-up takes the paths a run takes with the types it passes:
both root rules, the VCF input planes, balanced openings (valued through
``Position.planes``) and a training batch made from the game's record.
"""

from __future__ import annotations

import numpy as np

from alphagomoku.game.config import GameConfig
from alphagomoku.mcts import SearchConfig, uniform_evaluator
from alphagomoku.selfplay.game_loop import SelfPlaySettings, play_games
from alphagomoku.selfplay.openings import OpeningSettings

# The VCF planes' budget of the recipes; the kernels compiled do not depend on its value.
_VCF_PLANE_BUDGET = 100


def _python_uniform(planes: np.ndarray, legal: np.ndarray):
    # A plain function, not uniform_evaluator itself, so the search takes the same
    # gather / evaluate / apply path as with a network (it runs uniform_evaluator in-kernel).
    return uniform_evaluator(planes, legal)


def compile_selfplay_kernels(game: GameConfig) -> None:
    play_games(_python_uniform, game, SearchConfig(num_simulations=2, dirichlet_eps=0.25),
               SelfPlaySettings(games_at_once=1, eval_cache=64), num_games=1, seed=0)
    records, _ = play_games(
        _python_uniform, game,
        SearchConfig(num_simulations=4, root_rule="gumbel", gumbel_m=2,
                     vcf_plane_budget=_VCF_PLANE_BUDGET),
        SelfPlaySettings(games_at_once=1, eval_cache=64, openings=OpeningSettings(share=1.0)),
        num_games=1, seed=0)
    _compile_training_batch(game, records)


def _compile_training_batch(game: GameConfig, records) -> None:
    from alphagomoku.train.augment import make_batch
    from alphagomoku.train.buffer import ReplayBuffer

    buffer = ReplayBuffer(game, 64)
    for record in records:
        buffer.add_game(record)
    rng = np.random.default_rng(0)
    for rule_planes in (False, True):
        make_batch(buffer, np.arange(len(buffer)), rng, game, 0.5, _VCF_PLANE_BUDGET, rule_planes,
                   threat_planes=rule_planes)
