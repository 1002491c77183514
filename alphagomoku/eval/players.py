"""Players: anything that picks a move for a position, behind one small interface.

The interface and its optional parts are in :mod:`alphagomoku.eval.player_types`, what a move
may spend in :mod:`alphagomoku.eval.move_budget`, the searching players in
:mod:`alphagomoku.eval.search_players` and the solvers' wrapper in
:mod:`alphagomoku.eval.tactical_player`. This module gathers their public names, so that
``from alphagomoku.eval.players import NetworkPlayer`` needs to know none of that.
"""

from alphagomoku.eval.move_budget import (
    BUDGET_SHARE,
    CALIBRATION_SHARE,
    CHUNK_SAFETY,
    FIRST_CHUNK,
    MAX_GROWTH,
    MAX_STEP_S,
    MAX_TIMED_PLAYOUTS,
    MAX_TIMED_SIMULATIONS,
    MIN_TREE_NODES,
    fill_budget,
    move_budget,
    search_within,
    tree_cap,
)
from alphagomoku.eval.player_types import (
    Closable,
    Explains,
    MemoryBounded,
    Player,
    RandomPlayer,
    ReportsVisits,
    ThinksMore,
    Wrapping,
    close_player,
    limit_memory,
    move_note,
)
from alphagomoku.eval.search_players import (
    PLAYER_EVAL_CACHE,
    PRIOR_JITTER,
    NetworkPlayer,
    PuctPlayer,
    PureMCTSPlayer,
    UniformMCTSPlayer,
)
from alphagomoku.eval.tactical_player import (
    THINK_MORE_MIN_S,
    TIMED_MAX_NODES,
    VCF_LEAF_NODES,
    VCF_MIN_NODES,
    VCF_NODES,
    VCF_NODES_PER_S,
    VCF_TIME_SHARE,
    VCT_ALTERNATIVES,
    VCT_CHECK_SHARE,
    VCT_DEFENCE_CHECK_SHARE,
    VCT_LEAF_DEPTH,
    VCT_LEAF_NODES,
    VCT_LEAF_PLIES,
    VCT_OWN_SHARE,
    BoardFallbackPlayer,
    TacticalPlayer,
)

__all__ = [
    "BUDGET_SHARE", "CALIBRATION_SHARE", "CHUNK_SAFETY", "FIRST_CHUNK", "MAX_GROWTH", "MAX_STEP_S",
    "MAX_TIMED_PLAYOUTS", "MAX_TIMED_SIMULATIONS", "MIN_TREE_NODES", "PLAYER_EVAL_CACHE",
    "PRIOR_JITTER", "THINK_MORE_MIN_S", "TIMED_MAX_NODES", "VCF_LEAF_NODES", "VCF_MIN_NODES",
    "VCF_NODES", "VCF_NODES_PER_S", "VCF_TIME_SHARE", "VCT_ALTERNATIVES", "VCT_CHECK_SHARE",
    "VCT_DEFENCE_CHECK_SHARE", "VCT_LEAF_DEPTH", "VCT_LEAF_NODES", "VCT_LEAF_PLIES",
    "VCT_OWN_SHARE",
    "BoardFallbackPlayer", "Closable", "Explains", "MemoryBounded", "NetworkPlayer", "Player", "PuctPlayer",
    "PureMCTSPlayer", "RandomPlayer", "ReportsVisits", "TacticalPlayer", "ThinksMore",
    "UniformMCTSPlayer", "Wrapping",
    "close_player", "fill_budget", "limit_memory", "move_budget", "move_note", "search_within",
    "tree_cap",
]
