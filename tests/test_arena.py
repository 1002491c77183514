"""Elo on known inputs, openings, the arena's colour pairing, parallel games and error reports."""

from __future__ import annotations

import math
import shlex
import sys

import pytest

from alphagomoku.eval.arena import ArenaError, ArenaResult, make_openings, make_tasks, play_game, run_arena
from alphagomoku.eval.elo import elo_estimate, elo_from_score, paired_elo_estimate, score_from_elo
from alphagomoku.eval.players import RandomPlayer
from alphagomoku.game import BLACK, DRAW, WHITE, GameConfig, IllegalMoveError, Position
from alphagomoku.game.symmetry import index_map, valid_symmetries
from alphagomoku.records import GameRecord, read_psq

GAME9 = GameConfig(width=9)


# -- Elo ---------------------------------------------------------------------------------------------
def test_elo_of_known_scores():
    assert elo_from_score(0.5) == 0.0
    assert elo_from_score(0.75) == pytest.approx(190.85, abs=0.01)
    assert elo_from_score(0.25) == pytest.approx(-190.85, abs=0.01)
    assert score_from_elo(elo_from_score(0.9)) == pytest.approx(0.9)
    with pytest.raises(ValueError, match="no finite Elo"):
        elo_from_score(1.0)


def test_even_match_is_zero_and_symmetric_interval():
    e = elo_estimate(10, 0, 10)
    assert e.elo == 0.0 and e.score == 0.5
    assert e.lower == pytest.approx(-e.upper)
    assert e.lower < 0 < e.upper
    assert not e.clamped


def test_seventy_five_percent_and_its_standard_error():
    e = elo_estimate(15, 0, 5)
    assert e.elo == pytest.approx(190.85, abs=0.01)
    # Per-game scores 1 (x15) and 0 (x5): variance 0.1875, se = sqrt(0.1875 / 20).
    assert e.stderr == pytest.approx(math.sqrt(0.1875 / 20))
    assert e.lower == pytest.approx(elo_from_score(0.75 - 1.959964 * e.stderr), abs=0.01)
    assert e.upper == pytest.approx(elo_from_score(0.75 + 1.959964 * e.stderr), abs=0.01)


def test_draws_narrow_the_interval():
    # Same score (0.5), fewer decisive games: less spread.
    decisive = elo_estimate(10, 0, 10)
    drawish = elo_estimate(5, 10, 5)
    assert drawish.stderr < decisive.stderr
    assert drawish.upper - drawish.lower < decisive.upper - decisive.lower


def test_interval_shrinks_with_more_games():
    widths = [elo_estimate(3 * n, 0, n) for n in (5, 20, 80)]
    assert all(e.elo == pytest.approx(190.85, abs=0.01) for e in widths)
    spans = [e.upper - e.lower for e in widths]
    assert spans[0] > spans[1] > spans[2]


def test_perfect_and_zero_scores_are_clamped_and_said():
    win = elo_estimate(10, 0, 0)
    assert win.clamped and "clamped" in win.note
    assert math.isfinite(win.elo) and math.isfinite(win.lower) and math.isfinite(win.upper)
    assert win.elo == pytest.approx(elo_from_score(9.5 / 10))
    assert win.lower < win.elo  # an interval, not a point
    loss = elo_estimate(0, 0, 10)
    assert loss.clamped and loss.elo == pytest.approx(-win.elo)
    # More straight wins: a higher lower bound.
    assert elo_estimate(40, 0, 0).lower > win.lower


def test_all_draws_still_have_an_interval():
    e = elo_estimate(0, 12, 0)
    assert e.elo == 0.0 and e.lower < 0 < e.upper
    assert "drawn" in e.note


@pytest.mark.parametrize("args", [(0, 0, 0), (-1, 2, 3), (1.5, 0, 0)])
def test_elo_rejects_bad_counts(args):
    with pytest.raises(ValueError):
        elo_estimate(*args)


# -- openings ----------------------------------------------------------------------------------------
def _key(opening, game):
    keys = []
    for k in valid_symmetries(game.width, game.height):
        m = index_map(k, game.width, game.height)
        keys.append((sorted(m[p] for p in opening[0::2]), sorted(m[p] for p in opening[1::2])))
    return min(keys)


def test_pairs_where_the_colours_cancel_give_a_narrower_interval():
    # 30 openings, each played with both colours: 26 split one game each (black won both),
    # A won 3 pairs outright and lost 1. Per game it is 32-0-28, as from 60 independent games.
    pairs = [1.0] * 26 + [2.0] * 3 + [0.0]
    paired = paired_elo_estimate(pairs)
    alone = elo_estimate(32, 0, 28)
    assert paired.score == pytest.approx(alone.score) and paired.elo == pytest.approx(alone.elo)
    assert paired.games == 60
    halves = [v / 2 for v in pairs]
    mean = sum(halves) / 30
    assert paired.stderr == pytest.approx(math.sqrt(sum((h - mean) ** 2 for h in halves) / 30 / 30))
    assert paired.stderr < alone.stderr / 1.9
    assert alone.lower < paired.lower < paired.upper < alone.upper


def test_pairs_that_one_side_sweeps_give_a_wider_interval():
    # Each opening decides the pair: the colours cancel nothing, so 60 games count as 30.
    paired = paired_elo_estimate([2.0] * 15 + [0.0] * 15)
    alone = elo_estimate(30, 0, 30)
    assert paired.elo == 0.0 and paired.stderr == pytest.approx(alone.stderr * math.sqrt(2))


def test_paired_edge_cases_are_clamped_or_spread_and_said():
    swept = paired_elo_estimate([2.0] * 10)
    assert swept.clamped and swept.elo == pytest.approx(elo_estimate(20, 0, 0).elo)
    split = paired_elo_estimate([1.0] * 10)
    assert split.elo == 0.0 and split.stderr == pytest.approx(math.sqrt(0.25 / 20))
    assert "every pair scored the same" in split.note


@pytest.mark.parametrize("pairs, words", [([], "no pairs"), ([1.0, 0.75], "pair 1 scored 0.75"),
                                          ([3.0], "pair 0 scored 3.0")])
def test_paired_elo_rejects_impossible_pair_scores(pairs, words):
    with pytest.raises(ValueError, match=words):
        paired_elo_estimate(pairs)


def test_openings_are_deterministic_central_legal_and_distinct():
    game = GameConfig(width=15)
    ops = make_openings(game, 12, moves=3, seed=7)
    assert ops == make_openings(game, 12, moves=3, seed=7)
    assert ops != make_openings(game, 12, moves=3, seed=8)
    assert len(ops) == 12 and all(len(o) == 3 for o in ops)
    for o in ops:
        for p in o:
            x, y = p % 15, p // 15
            assert abs(x - 7) <= 2 and abs(y - 7) <= 2
        assert not Position.from_moves(o, game).is_over
    keys = [_key(o, game) for o in ops]
    assert len(set(map(repr, keys))) == 12  # no two the same up to symmetry


def test_openings_repeat_when_too_few_exist():
    # One stone within radius 0 of the centre: a single opening.
    ops = make_openings(GAME9, 3, moves=1, radius=0)
    assert ops == [(40,), (40,), (40,)]
    assert make_openings(GAME9, 2, moves=0) == [(), ()]
    with pytest.raises(ValueError, match="does not fit"):
        make_openings(GAME9, 1, moves=10, radius=1)


def test_each_opening_is_played_once_with_each_colour():
    tasks = make_tasks("random", "pure:5", 8, GAME9, seed=3)
    assert [t.a_black for t in tasks] == [True, False] * 4
    for k in range(4):
        assert tasks[2 * k].opening == tasks[2 * k + 1].opening
    assert len({t.opening for t in tasks}) == 4
    assert len({t.seed for t in tasks}) == 8
    with pytest.raises(ValueError, match="even"):
        make_tasks("random", "random", 5, GAME9)


# -- games -------------------------------------------------------------------------------------------
class _Scripted:
    """Plays the given moves in order (index, 'h8' or (x, y))."""

    def __init__(self, moves, name="scripted"):
        self.moves = list(moves)
        self.name = name

    def reset(self, game):
        pass

    def choose(self, position, time_left_s=None):
        return position.index(self.moves.pop(0))


def test_play_game_records_moves_times_and_the_winner():
    black = _Scripted(["b5", "c5", "d5", "e5"], "B")
    white = _Scripted(["b1", "c1", "d1", "e1"], "W")
    rec = play_game(black, white, GAME9, opening=(GAME9.width * 4,), time_per_move=1.0)  # a5 first
    assert rec.winner == BLACK and "5 in a row" in rec.reason
    assert rec.opening == 1 and len(rec.moves) == 9 and rec.times_ms[0] == 0
    assert (rec.black, rec.white) == ("B", "W")


def test_play_game_names_a_player_that_moves_illegally():
    black = _Scripted(["e5", "e5"], "careless")
    white = _Scripted(["a1", "a2"], "W")
    with pytest.raises(IllegalMoveError, match="careless"):
        play_game(black, white, GAME9)


def _check_result(result: ArenaResult, games: int):
    assert len(result.records) == games
    w, d, l = result.counts()
    assert w + d + l == games
    assert result.score == pytest.approx((w + 0.5 * d) / games)
    for i, rec in enumerate(result.records):
        a_name = rec.black if result.a_black[i] else rec.white
        assert a_name.startswith("random")
        assert rec.winner in (BLACK, WHITE, 0)


def test_arena_in_process_and_records(tmp_path):
    result = run_arena("random", "random", 6, GAME9, workers=0, seed=1, out_dir=tmp_path, progress=False)
    _check_result(result, 6)
    assert sorted(p.name for p in tmp_path.glob("*.psq")) == [f"game_{i:04d}.psq" for i in range(6)]
    for i, rec in enumerate(result.records):
        assert read_psq(tmp_path / f"game_{i:04d}.psq").moves == rec.moves
    assert (tmp_path / "game_0003.txt").read_text().startswith("alphagomoku game")
    # Players built from the same spec are told apart in the records.
    assert {result.records[0].black, result.records[0].white} == {"random (A)", "random (B)"}
    d = result.to_dict()
    assert d["wins"] + d["draws"] + d["losses"] == 6 and "elo" in d
    # Games 2k and 2k+1 share an opening, A once with each colour: three pairs.
    assert len(d["pair_scores"]) == 3 and sum(d["pair_scores"]) == d["wins"] + d["draws"] / 2


def test_arena_is_the_same_with_parallel_spawned_workers():
    serial = run_arena("random", "random", 4, GAME9, workers=0, seed=5, progress=False)
    parallel = run_arena("random", "random", 4, GAME9, workers=2, seed=5, progress=False)
    assert [r.moves for r in parallel.records] == [r.moves for r in serial.records]
    assert parallel.counts() == serial.counts()


def _failing_engine_spec(code: str) -> str:
    return "engine:" + shlex.join([sys.executable, "-c", code])


@pytest.mark.parametrize("workers", [0, 1])
def test_a_raising_player_is_reported_with_its_traceback(workers):
    spec = _failing_engine_spec("import sys; print('boom on stderr', file=sys.stderr); sys.exit(3)")
    with pytest.raises(ArenaError) as info:
        run_arena("random", spec, 2, GAME9, workers=workers, progress=False)
    text = str(info.value)
    assert "game 0" in text or "game 1" in text
    assert "Traceback" in text and "ExternalEngineError" in text
    assert "exit status 3" in text and "boom on stderr" in text


def test_arena_rejects_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="unknown player spec"):
        run_arena("randm", "random", 2, GAME9, progress=False)
    from alphagomoku.nn.config import ModelConfig
    from alphagomoku.nn.io import save_model
    from alphagomoku.nn.model import PolicyValueNet

    # Refused before the first game, in the caller's process, rather than by every game.
    seven = save_model(tmp_path / "seven.pt", PolicyValueNet(ModelConfig.preset("tiny", 7)))
    with pytest.raises(ValueError, match="the network plays 7x7 boards; this game is 9x9"):
        run_arena("random", f"tactics:net:{seven}", 2, GAME9, workers=1, progress=False)
    broken = tmp_path / "broken.pt"
    broken.write_bytes(seven.read_bytes()[:200])
    with pytest.raises(ValueError, match="broken.pt is not a readable model file"):
        run_arena(f"net:{broken}", "random", 2, GAME9, progress=False)
    with pytest.raises(ValueError, match="workers"):
        run_arena("random", "random", 2, GAME9, workers=-1, progress=False)


def test_result_outcomes_follow_colours():
    game = GAME9
    win_black = GameRecord(game=game, winner=BLACK)
    win_white = GameRecord(game=game, winner=WHITE)
    r = ArenaResult("a", "b", game, records=[win_black, win_black, win_white], a_black=[True, False, True])
    assert [r.outcome(i) for i in range(3)] == [1.0, 0.0, 0.0]
    assert r.counts() == (1, 0, 2)
    assert r.counts(BLACK) == (1, 0, 1) and r.counts(WHITE) == (0, 0, 1)
    assert "A as black: +1 =0 -1, score 0.500;  A as white: +0 =0 -1, score 0.000" in r.summary()


def test_every_result_gives_the_score_as_black_and_as_white():
    game = GAME9
    black, draw = (GameRecord(game=game, winner=w) for w in (BLACK, DRAW))
    # A wins every game as black and scores a quarter as white: 0.625 overall hides the gap.
    r = ArenaResult("a", "b", game, records=[black, black, black, draw],
                    a_black=[True, False, True, False])
    assert r.score == 0.625 and r.score_as(BLACK) == 1.0 and r.score_as(WHITE) == 0.25
    assert r.colour_line() == "score 0.625: as black 1.000 (+2 =0 -0), as white 0.250 (+0 =1 -1)"
    d = r.to_dict()
    assert d["a_as_black"] == {"wins": 2, "draws": 0, "losses": 0, "score": 1.0}
    assert d["a_as_white"] == {"wins": 0, "draws": 1, "losses": 1, "score": 0.25}
    only_black = ArenaResult("a", "b", game, records=[black], a_black=[True])
    assert only_black.score_as(WHITE) is None and "as white - (+0 =0 -0)" in only_black.colour_line()
    assert "A as white: +0 =0 -0, score -" in only_black.summary()


def test_games_that_repeat_an_earlier_one_are_counted_and_said():
    game = GAME9
    one = GameRecord(game=game, moves=[40, 41, 31], winner=BLACK)
    same = GameRecord(game=game, moves=[40, 41, 31], winner=BLACK)
    other = GameRecord(game=game, moves=[40, 41, 49], winner=BLACK)
    # The same moves with A on the other side is a different game for A.
    r = ArenaResult("a", "b", game, records=[one, same, same, other, one],
                    a_black=[True, True, True, True, False])
    assert r.repeated_games == 2
    assert r.to_dict()["repeated_games"] == 2
    assert "2 games repeat an earlier one move for move" in r.summary()
    fresh = ArenaResult("a", "b", game, records=[one, other], a_black=[True, True])
    assert fresh.repeated_games == 0 and "repeat" not in fresh.summary()


def test_a_match_reports_its_pairs_of_games_when_it_has_them():
    game = GAME9
    opening = [40, 41]
    black = GameRecord(game=game, moves=opening + [31], winner=BLACK, opening=2)
    white = GameRecord(game=game, moves=opening + [32, 33], winner=WHITE, opening=2)
    # Pair 0: A black wins, A white loses (1); pair 1: A wins both (2).
    r = ArenaResult("a", "b", game, records=[black, black, black, white],
                    a_black=[True, False, True, False])
    assert r.pair_scores == [1.0, 2.0]
    assert r.to_dict()["elo_paired"] == paired_elo_estimate([1.0, 2.0]).to_dict()
    assert "by pairs of games on one opening: Elo" in r.summary()
    other = GameRecord(game=game, moves=[30, 41, 31], winner=BLACK, opening=2)
    not_paired = [
        ArenaResult("a", "b", game, records=[black, black], a_black=[True, True]),
        ArenaResult("a", "b", game, records=[black, other], a_black=[True, False]),
        ArenaResult("a", "b", game, records=[black, black, black], a_black=[True, False, True]),
    ]
    for result in not_paired:
        assert result.pair_scores is None and result.paired_elo is None
        assert result.to_dict()["elo_paired"] is None and "by pairs" not in result.summary()


def test_pairs_one_colour_won_twice_are_counted_and_left_out_of_the_other_pairs_score():
    game = GAME9
    opening = [40, 41]
    black = GameRecord(game=game, moves=opening + [31], winner=BLACK, opening=2)
    white = GameRecord(game=game, moves=opening + [32, 33], winner=WHITE, opening=2)
    drawn = GameRecord(game=game, moves=opening + [32], winner=DRAW, opening=2)
    # Pairs: black twice (A 1 of 2), white twice (1 of 2), A wins both (2), A draws and wins
    # as black (1.5), A loses both (0).
    r = ArenaResult("a", "b", game, records=[black, black, white, white, black, white,
                                             black, drawn, white, black],
                    a_black=[True, False, True, False, True, False, True, False, True, False])
    assert r.pair_scores == [1.0, 1.0, 2.0, 1.5, 0.0]
    assert r.pairs_by_colour == {"black": 1, "white": 1, "other": 3}
    assert r.score_other_pairs == (2.0 + 1.5 + 0.0) / 6
    assert r.to_dict()["pairs_by_colour"] == {"black": 1, "white": 1, "other": 3}
    assert "pairs won twice by black 1, by white 1; A's score over the other 3: 0.583" \
        in r.summary()
    split = ArenaResult("a", "b", game, records=[black, black], a_black=[True, False])
    assert split.pairs_by_colour == {"black": 1, "white": 0, "other": 0}
    assert split.score_other_pairs is None
    unpaired = ArenaResult("a", "b", game, records=[black, black], a_black=[True, True])
    assert unpaired.pairs_by_colour is None and unpaired.score_other_pairs is None


def test_random_player_is_seeded_and_legal():
    pos = Position.from_moves(["e5", "e6"], GAME9)
    a = [RandomPlayer(seed=3).choose(pos) for _ in range(3)]
    assert len(set(a)) == 1
    legal = set(pos.legal_moves().tolist())
    p = RandomPlayer(seed=4)
    assert all(p.choose(pos) in legal for _ in range(50))
