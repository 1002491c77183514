"""find_vcf: the VCF solver of :mod:`alphagomoku.game.vcf` for a :class:`Position`.

>>> pos = Position.from_moves(["h8", "a1", "h9", "a2", "h10", "b1"], GameConfig(width=15))
>>> find_vcf(pos)          # h7 makes an open four: h6 blocks one end, h11 is five
['h7', 'h6', 'h11']

The solver's memory (a transposition table of 2**16 proved failures and its stacks) is kept per
board size and rule in this module, so repeated calls are cheap; each thread keeps its own (the
solver kernels release the GIL, so threads sharing one table would corrupt each other's search).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from alphagomoku.game import vcf, vct
from alphagomoku.game.config import GameConfig
from alphagomoku.game.constants import BLACK, NO_MOVE, WHITE
from alphagomoku.game.coords import to_name
from alphagomoku.game.position import Position

#: Attacker moves the solver tries before answering "unknown" when no budget is given.
DEFAULT_BUDGET = 100_000

# Per thread: a web server searches for several connections at once in one process.
_THREAD_STATES = threading.local()


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


def _kept(kind: str, allocate, config: GameConfig):
    states = getattr(_THREAD_STATES, kind, None)
    if states is None:
        states = {}
        setattr(_THREAD_STATES, kind, states)
    key = (config.height, config.width, config.n_in_row, config.rule_id)
    state = states.get(key)
    if state is None:
        state = states[key] = allocate(config.area)
    return state


def state_for(config: GameConfig) -> vcf.VcfState:
    """The solver memory kept for this board size, n in a row and rule."""
    return _kept("vcf", vcf.allocate_state, config)


def _check_budget(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _check_count(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")


def _check_call(position, budget, attacker) -> tuple[int, int]:
    """The checks both solvers' calls share: (the budget as an int, the attacker, by default
    the side to move)."""
    if not isinstance(position, Position):
        raise TypeError(f"position must be a Position, got {type(position).__name__}")
    budget = _check_budget("budget", budget)
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
    budget, attacker = _check_call(position, budget, attacker)
    _check_count("max_len", max_len)
    cfg = position.config
    if position.is_over:
        return VcfResult("none", attacker, (), (), 0)
    st = state_for(cfg)
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


#: VCT defaults: free threats along a line, and the nodes of each VCF call inside the search.
VCT_DEPTH = 3
VCT_VCF_BUDGET = 2_000




@dataclass(frozen=True)
class VctResult:
    """What the VCT search (:mod:`alphagomoku.game.vct`) found for ``attacker``: "win" with its
    first move, "none" (no VCT within ``depth`` threats, by the search's rules) or "unknown"
    (a budget ran out)."""

    status: str
    attacker: int
    first_move: int
    name: str | None
    nodes: int
    depth: int

    @property
    def found(self) -> bool:
        return self.status == "win"

    def describe(self) -> str:
        """``win by threats from h8``, ``no vct in 3 threats`` or ``unknown after N nodes``."""
        if self.status == "win":
            return f"win by threats from {self.name}"
        if self.status == "none":
            return f"no vct in {self.depth} threats"
        return f"unknown after {self.nodes} nodes"


def vct_state_for(config: GameConfig) -> vct.VctState:
    """The VCT's memory (its VCF state included) kept for this board size, n and rule."""
    return _kept("vct", vct.allocate_state, config)


def solve_vct(position: Position, budget: int = DEFAULT_BUDGET, *, depth: int = VCT_DEPTH,
              attacker: int | None = None, vcf_budget: int = VCT_VCF_BUDGET) -> VctResult:
    """Search ``position`` for a victory by continuous threats (fours and threes) of
    ``attacker`` (default: the side to move), with at most ``depth`` free threats in a line.
    ``budget`` bounds the solver nodes of the whole search, ``vcf_budget`` each VCF inside it.
    A VCF is a VCT too, so a position with one answers "win"."""
    budget, attacker = _check_call(position, budget, attacker)
    vcf_budget = _check_budget("vcf_budget", vcf_budget)
    _check_count("depth", depth)
    cfg = position.config
    if position.is_over:
        return VctResult("none", attacker, NO_MOVE, None, 0, depth)
    status, move, nodes = vct.solve_vct_with(position.board.copy(), cfg.height, cfg.width,
                                             cfg.n_in_row, cfg.rule_id, attacker,
                                             position.last_move, depth, budget, vcf_budget,
                                             vct_state_for(cfg))
    if status == vct.WIN:
        return VctResult("win", attacker, int(move), to_name(int(move), cfg.width, cfg.height),
                         int(nodes), depth)
    return VctResult("none" if status == vct.NONE else "unknown", attacker, NO_MOVE, None,
                     int(nodes), depth)
