"""Compile the self-play kernels once, in the parent, before any worker starts.

Every kernel is cached on disk after its first compilation. Without this step, on a machine with
an empty cache each spawned worker compiles the same kernels at once (tens of seconds each, all
cores busy); with it, the workers find them compiled.
"""

from __future__ import annotations

import numpy as np

from alphagomoku.game.config import GameConfig
from alphagomoku.mcts import SearchConfig, uniform_evaluator
from alphagomoku.selfplay.game_loop import SelfPlaySettings, play_games


def _python_uniform(planes: np.ndarray, legal: np.ndarray):
    # A plain function, not uniform_evaluator itself, so the search takes the same
    # gather / evaluate / apply path as with a network (it runs uniform_evaluator in-kernel).
    return uniform_evaluator(planes, legal)


def compile_selfplay_kernels(game: GameConfig) -> None:
    play_games(_python_uniform, game, SearchConfig(num_simulations=2, dirichlet_eps=0.25),
               SelfPlaySettings(games_at_once=1, eval_cache=64), num_games=1, seed=0)
