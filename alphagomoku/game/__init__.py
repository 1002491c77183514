"""The game core: rules, board, coordinates, symmetries and the network's input planes."""

from alphagomoku.game.config import GameConfig
from alphagomoku.game.constants import BLACK, DRAW, EMPTY, NO_MOVE, NO_RESULT, NUM_PLANES, WHITE
from alphagomoku.game.coords import CoordinateError
from alphagomoku.game.position import IllegalMoveError, Position, parse_board, render
from alphagomoku.game.vcf_search import VcfResult, find_vcf, solve_vcf
from alphagomoku.game.vct_search import VctResult, solve_vct

__all__ = [
    "BLACK", "DRAW", "EMPTY", "NO_MOVE", "NO_RESULT", "NUM_PLANES", "WHITE",
    "CoordinateError", "GameConfig", "IllegalMoveError", "Position", "VcfResult", "VctResult",
    "find_vcf", "parse_board", "render", "solve_vcf", "solve_vct",
]
