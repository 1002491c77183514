"""Evaluation: players behind one interface, the arena that plays them against each other, Elo.

None of these modules imports torch; the network player loads it when one is built.
"""

from alphagomoku.eval.arena import ArenaError, ArenaResult, make_openings, play_game, run_arena
from alphagomoku.eval.elo import EloEstimate, elo_estimate, elo_from_score, paired_elo_estimate
from alphagomoku.eval.external import ExternalEngineError, ExternalEnginePlayer
from alphagomoku.eval.players import (
    NetworkPlayer,
    Player,
    PureMCTSPlayer,
    RandomPlayer,
    TacticalPlayer,
    UniformMCTSPlayer,
)
from alphagomoku.eval.specs import PlayerSpecError, make_player, parse_player_spec

__all__ = [
    "ArenaError", "ArenaResult", "EloEstimate", "ExternalEngineError", "ExternalEnginePlayer",
    "NetworkPlayer", "Player", "PlayerSpecError", "PureMCTSPlayer", "RandomPlayer",
    "TacticalPlayer", "UniformMCTSPlayer", "elo_estimate", "elo_from_score", "make_openings",
    "make_player", "paired_elo_estimate", "parse_player_spec", "play_game", "run_arena",
]
