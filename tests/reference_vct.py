"""A slow, recursive VCT: the twin of alphagomoku.game.vct, and a check of its wins against every
defender reply.

``has_vct`` follows the definition in the kernel's docstring with plain recursion and
whole-board window scans; VCF questions go to the compiled VCF solver, which has its own
reference (tests/reference_vcf.py). The defences it tries are the same: the points of the
attacker's VCF line after the threat (the line the VCF solver finds, ordered from the threat)
and every defender move in a window that could make a four.

``wins_against_every_reply`` does not trust that restriction: it plays the kernel's first move
and then tries every legal defender reply.
"""

from __future__ import annotations

import numpy as np

from alphagomoku.game import kernels as game
from alphagomoku.game import vcf, vct
from alphagomoku.game.constants import BLACK, EMPTY, NO_MOVE, RENJU

BIG = 1_000_000


def _windows(h, w, n):
    """Every n-window of the board, as a list of points."""
    out = []
    for y in range(h):
        for x in range(w):
            for dx, dy in ((1, 0), (0, 1), (1, 1), (1, -1)):
                ex, ey = x + (n - 1) * dx, y + (n - 1) * dy
                if 0 <= ex < w and 0 <= ey < h:
                    out.append([(y + i * dy) * w + x + i * dx for i in range(n)])
    return out


def window_moves(board, h, w, n, color, fewest, most):
    """Empty points in a window holding ``fewest`` to ``most`` stones of ``color`` and none of
    the other's (a set)."""
    out = set()
    for win in _windows(h, w, n):
        stones = [board[p] for p in win]
        if 3 - color in stones:
            continue
        if fewest <= stones.count(color) <= most:
            out.update(p for p in win if board[p] == EMPTY)
    return out


def _forbidden(board, h, w, rule, color, p):
    return rule == RENJU and color == BLACK and game.is_forbidden(board, h, w, p)


def fives(board, h, w, n, rule, color):
    return [p for p in range(h * w) if board[p] == EMPTY and game.would_win(board, h, w, n, rule,
                                                                             p, color)]


def _vcf(board, h, w, n, rule, attacker, last, st):
    status, length, _ = vcf.solve_with(board, h, w, n, rule, attacker, last, BIG, 0, st)
    return status, [int(m) for m in st.line[:length]]


def has_vct(board, h, w, n, rule, attacker, depth, st, last=NO_MOVE):
    """True / False, or None when a VCF call inside could not answer."""
    defender = 3 - attacker
    if fives(board, h, w, n, rule, attacker):
        return True
    threats = fives(board, h, w, n, rule, defender)
    if len(threats) >= 2:
        return False
    if _vcf(board, h, w, n, rule, attacker, last, st)[0] == vcf.WIN:
        return True
    if depth == 0:
        return False
    forced = bool(threats)
    moves = threats if forced else sorted(window_moves(board, h, w, n, attacker, n - 3, n - 2))
    unknown = False
    for c in moves:
        if _forbidden(board, h, w, rule, attacker, c):
            continue
        board[c] = attacker
        ok = threat_wins(board, h, w, n, rule, attacker, depth - (0 if forced else 1), c, st)
        board[c] = EMPTY
        if ok:
            return True
        unknown = unknown or ok is None
    return None if unknown else False


def threat_wins(board, h, w, n, rule, attacker, depth, c, st):
    defender = 3 - attacker
    status, line = _vcf(board, h, w, n, rule, attacker, c, st)
    if status != vcf.WIN:
        return None if status == vcf.UNKNOWN else False
    answer = _vcf(board, h, w, n, rule, defender, c, st)[0]
    if answer != vcf.NONE:
        return None if answer == vcf.UNKNOWN else False
    defences = {p for p in line if p != NO_MOVE and board[p] == EMPTY}
    # Moves that make a four now or with the line's blocks on the board (a counter-four later).
    blocks = [p for p in line[1::2] if p != NO_MOVE]
    future = board.copy()
    future[blocks] = defender
    defences |= {p for p in window_moves(future, h, w, n, defender, n - 2, n - 1)
                 if board[p] == EMPTY}
    if rule == RENJU and defender == BLACK:
        for i in range(1, len(line) - 1, 2):
            if line[i] == NO_MOVE:  # black cannot block at line[i + 1]: stones near it may help
                defences |= _near(board, h, w, n, line[i + 1])
    for d in sorted(defences):
        if _forbidden(board, h, w, rule, defender, d):
            continue
        board[d] = defender
        ok = has_vct(board, h, w, n, rule, attacker, depth, st, d)
        board[d] = EMPTY
        if not ok:
            return ok
    return True


def _near(board, h, w, n, p):
    out = set()
    x, y = p % w, p // w
    for dx, dy in ((1, 0), (0, 1), (1, 1), (1, -1)):
        for s in (1, -1):
            for k in range(1, n):
                qx, qy = x + s * k * dx, y + s * k * dy
                if 0 <= qx < w and 0 <= qy < h and board[qy * w + qx] == EMPTY:
                    out.add(qy * w + qx)
    return out


def wins_against_every_reply(board, h, w, n, rule, attacker, depth, vs, budget=BIG):
    """Plays the kernel's VCT for ``attacker`` (to move) against every legal defender reply,
    asking the kernel again after each, until a five: True if every line ends in the attacker's
    five, else the first board (a copy) where it did not."""
    defender = 3 - attacker
    status, move, _ = vct.solve_vct_with(board, h, w, n, rule, attacker, NO_MOVE, depth, budget,
                                         BIG, vs)
    if status != vct.WIN:
        return board.copy()
    board[move] = attacker
    try:
        if game.wins_at(board, h, w, n, rule, move, attacker):
            return True
        for r in range(h * w):
            if board[r] != EMPTY or _forbidden(board, h, w, rule, defender, r):
                continue
            board[r] = defender
            try:
                if game.wins_at(board, h, w, n, rule, r, defender):
                    return board.copy()
                result = wins_against_every_reply(board, h, w, n, rule, attacker, depth, vs,
                                                  budget)
                if result is not True:
                    return result
            finally:
                board[r] = EMPTY
        return True
    finally:
        board[move] = EMPTY
