"""Victory by continuous threats (VCT): the VCF solver's search, with threes as threats too.

A threat is an attacker move after which the attacker would have a VCF if it moved again: a
four, a three that an open four would follow, or any move that sets up a longer VCF. The
attacker wins (an OR node) when it has a VCF now, or when one of its threats leaves every
defence the solver considers refuted by a VCT with one threat fewer (an AND node).

The defences tried after a threat:

- the points of the attacker's VCF line (its moves, the forced blocks and the five);
- every move that makes a defender four, now or once the line's forced blocks stand beside it
  (a quiet stone there turns a later block into a counter-four);
- under renju with black defending, the points near a block black may not play (a black stone
  there can make that point legal).

A defender stone anywhere else leaves each four of the line a four and each block forced, so the
line still wins. That is the reasoning of threat-space search (Allis, van den Herik and
Huntjens, 1994) with the counter-four cases added; ``tests/test_vct.py`` plays every defender
reply against the wins it finds on 9x9 boards. A threat fails outright when the defender has a
VCF of its own, or when the VCF solver cannot rule one out within its budget.

``depth`` bounds the attacker's free threats along a line (a block it is forced to play does not
count), ``budget`` the VCF nodes of all calls together plus one per node of this search, and
``vcf_budget`` each VCF call. Results: WIN with the first move, NONE when the whole tree within
``depth`` was searched with every VCF call answered, UNKNOWN when a budget cut it short.

The search runs on an explicit stack (Numba's on-disk cache cannot hold recursive functions):
one frame per node, the stone that led to it on the board while the frame is open. Proved
answers of attacker-to-move nodes are kept in a Zobrist-keyed table of their own, between calls
too (threats played in another order reach the same positions); the VCF solver keeps its table
of proved failures.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from alphagomoku.game import kernels as game
from alphagomoku.game import line_masks, vcf
from alphagomoku.game.constants import BLACK, EMPTY, NO_MOVE, RENJU
from alphagomoku.numba_config import JIT

NONE = vcf.NONE
WIN = vcf.WIN
UNKNOWN = vcf.UNKNOWN

_OR = 0    # attacker to move
_AND = 1   # defender to move, after an attacker threat

# frames[level, field] (int64)
_K_KIND = 0
_K_COUNT = 1    # moves listed in kids[level]
_K_NEXT = 2     # next of them to try
_K_DEPTH = 3    # OR: free threats still allowed; AND: what its OR children get
_K_PLACED = 4   # the stone that led here (NO_MOVE at the root)
_K_FORCED = 5   # OR: its only move is the block of a defender four
_K_HASH = 6     # Zobrist key of the position (and of the attacker's colour)
_K_UNSURE = 7   # 1 once an answer below this node was unknown (its NONE is then no proof)
_FIELDS = 8

_EXPAND = 3     # a frame's opening found no answer: try its moves


class VctState(NamedTuple):
    """The VCT's memory for one board size (L levels, A points) and the VCF state it calls."""

    kids: np.ndarray    # int32 (L + 1, A): each level's moves, best first; the last row scratch
    frames: np.ndarray  # int64 (L, _FIELDS)
    masks: np.ndarray   # int64 (2, 4, A): the board line by line (the VCF's own are its scratch)
    tt_key: np.ndarray  # int64 (S,): key of the OR node answered in the slot (0: empty)
    tt_val: np.ndarray  # int32 (S,): d + 1 for a win in at most d threats, -(d + 1) for none in d
    vcf: vcf.VcfState


def allocate_state(area: int, levels: int = 48, tt_bits: int = vcf.TT_BITS,
                   vcf_state: vcf.VcfState | None = None) -> VctState:
    """``vcf_state``: the VCF solver's state to call (shared with a caller that runs the VCF
    on its own too, so both use one table of proved failures); a new one by default."""
    return VctState(kids=np.zeros((levels + 1, area), dtype=np.int32),
                    frames=np.zeros((levels, _FIELDS), dtype=np.int64),
                    masks=np.zeros((2, 4, area), dtype=np.int64),
                    tt_key=np.zeros(1 << tt_bits, dtype=np.int64),
                    tt_val=np.zeros(1 << tt_bits, dtype=np.int32),
                    vcf=vcf_state if vcf_state is not None else vcf.allocate_state(area, tt_bits))


def clear_table(state: VctState) -> None:
    """Forget every answer kept (needed only if the rule or n in a row changes)."""
    state.tt_key[:] = 0
    state.tt_val[:] = 0
    vcf.clear_table(state.vcf)


@njit(**JIT)
def _open_or(board, h, w, n, rule, attacker, last_move, level, budget, kids, frames, masks, st):
    """The attacker to move at ``level``: (WIN, nodes, move) if it has a VCF, else the threats
    to try listed in kids[level] and (_EXPAND, nodes, NO_MOVE), or NONE / UNKNOWN."""
    defender = 3 - attacker
    placed = frames[level, _K_PLACED]
    line_masks.build_masks(board, h, w, masks)
    if vcf._fives(board, masks, h, w, n, rule, attacker, st.points) > 0:
        return WIN, 0, np.int64(st.points[0])
    found = vcf._fives(board, masks, h, w, n, rule, defender, st.points)
    if found == 2:
        return NONE, 0, np.int64(NO_MOVE)
    forced = np.int64(st.points[0]) if found == 1 else np.int64(NO_MOVE)
    ref1 = placed if placed != NO_MOVE else last_move
    r, _, used = vcf.solve_known_with(board, h, w, n, rule, attacker, ref1, forced, budget,
                                      vcf._NO_BOUND, st)
    if r == WIN:
        return WIN, used, np.int64(st.line[0])
    if frames[level, _K_DEPTH] <= 0:
        return r, used, np.int64(NO_MOVE)
    if r == UNKNOWN:
        frames[level, _K_UNSURE] = 1  # so a NONE found below is not kept as a proof
    if forced != NO_MOVE:
        # The block is the only move; it is searched as a threat but costs none of the depth.
        kids[level, 0] = forced
        frames[level, _K_COUNT] = 1
        frames[level, _K_FORCED] = 1
    else:
        ref2 = frames[level - 1, _K_PLACED] if level > 0 else np.int64(NO_MOVE)
        frames[level, _K_COUNT] = vcf._generate(masks, h, w, n, attacker, kids, st.keys,
                                                st.marks, st.meta, level, ref1, ref2, n - 3,
                                                n - 2)
        frames[level, _K_FORCED] = 0
    frames[level, _K_NEXT] = 0
    return _EXPAND, used, np.int64(NO_MOVE)


@njit(**JIT)
def _open_and(board, h, w, n, rule, attacker, level, budget, kids, frames, masks, st):
    """The defender to move at ``level``, after the attacker's stone frames[level, _K_PLACED]:
    NONE / UNKNOWN unless that stone is a threat the defender has no VCF against; then the
    defences to try listed in kids[level] and (_EXPAND, nodes)."""
    defender = 3 - attacker
    threat = frames[level, _K_PLACED]
    r, length, used = vcf.solve_with(board, h, w, n, rule, attacker, threat, budget,
                                     vcf._NO_BOUND, st)
    if r != WIN:
        return r, used
    scratch = kids.shape[0] - 1
    # Quiet defences: a defender stone that makes a four now, or would once the line's forced
    # blocks stand beside it, so that a block becomes a counter-four the attacker must answer.
    for i in range(1, length, 2):
        if st.line[i] != NO_MOVE:
            board[st.line[i]] = defender
    line_masks.build_masks(board, h, w, masks)
    quiet = vcf._generate(masks, h, w, n, defender, kids, st.keys, st.marks, st.meta, scratch,
                          threat, np.int64(NO_MOVE), n - 2, n - 1)
    for i in range(1, length, 2):
        if st.line[i] != NO_MOVE:
            board[st.line[i]] = EMPTY
    st.meta[vcf._M_STAMP] += 1
    stamp = st.meta[vcf._M_STAMP]
    count = 0
    # The line's own points first: they are where a defence is most likely.
    for i in range(length):
        p = np.int64(st.line[i])
        if p != NO_MOVE and board[p] == EMPTY and st.marks[p] != stamp:
            st.marks[p] = stamp
            kids[level, count] = p
            count += 1
    if rule == RENJU and defender == BLACK:
        # White wins where black's block is forbidden; a black stone near that point may make
        # it legal again (a five there is never forbidden), so those points are defences too.
        for i in range(1, length - 1, 2):
            if st.line[i] == NO_MOVE:
                count = _add_near(board, h, w, n, np.int64(st.line[i + 1]), kids, level, count,
                                  st.marks, stamp)
    for i in range(quiet):
        p = np.int64(kids[scratch, i])
        if st.marks[p] != stamp:
            st.marks[p] = stamp
            kids[level, count] = p
            count += 1
    r, _, more = vcf.solve_with(board, h, w, n, rule, defender, threat, budget - used,
                                vcf._NO_BOUND, st)
    used += more
    if r != NONE:
        return UNKNOWN if r == UNKNOWN else NONE, used  # its own VCF answers any threat
    frames[level, _K_COUNT] = count
    frames[level, _K_NEXT] = 0
    frames[level, _K_DEPTH] = frames[level - 1, _K_DEPTH] - (1 - frames[level - 1, _K_FORCED])
    return _EXPAND, used


@njit(**JIT)
def _add_near(board, h, w, n, p, kids, level, count, marks, stamp):
    """Append to kids[level] the empty points within n - 1 of ``p`` along its four lines."""
    x0 = p % w
    y0 = p // w
    for d in range(4):
        step, forward, backward = game._steps(h, w, x0, y0, d)
        for sign in range(2):
            q = p
            s = step if sign == 0 else -step
            for _ in range(min(forward if sign == 0 else backward, n - 1)):
                q += s
                if board[q] == EMPTY and marks[q] != stamp:
                    marks[q] = stamp
                    kids[level, count] = q
                    count += 1
    return count


@njit(**JIT)
def _unwind(board, frames, level):
    for q in range(level, 0, -1):
        board[frames[q, _K_PLACED]] = EMPTY


@njit(**JIT)
def _known(tt_key, tt_val, key, depth):
    """What the table says of the OR node ``key`` searched to ``depth``: WIN, NONE or -1."""
    slot = key & (tt_key.shape[0] - 1)
    if tt_key[slot] != key:
        return -1
    v = tt_val[slot]
    if v > 0 and v - 1 <= depth:
        return WIN
    if v < 0 and depth <= -v - 1:
        return NONE
    return -1


@njit(**JIT)
def solve_vct(board, h, w, n, rule, attacker, last_move, depth, budget, vcf_budget, kids, frames,
              masks, tt_key, tt_val, st):
    """Search for a VCT of ``attacker`` (to move) on ``board``, left as it was found. Returns
    (result, first move, nodes); the first move is NO_MOVE unless the result is WIN.

    Proved answers of OR nodes are kept in a Zobrist-keyed table between calls, as facts about
    the position: a win in at most d threats holds for any deeper search, "none within d" for
    any shallower one. The root is never answered from the table: it needs its first move."""
    renju = rule == RENJU
    levels = frames.shape[0]
    zobrist = st.zobrist
    nodes = np.int64(0)
    level = 0
    frames[0, _K_HASH] = vcf.position_key(board, h * w, attacker, zobrist)
    frames[0, _K_KIND] = _OR
    frames[0, _K_PLACED] = NO_MOVE
    frames[0, _K_DEPTH] = depth
    frames[0, _K_UNSURE] = 0
    opening = True
    result = NONE
    first = np.int64(NO_MOVE)
    while True:
        if opening:
            opening = False
            nodes += 1
            left = min(vcf_budget, budget - nodes)
            if left <= 0:
                _unwind(board, frames, level)
                return UNKNOWN, np.int64(NO_MOVE), nodes
            if frames[level, _K_KIND] == _OR:
                result = -1
                if level > 0:
                    result = _known(tt_key, tt_val, frames[level, _K_HASH],
                                    frames[level, _K_DEPTH])
                if result == -1:
                    result, used, move = _open_or(board, h, w, n, rule, attacker, last_move,
                                                  level, left, kids, frames, masks, st)
                    nodes += used
                    if level == 0 and result == WIN:
                        first = move
            else:
                result, used = _open_and(board, h, w, n, rule, attacker, level, left, kids,
                                         frames, masks, st)
                nodes += used
        if result == _EXPAND:
            i = frames[level, _K_NEXT]
            if i < frames[level, _K_COUNT]:
                frames[level, _K_NEXT] = i + 1
                if level + 1 >= levels:
                    frames[level, _K_UNSURE] = 1
                    continue
                m = np.int64(kids[level, i])
                is_or = frames[level, _K_KIND] == _OR
                color = attacker if is_or else 3 - attacker
                if renju and color == BLACK and game.is_forbidden(board, h, w, m):
                    continue
                board[m] = color
                level += 1
                frames[level, _K_KIND] = _AND if is_or else _OR
                frames[level, _K_PLACED] = m
                frames[level, _K_HASH] = frames[level - 1, _K_HASH] ^ zobrist[color, m]
                frames[level, _K_UNSURE] = 0
                if not is_or:
                    frames[level, _K_DEPTH] = frames[level - 1, _K_DEPTH]
                opening = True
                continue
            # Every move tried: no threat of an OR node wins; every defence of an AND node lost.
            result = NONE if frames[level, _K_KIND] == _OR else WIN
        # ``result`` is frame ``level``'s answer: close it and hand it to its parent.
        unsure = frames[level, _K_UNSURE] == 1 or result == UNKNOWN
        if frames[level, _K_KIND] == _OR and (result == WIN or (result == NONE and not unsure)):
            slot = frames[level, _K_HASH] & (tt_key.shape[0] - 1)
            tt_key[slot] = frames[level, _K_HASH]
            d = frames[level, _K_DEPTH]
            tt_val[slot] = d + 1 if result == WIN else -(d + 1)
        if level == 0:
            if result == WIN:
                return WIN, first, nodes
            return (UNKNOWN if unsure else NONE), np.int64(NO_MOVE), nodes
        board[frames[level, _K_PLACED]] = EMPTY
        level -= 1
        if unsure:
            frames[level, _K_UNSURE] = 1
        parent_or = frames[level, _K_KIND] == _OR
        if result == WIN and parent_or:
            if level == 0:
                first = np.int64(kids[0, frames[0, _K_NEXT] - 1])
            result = WIN          # one winning threat settles the OR node
        elif result != WIN and not parent_or:
            result = NONE         # one defence that holds settles the AND node
        else:
            result = _EXPAND      # try the parent's next move


@njit(**JIT)
def solve_vct_with(board, h, w, n, rule, attacker, last_move, depth, budget, vcf_budget, vs):
    """:func:`solve_vct` with the state tuple unpacked."""
    return solve_vct(board, h, w, n, rule, attacker, last_move, depth, budget, vcf_budget,
                     vs.kids, vs.frames, vs.masks, vs.tt_key, vs.tt_val, vs.vcf)
