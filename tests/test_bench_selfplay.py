"""scripts/benchmark.py: the self-play figures come out, as JSON, on a tiny setting."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_selfplay_benchmark_reports_speed_and_network_share():
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "benchmark.py"), "selfplay", "--json", "--preset", "tiny",
         "--board-size", "7", "--simulations", "4", "--games-per-worker", "2", "--workers", "1,2"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    data = json.loads(out.stdout)
    r = data["selfplay"]
    assert data["machine"]["cpu_count"] >= 1
    assert r["workers1_games"] == 2 and r["workers2_games"] == 4
    for w in (1, 2):
        assert r[f"workers{w}_positions_per_second"] > 0
        assert 0 < r[f"workers{w}_network_share"] <= 1
        assert r[f"workers{w}_mean_batch"] >= 1
    assert r["speedup_2_vs_1"] > 0 and r["raw_forward_per_second_at_batch"] > 0


def test_unknown_benchmark_is_a_clear_error():
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "benchmark.py"), "trees"],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 2 and "invalid choice: 'trees'" in out.stderr
