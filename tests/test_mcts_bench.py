"""The MCTS benchmark runs end to end on a tiny setting and reports every figure."""

import argparse

import pytest

from alphagomoku.bench import mcts as bench


def _args(*argv):
    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_benchmark_reports_every_figure():
    args = _args("--size", "7", "--simulations", "30", "--trees", "1", "2", "--stones", "6",
                 "--playouts", "30", "--repeats", "1")
    result = bench.run(args)
    assert result["mid_stones"] == 6
    for prefix in ("", "fpu0_"):
        for where in ("empty", "mid"):
            for k in (1, 2):
                for kind in ("fused", "loop"):
                    assert result[f"{prefix}{where}_k{k}_{kind}_sims_per_s"] > 0
                assert result[f"{prefix}{where}_k{k}_mean_depth"] >= 0
    assert result["pure_uct_playouts_per_s"] > 0 and result["pure_uniform_prior_playouts_per_s"] > 0
    assert "fused" in result["about"] and result["target_sims_per_s"] == 250_000
    met = all(result[f"empty_k{k}_fused_sims_per_s"] >= 250_000 for k in (1, 2))
    assert result["target_met_empty_fused"] is met
    # With no knowledge the tree is wide, not one line from the root to the end of a game.
    assert 0 < result["empty_k1_mean_depth"] < 6


def test_benchmark_rejects_bad_options():
    with pytest.raises(ValueError, match="--simulations"):
        bench.run(_args("--simulations", "0"))
