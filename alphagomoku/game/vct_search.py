"""solve_vct: the VCT search of :mod:`alphagomoku.game.vct` for a :class:`Position`.

A victory by continuous threats: fours and threes the defender must answer, ending in a five.
The search's memory is kept per board size and rule (:mod:`alphagomoku.game.solver_state`).
"""

from __future__ import annotations

from dataclasses import dataclass

from alphagomoku.checks import non_negative_int, positive_int
from alphagomoku.game import vct
from alphagomoku.game.constants import NO_MOVE
from alphagomoku.game.coords import to_name
from alphagomoku.game.position import Position
from alphagomoku.game.solver_state import vct_state_for
from alphagomoku.game.vcf_search import DEFAULT_BUDGET, check_call

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


def solve_vct(position: Position, budget: int = DEFAULT_BUDGET, *, depth: int = VCT_DEPTH,
              attacker: int | None = None, vcf_budget: int = VCT_VCF_BUDGET) -> VctResult:
    """Search ``position`` for a victory by continuous threats (fours and threes) of
    ``attacker`` (default: the side to move), with at most ``depth`` free threats in a line.
    ``budget`` bounds the solver nodes of the whole search, ``vcf_budget`` each VCF inside it.
    A VCF is a VCT too, so a position with one answers "win"."""
    budget, attacker = check_call(position, budget, attacker)
    vcf_budget = positive_int("vcf_budget", vcf_budget)
    non_negative_int("depth", depth)
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
