"""find_vcf: the VCF solver of :mod:`alphagomoku.game.vcf` for a :class:`Position`.

>>> pos = Position.from_moves(["h8", "a1", "h9", "a2", "h10", "b1"], GameConfig(width=15))
>>> find_vcf(pos)          # h7 makes an open four: h6 blocks one end, h11 is five
['h7', 'h6', 'h11']

The solver's memory (a transposition table of 2**16 proved failures and its stacks) is kept per
board size and rule (:mod:`alphagomoku.game.solver_state`), so repeated calls are cheap; it is
not shared between threads. The VCT's API is :mod:`alphagomoku.game.vct_search`.
"""

from __future__ import annotations

from dataclasses import dataclass

from alphagomoku.checks import non_negative_int, positive_int
from alphagomoku.game import vcf
from alphagomoku.game.constants import BLACK, NO_MOVE, WHITE
from alphagomoku.game.coords import to_name
from alphagomoku.game.position import Position
from alphagomoku.game.solver_state import vcf_state_for

#: Attacker moves the solver tries before answering "unknown" when no budget is given.
DEFAULT_BUDGET = 100_000


@dataclass(frozen=True)
class VcfResult:
    """What the solver proved for ``attacker`` (the side it searched for).

    ``status``: "win" (``moves`` is the line), "none" (proved: no VCF, within ``max_len`` when
    one was given) or "unknown" (the budget ran out). ``moves`` alternates the attacker's and the
    defender's moves, flat indices, and ends with the attacker's five; NO_MOVE (-1) stands for a
    block the defender cannot play (a forbidden point for black under renju)."""

    status: str
    attacker: int
    moves: tuple[int, ...]
    names: tuple[str, ...]
    nodes: int

    @property
    def found(self) -> bool:
        return self.status == "win"

    @property
    def length(self) -> int:
        """Attacker moves of the line, the five included (0 when there is no line)."""
        return (len(self.moves) + 1) // 2

    @property
    def first_move(self) -> int:
        return self.moves[0] if self.moves else NO_MOVE

    def describe(self) -> str:
        """``win in 3 (h11 h7 h12)``, ``no vcf``, or ``unknown after N nodes``."""
        if self.status == "win":
            return f"win in {self.length} ({' '.join(self.names)})"
        if self.status == "none":
            return "no vcf"
        return f"unknown after {self.nodes} nodes"


def check_call(position, budget, attacker) -> tuple[int, int]:
    """The checks both solvers' calls share: (the budget as an int, the attacker, by default
    the side to move)."""
    if not isinstance(position, Position):
        raise TypeError(f"position must be a Position, got {type(position).__name__}")
    budget = positive_int("budget", budget)
    if attacker is None:
        attacker = position.to_move
    if attacker not in (BLACK, WHITE):
        raise ValueError(f"attacker must be BLACK (1) or WHITE (2), got {attacker!r}")
    return budget, attacker


def solve_vcf(position: Position, budget: int = DEFAULT_BUDGET, *, attacker: int | None = None,
              max_len: int = 0) -> VcfResult:
    """Search ``position`` for a VCF of ``attacker`` (default: the side to move).

    With ``attacker`` the side not to move, the answer is what the opponent could force if it
    were to move now: the side to move must stop it (or win first). ``budget`` bounds the
    attacker moves tried; ``max_len`` (0: no bound) the attacker moves of the line."""
    budget, attacker = check_call(position, budget, attacker)
    non_negative_int("max_len", max_len)
    cfg = position.config
    if position.is_over:
        return VcfResult("none", attacker, (), (), 0)
    st = vcf_state_for(cfg)
    board = position.board.copy()
    status, length, nodes = vcf.solve_with(board, cfg.height, cfg.width, cfg.n_in_row,
                                           cfg.rule_id, attacker, position.last_move, budget,
                                           max_len, st)
    if status == vcf.WIN:
        moves = tuple(int(m) for m in st.line[:length])
        names = tuple("-" if m == NO_MOVE else to_name(m, cfg.width, cfg.height) for m in moves)
        return VcfResult("win", attacker, moves, names, int(nodes))
    return VcfResult("none" if status == vcf.NONE else "unknown", attacker, (), (), int(nodes))


def find_vcf(position: Position, budget: int = DEFAULT_BUDGET) -> list[str] | None:
    """The side to move's winning line by continuous fours in ``h8`` notation (its moves and
    the forced replies alternating, ending with its five; ``-`` where the defender has no legal
    block), or None when there is none or the budget ran out (:func:`solve_vcf` tells which)."""
    result = solve_vcf(position, budget)
    return list(result.names) if result.found else None
