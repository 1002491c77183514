"""The solvers' memory, kept per board size, n in a row and rule.

A VCF or VCT search allocates nothing: its transposition table and stacks live in a state made
once per kind of board and reused by every later call, so repeated calls are cheap and a proved
failure found by one call serves the next. The states are not shared between threads.

This module sits below :class:`~alphagomoku.game.position.Position` (whose input planes run the
VCF solver) and below the solvers' Position API (:mod:`alphagomoku.game.vcf_search`,
:mod:`alphagomoku.game.vct_search`).
"""

from __future__ import annotations

from alphagomoku.game import vcf, vct
from alphagomoku.game.config import GameConfig

_VCF_STATES: dict[tuple, vcf.VcfState] = {}
_VCT_STATES: dict[tuple, vct.VctState] = {}


def _kept(states: dict, allocate, config: GameConfig):
    key = (config.height, config.width, config.n_in_row, config.rule_id)
    state = states.get(key)
    if state is None:
        state = states[key] = allocate(config.area)
    return state


def vcf_state_for(config: GameConfig) -> vcf.VcfState:
    """The VCF solver's memory kept for this board size, n in a row and rule."""
    return _kept(_VCF_STATES, vcf.allocate_state, config)


def vct_state_for(config: GameConfig) -> vct.VctState:
    """The VCT's memory (its VCF state included) kept for this board size, n and rule."""
    return _kept(_VCT_STATES, vct.allocate_state, config)
