"""The VCF benchmark runs end to end on a tiny setting and reports every figure."""

import argparse

from alphagomoku.bench import vcf as bench


def test_benchmark_reports_every_figure():
    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    args = parser.parse_args(["--selfplay-games", "2", "--simulations", "8", "--games", "2",
                              "--time-per-move", "0.02", "--workers", "0"])
    r = bench.run(args)
    assert r["leaf_budget"] > 0 and r["root_budget"] == 10 * r["leaf_budget"]
    assert r["positions"] > 10
    for where in ("leaf", "root"):
        assert r[f"solver_{where}_calls"] > 0
        assert r[f"solver_{where}_mean_call_ms"] > 0
        assert 0 <= r[f"solver_{where}_share_found"] <= 1
    assert r["search_ms_off"] > 0 and r["search_ms_on"] > 0
    assert r["selfplay_ms_per_move_off"] > 0
    wins, draws, losses = map(int, r["match_wins_draws_losses"].split("-"))
    assert wins + draws + losses == 2
    lower, upper = r["match_elo_95"]
    assert lower <= r["match_elo"] <= upper
