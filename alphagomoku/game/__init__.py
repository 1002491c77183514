"""The game core: rules, board, coordinates, symmetries and the network's input planes."""

from alphagomoku.game.config import GameConfig
from alphagomoku.game.constants import BLACK, DRAW, EMPTY, NO_MOVE, NO_RESULT, NUM_PLANES, WHITE
from alphagomoku.game.coords import CoordinateError
from alphagomoku.game.position import IllegalMoveError, Position, parse_board, render

__all__ = [
    "BLACK", "DRAW", "EMPTY", "NO_MOVE", "NO_RESULT", "NUM_PLANES", "WHITE",
    "CoordinateError", "GameConfig", "IllegalMoveError", "Position", "parse_board", "render",
]
