"""Position strings: a game as its moves run together (``h8i9j10``), the notation Gomocalc and
the project's records use, so a position can be pasted, copied and kept in a page's URL.

Every move starts with a letter and its row number has no letter in it, so the string splits
without separators; spaces and commas between moves are accepted too.
"""

from __future__ import annotations

import re

from alphagomoku.game import GameConfig, IllegalMoveError, Position
from alphagomoku.game.coords import CoordinateError, from_name

_MOVE = re.compile(r"([a-zA-Z])(\d{1,2})")
_SEPARATORS = re.compile(r"[\s,;]+")


class NotationError(ValueError):
    """A position string that does not name a legal game; the message says where it fails."""


def parse_moves(text: str, game: GameConfig) -> list[int]:
    """The flat indices of the moves in ``text``, replayed on ``game``'s board so that an
    occupied point or a move after the game ended is an error here."""
    if not isinstance(text, str):
        raise NotationError(f"a position string must be text, got {type(text).__name__}")
    compact = _SEPARATORS.sub("", text)
    moves: list[int] = []
    pos = 0
    position = Position(game)
    while pos < len(compact):
        m = _MOVE.match(compact, pos)
        if not m:
            raise NotationError(f"{compact[pos:pos + 6]!r} (character {pos + 1}) is not a move "
                                "like 'h8'")
        try:
            index = from_name(m.group(0), game.width, game.height)
            position.play(index)
        except (CoordinateError, IllegalMoveError) as e:
            raise NotationError(f"move {len(moves) + 1} ({m.group(0)}): {e}") from None
        moves.append(index)
        pos = m.end()
    return moves


def move_string(position: Position) -> str:
    return "".join(position.name(m) for m in position.moves)
