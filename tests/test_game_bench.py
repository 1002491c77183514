"""The game benchmark runs from the command-line defaults and reports sane figures."""

import argparse

import pytest

from alphagomoku.bench import game


def parse(argv):
    parser = argparse.ArgumentParser()
    game.add_arguments(parser)
    return parser.parse_args(argv)


def test_defaults_parse_to_every_rule_on_15x15():
    args = parse([])
    assert (args.size, args.n_in_row, args.rules) == (15, 5, ["freestyle", "standard", "renju"])


def test_benchmark_reports_speed_and_result_shares():
    result = game.run(parse(["--games", "300", "--size", "9", "--repeats", "2", "--seed", "3"]))
    assert (result["board"], result["n_in_row"], result["games"]) == ("9x9", 5, 300)
    for rule in ("freestyle", "standard", "renju"):
        assert result[f"{rule}_games_per_s"] > 0
        shares = [result[f"{rule}_{who}_share"] for who in ("black", "white", "draw")]
        assert sum(shares) == pytest.approx(1.0)
        assert 0.2 < shares[0] < 0.8  # both sides win a fair part of random games
    again = game.run(parse(["--games", "300", "--size", "9", "--repeats", "2", "--seed", "3"]))
    assert again["renju_black_share"] == result["renju_black_share"]  # the seed fixes the games


def test_benchmark_rejects_bad_options():
    with pytest.raises(ValueError, match="--games and --repeats must be at least 1"):
        game.run(parse(["--games", "0"]))
    with pytest.raises(ValueError, match="renju is defined for five in a row only"):
        game.run(parse(["--rules", "renju", "--n-in-row", "4", "--games", "10"]))


def test_rng_state_is_never_zero():
    # The one seed whose mixed value is zero: xorshift would then draw zeros forever.
    c, d = 0x9E3779B97F4A7C15, 0x2545F4914F6CDD1D
    zero_seed = (-d * pow(c, -1, 2**64)) % 2**64
    assert (zero_seed * c + d) % 2**64 == 0
    assert int(game.rng_state(zero_seed)[0]) != 0
    assert len({int(game.rng_state(seed)[0]) for seed in range(100)}) == 100
