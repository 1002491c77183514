"""The VCF solver (alphagomoku.game.vcf) against the plain-Python reference and known positions."""

import numpy as np
import pytest

from alphagomoku.game import BLACK, WHITE, GameConfig, Position, find_vcf, solve_vcf
from alphagomoku.game import line_masks, vcf
from alphagomoku.game.constants import EMPTY, FREESTYLE, NO_MOVE, RENJU, STANDARD
from alphagomoku.game.solver_state import vcf_state_for
from tests.reference_rules import all_lines
from tests.reference_vcf import check_line, fives, has_vcf


def plausible_game(cfg, rng, moves):
    """A game of random legal moves, each within two points of a stone already down (so lines
    form as in real games), stopped before anyone wins."""
    pos = Position(cfg)
    w, h = cfg.width, cfg.height
    pos.play(w // 2 + (h // 2) * w)
    for _ in range(moves - 1):
        near = np.zeros((h + 4, w + 4), dtype=bool)
        for p in np.flatnonzero(pos.board != EMPTY):
            near[p // w: p // w + 5, p % w: p % w + 5] = True
        cand = np.flatnonzero(pos.legal_mask() & near[2:h + 2, 2:w + 2].reshape(-1))
        if len(cand) == 0:
            break
        pos.play(int(rng.choice(cand)))
        if pos.is_over:
            pos.undo()
            break
    return pos


def replay(pos, result):
    cfg = pos.config
    check_line(list(pos.board), cfg.width, cfg.height, cfg.n_in_row, cfg.rule, result.attacker,
               list(result.moves))


@pytest.mark.parametrize("size,n,rule,games,max_len", [
    (9, 5, "freestyle", 100, 4),
    (9, 5, "standard", 100, 4),
    (9, 5, "renju", 100, 4),
    (11, 5, "freestyle", 20, 5),
    (11, 5, "renju", 20, 5),
    (7, 4, "freestyle", 60, 4),
])
def test_kernel_agrees_with_reference(size, n, rule, games, max_len, rng):
    """Both sides of every position: the kernel proves a VCF exactly where the reference finds
    one within the same length, and every line it returns replays move by move."""
    cfg = GameConfig(width=size, n_in_row=n, rule=rule)
    found = 0
    for _ in range(games):
        pos = plausible_game(cfg, rng, int(rng.integers(6, size * size // 3)))
        for attacker in (BLACK, WHITE):
            result = solve_vcf(pos, 10**7, attacker=attacker, max_len=max_len)
            expected = has_vcf(list(pos.board), size, size, n, rule, attacker, max_len)
            assert result.status != "unknown"
            assert result.found == expected, (attacker, result, str(pos))
            if result.found:
                found += 1
                assert result.length <= max_len
                replay(pos, result)
    # Both answers must be common for the comparison to mean anything.
    assert games // 4 < found < 2 * games - games // 4


def test_unbounded_lines_replay(rng):
    """Without a length bound, on 15x15 games: lines of any length are still sound."""
    cfg = GameConfig(width=15, rule="renju")
    longest = 0
    for _ in range(60):
        pos = plausible_game(cfg, rng, int(rng.integers(10, 50)))
        for attacker in (BLACK, WHITE):
            result = solve_vcf(pos, 10**6, attacker=attacker)
            assert result.status != "unknown"
            if result.found:
                replay(pos, result)
                longest = max(longest, result.length)
    assert longest >= 4


def picture(text, rule="freestyle"):
    rows = [r for r in text.strip().splitlines()]
    return Position.from_picture(text, GameConfig(width=len(rows[0].split()), rule=rule))


FIVE_NOW = """
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. O O O . . . . .
. X X X X . . . .
. . . . O . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
"""

# Black: f4 (four along the c7-f4 diagonal, b8 blocks), then e3 makes an open four (d2-g5).
THREE_MOVES = """
O . . . . . . . .
. . . . . . . . .
. . X . . . . . .
. . . X . . . . .
. . . . X . X . .
. . O . . . O . O
. . . . . X O O .
. . . X . . . . .
. . . . . . . . .
"""

# Black to move, nothing shorter than nine moves wins (found among random games).
NINE_MOVES = """
. . . . . . . . O . .
X O . . . O O . . . .
. . X . . . . . . . .
. . . . O . X . . . .
. . . . X O . . . . .
. . . . . X . . . . .
. . . O X X . . . . .
. . . . X . . . . . .
. . . O . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
"""


@pytest.mark.parametrize("text,length", [(FIVE_NOW, 1), (THREE_MOVES, 3), (NINE_MOVES, 9)])
def test_known_lengths(text, length):
    pos = picture(text)
    assert pos.to_move == BLACK
    result = solve_vcf(pos)
    assert result.found
    replay(pos, result)
    assert solve_vcf(pos, max_len=length).found
    if length > 1:  # max_len=0 means no bound
        assert solve_vcf(pos, max_len=length - 1).status == "none"
    if length == 3:
        assert find_vcf(pos) == ["f4", "b8", "e3", "h6", "c1"]
    if length == 1:
        assert find_vcf(pos) in (["a5"], ["f5"])


# Black: e5 (white blocks f5), then e4 makes an open four on column e. But white's block on f5
# makes an open four of white's own (f8-f5), which black cannot answer with a four; black's
# other four, f5, is blocked on e5, which ends the column.
COUNTER_FOUR = """
. . . . . . . . .
. . . . . O . . .
. . . . . O . . .
. . . . . O . . .
O X X X . . . . .
. . . . . . . . .
. . . . X . . . .
. . . . X . . . .
. . . . . . . . O
"""

# The same black stones, white's column f moved away: the line wins.
COUNTER_FOUR_CONTROL = """
. . O . O . O . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
O X X X . . . . .
. . . . . . . . .
. . . . X . . . .
. . . . X . . . .
. . . . . . . . O
"""


def test_block_that_makes_a_four_refutes():
    assert solve_vcf(picture(COUNTER_FOUR), attacker=BLACK).status == "none"
    pos = picture(COUNTER_FOUR_CONTROL)
    control = solve_vcf(pos, attacker=BLACK, max_len=3)
    assert control.found
    replay(pos, control)


# Black's open three would win, but white has a four (e2 makes five) black must block first.
DEFENDER_FIVE = """
X . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . X X X . . . .
. . . . . . . . .
. . . . . . . . .
O O O O . . . . .
. . . . . . . . .
"""

DEFENDER_FIVE_CONTROL = DEFENDER_FIVE.replace("O O O O .", "O O O . .").replace(
    "X . . . . . . . .", "X . . . . . . . O", 1)


def test_defender_five_refutes():
    pos = picture(DEFENDER_FIVE)
    assert solve_vcf(pos, attacker=BLACK).status == "none"
    assert solve_vcf(pos, attacker=WHITE).names == ("e2",)
    assert solve_vcf(picture(DEFENDER_FIVE_CONTROL), attacker=BLACK).found


# White e2 makes a four (e2, e4-e6; black e7 closes the top); its only block, e3, gives black
# six in a row: forbidden under renju, so white wins there and not under the standard rule.
RENJU_FORBIDDEN_BLOCK = """
O . . . . . . . O
. . . . . . . . .
. . . . X . . . .
. . . . O . . . .
. . . . O . . . .
. . . . O . . . .
. X X X . X X . .
. . . . . . . . .
O . . . . . . . .
"""


def test_renju_white_wins_on_forbidden_block():
    pos = picture(RENJU_FORBIDDEN_BLOCK, "renju")
    result = solve_vcf(pos, attacker=WHITE)
    assert result.names == ("e2", "-", "e3")
    replay(pos, result)
    assert solve_vcf(picture(RENJU_FORBIDDEN_BLOCK, "standard"), attacker=WHITE).status == "none"


# e5 is a double four for black: a win in freestyle, forbidden under renju (where e5's
# neighbours f5 and e6 are plain fours that white blocks at e5).
RENJU_DOUBLE_FOUR = """
O . . . . . . . O
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
O X X X . . . . .
. . . . X . . . .
. . . . X . . . .
. . . . X . . . .
O . . . O . . . O
"""


def test_renju_black_cannot_win_by_forbidden_move():
    free = solve_vcf(picture(RENJU_DOUBLE_FOUR, "freestyle"), attacker=BLACK)
    assert free.found and free.first_move == picture(RENJU_DOUBLE_FOUR).index("e5")
    pos = picture(RENJU_DOUBLE_FOUR, "renju")
    assert pos.is_forbidden("e5")
    assert solve_vcf(pos, attacker=BLACK).status == "none"


# e5 would give black six in a row: a five in freestyle only.
OVERLINE = """
O . . . . . . . O
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
O X X X . X X O .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . O
"""


def test_overline_is_not_a_five_under_standard_and_renju():
    assert find_vcf(picture(OVERLINE, "freestyle")) == ["e5"]
    assert solve_vcf(picture(OVERLINE, "standard")).status == "none"
    assert solve_vcf(picture(OVERLINE, "renju")).status == "none"


def test_exhausted_budget_is_unknown_never_none():
    pos = picture(NINE_MOVES)
    full = solve_vcf(pos, 10**6)
    assert full.found and full.nodes > 5
    vcf.clear_table(vcf_state_for(pos.config))
    for budget in range(1, full.nodes):
        status = solve_vcf(pos, budget).status
        assert status in ("unknown", "win"), budget
    assert solve_vcf(pos, 1).status == "unknown"


def test_kernel_leaves_the_board_and_its_line_masks_as_it_found_them():
    """Whatever the answer (unknown at budgets 1 and 3, a win with the whole budget), the board
    and the line masks come back as they were: the VCF planes search both sides on one set of
    masks."""
    pos = picture(NINE_MOVES)
    st = vcf.allocate_state(pos.config.area)
    built = vcf.allocate_state(pos.config.area).masks
    line_masks.build_masks(pos.board, pos.height, pos.width, built)
    statuses = set()
    for budget in (1, 3, 10**6):
        board = pos.board.copy()
        status, length, nodes = vcf.solve_with(board, pos.height, pos.width, 5, 0, BLACK, -1,
                                               budget, 0, st)
        statuses.add(status)
        assert (board == pos.board).all()
        assert (st.masks == built).all(), status
        assert nodes <= budget
    assert statuses == {vcf.UNKNOWN, vcf.WIN}


def test_line_masks_hold_each_stone_where_line_of_numbers_it(rng):
    """_build_masks and the search's _flip_bit write their bits without _line_of: on boards of
    every shape both must give each stone the line and bit _line_of gives it, and nothing else
    a bit."""
    for _ in range(100):
        h, w = (int(v) for v in rng.integers(5, 23, size=2))
        board = _random_board(rng, h, w)
        built = vcf.allocate_state(h * w).masks
        built[:] = -1  # stale bits from a bigger board must go
        line_masks.build_masks(board, h, w, built)
        flipped = np.zeros_like(built)
        expected = np.zeros_like(built)
        for p in np.flatnonzero(board != EMPTY):
            line_masks.flip_bit(flipped, h, w, int(board[p]), int(p))
            for d in range(4):
                line, bit = line_masks.line_of(h, w, p, d)
                expected[board[p] - 1, d, line] |= 1 << bit
        for d in range(4):
            lines = line_masks.line_count(h, w, d)
            assert (built[:, d, :lines] == expected[:, d, :lines]).all(), (h, w, d)
            assert (flipped[:, d, :lines] == expected[:, d, :lines]).all(), (h, w, d)


@pytest.mark.parametrize("rule", [FREESTYLE, STANDARD, RENJU])
def test_completions_from_the_masks_match_the_walk(rule, rng):
    """The search reads a move's five points from the line masks, which lack the move and the
    other side's stone just placed; completions() walks the board. Same points, same order,
    on dense boards of every shape (runs of every length, overlines among them)."""
    checked = 0
    for _ in range(300):
        h, w = (int(v) for v in rng.integers(5, 23, size=2))
        board = _random_board(rng, h, w)
        empty = np.flatnonzero(board == EMPTY)
        if len(empty) < 2:
            continue
        move, extra = (int(p) for p in rng.choice(empty, size=2, replace=False))
        color = int(rng.integers(1, 3))
        masks = vcf.allocate_state(h * w).masks
        line_masks.build_masks(board, h, w, masks)
        board[move] = color
        with_extra = bool(rng.integers(0, 2))
        if with_extra:
            board[extra] = 3 - color
        walked = np.full(2, -1, dtype=np.int32)
        read = np.full(2, -1, dtype=np.int32)
        count = vcf.completions(board, h, w, 5, rule, move, color, walked)
        got = vcf._masked_completions(masks, h, w, 5, rule, move, color,
                                      extra if with_extra else NO_MOVE, read)
        assert got == count and (read[:count] == walked[:count]).all(), (h, w, move, color)
        checked += count > 0
    assert checked > 30  # enough moves that do complete a five


@pytest.mark.parametrize("bits", [4, 8, 16])
def test_table_keeps_what_a_dictionary_of_proofs_would(bits, rng):
    """The table packs a key and its proved length into one int64. Against a dictionary of the
    last proof put in each slot: a position is proved exactly when its own key is there with a
    length at least the one asked for, never through another key sharing the slot; a length too
    big for a small table's low bits is kept as the largest it can hold."""
    table = vcf.allocate_state(9, tt_bits=bits).table
    low = (1 << bits) - 1
    proofs = {}  # slot -> (key, length)
    keys = [int(k) for k in rng.integers(1, 2**62, size=300)]
    keys += [k ^ (1 << 40) for k in keys[:50]]  # the same slot, another key
    for key in keys:
        length = int(rng.integers(1, 485))
        vcf._table_put(table, np.int64(key), np.int64(length))
        proofs[key & low] = (key, min(length, low))
    for key in keys:
        kept_key, kept = proofs[key & low]
        for asked in (1, 2, 15, 16, 17, 255, 256, 484):
            want = kept_key == key and kept >= asked
            assert vcf._proved_none(np.int64(key), np.int64(asked), table) == want, (key, asked)
    # An empty slot (0) matches a key whose high bits are zero, but proves no length >= 1.
    assert not vcf._proved_none(np.int64(5), np.int64(1), np.zeros_like(table))


def test_opponent_vcf_is_the_other_colour():
    # White to move; black threatens an open-four VCF white must stop.
    pos = picture(THREE_MOVES)
    pos.play("a1")
    assert pos.to_move == WHITE
    assert solve_vcf(pos, attacker=BLACK).found
    assert find_vcf(pos) is None


def test_bad_arguments():
    pos = Position(GameConfig(width=9))
    with pytest.raises(ValueError, match="budget"):
        solve_vcf(pos, 0)
    with pytest.raises(ValueError, match="attacker"):
        solve_vcf(pos, attacker=3)
    with pytest.raises(TypeError, match="Position"):
        solve_vcf(pos.board)


def _random_board(rng, h, w):
    board = np.zeros(h * w, dtype=np.int8)
    k = int(rng.integers(0, h * w * 2 // 3))
    board[rng.permutation(h * w)[:k]] = rng.integers(1, 3, size=k)
    return board


def _window_scan(board, h, w, n, attacker, ref1, ref2, fewest, most):
    """The candidates by definition: every empty point of an n-window with ``fewest`` to
    ``most`` attacker stones (n - 2 for both: the candidate fours) and no defender stone, each
    line in turn (all_lines' order), windows along it, each window from its far end; then a
    stable sort by distance to the nearer reference move."""
    out = []
    for line in all_lines(w, h):
        for lo in range(len(line) - n + 1):
            stones = [int(board[p]) for p in line[lo:lo + n]]
            if fewest <= stones.count(attacker) <= most and (3 - attacker) not in stones:
                out += [p for p in reversed(line[lo:lo + n])
                        if board[p] == EMPTY and p not in out]

    def distance(p, r):
        return max(abs(p % w - r % w), abs(p // w - r // w))

    def key(p):
        if ref1 < 0:
            return 0
        return min(distance(p, ref1), distance(p, ref2)) if ref2 >= 0 else distance(p, ref1)
    return sorted(out, key=key)


@pytest.mark.parametrize("fewer,more", [(2, 2), (3, 2), (2, 1)])
def test_candidate_fours_match_a_window_scan(fewer, more, rng):
    """The line-mask generator lists the same points in the same order as the plain scan, on
    boards of every shape (the diagonals' numbering is where a mistake would hide), for the
    VCF's candidate fours (windows of n - 2 stones), the VCT's threats (n - 3 to n - 2) and its
    quiet defences (n - 2 to n - 1)."""
    for _ in range(300):
        h, w = (int(v) for v in rng.integers(5, 16, size=2))
        n = int(rng.integers(3, min(h, w, 6) + 1))
        board = _random_board(rng, h, w)
        st = vcf.allocate_state(h * w)
        line_masks.build_masks(board, h, w, st.masks)
        refs = [int(v) for v in rng.integers(-1, h * w, size=2)]
        for attacker in (BLACK, WHITE):
            fewest, most = max(0, n - fewer), n - more
            count = vcf._generate(st.masks, h, w, n, attacker, st.cand, st.keys, st.marks,
                                  st.meta, 0, refs[0], refs[1], fewest, most)
            assert list(st.cand[0, :count]) == _window_scan(board, h, w, n, attacker, *refs,
                                                            fewest, most)


@pytest.mark.parametrize("rule", ["freestyle", "standard", "renju"])
def test_five_points_match_the_reference(rule, rng):
    """How many points make five for each colour (0, 1, or 2 for "two or more"), and which one
    when there is one, against the plain whole-board search."""
    rule_id = GameConfig(rule=rule).rule_id
    for _ in range(200):
        h, w = (int(v) for v in rng.integers(5, 12, size=2))
        board = _random_board(rng, h, w)
        st = vcf.allocate_state(h * w)
        line_masks.build_masks(board, h, w, st.masks)
        for color in (BLACK, WHITE):
            expected = fives(list(board), w, h, 5, rule, color)
            count = vcf._fives(board, st.masks, h, w, 5, rule_id, color, st.points)
            assert count == min(2, len(expected))
            if count:
                assert st.points[0] in expected
                assert count == 1 or (st.points[1] in expected and st.points[1] != st.points[0])
