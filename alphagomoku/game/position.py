"""The public, validated Python API over the game kernels."""

from __future__ import annotations

from typing import Iterable

import numpy as np

from alphagomoku.game import coords, kernels, vcf_planes
from alphagomoku.game.config import GameConfig
from alphagomoku.game.rule_planes import fill_rule_planes
from alphagomoku.game.constants import (
    BLACK,
    DRAW,
    EMPTY,
    NO_MOVE,
    NO_RESULT,
    NUM_PLANES,
    RULE_PLANES,
    RENJU,
    THREAT_PLANES,
    VCF_PLANES,
    WHITE,
)
from alphagomoku.game.solver_state import vcf_state_for
from alphagomoku.game.threat_planes import write_threat_planes


class IllegalMoveError(ValueError):
    """A move the rules do not allow here; the message says why."""


_COLOR_NAME = {BLACK: "black", WHITE: "white"}
RESULT_NAME = {NO_RESULT: "none", DRAW: "draw", BLACK: "black", WHITE: "white"}


class Position:
    """A game in progress: the board, whose turn it is, the moves so far and the result.

    Moves may be given as a flat index, an ``(x, y)`` pair, ``"x,y"`` or ``"h8"`` (see
    :mod:`alphagomoku.game.coords`). Black moves first.

    >>> p = Position.from_moves(["h8", "h9"], GameConfig(width=15))
    >>> p.to_move == WHITE, p.winner
    (False, -1)
    """

    __slots__ = ("config", "board", "moves", "to_move", "winner", "win_reason")

    def __init__(self, config: GameConfig | None = None):
        if config is not None and not isinstance(config, GameConfig):
            raise TypeError(f"config must be a GameConfig, got {type(config).__name__}")
        self.config = config or GameConfig()
        self.board = np.zeros(self.config.area, dtype=np.int8)
        self.moves: list[int] = []
        self.to_move = BLACK
        self.winner = NO_RESULT
        self.win_reason = ""

    # -- building -------------------------------------------------------------------------------
    @classmethod
    def from_moves(cls, moves: Iterable, config: GameConfig | None = None) -> "Position":
        pos = cls(config)
        for m in moves:
            pos.play(m)
        return pos

    @classmethod
    def from_picture(cls, text: str, config: GameConfig | None = None) -> "Position":
        """A position from an ASCII board (see :func:`parse_board`). The stones are taken as
        played black, white, black, ... in reading order, so black has as many stones as white
        or one more; the side to move follows from the counts."""
        board, width, height = _parse_picture(text)
        config = config or GameConfig(width=width, height=height)
        if (width, height) != (config.width, config.height):
            raise ValueError(
                f"picture is {width}x{height}, config says {config.width}x{config.height}"
            )
        blacks = list(np.flatnonzero(board == BLACK))
        whites = list(np.flatnonzero(board == WHITE))
        if not 0 <= len(blacks) - len(whites) <= 1:
            raise ValueError(
                f"picture has {len(blacks)} black and {len(whites)} white stones: black must "
                "have as many as white or one more"
            )
        order = [m for pair in zip(blacks, whites) for m in pair] + blacks[len(whites):]
        pos = cls(config)
        for m in order:  # placed directly: a fixture may hold a finished line
            pos.board[m] = BLACK if len(pos.moves) % 2 == 0 else WHITE
            pos.moves.append(int(m))
        pos.to_move = BLACK if len(pos.moves) % 2 == 0 else WHITE
        return pos

    def copy(self) -> "Position":
        other = Position.__new__(Position)
        other.config = self.config
        other.board = self.board.copy()
        other.moves = list(self.moves)
        other.to_move = self.to_move
        other.winner = self.winner
        other.win_reason = self.win_reason
        return other

    # -- queries --------------------------------------------------------------------------------
    @property
    def width(self) -> int:
        return self.config.width

    @property
    def height(self) -> int:
        return self.config.height

    @property
    def last_move(self) -> int:
        return self.moves[-1] if self.moves else NO_MOVE

    @property
    def is_over(self) -> bool:
        return self.winner != NO_RESULT

    def index(self, move) -> int:
        return coords.parse_move(move, self.width, self.height)

    def name(self, index: int) -> str:
        return coords.to_name(index, self.width, self.height)

    def legal_mask(self) -> np.ndarray:
        """Boolean mask over the points: where the side to move may play (nothing once over)."""
        out = np.zeros(self.config.area, dtype=np.bool_)
        if not self.is_over:
            kernels.legal_mask_into(
                self.board, self.height, self.width, self.config.rule_id, self.to_move, out
            )
        return out

    def legal_moves(self) -> np.ndarray:
        return np.flatnonzero(self.legal_mask())

    def is_forbidden(self, move) -> bool:
        """Renju: whether black may not play the empty point ``move`` (always False otherwise)."""
        idx = self.index(move)
        if self.config.rule_id != RENJU or self.board[idx] != EMPTY:
            return False
        return bool(kernels.is_forbidden(self.board, self.height, self.width, idx))

    def planes(self, vcf_budget: int = 0, rule_planes: bool = False,
               threat_planes: bool = False) -> np.ndarray:
        """The network's input planes for the side to move, shape (NUM_PLANES, height, width);
        with ``vcf_budget`` > 0, VCF_PLANES more for a network trained with VCF inputs (see
        :func:`alphagomoku.game.vcf_planes.write_vcf_planes`); with ``threat_planes``,
        THREAT_PLANES more after those (:mod:`alphagomoku.game.threat_planes`); with
        ``rule_planes``, RULE_PLANES more at the end (:mod:`alphagomoku.game.rule_planes`)."""
        extra = VCF_PLANES if vcf_budget > 0 else 0
        threats = THREAT_PLANES if threat_planes else 0
        rules = RULE_PLANES if rule_planes else 0
        out = np.zeros((NUM_PLANES + extra + threats + rules, self.height, self.width),
                       dtype=np.float32)
        if rules:
            fill_rule_planes(out, self.config.rule_id)
        kernels.encode_planes_into(
            self.board, self.height, self.width, self.config.rule_id, self.to_move,
            self.last_move, out,
        )
        if extra:
            c = self.config
            vcf_planes.write_vcf_planes(self.board, c.height, c.width, c.n_in_row, c.rule_id,
                                        self.to_move, self.last_move, int(vcf_budget),
                                        vcf_state_for(c), out)
        if threats:
            c = self.config
            write_threat_planes(self.board, c.height, c.width, c.n_in_row, c.rule_id,
                                self.to_move, out, NUM_PLANES + extra)
        return out

    def stone(self, move) -> int:
        return int(self.board[self.index(move)])

    # -- moves ----------------------------------------------------------------------------------
    def check_move(self, move) -> int:
        """The flat index of ``move`` if it is legal now, else IllegalMoveError saying why."""
        try:
            idx = self.index(move)
        except coords.CoordinateError as e:
            raise IllegalMoveError(str(e)) from None
        if self.is_over:
            raise IllegalMoveError(
                f"the game is over ({RESULT_NAME[self.winner]} {self.win_reason}); "
                f"no move at {self.name(idx)} can be played"
            )
        if self.board[idx] != EMPTY:
            raise IllegalMoveError(
                f"{self.name(idx)} is occupied by {_COLOR_NAME[int(self.board[idx])]}"
            )
        if self.to_move == BLACK and self.is_forbidden(idx):
            raise IllegalMoveError(f"{self.name(idx)} is forbidden for black under renju")
        return idx

    def play(self, move) -> "Position":
        idx = self.check_move(move)
        color = self.to_move
        self.board[idx] = color
        self.moves.append(idx)
        c = self.config
        if kernels.wins_at(self.board, c.height, c.width, c.n_in_row, c.rule_id, idx, color):
            self.winner = color
            self.win_reason = f"with {c.n_in_row} in a row"
        elif len(self.moves) == c.area:
            self.winner = DRAW
            self.win_reason = "full board"
        elif color == WHITE and c.rule_id == RENJU and not kernels.has_legal_move(
            self.board, c.height, c.width, c.rule_id, BLACK
        ):
            # Every empty point forbidden for black: no one can win any more.
            self.winner = DRAW
            self.win_reason = "black has no legal move"
        self.to_move = WHITE if color == BLACK else BLACK
        return self

    def undo(self) -> int:
        """Take back the last move and return its index."""
        if not self.moves:
            raise IllegalMoveError("there is no move to undo")
        idx = self.moves.pop()
        self.board[idx] = EMPTY
        self.to_move = WHITE if self.to_move == BLACK else BLACK
        self.winner = NO_RESULT
        self.win_reason = ""
        return idx

    # -- display --------------------------------------------------------------------------------
    def __str__(self) -> str:
        return render(self.board, self.width, self.height, self.last_move)

    def __repr__(self) -> str:
        moves = " ".join(self.name(m) for m in self.moves)
        return f"Position({self.config}, moves=[{moves}])"


def render(board: np.ndarray, width: int, height: int, last_move: int = NO_MOVE) -> str:
    """ASCII board: ``X`` black, ``O`` white, ``.`` empty, the last move in parentheses."""
    lines = ["    " + " ".join("abcdefghijklmnopqrstuvwxyz"[:width])]
    lx = last_move % width if last_move >= 0 else -2
    ly = last_move // width if last_move >= 0 else -2
    for y in range(height):
        text = ""
        for x in range(width):
            s = int(board[y * width + x])
            sep = "(" if (y == ly and x == lx) else ")" if (y == ly and x == lx + 1) else " "
            text += sep + ("X" if s == BLACK else "O" if s == WHITE else ".")
        if y == ly and lx == width - 1:
            text += ")"
        lines.append(f"{height - y:>3}{text}")
    return "\n".join(lines)


def parse_board(text: str, config: GameConfig | None = None) -> np.ndarray:
    """A flat board from an ASCII picture, one row per line: ``X``/``x`` black, ``O``/``o``
    white, ``.`` or ``+`` empty. The labels :func:`render` writes (column letters, row numbers,
    the parentheses round the last move) are skipped, so a rendered board parses back. For tests
    and fixtures."""
    board, width, height = _parse_picture(text)
    if config is not None and (config.width, config.height) != (width, height):
        raise ValueError(f"picture is {width}x{height}, config says {config.width}x{config.height}")
    return board


_POINTS = {"X": BLACK, "x": BLACK, "O": WHITE, "o": WHITE, ".": EMPTY, "+": EMPTY}
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _parse_picture(text: str) -> tuple[np.ndarray, int, int]:
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        body = line.strip()
        labels = body.split()
        if not body or labels == list(_LETTERS[: len(labels)]):
            continue  # blank, or the column letters of render()
        body = body.strip("0123456789")  # row numbers, either side
        cells = []
        for c in body:
            if c in _POINTS:
                cells.append(_POINTS[c])
            elif c not in " ()":
                raise ValueError(
                    f"line {number} of the board picture has {c!r}: points are X, O, . or +"
                )
        if not cells:
            continue
        if rows and len(cells) != len(rows[0]):
            raise ValueError(
                f"line {number} of the board picture has {len(cells)} points, the first row "
                f"{len(rows[0])}: every row must have the same number of points"
            )
        rows.append(cells)
    if not rows:
        raise ValueError("the board picture has no points")
    return np.array(rows, dtype=np.int8).reshape(-1), len(rows[0]), len(rows)
