"""What a self-play game sends back: compact numpy arrays, checked before they become data."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from alphagomoku.game.config import GameConfig
from alphagomoku.game.constants import BLACK, DRAW, WHITE
from alphagomoku.game.position import IllegalMoveError, Position


#: Solver nodes the parent spends confirming a game ended by a VCF (far more than self-play's).
VCF_CHECK_BUDGET = 20_000


class TrainingGameError(ValueError):
    """A game record that cannot be training data (empty, inconsistent, illegal)."""


@dataclass
class TrainingGame:
    """One self-play game. The first ``opening`` moves are the random opening, played before any
    search; the S = T - opening searched plies after it carry the targets."""

    moves: np.ndarray        # int16 (T,): flat point of each move, black first
    policies: np.ndarray     # float16 (S, H*W): the search's policy target at each searched ply
    root_values: np.ndarray  # float16 (S,): search value at each root, for the side to move
    result: int              # BLACK, WHITE or DRAW
    resigned: bool = False   # the loser resigned before the board decided it
    would_resign: int = 0    # playthrough games: colour that would have resigned (0 = none)
    opening: int = 0         # leading moves that are the opening (no targets)
    move_values: np.ndarray | None = None  # float16 (S,): search value of the move played
    full_search: np.ndarray | None = None  # bool (S,): full search (policy target) or fast one
    vcf_ended: bool = False  # ended when the side to move had a proved VCF (it is the winner)
    stats: dict = field(default_factory=dict)

    def __post_init__(self):
        s = len(self.root_values)
        if self.move_values is None:
            self.move_values = np.asarray(self.root_values, dtype=np.float16).copy()
        if self.full_search is None:
            self.full_search = np.ones(s, dtype=np.bool_)

    @property
    def length(self) -> int:
        return int(len(self.moves))

    @property
    def searched(self) -> int:
        """Plies played after a search (those that become training positions)."""
        return self.length - self.opening

    @property
    def false_resignation(self) -> bool:
        """A playthrough game in which the side that would have resigned did not lose."""
        return self.would_resign != 0 and self.result != (WHITE if self.would_resign == BLACK else BLACK)

    def value_targets(self) -> np.ndarray:
        """float32 (S,): the result from the point of view of the side to move at each searched
        ply (z: 1 won, -1 lost, 0 drawn)."""
        plies = np.arange(self.opening, self.length)
        if self.result == DRAW:
            return np.zeros(len(plies), dtype=np.float32)
        to_move = np.where(plies % 2 == 0, BLACK, WHITE)
        return np.where(to_move == self.result, 1.0, -1.0).astype(np.float32)

    def validate(self, game: GameConfig) -> None:
        """Raise TrainingGameError unless the record replays legally to its stated result."""
        t = self.length
        if not 0 <= self.opening < t:
            raise TrainingGameError(f"opening of {self.opening} moves in a game of {t} moves: no "
                                 "searched move (or an empty game)")
        s = t - self.opening
        if self.policies.shape != (s, game.area):
            raise TrainingGameError(f"policies have shape {self.policies.shape}, expected {(s, game.area)}")
        for name in ("root_values", "move_values", "full_search"):
            shape = np.shape(getattr(self, name))
            if shape != (s,):
                raise TrainingGameError(f"{name} have shape {shape}, expected {(s,)}")
        if self.result not in (BLACK, WHITE, DRAW):
            raise TrainingGameError(f"result {self.result!r} is not black, white or draw")
        sums = self.policies.astype(np.float32).sum(axis=1)
        if not np.all(np.abs(sums - 1.0) < 1e-2):
            raise TrainingGameError("a visit distribution does not sum to one")
        pos = Position(game)
        try:
            for m in self.moves:
                pos.play(int(m))
        except IllegalMoveError as e:
            raise TrainingGameError(f"record does not replay: {e}") from None
        if self.vcf_ended:
            from alphagomoku.game.vcf_search import solve_vcf

            # Checked again here: a claimed VCF that the solver cannot confirm is not data.
            if pos.is_over or self.result != pos.to_move \
                    or not solve_vcf(pos, VCF_CHECK_BUDGET).found:
                raise TrainingGameError("record says the side to move had a VCF, the solver does "
                                     "not confirm it")
        elif self.resigned:
            if pos.is_over:
                raise TrainingGameError("record says resigned but the board had already decided the game")
        elif pos.winner != self.result:
            raise TrainingGameError(f"record says result {self.result} but the moves give {pos.winner}")
