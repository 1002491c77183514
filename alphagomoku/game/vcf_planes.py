"""The network's two VCF input planes: does the side to move have a VCF, does its opponent.

Each is :mod:`alphagomoku.game.vcf`'s answer within a node budget, written as a plane of ones
or zeros. Search leaves ask for both at every new node, so the two searches share what they
can: one scan for fives, one position key (the other side's differs by the attacker's key)
and one set of line masks, which a search hands back as it found them.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from alphagomoku.game import line_masks, vcf
from alphagomoku.game.constants import NO_MOVE, NUM_PLANES
from alphagomoku.numba_config import JIT


@njit(**JIT)
def _fill_vcf_planes(own, opp, out):
    out[NUM_PLANES, :, :] = 1.0 if own else 0.0
    out[NUM_PLANES + 1, :, :] = 1.0 if opp else 0.0


@njit(**JIT)
def _plane_search(board, h, w, n, rule, attacker, last_move, forced, budget, key, st):
    """The VCF planes' search of ``attacker``, unbounded in length, on ``st.masks`` already
    built for ``board`` (and left so); ``key`` the position's with that attacker."""
    area = h * w
    if vcf._proved_none(key, area, st.table):
        return vcf.NONE
    return vcf._search(board, h, w, n, rule, attacker, last_move, forced, budget, area, key,
                       st.zobrist, st.table, st.cand, st.keys, st.frames, st.marks,
                       st.meta, st.line, st.points, st.masks)[0]


@njit(**JIT)
def write_vcf_planes(board, h, w, n, rule, color, last_move, budget, st, out):
    """Fill the VCF input planes ``out[NUM_PLANES]`` (``color``, to move, has a VCF proved within
    ``budget`` nodes) and ``out[NUM_PLANES + 1]`` (its opponent has one) with ones or zeros: the
    answers of :func:`alphagomoku.game.vcf.solve` for both sides.

    An unknown answer is a zero, like a proved "no": the network learns what the solver at this
    budget can prove, the same in self-play, in training and in play. The opponent's line is
    ordered from ``last_move``, which the opponent played.

    Returns 1 when the opponent's answer is a proved "no VCF" (not merely unknown), else 0: a
    search keeps it for the node's children (:func:`write_vcf_planes_known`'s ``own_none``)."""
    other = 3 - color
    line_masks.build_masks(board, h, w, st.masks)
    n_own = vcf._fives(board, st.masks, h, w, n, rule, color, st.points)
    own_point = np.int64(st.points[0])
    n_opp = vcf._fives(board, st.masks, h, w, n, rule, other, st.points)
    opp_point = np.int64(st.points[0])
    key = vcf.position_key(board, h * w, color, st.zobrist)
    # As vcf.solve() has it: a five to play wins, two defender fives refute, one must be blocked.
    own = n_own > 0
    if not own and n_opp < 2:
        forced = opp_point if n_opp == 1 else np.int64(NO_MOVE)
        own = _plane_search(board, h, w, n, rule, color, last_move, forced, budget, key,
                            st) == vcf.WIN
    opp = n_opp > 0
    opp_none = 0
    if not opp and n_own < 2:
        forced = own_point if n_own == 1 else np.int64(NO_MOVE)
        result = _plane_search(board, h, w, n, rule, other, last_move, forced, budget,
                               key ^ st.zobrist[0, 0], st)
        opp = result == vcf.WIN
        opp_none = 1 if result == vcf.NONE else 0
    _fill_vcf_planes(own, opp, out)
    return opp_none


@njit(**JIT)
def write_vcf_planes_known(board, h, w, n, rule, color, last_move, forced, budget, st, out,
                           own_none):
    """:func:`write_vcf_planes` for a search leaf, whose scans already showed that ``color`` has
    no five to play and that its opponent has at most one, ``forced`` (NO_MOVE if none).

    ``own_none`` (1 or 0): the caller knows ``color`` has no VCF, so its plane is zero without a
    solver call: at the parent node, before the opponent's last stone, ``color`` was proved to
    have none, and under freestyle rules a defender's extra stone never makes a VCF (its fours
    and forced blocks were there before; the defender has only more fives to refute them
    with). Elsewhere the caller passes 0: under standard rules the extra stone can turn a
    defender's five into an overline, which no longer refutes the attack (the tests found
    one), and renju's forbidden points move with the stones. Returns
    :func:`write_vcf_planes`'s proved-none flag for the opponent."""
    area = h * w
    key = vcf.position_key(board, area, color, st.zobrist)
    built = False  # the masks are built once, for whichever side's search needs them first
    own = False
    if own_none == 0 and not vcf._proved_none(key, area, st.table):
        line_masks.build_masks(board, h, w, st.masks)
        built = True
        own = _plane_search(board, h, w, n, rule, color, last_move, forced, budget, key,
                            st) == vcf.WIN
    opp = forced != NO_MOVE
    opp_none = 0
    if not opp:
        key ^= st.zobrist[0, 0]
        if not built and not vcf._proved_none(key, area, st.table):
            line_masks.build_masks(board, h, w, st.masks)
        result = _plane_search(board, h, w, n, rule, 3 - color, last_move, np.int64(NO_MOVE),
                               budget, key, st)
        opp = result == vcf.WIN
        opp_none = 1 if result == vcf.NONE else 0
    _fill_vcf_planes(own, opp, out)
    return opp_none
