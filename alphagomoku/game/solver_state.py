"""The solvers' memory, kept per thread and per board size, n in a row and rule.

A VCF or VCT search allocates nothing: its transposition table and stacks live in a state made
once per kind of board and reused by every later call, so repeated calls are cheap and a proved
failure found by one call serves the next. Each thread keeps its own states: the solver kernels
release the GIL, and a web server searches for several connections at once in one process, so
threads sharing one table would corrupt each other's search.

This module sits below :class:`~alphagomoku.game.position.Position` (whose input planes run the
VCF solver) and below the solvers' Position API (:mod:`alphagomoku.game.vcf_search`,
:mod:`alphagomoku.game.vct_search`).
"""

from __future__ import annotations

import threading

from alphagomoku.game import vcf, vct
from alphagomoku.game.config import GameConfig

_THREAD_STATES = threading.local()


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


def vcf_state_for(config: GameConfig) -> vcf.VcfState:
    """The VCF solver's memory kept for this thread, board size, n in a row and rule."""
    return _kept("vcf", vcf.allocate_state, config)


def vct_state_for(config: GameConfig) -> vct.VctState:
    """The VCT's memory (its VCF state included) kept for this thread, board size, n and rule."""
    return _kept("vct", vct.allocate_state, config)
