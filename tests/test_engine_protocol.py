"""The protocol loop in-process with stand-in players: time budgets, fallbacks, rule changes;
and the move-time arithmetic (TimeControl, search_within) on a fake clock."""

from __future__ import annotations

import io

import pytest

from alphagomoku.engine.protocol import GomocupEngine, ProtocolError, rule_from_bits
from alphagomoku.engine.timing import MIN_BUDGET_S, TimeControl
from alphagomoku.eval.players import FIRST_CHUNK, RandomPlayer, search_within
from alphagomoku.game import WHITE


class Recorder:
    """Plays the first legal point; remembers every budget and game it was given."""

    def __init__(self, behaviour="ok"):
        self.name = "recorder"
        self.behaviour = behaviour
        self.budgets = []
        self.games = []
        self.closed = False

    def reset(self, game):
        if self.behaviour == "bad-size" and game.width != 9:
            raise ValueError("this player only knows 9x9")
        self.games.append(game)

    def choose(self, position, time_left_s=None):
        self.budgets.append(time_left_s)
        if self.behaviour == "raise":
            raise RuntimeError("the network is on fire")
        if self.behaviour == "illegal":
            return position.moves[0] if position.moves else -5
        return int(position.legal_moves()[0])

    def close(self):
        self.closed = True


def make_engine(player, notes=("hello",)):
    out: list[str] = []
    engine = GomocupEngine(lambda: (player, list(notes)), out.append)
    return engine, out


def talk(engine, out, *lines):
    start = len(out)
    for line in lines:
        engine.handle(line)
    return out[start:]


def test_budget_follows_info_timeout_turn_and_time_left():
    player = Recorder()
    engine, out = make_engine(player)
    assert talk(engine, out, "START 9") == ["MESSAGE hello", "MESSAGE player: recorder", "OK"]
    talk(engine, out, "INFO timeout_turn 1000", "BEGIN")
    assert player.budgets[-1] == pytest.approx(TimeControl(1000).budget_s(80))
    assert 0.5 < player.budgets[-1] < 0.9  # a reserve kept back from the 1 s limit
    # A match clock with little time left shrinks the budget below the turn limit.
    talk(engine, out, "INFO timeout_match 60000", "INFO time_left 2000", "TURN 8,8")
    assert player.budgets[-1] < 0.2
    # timeout_turn 0 = as fast as possible: the minimum budget.
    talk(engine, out, "INFO timeout_match 0", "INFO timeout_turn 0", "TURN 8,7")
    assert player.budgets[-1] == MIN_BUDGET_S


def test_a_failing_player_still_answers_with_a_legal_move():
    for behaviour in ("raise", "illegal"):
        engine, out = make_engine(Recorder(behaviour))
        talk(engine, out, "START 9")
        answers = talk(engine, out, "BEGIN")
        assert answers[0].startswith("MESSAGE recorder failed"), answers
        x, y = map(int, answers[1].split(","))
        assert 0 <= x < 9 and 0 <= y < 9
        assert engine.position.moves == [y * 9 + x]


def test_fallback_prefers_the_tactical_move():
    engine, out = make_engine(Recorder("raise"))
    talk(engine, out, "START 9")
    answers = talk(engine, out, "BOARD", "0,0,1", "5,5,2", "1,0,1", "5,6,2", "2,0,1", "6,8,2",
                   "3,0,1", "8,8,2", "DONE")
    assert answers[-1] == "4,0"


def test_rule_change_mid_game_replays_the_moves():
    player = Recorder()
    engine, out = make_engine(player)
    talk(engine, out, "START 9", "TURN 4,4")
    moves = list(engine.position.moves)
    assert talk(engine, out, "INFO rule 4") == []
    assert engine.game.rule == "renju" and engine.position.moves == moves
    assert player.games[-1].rule == "renju"
    talk(engine, out, "INFO rule 1")
    assert engine.game.rule == "standard"
    talk(engine, out, "RESTART", "INFO rule 2")  # continuous-game bit alone: freestyle
    assert engine.game.rule == "freestyle"


def test_rule_bits():
    assert [rule_from_bits(b) for b in (0, 1, 2, 3, 4, 5, 6, 7)] == [
        "freestyle", "standard", "freestyle", "standard", "renju", "renju", "renju", "renju"]
    with pytest.raises(ProtocolError, match="caro"):
        rule_from_bits(8)
    with pytest.raises(ProtocolError, match="non-negative"):
        rule_from_bits(-1)


class Wrapper:
    """A player in front of another, as TacticalPlayer is: the limit must reach the inner one."""

    def __init__(self, inner):
        self.inner = inner
        self.name = inner.name
        self.reset = inner.reset
        self.choose = inner.choose

    @property
    def wrapped(self):
        return (self.inner,)


def test_info_max_memory_gives_the_searches_the_limit_less_what_the_engine_holds():
    MB = 2**20
    inner = Recorder()
    inner.memory_bytes = None
    out: list[str] = []
    engine = GomocupEngine(lambda: (Wrapper(inner), []), out.append, resident=lambda: 200 * MB)
    # Sent before START (the protocol allows it), the limit applies once the player is ready.
    assert talk(engine, out, f"INFO max_memory {350 * MB}") == []
    assert talk(engine, out, "START 9") == [
        "MESSAGE player: recorder",
        "MESSAGE max_memory 350 MB: 200 MB held before searching, 115 MB for the search trees "
        "and cache", "OK"]
    assert inner.memory_bytes == int(350 * MB * 0.9) - 200 * MB
    # Below what the engine already holds: said plainly, and the searches get nothing.
    said = talk(engine, out, f"INFO max_memory {150 * MB}")
    assert said[0].startswith("MESSAGE max_memory 150 MB is below the 200 MB the engine holds")
    assert inner.memory_bytes == 0
    assert talk(engine, out, "INFO max_memory 0") == []  # 0: no limit, as the protocol says
    assert inner.memory_bytes is None
    for bad in ("INFO max_memory -5", "INFO max_memory lots"):
        assert talk(engine, out, bad)[0].startswith("ERROR INFO max_memory")
    assert inner.memory_bytes is None  # a bad line changes nothing


def test_max_memory_where_the_system_does_not_say_what_the_engine_holds():
    player = Recorder()
    player.memory_bytes = None
    out: list[str] = []
    engine = GomocupEngine(lambda: (player, []), out.append, resident=lambda: None)
    talk(engine, out, "START 9")
    said = talk(engine, out, f"INFO max_memory {100 * 2**20}")
    assert said == ["MESSAGE max_memory 100 MB: this system does not say how much memory the "
                    "engine holds; its searches keep to 90 MB"]
    assert player.memory_bytes == 90 * 2**20


def test_start_errors_when_the_player_cannot_play_the_size():
    engine, out = make_engine(Recorder("bad-size"))
    assert talk(engine, out, "START 15")[-1].startswith("ERROR recorder cannot play this game")
    assert talk(engine, out, "START 9")[-1] == "OK"


def test_factory_failure_is_an_error_and_retried_at_the_next_start():
    calls = []

    def factory():
        calls.append(1)
        if len(calls) == 1:
            raise FileNotFoundError("model.pt is missing")
        return RandomPlayer(), []

    out: list[str] = []
    engine = GomocupEngine(factory, out.append)
    engine.handle("START 9")
    assert out[-1].startswith("ERROR cannot set up the player: FileNotFoundError")
    engine.handle("START 9")
    assert out[-1] == "OK" and len(calls) == 2


def test_end_stops_the_loop_and_closes_the_player():
    player = Recorder()
    engine, out = make_engine(player)
    lines = io.StringIO("START 9\nEND\nABOUT\n")
    engine.run(lines.readline)
    assert player.closed and not engine.running
    assert out == ["MESSAGE hello", "MESSAGE player: recorder", "OK"]  # nothing after END


def test_board_gives_the_engine_the_right_colour():
    engine, out = make_engine(Recorder())
    talk(engine, out, "START 9", "BOARD", "4,4,2", "DONE")
    assert engine.position.moves[0] == 4 * 9 + 4
    assert len(engine.position.moves) == 2 and engine.position.to_move != WHITE


# -- move time -----------------------------------------------------------------------------------
def test_time_control_budget():
    assert TimeControl(1000).budget_s(100) == pytest.approx((1000 * 0.85 - 60) / 1000)
    # Match clock: 10 s left over min(40, max(10, 100 // 2)) = 40 moves.
    tc = TimeControl(timeout_turn_ms=5000, timeout_match_ms=100_000, time_left_ms=10_000)
    assert tc.budget_s(100) == pytest.approx((10_000 / 40 * 0.85 - 60) / 1000)
    # Near the end of the board the clock is spread over at least 10 moves.
    assert tc.budget_s(4) == pytest.approx((10_000 / 10 * 0.85 - 60) / 1000)
    assert TimeControl(0).budget_s(100) == MIN_BUDGET_S
    assert TimeControl(5000, 100_000, 0).budget_s(100) == MIN_BUDGET_S


class FakeClock:
    """Time advances only when a fake search runs: ``cost`` seconds per simulation."""

    def __init__(self, cost):
        self.now = 0.0
        self.cost = cost
        self.runs = []

    def __call__(self):
        return self.now

    def search(self, n):
        self.runs.append(n)
        self.now += n * self.cost
        return n


def test_search_within_without_a_budget_runs_the_limit_once():
    clock = FakeClock(0.001)
    assert search_within(clock.search, 300, None, clock=clock) == 300
    assert clock.runs == [300]


def test_search_within_grows_to_fill_the_budget_and_keeps_within_it():
    clock = FakeClock(0.001)  # 1 ms per simulation, 1 s budget
    result = search_within(clock.search, 100_000, 1.0, clock=clock)
    assert clock.runs[0] == FIRST_CHUNK
    assert result == clock.runs[-1] and result > 500  # most of the budget went to one search
    assert clock.now <= 1.0


def test_search_within_stops_at_the_limit_and_on_a_tiny_budget():
    clock = FakeClock(0.001)
    assert search_within(clock.search, 50, 10.0, clock=clock) == 50
    assert clock.runs == [FIRST_CHUNK, 50]
    clock = FakeClock(0.001)
    assert search_within(clock.search, 10_000, 0.001, clock=clock) == FIRST_CHUNK
    assert clock.runs == [FIRST_CHUNK]
    with pytest.raises(ValueError, match="positive"):
        search_within(clock.search, 0, None)


# -- the tactical safety net ---------------------------------------------------------------------
OVERLINE_THREAT = """
    . . . . . . . . . . O . O . O
    . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . .
    X X X . X X X . . . . . . . .
    . . . O . . . . . . . . . . .
    . . . O . . . . . . . . . . .
    . . . O . . . . . . . . . . .
    . . . O . . . . . . . . . . .
    . . . X . . . . . . . . . . .
    . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . .
"""


def test_tactical_move_wins_blocks_or_leaves_it_to_the_player():
    from alphagomoku.eval.tactics import tactical_move, winning_points
    from alphagomoku.game import GameConfig, Position

    game = GameConfig(width=9)
    win = Position.from_moves(["b5", "i1", "c5", "i2", "d5", "i3", "e5", "i4"], game)
    assert sorted(win.name(p) for p in winning_points(win, win.to_move)) == ["a5", "f5"]
    assert win.name(tactical_move(win)) in ("a5", "f5")  # own win first, not the block at i5
    block = Position.from_moves(["a9", "a1", "b8", "c1", "c7", "g1", "d6"], game)
    assert block.name(tactical_move(block)) == "e5"
    quiet = Position.from_moves(["e5", "a1"], game)
    assert tactical_move(quiet) is None


def test_tactics_follow_the_rule():
    from alphagomoku.eval.tactics import tactical_move
    from alphagomoku.game import GameConfig, Position

    # Black to move; white's only winning point d8 would give black seven in a row.
    free = Position.from_picture(OVERLINE_THREAT, GameConfig(width=15))
    assert free.name(tactical_move(free)) == "d8"  # freestyle: seven wins for black
    renju = Position.from_picture(OVERLINE_THREAT, GameConfig(width=15, rule="renju"))
    assert renju.is_forbidden("d8")
    assert tactical_move(renju) is None  # an overline neither wins nor may block: no tactic


def test_tactical_player_asks_its_player_only_when_nothing_is_urgent():
    from alphagomoku.eval.players import TacticalPlayer
    from alphagomoku.game import GameConfig, Position

    inner = Recorder()
    player = TacticalPlayer(inner)
    game = GameConfig(width=9)
    player.reset(game)
    block = Position.from_moves(["a9", "a1", "b8", "c1", "c7", "g1", "d6"], game)
    assert block.name(player.choose(block, 0.5)) == "e5" and inner.budgets == []
    quiet = Position.from_moves(["e5"], game)
    assert player.choose(quiet, 0.5) == 0 and inner.budgets == [0.5]
    assert player.name == "recorder"
    # The first move of a game is the centre, on any board, without asking the player.
    for width, height, centre in ((9, 9, "e5"), (15, 15, "h8"), (20, 20, "k10"), (12, 7, "g4")):
        empty = Position(GameConfig(width=width, height=height))
        assert empty.name(player.choose(empty, 0.5)) == centre
    assert inner.budgets == [0.5]
    player.close()
    assert inner.closed
