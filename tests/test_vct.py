"""The VCT search (alphagomoku.game.vct): its Python twin, every defender reply on small boards,
known positions, and its use by the players."""

from __future__ import annotations

import numpy as np
import pytest

from alphagomoku.eval.players import RandomPlayer, TacticalPlayer
from alphagomoku.eval.specs import make_player, parse_player_spec
from alphagomoku.game import BLACK, WHITE, GameConfig, Position, solve_vcf, solve_vct
from alphagomoku.game import vcf, vct
from tests.reference_vct import fives, has_vct, threat_wins, wins_against_every_reply
from tests.test_vcf import plausible_game

# Black to move: e5 makes two open threes (row 5 and column e); nothing else wins that fast,
# and there is no four anywhere.
DOUBLE_THREE = """
O . . . . . . . O
. . . . . . . . .
. . . . . . . . .
. . . . X . . . .
. . . X . X . . .
. . . . X . . . .
. . . . . . . . .
. . . . . . . . .
O . . . . . . . O
"""

# The same black stones; white's open three on row 8 gives white a VCF of its own, so black's
# double three comes too late.
DOUBLE_THREE_TOO_LATE = """
. . . . . . . . .
. O O O . . . . .
. . . . . . . . .
. . . . X . . . .
. . . X . X . . .
. . . . X . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . O
"""


def picture(text, rule="freestyle"):
    return Position.from_picture(text, GameConfig(width=9, rule=rule))


def test_a_double_three_is_a_win_in_one_threat():
    pos = picture(DOUBLE_THREE)
    assert pos.to_move == BLACK and solve_vcf(pos).status == "none"
    assert solve_vct(pos, depth=0).status == "none"  # depth 0 is the VCF alone
    one = solve_vct(pos, depth=1)
    assert one.found and one.name == "e5"
    assert one.describe() == "win by threats from e5"
    # Not white's: with black's stones it has no threat at all.
    assert solve_vct(pos, attacker=WHITE, depth=3).status == "none"


def test_renju_forbids_blacks_double_three():
    pos = picture(DOUBLE_THREE, "renju")
    assert pos.is_forbidden(pos.index("e5"))
    assert solve_vct(pos, depth=1).status == "none"


def test_the_defenders_own_vcf_refutes_a_threat():
    pos = picture(DOUBLE_THREE_TOO_LATE)
    assert pos.to_move == BLACK
    assert solve_vcf(pos, attacker=WHITE).found
    assert solve_vct(pos, depth=1).status == "none"
    # With white's three gone the same threat wins.
    assert solve_vct(picture(DOUBLE_THREE), depth=1).found


def test_a_vcf_is_a_vct():
    from tests.test_vcf import THREE_MOVES

    pos = picture(THREE_MOVES)
    line = solve_vcf(pos)
    result = solve_vct(pos, depth=2)
    assert line.found and result.found and result.first_move == line.first_move


RANDOM_CASES = [(9, "freestyle", 2, 60), (9, "renju", 2, 60), (9, "standard", 2, 40),
                (15, "freestyle", 2, 25)]


@pytest.mark.parametrize("size,rule,depth,games", RANDOM_CASES)
def test_kernel_agrees_with_the_recursive_twin(size, rule, depth, games, rng):
    cfg = GameConfig(width=size, rule=rule)
    vs = vct.allocate_state(cfg.area)
    st = vcf.allocate_state(cfg.area)
    wins = answered = 0
    for _ in range(games):
        pos = plausible_game(cfg, rng, int(rng.integers(6, 30)))
        if pos.is_over:
            continue
        board = pos.board.copy()
        status, move, _ = vct.solve_vct_with(board, size, size, 5, cfg.rule_id, pos.to_move,
                                             pos.last_move, depth, 10**7, 10**6, vs)
        assert (board == pos.board).all()
        if status == vct.UNKNOWN:
            continue
        answered += 1
        twin = has_vct(board, size, size, 5, cfg.rule_id, pos.to_move, depth, st, pos.last_move)
        assert twin == (status == vct.WIN), pos
        if status == vct.WIN:
            wins += 1
            if vcf.solve_with(board, size, size, 5, cfg.rule_id, pos.to_move, -1, 10**6, 0,
                              st)[0] != vcf.WIN:
                # The twin agrees that the kernel's first move is a threat that wins (a forced
                # block costs no depth).
                forced = bool(fives(board, size, size, 5, cfg.rule_id, 3 - pos.to_move))
                board[move] = pos.to_move
                assert threat_wins(board, size, size, 5, cfg.rule_id, pos.to_move,
                                    depth - (0 if forced else 1), int(move), st) is True, pos
    assert answered >= games * 3 // 4 and 0 < wins < answered


@pytest.mark.parametrize("rule", ["freestyle", "renju", "standard"])
def test_wins_hold_against_every_defender_reply(rule, rng):
    """The search tries only some defences; on 9x9 every reply is played against its wins."""
    cfg = GameConfig(width=9, rule=rule)
    vs = vct.allocate_state(cfg.area)
    st = vcf.allocate_state(cfg.area)
    checked = 0
    for _ in range(300):
        if checked == 6:
            break
        pos = plausible_game(cfg, rng, int(rng.integers(6, 30)))
        if pos.is_over:
            continue
        board = pos.board.copy()
        if vcf.solve_with(board, 9, 9, 5, cfg.rule_id, pos.to_move, -1, 10**6, 0, st)[0] != vcf.NONE:
            continue  # VCF wins are the VCF's tests' business
        status, _, _ = vct.solve_vct_with(board, 9, 9, 5, cfg.rule_id, pos.to_move, -1, 2,
                                          10**7, 10**6, vs)
        if status != vct.WIN:
            continue
        assert wins_against_every_reply(board, 9, 9, 5, cfg.rule_id, pos.to_move, 2, vs) is True, pos
        checked += 1
    assert checked == 6


def test_an_exhausted_budget_is_unknown_never_none():
    pos = picture(DOUBLE_THREE)
    full = solve_vct(pos, 10**6, depth=2)
    assert full.found and full.nodes > 3
    for budget in range(1, full.nodes, max(1, full.nodes // 50)):
        assert solve_vct(pos, budget, depth=2).status in ("unknown", "win"), budget
    assert solve_vct(pos, 1, depth=2).status == "unknown"


def test_bad_arguments_are_refused():
    pos = picture(DOUBLE_THREE)
    with pytest.raises(ValueError, match="depth must be a non-negative integer"):
        solve_vct(pos, depth=-1)
    with pytest.raises(ValueError, match="budget must be a positive integer"):
        solve_vct(pos, 0)
    with pytest.raises(ValueError, match="vcf_budget must be a positive integer"):
        solve_vct(pos, vcf_budget=0)
    with pytest.raises(ValueError, match="attacker must be"):
        solve_vct(pos, attacker=3)
    with pytest.raises(TypeError):
        solve_vct("e5")


def test_the_player_plays_its_win_by_threats():
    pos = picture(DOUBLE_THREE)
    player = TacticalPlayer(RandomPlayer(seed=3), vct=True)
    assert player.vcf  # a VCT player checks VCFs first
    assert player.choose(pos.copy()) == pos.index("e5")
    assert player.last_note == "vct: win by threats from e5"
    assert TacticalPlayer(RandomPlayer(seed=3), vcf=True).choose(pos.copy()) != pos.index("e5")


# White to move. Black threatens threes that end in a win (g5 first, say); of all white moves only
# f3 leaves black no win by threats within four of them (found among random games).
ONE_DEFENCE = """
. . . . . . . . .
. . . . . . . . .
. . . . X . . . .
. . . . . . . . .
. . . . X X . . .
. . . . . X . . .
. O . O . . . O .
. . . . . . . . .
. . . . . . . . .
"""


def test_the_player_replaces_a_move_that_lets_the_opponent_win_by_threats():
    # The wrapped player's search liked a9 best, then g5, d6 and f3: a9 loses (so do g5 and d6),
    # so f3 is played.
    pos = picture(ONE_DEFENCE)
    assert pos.to_move == WHITE and solve_vct(pos, attacker=BLACK, depth=2).found
    far = pos.index("a9")
    assert solve_vct(pos.copy().play(far), depth=4).found
    ranked = ["a9", "g5", "d6", "f3", "c7"]

    class Searcher:
        name = "searcher"

        def reset(self, game):
            pass

        def choose(self, position, time_left_s=None):
            self.last_visits = np.zeros(81)
            for i, name in enumerate(ranked):
                self.last_visits[position.index(name)] = 50 - i
            return far

    player = TacticalPlayer(Searcher(), vct=True)
    move = player.choose(pos.copy())
    assert move == pos.index("f3")
    assert not solve_vct(pos.copy().play(move), depth=4).found
    assert player.last_note == "vct: a9 lets the opponent win by threats; f3 does not"
    assert TacticalPlayer(Searcher(), vcf=True).choose(pos.copy()) == far
    # With f3 not among the moves its search liked, the player's move stands, and it says so.
    ranked[3] = "b8"
    assert player.choose(pos.copy()) == far
    assert player.last_note.endswith("no other move checked does better")


# White to move; black threatens a VCF, i7 k7 f7. All three points stop it, but after i7 or k7
# black still wins by threats (f5, i8): only f7 holds. From a match game of the vcf benchmark,
# where the engine blocked at i7 and lost.
BLOCK_ON_THE_WRONG_SIDE = ["i5", "j4", "g4", "j6", "g6", "j5", "j7", "j3", "j2", "i6", "g7", "g5",
                           "h7"]


def test_of_the_moves_that_stop_a_vcf_the_player_keeps_one_that_leaves_no_win_by_threats():
    pos = Position.from_moves(BLOCK_ON_THE_WRONG_SIDE, GameConfig(width=15))
    threat = solve_vcf(pos, attacker=BLACK)
    assert threat.describe() == "win in 2 (i7 k7 f7)"
    liked = ["i7", "k7", "f7"]

    class Searcher:
        name = "searcher"

        def reset(self, game):
            pass

        def choose(self, position, time_left_s=None):
            self.last_visits = np.zeros(position.config.area)
            for i, name in enumerate(liked):
                self.last_visits[position.index(name)] = 30 - i
            return position.index(liked[0])

    player = TacticalPlayer(Searcher(), vct=True, vcf_budget=400_000)
    move = player.choose(pos.copy())
    assert pos.name(move) == "f7"
    assert player.last_note == ("vcf: opponent threatens win in 2 (i7 k7 f7); i7 would leave a "
                                "win by threats; f7 stops it, not i7")
    for name, black_wins in (("i7", True), ("k7", True), ("f7", False)):
        answer = solve_vct(pos.copy().play(pos.index(name)), 2_000_000, depth=4, vcf_budget=20_000)
        assert answer.status == ("win" if black_wins else "none"), name
    # With the VCF alone, any move that stops the VCF does: the search's i7 stands.
    assert TacticalPlayer(Searcher(), vcf=True).choose(pos.copy()) == pos.index("i7")
    with pytest.raises(ValueError, match="vcf_budget must be a positive integer or None"):
        TacticalPlayer(Searcher(), vct=True, vcf_budget=0)


class _Thinker:
    """A searching player whose search, given more time, comes to prefer ``later``."""

    name = "thinker"

    def __init__(self, first: str, later: str):
        self.first, self.later, self.more = first, later, []

    def reset(self, game):
        pass

    def choose(self, position, time_left_s=None):
        self.last_visits = np.zeros(position.config.area)
        return position.index(self.first)

    def think_more(self, position, budget_s):
        self.more.append(budget_s)
        return position.index(self.later)


def test_time_the_check_did_not_use_goes_back_to_the_search():
    # A quiet position: the chosen move is safe, and so is the move the longer search prefers.
    quiet = Position.from_moves(["e5", "d4"], GameConfig(width=9))
    inner = _Thinker("f6", "c6")
    assert TacticalPlayer(inner, vct=True).choose(quiet.copy(), 1.0) == quiet.index("c6")
    assert len(inner.more) == 1 and inner.more[0] > 0.01
    # Without a move time there is no time left over: the first choice stands.
    inner = _Thinker("f6", "c6")
    assert TacticalPlayer(inner, vct=True).choose(quiet.copy()) == quiet.index("f6")
    assert inner.more == []


def test_a_move_found_by_thinking_more_is_checked_too(monkeypatch):
    # f3 is the only move that leaves black no win within four threats (deeper searches, which
    # a fast machine reaches in the time, find one after f3 too); the longer search's a9 loses.
    from alphagomoku.eval import tactics

    monkeypatch.setattr(tactics, "VCT_MAX_DEPTH", 4)
    pos = picture(ONE_DEFENCE)
    inner = _Thinker("f3", "a9")
    assert TacticalPlayer(inner, vct=True).choose(pos.copy(), 2.0) == pos.index("f3")
    assert len(inner.more) == 1


def test_vct_specs_wrap_any_player():
    assert parse_player_spec("vct:pure:50").inner.kind == "pure"
    player = make_player("vct:random")
    assert isinstance(player, TacticalPlayer) and player.vct and player.name == "vct:random"
    assert not make_player("vcf:random").vct


def test_the_vct_player_checks_each_root_move_inside_its_search():
    from alphagomoku.eval.players import VCT_LEAF_NODES, UniformMCTSPlayer
    from alphagomoku.mcts import SearchConfig

    cfg = TacticalPlayer(UniformMCTSPlayer(50), vct=True).inner.search_config
    assert (cfg.vct_leaf_budget, cfg.vct_leaf_plies) == (VCT_LEAF_NODES, 1)
    assert cfg.vcf_leaf_budget > 0
    assert TacticalPlayer(UniformMCTSPlayer(50), vcf=True).inner.search_config.vct_leaf_budget == 0
    # A search config that sets its own is kept.
    inner = UniformMCTSPlayer(50)
    inner.search_config = SearchConfig(vct_leaf_budget=7, vct_leaf_plies=0)
    cfg = TacticalPlayer(inner, vct=True).inner.search_config
    assert (cfg.vct_leaf_budget, cfg.vct_leaf_plies) == (7, 0)


def test_the_engine_searches_threats_unless_told_not_to():
    from alphagomoku.engine.__main__ import build_parser, player_factory

    def player(*flags):
        return player_factory(build_parser().parse_args(["--player", "random", *flags]))()[0]

    assert player().vct and player().vcf
    assert not player("--no-vct").vct and player("--no-vct").vcf
    off = player("--no-vcf")
    assert not off.vct and not off.vcf


def test_the_engine_announces_a_win_by_threats():
    from tests.test_engine_vcf import engine_after_board

    start = picture(DOUBLE_THREE)
    _, out = engine_after_board(TacticalPlayer(RandomPlayer(seed=1), vct=True), start)
    e5 = start.index("e5")
    assert out[-2:] == ["MESSAGE vct: win by threats from e5", f"{e5 % 9},{e5 // 9}"]


def test_proved_answers_are_kept_between_calls_and_cleared_on_request():
    pos = picture(DOUBLE_THREE)
    cfg = pos.config
    vs = vct.allocate_state(cfg.area)

    def run():
        board = pos.board.copy()
        return vct.solve_vct_with(board, 9, 9, 5, cfg.rule_id, BLACK, -1, 3, 10**6, 10**5, vs)

    first = run()
    again = run()
    assert first[:2] == again[:2] == (vct.WIN, pos.index("e5"))
    assert again[2] < first[2]  # the root's threats are answered from the table
    vct.clear_table(vs)
    assert run() == first


def test_the_timed_search_learns_its_speed_and_sizes_each_depth_by_it(monkeypatch):
    """vct_until gives each depth the nodes the time left allows at the rate its own calls
    showed, so a search is neither cut at half its time nor sized past it."""
    from alphagomoku.eval import tactics
    from alphagomoku.game.vct_search import VctResult

    budgets = []
    clock = [100.0]

    def solve(position, budget, *, depth, attacker=None, vcf_budget=None):
        budgets.append(budget)
        clock[0] += budget / 2_000_000  # this machine searches 2 million nodes a second
        return VctResult("none", BLACK, -1, None, budget, depth)

    monkeypatch.setattr(tactics, "solve_vct", solve)
    monkeypatch.setattr("time.monotonic", lambda: clock[0])
    rate = tactics.NodeRate(500_000)
    for _ in range(12):
        tactics.vct_until(picture(DOUBLE_THREE), clock[0] + 0.1, budget=10**9, rate=rate)
    assert abs(rate.value - 2_000_000) < 0.01 * 2_000_000
    assert abs(budgets[0] - 50_000) <= 1  # 0.1 s at the starting guess
    budgets.clear()
    tactics.vct_until(picture(DOUBLE_THREE), clock[0] + 0.1, budget=10**9, rate=rate)
    assert abs(budgets[0] - 200_000) < 3_000  # the whole 0.1 s at the learnt speed
    rate.update(100, 0.05)  # a short call says little about the speed: it is not counted
    assert abs(rate.value - 2_000_000) < 0.01 * 2_000_000


def test_time_the_defence_check_did_not_use_goes_back_to_the_search(monkeypatch):
    # Black threatens i7 k7 f7; f7 is the one block that leaves no win by threats. The search
    # first likes f7; given the time the check left, it comes to prefer a move that does not
    # stop the VCF at all: the player keeps to the blocks, and of those to the one it checked.
    from alphagomoku.eval import tactics

    monkeypatch.setattr(tactics, "VCT_MAX_DEPTH", 4)  # so that the check ends well in time
    pos = Position.from_moves(BLOCK_ON_THE_WRONG_SIDE, GameConfig(width=15))
    inner = _Thinker("f7", "a1")
    player = TacticalPlayer(inner, vct=True, vcf_budget=400_000)
    assert player.choose(pos.copy(), 2.0) == pos.index("f7")
    assert len(inner.more) >= 1 and inner.more[0] > 0.01
    assert player.last_note == "vcf: opponent threatens win in 2 (i7 k7 f7)"
    # A block the longer search prefers is played only if its check holds: k7 loses to threats.
    inner = _Thinker("f7", "k7")
    assert TacticalPlayer(inner, vct=True, vcf_budget=400_000).choose(pos.copy(), 2.0) \
        == pos.index("f7")
    assert len(inner.more) == 1
