"""The self-play recipe against colour collapse: balanced openings, value targets mixed with the
search's value, down-weighted decided positions, playout cap randomisation, per-colour counts."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from alphagomoku.game import GameConfig, Position
from alphagomoku.game.constants import BLACK, DRAW, WHITE
from alphagomoku.mcts import SearchConfig, uniform_evaluator
from alphagomoku.nn import ModelConfig, PolicyValueNet
from alphagomoku.selfplay.game_loop import SelfPlaySettings, play_games
from alphagomoku.selfplay.openings import (
    OpeningSettings,
    balanced_opening,
    balanced_openings,
    choose_balanced,
    random_stones,
    steer_target,
)
from alphagomoku.selfplay.training_game import TrainingGameError, TrainingGame
from alphagomoku.train.augment import make_batch
from alphagomoku.train.buffer import ReplayBuffer, decided_mask
from alphagomoku.train.config import ConfigError, TrainConfig
from alphagomoku.train.selfplay_epoch import colour_counts
from alphagomoku.train.loss import alphazero_loss

GAME = GameConfig(width=9)


# -- balanced openings -----------------------------------------------------------------------------

def test_random_stones_are_legal_central_and_clustered():
    rng = np.random.default_rng(0)
    for _ in range(200):
        moves = random_stones(GAME, 6, rng)
        assert moves is not None and len(moves) == 6
        pos = Position.from_moves(moves, GAME)  # replays legally
        assert not pos.is_over
        xs, ys = zip(*[(m % 9, m // 9) for m in moves])
        assert abs(xs[0] - 4) <= 1 and abs(ys[0] - 4) <= 1  # radius 9 // 5 = 1 around e5
        for k in range(1, 6):
            assert any(max(abs(xs[k] - xs[i]), abs(ys[k] - ys[i])) <= 2 for i in range(k))


def test_renju_openings_never_use_forbidden_points():
    game = GameConfig(width=15, rule="renju")
    rng = np.random.default_rng(1)
    for _ in range(100):
        moves = random_stones(game, 8, rng)
        Position.from_moves(moves, game)  # raises IllegalMoveError on a forbidden point


def test_openings_are_reproducible_from_the_seed():
    settings = OpeningSettings()
    a = balanced_opening(GAME, uniform_evaluator, settings, np.random.default_rng(42))
    b = balanced_opening(GAME, uniform_evaluator, settings, np.random.default_rng(42))
    c = balanced_opening(GAME, uniform_evaluator, settings, np.random.default_rng(43))
    assert a == b and a[0] != c[0]


def lopsided_evaluator(planes, legal):
    """Value 0.99 for the side to move after an odd number of stones, 0.05 after an even
    number: only even openings are balanced."""
    stones = planes[:, :2].sum(axis=(1, 2, 3))
    values = np.where(stones % 2 == 0, 0.05, 0.99).astype(np.float32)
    priors = legal / legal.sum(axis=1, keepdims=True)
    return priors.astype(np.float32), values


def test_openings_far_from_even_are_rejected():
    settings = OpeningSettings(min_stones=1, max_stones=6)
    rng = np.random.default_rng(5)
    for _ in range(30):
        moves, value, _ = balanced_opening(GAME, lopsided_evaluator, settings, rng)
        assert len(moves) % 2 == 0 and abs(value) <= settings.max_value


def test_many_openings_share_one_call_a_round_and_one_alone_is_balanced_opening():
    calls = []

    def counting(planes, legal):
        calls.append(len(planes))
        return lopsided_evaluator(planes, legal)

    settings = OpeningSettings(min_stones=1, max_stones=6, candidates=8)
    chosen, rounds = balanced_openings(GAME, counting, settings, np.random.default_rng(3), 5)
    assert len(chosen) == 5 and rounds == len(calls) and calls[0] == 5 * 8
    assert all(len(moves) % 2 == 0 and abs(v) <= settings.max_value for moves, v in chosen)
    one = balanced_openings(GAME, lopsided_evaluator, settings, np.random.default_rng(9), 1)
    moves, value, n = balanced_opening(GAME, lopsided_evaluator, settings, np.random.default_rng(9))
    assert one == ([(moves, value)], n)


def test_a_task_starts_its_games_with_one_opening_call():
    calls = []

    def counting(planes, legal):
        calls.append(len(planes))
        return uniform_evaluator(planes, legal)

    settings = SelfPlaySettings(games_at_once=6, openings=OpeningSettings(share=1.0, candidates=4))
    play_games(counting, GAME, SearchConfig(num_simulations=4), settings, 6, seed=1)
    assert calls[0] == 6 * 4  # every game's candidates in the first call
    assert all(n <= 6 for n in calls[1:])  # then the searches' batches


def test_choose_balanced_weights_and_bound():
    rng = np.random.default_rng(0)
    assert choose_balanced(np.array([0.95, -0.99, 0.7]), OpeningSettings(max_value=0.6), rng) == -1
    picks = [choose_balanced(np.array([0.0, 0.5, 0.9]), OpeningSettings(max_value=0.6), rng)
             for _ in range(2000)]
    # (1 - v^2)^4: 1 against 0.316 for v = 0.5; v = 0.9 is beyond the bound.
    share = picks.count(0) / len(picks)
    assert 2 not in picks and 0.70 < share < 0.82


def test_unbalanced_fallback_returns_the_most_even_candidate():
    def always_decided(planes, legal):
        n = len(planes)
        return legal / legal.sum(1, keepdims=True), np.linspace(0.8, 0.99, n).astype(np.float32)

    moves, value, calls = balanced_opening(GAME, always_decided, OpeningSettings(retries=2),
                                           np.random.default_rng(0))
    assert calls == 2 and value == pytest.approx(0.8) and moves


def black_ahead_evaluator(planes, legal):
    """Black is 0.5 ahead in every position, seen from the side to move."""
    stones = planes[:, :2].sum(axis=(1, 2, 3))
    values = np.where(stones % 2 == 0, 0.5, -0.5).astype(np.float32)
    return (legal / legal.sum(axis=1, keepdims=True)).astype(np.float32), values


@pytest.mark.parametrize("target, distance", [(0.5, 0.0), (0.3, 0.2), (-0.3, 0.8)])
def test_openings_are_judged_against_the_steered_target(target, distance):
    settings = OpeningSettings(black_target=target, max_value=0.6)
    rng = np.random.default_rng(3)
    for _ in range(10):
        moves, value, calls = balanced_opening(GAME, black_ahead_evaluator, settings, rng)
        # The distance is the same with either colour to move: the target flips with the mover.
        assert abs(value) == pytest.approx(distance, abs=1e-6)
        assert calls == (1 if distance <= 0.6 else settings.retries)


def test_even_is_steered_against_the_colour_that_wins_more():
    assert steer_target(0.0, 78, 22, 100, gain=0.25) == pytest.approx(-0.14)
    assert steer_target(-0.1, 30, 70, 100, gain=0.25) == pytest.approx(0.0)
    assert steer_target(-0.45, 100, 0, 100, gain=0.25) == -0.5  # bounded
    assert steer_target(0.2, 9, 1, 10, gain=0.0) == 0.2        # gain 0: off
    assert steer_target(0.2, 0, 0, 0, gain=0.25) == 0.2        # no games from openings
    with pytest.raises(ValueError, match="black_target"):
        OpeningSettings(black_target=1.0)


def test_the_trainer_sends_its_target_with_every_task_then_steers_it(tmp_path):
    from alphagomoku.selfplay.worker import _WorkerState, run_task
    from alphagomoku.train.loop import Trainer
    from alphagomoku.train.selfplay_epoch import worker_spec

    cfg = TrainConfig(board_size=7, n_in_row=4, run_dir=str(tmp_path / "run"), device="cpu",
                      selfplay_games=8, games_per_task=4, simulations=4, opening_share=1.0)
    trainer = Trainer(cfg, log=lambda line: None, progress=False)
    trainer.opening_target = -0.2
    seen = []

    class InlinePool:  # the worker's own task runner, in this process, with a uniform network
        def play(self, tasks, on_result):
            spec = worker_spec(trainer.cfg, trainer.device)
            state = _WorkerState(index=0, spec=spec, evaluator=uniform_evaluator,
                                 version=0)
            for task in tasks:
                seen.append(task.opening_black_target)
                on_result(run_task(state, task))

    row = {"epoch": 1}
    trainer._play_epoch(InlinePool(), 1, row)
    assert seen == [-0.2, -0.2] and row["opening_target"] == -0.2
    assert row["opening_games"] == 8
    expected = steer_target(-0.2, row["opening_black_wins"], row["opening_white_wins"], 8, 0.25)
    assert trainer.opening_target == pytest.approx(expected)
    assert trainer._state().to_dict()["opening_target"] == trainer.opening_target


# -- progressive simulation -------------------------------------------------------------------------

def test_simulations_rise_geometrically_from_the_start_to_the_end_of_the_run():
    from alphagomoku.train.selfplay_epoch import epoch_simulations

    assert [epoch_simulations(TrainConfig(simulations=32), d) for d in (0, 0.5, 1)] == [32, 32, 32]
    cfg = TrainConfig(simulations=64, simulations_start=16)
    assert [epoch_simulations(cfg, d) for d in (-0.1, 0, 0.25, 0.5, 1, 1.5)] == [16, 16, 23, 32, 64, 64]


def test_a_task_searches_with_its_own_simulations_and_aims_at_its_own_target():
    from alphagomoku.selfplay.worker import SelfPlayTask, WorkerSpec, task_search, task_settings

    search = SearchConfig(num_simulations=32)
    settings = SelfPlaySettings(openings=OpeningSettings(share=1.0))
    spec = WorkerSpec(game=GAME, search=search, settings=settings)
    plain = SelfPlayTask(0, 4, 1, "w.pt", 0)
    assert task_search(plain, spec) is search
    assert task_settings(plain, spec).openings.black_target == 0.0
    task = SelfPlayTask(0, 4, 1, "w.pt", 0, opening_black_target=-0.3, simulations=8)
    assert task_search(task, spec) == SearchConfig(num_simulations=8)
    assert task_settings(task, spec).openings == OpeningSettings(share=1.0, black_target=-0.3)
    no_openings = WorkerSpec(game=GAME, search=search, settings=SelfPlaySettings(openings=None))
    assert task_settings(task, no_openings) is no_openings.settings


def test_the_trainer_sends_each_epochs_simulations_and_the_games_use_them(tmp_path, monkeypatch):
    import alphagomoku.selfplay.game_loop as game_loop
    import alphagomoku.selfplay.worker as worker
    from alphagomoku.train.loop import Trainer
    from alphagomoku.train.selfplay_epoch import worker_spec

    cfg = TrainConfig(board_size=7, n_in_row=4, run_dir=str(tmp_path / "run"), device="cpu",
                      selfplay_games=4, games_per_task=2, simulations=8, simulations_start=2,
                      epochs=2, opening_share=0.0)
    trainer = Trainer(cfg, log=lambda line: None, progress=False)
    searched = []
    real = game_loop.play_games

    def spy(evaluator, game, search, *args, **kwargs):
        searched.append(search.num_simulations)
        return real(evaluator, game, search, *args, **kwargs)

    monkeypatch.setattr(game_loop, "play_games", spy)

    class InlinePool:
        def play(self, tasks, on_result):
            state = worker._WorkerState(index=0, spec=worker_spec(trainer.cfg, trainer.device),
                                        evaluator=uniform_evaluator, version=0)
            for task in tasks:
                on_result(worker.run_task(state, task))

    rows = []
    for epoch in (1, 2):
        trainer.epoch = epoch - 1  # half the epochs done before the second
        rows.append({"epoch": epoch})
        trainer._play_epoch(InlinePool(), epoch, rows[-1])
    assert [r["simulations"] for r in rows] == [2, 4]
    assert searched == [2, 2, 4, 4]


# -- value targets, decided positions ---------------------------------------------------------------

def hand_game() -> TrainingGame:
    # A 2-stone opening, then black makes five along the top row of the 9x9 board.
    moves = ["e5", "e6", "a9", "a1", "b9", "b1", "c9", "c1", "d9", "d1", "e9"]
    pos = Position.from_moves(moves, GAME)
    assert pos.winner == BLACK
    idx = [pos.index(m) for m in moves]
    s = len(moves) - 2
    return TrainingGame(
        moves=np.array(idx, np.int16), policies=np.full((s, 81), 1 / 81, np.float16),
        root_values=np.array([0.1, -0.2, 0.95, -0.95, 0.97, -0.99, 1.0, -1.0, 1.0], np.float16),
        result=BLACK, opening=2,
        move_values=np.array([0.2, -0.1, 0.9, -0.9, 0.95, -0.98, 1.0, -1.0, 1.0], np.float16),
        full_search=np.array([1, 0, 1, 1, 0, 1, 1, 1, 1], bool),
    )


def test_value_target_mixes_result_and_search_value():
    rec = hand_game()
    rec.validate(GAME)
    z = rec.value_targets()
    # Searched plies start at ply 2 (black to move): black won.
    assert z.tolist() == [1, -1, 1, -1, 1, -1, 1, -1, 1]
    buf = ReplayBuffer(GAME, 100)
    buf.add_game(rec)
    assert len(buf) == 9 and buf.to_move[0] == BLACK and (buf.boards[0] != 0).sum() == 2
    lam = 0.3
    got = buf.value_targets(np.arange(9), lam)
    want = (1 - lam) * z + lam * rec.move_values.astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_array_equal(buf.value_targets(np.arange(9), 0.0), z)


def test_draws_stay_zero_in_the_result_part():
    rec = hand_game()
    rec.result = DRAW
    assert not rec.value_targets().any()


def test_decided_positions_are_down_weighted():
    rec = hand_game()
    assert decided_mask(rec.root_values, 0.9, 3).tolist() == [0, 0, 0, 0, 1, 1, 1, 1, 1]
    buf = ReplayBuffer(GAME, 100)
    buf.add_game(rec, decided_threshold=0.9, decided_plies=3, decided_weight=0.1)
    np.testing.assert_allclose(buf.weight[:9], [1, 1, 1, 1, 0.1, 0.1, 0.1, 0.1, 0.1])


# -- playout cap randomisation ------------------------------------------------------------------------

def test_only_full_searches_carry_policy_targets():
    rec = hand_game()
    buf = ReplayBuffer(GAME, 100)
    buf.add_game(rec, decided_weight=0.5)
    batch = make_batch(buf, np.arange(9), None, GAME)
    full = rec.full_search.astype(np.float32)
    np.testing.assert_allclose(batch.policy_weight, full * batch.value_weight)
    # The loss ignores the policy target of a fast-search position entirely.
    model = PolicyValueNet(ModelConfig.preset("tiny", 9))
    t = [torch.from_numpy(a) for a in batch]
    base = alphazero_loss(model, t[0], t[1], t[2], 0.0, t[3], t[4])["policy"]
    changed = t[1].clone()
    fast = int(np.flatnonzero(~rec.full_search)[0])
    changed[fast] = 0.0
    changed[fast, 40] = 1.0
    again = alphazero_loss(model, t[0], changed, t[2], 0.0, t[3], t[4])["policy"]
    assert torch.allclose(base, again)
    full_row = int(np.flatnonzero(rec.full_search)[0])
    changed[full_row] = 0.0
    changed[full_row, 40] = 1.0
    assert not torch.allclose(base, alphazero_loss(model, t[0], changed, t[2], 0.0, t[3], t[4])["policy"])


@pytest.mark.parametrize("rule", ["puct", "gumbel", "gumbel-interior"])
def test_play_games_records_openings_and_search_kinds(rule):
    interior = "gumbel" if rule == "gumbel-interior" else "puct"
    rule = "gumbel" if rule == "gumbel-interior" else rule
    search = SearchConfig(num_simulations=16, root_rule=rule, gumbel_m=8, interior_rule=interior,
                          dirichlet_eps=0.25 if rule == "puct" else 0.0)
    settings = SelfPlaySettings(games_at_once=4, openings=OpeningSettings(share=0.5),
                                full_search_share=0.5, fast_simulations=4)
    records, stats = play_games(uniform_evaluator, GAME, search, settings, 8, seed=3)
    assert len(records) == 8 and stats["openings"] == sum(r.opening > 0 for r in records)
    assert 0 < stats["openings"] < 8
    assert stats["positions"] == sum(r.searched for r in records)
    fulls = np.concatenate([r.full_search for r in records])
    assert 0.3 < fulls.mean() < 0.7
    for r in records:
        r.validate(GAME)
        pos = Position.from_moves(r.moves[:r.opening].tolist(), GAME)
        for j in range(r.searched):
            legal = pos.legal_mask()
            p = r.policies[j].astype(np.float32)
            assert p[~legal].sum() == 0 and abs(p.sum() - 1) < 1e-2
            if rule == "gumbel" and r.full_search[j]:
                # The improved policy covers every legal move, not only visited ones.
                assert (p[legal] > 0).mean() > 0.5 or p.max() == 1.0
            pos.play(int(r.moves[r.opening + j]))


def test_a_finished_games_place_goes_to_the_next_so_batches_stay_fuller():
    search = SearchConfig(num_simulations=8, root_rule="gumbel", gumbel_m=4)
    settings = SelfPlaySettings(games_at_once=4)
    sizes = []

    def counting(planes, legal):
        sizes.append(len(planes))
        return uniform_evaluator(planes, legal)

    records, stats = play_games(counting, GAME, search, settings, 12, seed=4)
    assert len(records) == 12 and max(sizes) <= 4
    refilled = stats["evaluations"] / stats["steps"]
    _, alone = play_games(uniform_evaluator, GAME, search, settings, 4, seed=4)
    # Four games started together end apart, and their last calls carry few positions.
    assert refilled > alone["evaluations"] / alone["steps"]


# -- games ended by a proved VCF ------------------------------------------------------------------------

def test_games_end_at_a_proved_vcf_and_the_parent_checks_it():
    search = SearchConfig(num_simulations=8, root_rule="gumbel", gumbel_m=4)
    settings = SelfPlaySettings(games_at_once=4, vcf_end_budget=2000)
    records, _ = play_games(uniform_evaluator, GAME, search, settings, 8, seed=1)
    ended = [r for r in records if r.vcf_ended]
    assert ended, "uniform play leaves VCFs on the board: some game must end by one"
    for r in records:
        r.validate(GAME)  # the parent re-proves each VCF ending
    r = ended[0]
    pos = Position.from_moves(r.moves.tolist(), GAME)
    assert not pos.is_over and r.result == pos.to_move
    # A record claiming a VCF where the winner is the other side is refused.
    fake = TrainingGame(r.moves, r.policies, r.root_values, 3 - r.result, opening=r.opening,
                      move_values=r.move_values, full_search=r.full_search, vcf_ended=True)
    with pytest.raises(TrainingGameError, match="VCF"):
        fake.validate(GAME)


# -- per-colour counts and the collapse warning ----------------------------------------------------------

def test_colour_counts_split_openings_from_the_empty_board():
    def rec(result, opening):
        return TrainingGame(np.zeros(opening + 1, np.int16), np.zeros((1, 81), np.float16),
                          np.zeros(1, np.float16), result, opening=opening)

    counts = colour_counts([rec(BLACK, 0), rec(WHITE, 2), rec(WHITE, 3), rec(DRAW, 1), rec(BLACK, 0)])
    assert counts == {
        "opening_games": 3, "opening_black_wins": 0, "opening_white_wins": 2, "opening_draws": 1,
        "empty_games": 2, "empty_black_wins": 2, "empty_white_wins": 0, "empty_draws": 0,
    }


def test_collapse_warning_names_the_colour_after_three_epochs(tmp_path):
    from alphagomoku.train.loop import Trainer

    lines = []
    cfg = TrainConfig(board_size=7, n_in_row=4, run_dir=str(tmp_path / "run"), device="cpu")
    trainer = Trainer(cfg, log=lines.append, progress=False)
    lopsided = {"opening_games": 20, "opening_black_wins": 1, "opening_white_wins": 19}
    even = {"opening_games": 20, "opening_black_wins": 9, "opening_white_wins": 11}
    for row in (lopsided, lopsided, even, lopsided, lopsided):
        trainer._watch_colours(dict(row))
    assert not any("warning" in x for x in lines)
    trainer._watch_colours(dict(lopsided))
    assert any("warning: white won 19 of 20" in x and "colour collapse" in x for x in lines)


def test_too_few_opening_games_break_a_lopsided_streak():
    from alphagomoku.train.selfplay_epoch import colour_collapse

    cfg = TrainConfig(board_size=7, n_in_row=4, collapse_share=0.85, collapse_epochs=3)
    few = {"opening_games": 7, "opening_black_wins": 7, "opening_white_wins": 0}
    lopsided = {"opening_games": 20, "opening_black_wins": 18, "opening_white_wins": 2}
    assert colour_collapse(lopsided, cfg, 2)[0] == 3
    assert colour_collapse(lopsided, cfg, 2)[1].startswith("warning: black won 18 of 20 ")
    assert colour_collapse(few, cfg, 2) == (0, "")
    assert colour_collapse({**lopsided, "opening_black_wins": 17}, cfg, 2) == (0, "")


@pytest.mark.parametrize("change, flag", [
    ({"search": "alphabeta"}, "--search"),
    ({"search": "puct", "gumbel_interior": "gumbel"}, "--gumbel-interior"),
    ({"gumbel_interior": "ucb1"}, "--gumbel-interior"),
    ({"full_search_share": 0.0}, "--full-search-share"),
    ({"full_search_share": 0.5, "fast_simulations": 100}, "--fast-simulations"),
    ({"full_search_share": 0.5, "fast_simulations": 16, "simulations_start": 8},
     "--fast-simulations"),
    ({"simulations_start": 1}, "--simulations-start"),
    ({"simulations": 32, "simulations_start": 64}, "--simulations-start"),
    ({"opening_share": 1.5}, "--opening-share"),
    ({"opening_min_stones": 5, "opening_max_stones": 2}, "--opening-min-stones"),
    ({"opening_balance_gain": 1.5}, "--opening-balance-gain"),
    ({"value_q_weight": -0.1}, "--value-q-weight"),
    ({"decided_weight": 0.0}, "--decided-weight"),
    ({"gumbel_m": 0}, "--gumbel-m"),
    ({"games_per_task": 8, "games_at_once": 9}, "--games-at-once"),
    ({"games_at_once": -1}, "--games-at-once"),
])
def test_recipe_settings_are_validated(change, flag):
    with pytest.raises(ConfigError, match=flag):
        TrainConfig(**change)


def test_selfplay_games_export_to_psq_with_their_openings(tmp_path):
    from alphagomoku.records import read_psq
    from alphagomoku.train.game_files import export_psq, save_games

    search = SearchConfig(num_simulations=8, root_rule="gumbel", gumbel_m=4)
    settings = SelfPlaySettings(games_at_once=4, openings=OpeningSettings(share=1.0))
    records, _ = play_games(uniform_evaluator, GAME, search, settings, 4, seed=2)
    save_games(tmp_path / "epoch_000001.npz", records, GAME)
    files = export_psq(tmp_path / "epoch_000001.npz", tmp_path / "psq")
    assert len(files) == 4
    for f, r in zip(files, records):
        back = read_psq(f, GAME)
        assert back.moves == r.moves.tolist() and back.opening == r.opening > 0
        assert back.winner == r.result
