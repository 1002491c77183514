"""PUCT search compiled with Numba: many trees at once, their leaves evaluated in batches.

See ``docs/architecture.md`` (MCTS) for the tree layout and the gather / evaluate / apply cycle.
"""

from alphagomoku.mcts.config import SearchConfig
from alphagomoku.mcts.forest import Forest
from alphagomoku.mcts.policy import (
    TemperatureSchedule,
    select_move,
    uniform_evaluator,
    visit_policy,
)
from alphagomoku.mcts.pure import PureMCTS
from alphagomoku.mcts.search import SEARCH_LEAVES, SearchResult, search, search_config
from alphagomoku.mcts.tree import SOLVED_DRAW, SOLVED_LOSS, SOLVED_WIN, UNSOLVED

__all__ = [
    "SEARCH_LEAVES", "SOLVED_DRAW", "SOLVED_LOSS", "SOLVED_WIN", "UNSOLVED",
    "Forest", "PureMCTS", "SearchConfig", "SearchResult", "TemperatureSchedule",
    "search", "search_config", "select_move", "uniform_evaluator", "visit_policy",
]
