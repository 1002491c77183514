"""The VCF benchmark runs end to end on a tiny setting and reports every figure."""

import argparse
import json
from pathlib import Path

import pytest

from alphagomoku.bench import UsageError
from alphagomoku.bench import vcf as bench
from alphagomoku.nn.config import ModelConfig
from alphagomoku.nn.io import save_model
from alphagomoku.nn.model import PolicyValueNet
from alphagomoku.records import parse_text


def test_benchmark_reports_every_figure(tmp_path):
    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    # The engine without the solver gets its own network: an untrained one, without VCF planes.
    against = save_model(tmp_path / "against.pt", PolicyValueNet(ModelConfig.preset("tiny", 15)))
    args = parser.parse_args(["--selfplay-games", "2", "--simulations", "8", "--games", "2",
                              "--time-per-move", "0.02", "--workers", "0", "--vct-budget", "2000",
                              "--match-openings", "balanced", "--match-out", str(tmp_path),
                              "--against-model", str(against)])
    r = bench.run(args)
    assert r["against_model"] == str(against)
    assert r["match_player"] == "vct:net:MODEL against tactics:net:AGAINST_MODEL"
    texts = sorted(tmp_path.glob("game_*.txt"))
    assert len(texts) == 2
    for path in texts:
        record = parse_text(path.read_text())
        assert f"tactics:net:{against}" in (record.black, record.white)
    assert r["leaf_budget"] > 0 and r["root_budget"] == 10 * r["leaf_budget"]
    assert r["positions"] > 10
    for where in ("leaf", "root"):
        assert r[f"solver_{where}_calls"] > 0
        assert r[f"solver_{where}_mean_call_ms"] > 0
        assert 0 <= r[f"solver_{where}_share_found"] <= 1
    assert r["search_ms_off"] > 0 and r["search_ms_on"] > 0
    assert r["selfplay_ms_per_move_off"] > 0
    assert r["vct_depth3_calls"] > 0 and r["vct_depth3_nodes_per_second"] > 0
    assert 0 <= r["vct_depth3_share_found"] <= 1
    wins, draws, losses = map(int, r["match_wins_draws_losses"].split("-"))
    assert wins + draws + losses == 2
    assert r["match_openings"] == "balanced"
    for colour in ("black", "white"):  # one game with each colour
        assert sum(map(int, r[f"match_as_{colour}"].split("-"))) == 1
    lower, upper = r["match_elo_95"]
    assert lower <= r["match_elo"] <= upper
    assert len(r["match_pair_scores"]) == 1 and r["match_pair_scores"][0] == wins + draws / 2
    lower, upper = r["match_elo_95_by_pairs"]
    assert lower <= r["match_elo"] <= upper
    decided = r["match_decided"]  # every decisive game is counted once, under its loser
    assert sum(decided["a_lost"].values()) == losses and sum(decided["b_lost"].values()) == wins
    # --match-out keeps the games and, for each decisive one, where it was decided.
    assert len(list(tmp_path.glob("game_*.psq"))) == 2
    rows = json.loads((tmp_path / "decided.json").read_text())
    assert len(rows) == wins + losses
    for row in rows:
        assert row["kind"] in ("blunder", "already lost", "unclear", "none")
        assert row["kind"] == "none" or row["ply"] >= 0 and isinstance(row["safe"], list)


def test_openings_screened_again_are_the_only_ones_played(tmp_path, monkeypatch):
    from alphagomoku.eval import arena

    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    asked = {}

    def first_only(spec, candidates, game, count, seed, workers, time_per_move, device,
                   progress):
        asked.update(spec=spec, candidates=len(candidates), time_per_move=time_per_move)
        return [tuple(candidates[0])], len(candidates)

    monkeypatch.setattr(arena, "even_openings", first_only)
    args = parser.parse_args(["--selfplay-games", "1", "--simulations", "8", "--games", "4",
                              "--time-per-move", "0.02", "--workers", "0", "--vct-budget", "200",
                              "--match-openings", "balanced", "--decided-budget", "0",
                              "--rescreen-time-per-move", "0.03"])
    r = bench.run(args)
    assert asked["candidates"] == 2 and asked["time_per_move"] == 0.03
    assert asked["spec"].startswith("tactics:net:")  # the engine without the solver screens
    assert r["match_openings_even_again"] == "1 of 2"
    assert r["match_games"] == 2 and len(r["match_pair_scores"]) == 1
    # --screen-player: the engine with the solver screens instead, with the match's model.
    r = bench.run(parser.parse_args(["--selfplay-games", "1", "--simulations", "8", "--games",
                                     "2", "--time-per-move", "0.02", "--workers", "0",
                                     "--vct-budget", "200", "--match-openings", "balanced",
                                     "--decided-budget", "0", "--rescreen-time-per-move", "0.03",
                                     "--screen-player", "vct"]))
    assert asked["spec"] == f"vct:net:{r['model']}" and r["match_screen_player"] == "vct"


def test_a_match_that_cannot_be_played_is_refused_before_the_self_play():
    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    for flags, words in ((["--games", "3"], "--games must be 0"),
                         (["--games", "-2"], "--games must be 0"),
                         (["--time-per-move", "0"], "--time-per-move must be a positive"),
                         (["--screen-time-per-move", "-1"], "--screen-time-per-move must be"),
                         (["--selfplay-games", "0"], "--selfplay-games must be at least 1"),
                         (["--workers", "-1"], "--workers must be 0"),
                         (["--decided-budget", "-1"], "--decided-budget must be 0"),
                         (["--decided-depth", "0"], "--decided-depth must be at least 1"),
                         (["--rescreen-time-per-move", "0"], "--rescreen-time-per-move must be"),
                         (["--match-openings", "centre", "--rescreen-time-per-move", "0.5"],
                          "centre has none to screen"),
                         (["--against-without-planes", "--against-model", "x.pt"],
                          "choose one"),
                         (["--keep-planes", "--against-model", "x.pt"], "choose one"),
                         (["--keep-planes", "--against-without-planes"], "choose one")):
        with pytest.raises(UsageError, match=words):
            bench.run(parser.parse_args(flags))


def test_an_against_model_that_cannot_play_the_match_is_refused_before_the_self_play(tmp_path):
    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    corrupt = tmp_path / "corrupt.pt"
    corrupt.write_bytes(b"not a model")
    nine = save_model(tmp_path / "nine.pt", PolicyValueNet(ModelConfig.preset("tiny", 9)))
    for path, words in ((tmp_path / "missing.pt", "no model file"),
                        (corrupt, "not a readable model file"),
                        (nine, "plays 9x9, --model 15x15")):
        with pytest.raises(UsageError, match=f"--against-model.*{words}"):
            bench.run(parser.parse_args(["--against-model", str(path)]))


def test_the_engine_without_the_solver_plays_the_same_weights_without_the_vcf_planes(tmp_path):
    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    planes = save_model(tmp_path / "planes.pt",
                        PolicyValueNet(ModelConfig.preset("tiny", 9, vcf_plane_budget=50)))
    quick = ["--model", str(planes), "--selfplay-games", "2", "--simulations", "8", "--games",
             "2", "--time-per-move", "0.02", "--workers", "0", "--vct-budget", "2000",
             "--match-openings", "centre", "--decided-budget", "0"]
    cut_dir, kept_dir = tmp_path / "cut", tmp_path / "kept"
    # The default for a model with the planes: no solver anywhere in the engine without it.
    r = bench.run(parser.parse_args([*quick, "--match-out", str(cut_dir)]))
    assert r["match_player"] == "vct:net:MODEL against tactics:net:MODEL_WITHOUT_VCF_PLANES"
    cut = r["against_model"]
    assert cut.endswith("without-vcf-planes.pt") and cut != str(planes)
    games = sorted(cut_dir.glob("game_*.txt"))
    assert len(games) == 2
    for path in games:
        record = parse_text(path.read_text())
        assert {record.black, record.white} == {f"vct:net:{planes}", f"tactics:net:{cut}"}
    assert not Path(cut).exists()  # the cut network lived as long as the match needed it
    # --keep-planes: the same weights, their planes proved by the solver.
    r = bench.run(parser.parse_args([*quick, "--keep-planes", "--match-out", str(kept_dir)]))
    assert r["match_player"] == "vct:net:MODEL against tactics:net:MODEL"
    assert r["against_model"] == str(planes)
    games = sorted(kept_dir.glob("game_*.txt"))
    assert len(games) == 2
    for path in games:
        record = parse_text(path.read_text())
        assert {record.black, record.white} == {f"vct:net:{planes}", f"tactics:net:{planes}"}
    plain = save_model(tmp_path / "plain.pt", PolicyValueNet(ModelConfig.preset("tiny", 9)))
    with pytest.raises(UsageError, match="reads no VCF planes"):
        bench.run(parser.parse_args(["--model", str(plain), "--against-without-planes"]))


def test_even_openings_are_the_ones_a_player_won_with_each_colour_against_itself():
    from alphagomoku.eval.arena import even_openings, make_openings, run_arena
    from alphagomoku.game import BLACK, WHITE, GameConfig

    game = GameConfig(width=7, n_in_row=4)
    candidates = make_openings(game, 12, 2, seed=5)
    even, tried = even_openings("random", candidates, game, 12, seed=3)
    assert tried == 12 and 0 < len(even) < 12
    # The same games again (same seeds): the kept openings are exactly the split ones.
    again = run_arena("random", "random", 24, game, seed=3, progress=False, openings=candidates)
    split = [c for k, c in enumerate(candidates)
             if {again.records[2 * k].winner, again.records[2 * k + 1].winner} == {BLACK, WHITE}]
    assert even == split
    assert even_openings("random", candidates, game, 2, seed=3)[0] == split[:2]


def test_screened_even_openings_are_distinct_even_and_never_padded_with_repeats():
    from alphagomoku.eval.arena import (_canonical, distinct_openings, even_openings,
                                        make_openings, screen_even_openings)
    from alphagomoku.game import GameConfig

    game = GameConfig(width=7, n_in_row=4)
    rounds = []

    def draw(n, round_):
        rounds.append(n)
        return make_openings(game, n, 2, seed=5 + round_)

    found, tried = screen_even_openings("random", draw, game, 6, seed=3)
    assert len(found) == 6 and rounds[0] == 18
    assert len({_canonical(o, game) for o in found}) == 6
    assert tried <= 60
    # The first round is the 18 candidates screened by even_openings with the same seed: what
    # it kept comes first, in order; later rounds only add to it.
    first, _ = even_openings("random", distinct_openings(make_openings(game, 18, 2, seed=5), game),
                             game, 6, seed=3)
    assert first and found[:len(first)] == first
    # Rounds that each draw only 3 candidates: the screen keeps drawing until it has 6.
    found, tried = screen_even_openings(
        "random", lambda n, round_: make_openings(game, 3, 2, seed=20 + round_), game, 6, seed=3)
    assert len(found) == 6 and tried > 6
    assert len({_canonical(o, game) for o in found}) == 6

    # A draw that always gives the same few candidates: the screen stops and returns fewer,
    # none repeated, rather than looping or padding.
    few = make_openings(game, 4, 2, seed=9)
    found, tried = screen_even_openings("random", lambda n, r: few, game, 10, seed=3)
    assert tried == 4 and len(found) <= 4
    assert len({_canonical(o, game) for o in found}) == len(found)
    found, tried = screen_even_openings("random", draw, game, 10, seed=3, max_candidates=5)
    assert tried <= 5 and len(found) <= 5


def test_balanced_openings_are_distinct_and_the_model_must_fit_the_board(tmp_path):
    import pytest

    from alphagomoku.eval.arena import balanced_openings
    from alphagomoku.eval.specs import CPU_HOUR_MODEL
    from alphagomoku.game import GameConfig, Position

    openings = balanced_openings(str(CPU_HOUR_MODEL), GameConfig(width=15), 4, seed=1)
    assert len(set(openings)) == 4
    for moves in openings:
        assert 2 <= len(moves) <= 6 and not Position.from_moves(moves, GameConfig(width=15)).is_over
    with pytest.raises(ValueError, match="plays 15x15 boards, not 9x9"):
        balanced_openings(str(CPU_HOUR_MODEL), GameConfig(width=9), 2)
