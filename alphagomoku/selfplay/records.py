"""What a self-play game sends back: compact numpy arrays, checked before they become data."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from alphagomoku.game.config import GameConfig
from alphagomoku.game.constants import BLACK, DRAW, WHITE
from alphagomoku.game.position import IllegalMoveError, Position


class BadRecordError(ValueError):
    """A game record that cannot be training data (empty, inconsistent, illegal)."""


@dataclass
class GameRecord:
    moves: np.ndarray        # int16 (T,): flat point of each move, black first
    policies: np.ndarray     # float16 (T, H*W): visit distribution of the search before each move
    root_values: np.ndarray  # float16 (T,): search value at each root, for the side to move
    result: int              # BLACK, WHITE or DRAW
    resigned: bool = False   # the loser resigned before the board decided it
    would_resign: int = 0    # playthrough games: colour that would have resigned (0 = none)
    stats: dict = field(default_factory=dict)

    @property
    def length(self) -> int:
        return int(len(self.moves))

    @property
    def false_resignation(self) -> bool:
        """A playthrough game in which the side that would have resigned did not lose."""
        return self.would_resign != 0 and self.result != (WHITE if self.would_resign == BLACK else BLACK)

    def value_targets(self) -> np.ndarray:
        """float32 (T,): the result from the point of view of the side to move at each ply."""
        to_move = np.where(np.arange(self.length) % 2 == 0, BLACK, WHITE)
        if self.result == DRAW:
            return np.zeros(self.length, dtype=np.float32)
        return np.where(to_move == self.result, 1.0, -1.0).astype(np.float32)

    def validate(self, game: GameConfig) -> None:
        """Raise BadRecordError unless the record replays legally to its stated result."""
        t = self.length
        if t == 0:
            raise BadRecordError("empty game record (no moves)")
        if self.policies.shape != (t, game.area):
            raise BadRecordError(f"policies have shape {self.policies.shape}, expected {(t, game.area)}")
        if self.root_values.shape != (t,):
            raise BadRecordError(f"root values have shape {self.root_values.shape}, expected {(t,)}")
        if self.result not in (BLACK, WHITE, DRAW):
            raise BadRecordError(f"result {self.result!r} is not black, white or draw")
        sums = self.policies.astype(np.float32).sum(axis=1)
        if not np.all(np.abs(sums - 1.0) < 1e-2):
            raise BadRecordError("a visit distribution does not sum to one")
        pos = Position(game)
        try:
            for m in self.moves:
                pos.play(int(m))
        except IllegalMoveError as e:
            raise BadRecordError(f"record does not replay: {e}") from None
        if self.resigned:
            if pos.is_over:
                raise BadRecordError("record says resigned but the board had already decided the game")
        elif pos.winner != self.result:
            raise BadRecordError(f"record says result {self.result} but the moves give {pos.winner}")
