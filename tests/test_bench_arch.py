"""scripts/benchmark.py arch: both network shapes timed in one run, on a tiny setting."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_arch_benchmark_times_both_shapes_and_their_ratio():
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "benchmark.py"), "arch", "--json", "--recipe",
         "kata-hour", "--preset",
         "tiny", "--board-size", "7", "--simulations", "4", "--games-per-worker", "2",
         "--repeats", "2"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    r = json.loads(out.stdout)["arch"]
    for arch in ("az", "kata"):
        assert len(r[f"{arch}_positions_per_second_runs"]) == 2
        assert r[f"{arch}_positions_per_second"] > 0 and r[f"{arch}_raw_forward_per_second_at_batch"] > 0
    paired = [a / k for a, k in zip(r["az_positions_per_second_runs"],
                                    r["kata_positions_per_second_runs"])]
    assert r["kata_cost_runs"] == pytest.approx(paired)
    assert r["kata_cost"] == pytest.approx(sum(paired) / 2)
    assert r["kata_parameters"] != r["az_parameters"]
