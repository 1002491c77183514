"""The rules of one game: board shape, line length, rule set."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from alphagomoku.game.constants import MAX_SIZE, MIN_SIZE, RULE_NAMES


@dataclass(frozen=True)
class GameConfig:
    """``width`` x ``height`` board (``height`` defaults to ``width``), ``n_in_row`` to win."""

    width: int = 15
    height: int = 0
    n_in_row: int = 5
    rule: str = "freestyle"

    def __post_init__(self):
        if self.height == 0:
            object.__setattr__(self, "height", self.width)
        for name in ("width", "height"):
            v = getattr(self, name)
            if not isinstance(v, int) or not MIN_SIZE <= v <= MAX_SIZE:
                raise ValueError(f"board {name} must be an integer from {MIN_SIZE} to {MAX_SIZE}, got {v!r}")
        if self.rule not in RULE_NAMES:
            raise ValueError(f"unknown rule {self.rule!r}: choose one of {', '.join(RULE_NAMES)}")
        if not isinstance(self.n_in_row, int) or self.n_in_row < 3:
            raise ValueError(f"n_in_row must be an integer of at least 3, got {self.n_in_row!r}")
        if self.n_in_row > max(self.width, self.height):
            raise ValueError(
                f"n_in_row={self.n_in_row} cannot fit on a {self.width}x{self.height} board"
            )
        if self.rule == "renju" and self.n_in_row != 5:
            raise ValueError("renju is defined for five in a row only: use n_in_row=5")

    @property
    def rule_id(self) -> int:
        return RULE_NAMES[self.rule]

    @property
    def area(self) -> int:
        return self.width * self.height

    @property
    def square(self) -> bool:
        return self.width == self.height

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def square_board(cls, size: int = 15, n_in_row: int = 5, rule: str = "freestyle") -> "GameConfig":
        return cls(width=size, height=size, n_in_row=n_in_row, rule=rule)
