"""A slow, plain-Python VCF (victory by continuous fours): the oracle for alphagomoku.game.vcf.

Written from the definition with whole-board scans and the rules of tests/reference_rules.py:

* the attacker wins at once if it has a five to play;
* if the defender has two fives to play, the attacker loses; with one, the attacker must play
  that point, and it must be a four;
* an attacker move is a four when, after it, the attacker has a five to play somewhere; with
  two such points the defender cannot stop both; with one, the defender must play it, unless
  (renju) it is a forbidden point for black, when the attacker wins;
* ``max_len`` bounds the attacker's moves, the five included.

A board is a mutable list; every function restores it before returning.
"""

from __future__ import annotations

from alphagomoku.game.constants import BLACK, EMPTY
from tests.reference_rules import DIRECTIONS, forbidden, move_wins

RULES = {0: "freestyle", 1: "standard", 2: "renju"}


def _near_own(board, width, height, p, color):
    """Some stone of ``color`` next to ``p``: a point that makes a five has one."""
    x, y = p % width, p // width
    for dx, dy in DIRECTIONS:
        for s in (1, -1):
            qx, qy = x + s * dx, y + s * dy
            if 0 <= qx < width and 0 <= qy < height and board[qy * width + qx] == color:
                return True
    return False


def fives(board, width, height, n, rule, color):
    """Every empty point where ``color`` would make a winning line."""
    out = []
    for p in range(width * height):
        if board[p] != EMPTY or not _near_own(board, width, height, p, color):
            continue
        board[p] = color
        if move_wins(board, width, height, n, rule, p, color):
            out.append(p)
        board[p] = EMPTY
    return out


def legal_for(board, width, height, rule, color, p):
    return board[p] == EMPTY and not (rule == "renju" and color == BLACK
                                      and forbidden(board, width, height, p))


def has_vcf(board, width, height, n, rule, attacker, max_len):
    """Whether ``attacker``, to move, wins by continuous fours in at most ``max_len`` moves."""
    if max_len < 1:
        return False
    defender = 3 - attacker
    if fives(board, width, height, n, rule, attacker):
        return True  # a five is never forbidden
    threats = fives(board, width, height, n, rule, defender)
    if len(threats) >= 2 or max_len < 2:
        return False
    moves = threats if threats else [p for p in range(width * height) if board[p] == EMPTY]
    for m in moves:
        board[m] = attacker
        completions = fives(board, width, height, n, rule, attacker)
        board[m] = EMPTY
        if not completions or not legal_for(board, width, height, rule, attacker, m):
            continue
        if len(completions) >= 2:
            return True
        q = completions[0]
        board[m] = attacker
        if rule == "renju" and defender == BLACK and forbidden(board, width, height, q):
            board[m] = EMPTY
            return True
        board[q] = defender
        won = has_vcf(board, width, height, n, rule, attacker, max_len - 1)
        board[q] = EMPTY
        board[m] = EMPTY
        if won:
            return True
    return False


def check_line(board, width, height, n, rule, attacker, line):
    """Replay a VCF line move by move; raise AssertionError at the first move that breaks it.
    ``line``: attacker and defender moves alternating, ending with the attacker's five; -1 for
    a defender who has no legal block."""
    board = list(board)
    defender = 3 - attacker
    assert len(line) % 2 == 1, line
    for i, move in enumerate(line):
        if i % 2 == 0:
            final = i == len(line) - 1
            threats = fives(board, width, height, n, rule, defender)
            assert legal_for(board, width, height, rule, attacker, move), (i, move)
            if not final:
                assert len(threats) <= 1, (i, threats)
                if threats:
                    assert move == threats[0], f"move {i} ignores the defender's five at {threats}"
            board[move] = attacker
            if final:
                assert move_wins(board, width, height, n, rule, move, attacker), (i, move)
                return
            assert not move_wins(board, width, height, n, rule, move, attacker), (i, move)
            completions = fives(board, width, height, n, rule, attacker)
            assert completions, f"move {i} ({move}) is not a four"
            assert not fives(board, width, height, n, rule, defender), \
                f"the defender can make five after move {i}"
        else:
            completions = fives(board, width, height, n, rule, attacker)
            if move == -1:
                assert rule == "renju" and defender == BLACK
                assert all(forbidden(board, width, height, q) for q in completions), (i, completions)
                continue
            assert move in completions, f"move {i} ({move}) is not a block of {completions}"
            assert legal_for(board, width, height, rule, defender, move), (i, move)
            board[move] = defender
            assert not move_wins(board, width, height, n, rule, move, defender), (i, move)
    raise AssertionError("the line does not end with a five")
