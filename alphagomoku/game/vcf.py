"""Victory by continuous fours (VCF): a compiled threat-space solver.

The attacker plays only moves that make a four; the defender's reply is then forced to the one
point that completes it. The attacker wins when a move makes two completion points at once (a
double four, an open four), when the defender cannot block (under renju, black's only block is
a forbidden point), or, trivially, when it already has a five to play. The line fails when the
defender has a five to play: before the attacker's move that is a loss unless the attacker
blocks it with a four of its own, so a block that makes a defender four is answered by a four
at that point or not at all; two defender fives lose outright.

Lengths: a line of K attacker moves, the last one the five, is a "win in K" (an immediate five
is K = 1, a double four K = 2). ``max_len`` bounds K; 0 means no bound but the node budget.

Results are proved or unknown: NONE means no VCF exists (within ``max_len``), WIN comes with the
whole line, UNKNOWN means the node budget ran out first and says nothing either way.

The search is depth first on an explicit stack (Numba's on-disk cache cannot hold recursive
functions), tries the fours nearest the last two moves first, and keeps proved failures in a
transposition table keyed by a Zobrist hash of the board and the attacker. A failure is a fact
about the position (with the remaining length it was proved for), so the table stays valid from
call to call on the same board size, rule and n in a row: the search keeps it between calls.

Everything the kernel needs lives in a :class:`VcfState` made once by :func:`allocate_state`; a
call allocates nothing.

The opponent's VCF ("must I defend?") is the same call with the other colour as attacker: it
answers what the opponent could force if it were to move now. The side to move moves first, so
its own win comes first; an opponent VCF means the side to move must stop it or win sooner.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from alphagomoku.game import kernels as game
from alphagomoku.game import line_masks
from alphagomoku.game.constants import BLACK, EMPTY, NO_MOVE, RENJU
from alphagomoku.numba_config import JIT

# Solver results.
NONE = 0      # proved: no VCF (within max_len)
WIN = 1       # a VCF, the line in state.line
UNKNOWN = 2   # the node budget ran out first

# frames[ply, field] (int64): one attacker turn of the line being searched.
_F_COUNT = 0   # candidate fours at this ply
_F_NEXT = 1    # next candidate to try
_F_ATTACK = 2  # the attacker's move being searched below
_F_BLOCK = 3   # the defender's forced block of it
_F_HASH = 4    # Zobrist key of the position at this ply (attacker to move)
_FRAME_FIELDS = 5

# meta[field] (int64)
_M_STAMP = 0   # generation stamp for de-duplicating candidates in marks
_META_FIELDS = 1

_DX = np.array([1, 0, 1, 1], dtype=np.int64)
_DY = np.array([0, 1, 1, -1], dtype=np.int64)

TT_BITS = 16

# max_len 0 (no bound) as an int64, not a literal: every caller passes the same type, so the
# search, the planes, the VCT and the Python API share one compiled solver (each literal would
# compile it again, tens of seconds on a slow machine).
_NO_BOUND = np.int64(0)


class VcfState(NamedTuple):
    """The solver's preallocated memory for one board size (shapes: A points, P = A // 2 + 2
    plies, S table slots)."""

    zobrist: np.ndarray   # int64 (3, A): keys per colour and point; [0, 0] marks white attacking
    table: np.ndarray     # int64 (S,): proved failures, see _table_put (0: empty)
    cand: np.ndarray      # int32 (P, A): candidate fours per ply, best first
    keys: np.ndarray      # int32 (A,): ordering keys while sorting one ply's candidates
    frames: np.ndarray    # int64 (P, _FRAME_FIELDS)
    marks: np.ndarray     # int64 (A,): stamp of the generation that last listed the point
    meta: np.ndarray      # int64 (_META_FIELDS,)
    line: np.ndarray      # int32 (2P + 3,): the winning line, attacker and defender alternating
    points: np.ndarray    # int32 (2,): completion points found
    masks: np.ndarray     # int64 (2, 4, A): each colour's stones line by line (see line_masks)


def allocate_state(area: int, tt_bits: int = TT_BITS, seed: int = 20240611) -> VcfState:
    """Memory for a board of ``area`` points, with a table of 2**tt_bits proved failures."""
    plies = area // 2 + 2
    rng = np.random.default_rng(seed)
    zobrist = rng.integers(1, 2**62, size=(3, area), dtype=np.int64)
    return VcfState(
        zobrist=zobrist,
        table=np.zeros(1 << tt_bits, dtype=np.int64),
        cand=np.zeros((plies, area), dtype=np.int32),
        keys=np.zeros(area, dtype=np.int32),
        frames=np.zeros((plies, _FRAME_FIELDS), dtype=np.int64),
        marks=np.zeros(area, dtype=np.int64),
        meta=np.zeros(_META_FIELDS, dtype=np.int64),
        line=np.full(2 * plies + 3, NO_MOVE, dtype=np.int32),
        points=np.full(2, NO_MOVE, dtype=np.int32),
        masks=np.zeros((2, 4, area), dtype=np.int64),
    )


def clear_table(state: VcfState) -> None:
    """Forget every proved failure (needed only if the rule or n in a row changes)."""
    state.table[:] = 0


@njit(**JIT)
def _add_point(points, count, p):
    for i in range(count):
        if points[i] == p:
            return count
    points[count] = p
    return count + 1


@njit(**JIT)
def completions(board, h, w, n, rule, move, color, points):
    """Empty points where ``color`` would win along a line that holds ``move`` (a stone of
    ``color``); stops at two. Returns the count.

    A winning point found this way makes a run through ``move``, so it lies past the stones of
    ``color`` next to ``move``, at the first empty point each way. A winning point whose run
    avoids ``move`` was one before ``move`` was played; callers ask only where none was."""
    count = 0
    x0 = move % w
    y0 = move // w
    reach = n - 1
    for d in range(4):
        step, forward, backward = game._steps(h, w, x0, y0, d)
        for sign in range(2):
            p = move
            s = step if sign == 0 else -step
            for _ in range(min(forward if sign == 0 else backward, reach)):
                p += s
                v = board[p]
                if v == color:
                    continue
                if v == EMPTY:
                    board[p] = color
                    won = game.is_winning_line(game.line_length(board, h, w, p, d, color), n,
                                               rule, color)
                    board[p] = EMPTY
                    if won:
                        count = _add_point(points, count, p)
                        if count == 2:
                            return 2
                break
    return count


@njit(**JIT)
def _masked_completions(masks, h, w, n, rule, move, color, extra, points):
    """:func:`completions` read from the line masks, which hold every stone but ``move``
    (``color``'s, on the board already) and ``extra`` (an opponent's stone not in them yet, or
    NO_MOVE): the same points in the same order, from bits instead of a walk along the board
    (the search asks this twice a node, and the walks were most of a node's cost)."""
    own_c = color - 1
    opp_c = 2 - color
    one = np.int64(1)
    reach = n - 1
    count = 0
    for d in range(4):
        line, bit = line_masks.line_of(h, w, move, d)
        first, length = line_masks.line_start(h, w, d, line)
        own = masks[own_c, d, line] | (one << bit)
        opp = masks[opp_c, d, line]
        if extra != NO_MOVE:
            extra_line, extra_bit = line_masks.line_of(h, w, extra, d)
            if extra_line == line:
                opp |= one << extra_bit
        # Bits grow in the direction a walk with _DX, _DY takes, so "forward" is upward.
        lo = bit
        while lo > 0 and (own >> (lo - 1)) & 1:
            lo -= 1
        hi = bit
        while hi + 1 < length and (own >> (hi + 1)) & 1:
            hi += 1
        step = _DY[d] * w + _DX[d]
        p = hi + 1  # the first point past move's run, forward
        if p < length and p - bit <= reach and (opp >> p) & 1 == 0:
            end = p
            while end + 1 < length and (own >> (end + 1)) & 1:
                end += 1
            if game.is_winning_line(end - lo + 1, n, rule, color):
                count = _add_point(points, count, first + p * step)
                if count == 2:
                    return 2
        p = lo - 1  # and backward
        if p >= 0 and bit - p <= reach and (opp >> p) & 1 == 0:
            start = p
            while start > 0 and (own >> (start - 1)) & 1:
                start -= 1
            if game.is_winning_line(hi - start + 1, n, rule, color):
                count = _add_point(points, count, first + p * step)
                if count == 2:
                    return 2
    return count


@njit(**JIT)
def _generate(masks, h, w, n, attacker, cand, keys, marks, meta, ply, ref1, ref2, fewest, most):
    """List at ``cand[ply]`` every empty point in an n-window holding ``fewest`` to ``most``
    attacker stones and no defender stone, nearest to ref1/ref2 first. Returns the count. With
    both n - 2 these are the only points that can make a four (the VCF's moves); the VCT
    (:mod:`alphagomoku.game.vct`) also asks for the points that can make a three.

    ``masks`` (see :mod:`~alphagomoku.game.line_masks`) hold the board line by line, so a line
    with fewer than n - 2 attacker stones, most of them, costs one popcount. Within the distance
    order, points come in the order of a row-major scan of each direction's lines, window by
    window, each window's points from its far end: the solver's lines depend on this order, so
    it is kept."""
    own_c = attacker - 1
    opp_c = 2 - attacker
    meta[_M_STAMP] += 1
    stamp = meta[_M_STAMP]
    full = (np.int64(1) << n) - 1
    count = 0
    for d in range(4):
        step = _DY[d] * w + _DX[d]
        for line in range(line_masks.line_count(h, w, d)):
            own = masks[own_c, d, line]
            if line_masks.popcount(own) < fewest:
                continue
            first, length = line_masks.line_start(h, w, d, line)
            opp = masks[opp_c, d, line]
            for lo in range(length - n + 1):
                window = full << lo
                if opp & window != 0:
                    continue
                stones = line_masks.popcount(own & window)
                if stones < fewest or stones > most:
                    continue
                for bit in range(lo + n - 1, lo - 1, -1):
                    if (own >> bit) & 1 == 0:
                        p = first + bit * step
                        if marks[p] != stamp:
                            marks[p] = stamp
                            cand[ply, count] = p
                            count += 1
    # Insertion sort by distance (Chebyshev) to the nearer reference move; stable.
    for i in range(count):
        p = cand[ply, i]
        k = 0
        if ref1 >= 0:
            k = max(abs(p % w - ref1 % w), abs(p // w - ref1 // w))
            if ref2 >= 0:
                k = min(k, max(abs(p % w - ref2 % w), abs(p // w - ref2 // w)))
        keys[i] = k
        j = i
        while j > 0 and keys[j - 1] > k:
            keys[j] = keys[j - 1]
            cand[ply, j] = cand[ply, j - 1]
            j -= 1
        keys[j] = k
        cand[ply, j] = p
    return count


@njit(**JIT)
def _unwind(board, masks, h, w, attacker, frames, ply):
    """Take the line's stones off ``board`` and out of ``masks``: a search returns both as it
    found them, so a caller can search the other side on the same masks."""
    for q in range(ply):
        a = frames[q, _F_ATTACK]
        b = frames[q, _F_BLOCK]
        board[a] = EMPTY
        board[b] = EMPTY
        line_masks.flip_bit(masks, h, w, attacker, a)
        line_masks.flip_bit(masks, h, w, 3 - attacker, b)


@njit(**JIT)
def _write_line(line, frames, ply, a, b, c):
    for q in range(ply):
        line[2 * q] = frames[q, _F_ATTACK]
        line[2 * q + 1] = frames[q, _F_BLOCK]
    line[2 * ply] = a
    line[2 * ply + 1] = b
    line[2 * ply + 2] = c
    return 2 * ply + 3


@njit(**JIT)
def position_key(board, area, attacker, zobrist):
    """The Zobrist key of ``board`` with ``attacker`` to attack (white's colour key set)."""
    key = zobrist[0, 0] if attacker != BLACK else np.int64(0)
    for p in range(area):
        if board[p] != EMPTY:
            key ^= zobrist[board[p], p]
    return key


@njit(**JIT)
def solve(board, h, w, n, rule, attacker, last_move, budget, max_len, zobrist, table,
          cand, keys, frames, marks, meta, line, points, masks):
    """Search for a VCF of ``attacker`` on ``board`` (left as it was found). Returns
    (result, line length, nodes): on WIN, ``line[:length]`` holds the attacker's and the
    defender's moves alternating, ending with the attacker's five; a defender that cannot block
    (renju: black's block is forbidden) is written as NO_MOVE. ``last_move`` (or NO_MOVE) only
    orders the first fours tried. Nodes are attacker moves tried; past ``budget`` the answer is
    UNKNOWN."""
    line_masks.build_masks(board, h, w, masks)
    if _fives(board, masks, h, w, n, rule, attacker, points) > 0:
        line[0] = points[0]
        return WIN, 1, 0
    found = _fives(board, masks, h, w, n, rule, 3 - attacker, points)
    if found == 2:
        return NONE, 0, 0
    forced = np.int64(points[0]) if found == 1 else np.int64(NO_MOVE)
    max_len, key = _start(board, h * w, attacker, max_len, zobrist, table)
    if max_len == 0:
        return NONE, 0, 0
    return _search(board, h, w, n, rule, attacker, last_move, forced, budget, max_len, key,
                   zobrist, table, cand, keys, frames, marks, meta, line, points, masks)


@njit(**JIT)
def solve_known(board, h, w, n, rule, attacker, last_move, forced, budget, max_len, zobrist,
                table, cand, keys, frames, marks, meta, line, points, masks):
    """:func:`solve` for a caller that already knows the attacker has no five to play and the
    defender has at most one, ``forced`` (NO_MOVE if none): the search tree does, and spares
    the two whole-board scans this way."""
    max_len, key = _start(board, h * w, attacker, max_len, zobrist, table)
    if max_len == 0:
        return NONE, 0, 0
    line_masks.build_masks(board, h, w, masks)
    return _search(board, h, w, n, rule, attacker, last_move, forced, budget, max_len, key,
                   zobrist, table, cand, keys, frames, marks, meta, line, points, masks)


@njit(**JIT)
def _start(board, area, attacker, max_len, zobrist, table):
    """(max_len as the search uses it, the position's key) before a search; max_len 0 when
    there is nothing to search: a bound under 2, or the table's proof of no VCF. No bound (0)
    or one past the board is the area."""
    if max_len <= 0 or max_len > area:
        max_len = area
    if max_len < 2:
        return np.int64(0), np.int64(0)
    key = position_key(board, area, attacker, zobrist)
    if _proved_none(key, max_len, table):
        return np.int64(0), key
    return np.int64(max_len), key


@njit(**JIT)
def _proved_none(key, max_len, table):
    """The table holds a proof that the position ``key`` has no VCF within ``max_len``."""
    low = table.shape[0] - 1
    entry = table[key & low]
    return (entry ^ key) & ~low == 0 and entry & low >= max_len


@njit(**JIT)
def _table_put(table, key, max_len):
    """Record that the position ``key`` has no VCF within ``max_len``. A slot is one int64, so a
    probe touches one cache line: the slot's index is the key's low bits, so those bits are
    free to hold the length (capped where the table is too small for it, which keeps the proof
    true for the shorter length)."""
    low = table.shape[0] - 1
    table[key & low] = (key & ~low) | min(max_len, low)


@njit(**JIT)
def _search(board, h, w, n, rule, attacker, last_move, forced, budget, max_len, key, zobrist,
            table, cand, keys, frames, marks, meta, line, points, masks):
    """:func:`solve_known`'s search, for a caller that has bounded ``max_len`` (2 to the area),
    computed the position's ``key`` and built ``masks`` for ``board``. Leaves both as it found
    them, whatever the answer."""
    defender = 3 - attacker
    renju = rule == RENJU
    nodes = 0
    ply = 0
    frames[0, _F_HASH] = key
    frames[0, _F_NEXT] = 0
    if forced != NO_MOVE:
        cand[0, 0] = forced
        frames[0, _F_COUNT] = 1
    else:
        frames[0, _F_COUNT] = _generate(masks, h, w, n, attacker, cand, keys, marks, meta, 0,
                                        last_move, np.int64(NO_MOVE), n - 2, n - 2)
    while True:
        i = frames[ply, _F_NEXT]
        if i < frames[ply, _F_COUNT]:
            frames[ply, _F_NEXT] = i + 1
            m = np.int64(cand[ply, i])  # int64 like every other caller's point: one compile
            if nodes >= budget:
                _unwind(board, masks, h, w, attacker, frames, ply)
                return UNKNOWN, 0, nodes
            nodes += 1
            board[m] = attacker
            c = _masked_completions(masks, h, w, n, rule, m, attacker, NO_MOVE, points)
            if c == 0:
                board[m] = EMPTY
                continue
            if renju and attacker == BLACK:
                board[m] = EMPTY
                if game.is_forbidden(board, h, w, m):
                    continue
                board[m] = attacker
            if c >= 2:
                a = np.int64(points[0])
                b = np.int64(points[1])
                if renju and defender == BLACK and game.is_forbidden(board, h, w, a):
                    # Black cannot block there: it blocks the other point if it can, and the
                    # five goes to the forbidden one.
                    a = np.int64(points[1])
                    b = np.int64(points[0])
                    if game.is_forbidden(board, h, w, a):
                        a = NO_MOVE
                length = _write_line(line, frames, ply, m, a, b)
                board[m] = EMPTY
                _unwind(board, masks, h, w, attacker, frames, ply)
                return WIN, length, nodes
            q = np.int64(points[0])
            if renju and defender == BLACK and game.is_forbidden(board, h, w, q):
                length = _write_line(line, frames, ply, m, NO_MOVE, q)
                board[m] = EMPTY
                _unwind(board, masks, h, w, attacker, frames, ply)
                return WIN, length, nodes
            if ply + 3 > max_len:
                board[m] = EMPTY  # a win through the block would be too long
                continue
            child = frames[ply, _F_HASH] ^ zobrist[attacker, m] ^ zobrist[defender, q]
            if _proved_none(child, max_len - ply - 1, table):
                board[m] = EMPTY
                continue
            board[q] = defender
            found = _masked_completions(masks, h, w, n, rule, q, defender, m, points)
            if found >= 2:
                board[q] = EMPTY
                board[m] = EMPTY
                continue
            frames[ply, _F_ATTACK] = m
            frames[ply, _F_BLOCK] = q
            line_masks.flip_bit(masks, h, w, attacker, m)
            line_masks.flip_bit(masks, h, w, defender, q)
            ply += 1
            frames[ply, _F_HASH] = child
            frames[ply, _F_NEXT] = 0
            if found == 1:
                cand[ply, 0] = points[0]
                frames[ply, _F_COUNT] = 1
            else:
                frames[ply, _F_COUNT] = _generate(masks, h, w, n, attacker, cand, keys, marks,
                                                  meta, ply, m, q, n - 2, n - 2)
        else:
            # Every four here was tried in full: proved, no VCF within the remaining length.
            _table_put(table, frames[ply, _F_HASH], max_len - ply)
            if ply == 0:
                return NONE, 0, nodes
            ply -= 1
            board[frames[ply, _F_ATTACK]] = EMPTY
            board[frames[ply, _F_BLOCK]] = EMPTY
            line_masks.flip_bit(masks, h, w, attacker, frames[ply, _F_ATTACK])
            line_masks.flip_bit(masks, h, w, defender, frames[ply, _F_BLOCK])


@njit(**JIT)
def solve_with(board, h, w, n, rule, attacker, last_move, budget, max_len, st):
    """:func:`solve` with the state tuple unpacked (for callers that hold a VcfState)."""
    return solve(board, h, w, n, rule, attacker, last_move, budget, max_len, st.zobrist,
                 st.table, st.cand, st.keys, st.frames, st.marks, st.meta, st.line,
                 st.points, st.masks)


@njit(**JIT)
def solve_known_with(board, h, w, n, rule, attacker, last_move, forced, budget, max_len, st):
    """:func:`solve_known` with the state tuple unpacked."""
    return solve_known(board, h, w, n, rule, attacker, last_move, forced, budget, max_len,
                       st.zobrist, st.table, st.cand, st.keys, st.frames, st.marks,
                       st.meta, st.line, st.points, st.masks)


@njit(**JIT)
def _fives(board, masks, h, w, n, rule, color, points):
    """The empty points where ``color`` wins at once: how many (0, 1 or 2 meaning "two or
    more"), the first in ``points[0]``. Only the gaps of n-windows holding n - 1 stones of
    ``color`` and none of the other's are tried (``masks`` as line_masks.build_masks makes
    them): a five-making point has such a window, and ``would_win`` settles overlines and renju."""
    own_c = color - 1
    opp_c = 2 - color
    full = (np.int64(1) << n) - 1
    found = 0
    for d in range(4):
        step = _DY[d] * w + _DX[d]
        for line in range(line_masks.line_count(h, w, d)):
            own = masks[own_c, d, line]
            if line_masks.popcount(own) < n - 1:
                continue
            first, length = line_masks.line_start(h, w, d, line)
            opp = masks[opp_c, d, line]
            for lo in range(length - n + 1):
                window = full << lo
                if opp & window != 0 or line_masks.popcount(own & window) != n - 1:
                    continue
                bit = lo
                while (own >> bit) & 1:
                    bit += 1
                p = first + bit * step
                if (found == 1 and points[0] == p) or not game.would_win(board, h, w, n, rule,
                                                                         p, color):
                    continue
                points[found] = p
                found += 1
                if found == 2:
                    return 2
    return found
