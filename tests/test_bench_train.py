"""scripts/benchmark.py train: the trainer's steps with batches built in the loop and on threads,
and the replay buffer's save, timed on a tiny setting."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _bench(*flags: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "benchmark.py"), "train", *flags],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)


def test_train_benchmark_times_each_thread_count_and_both_saves():
    out = _bench("--json", "--recipe", "cpu-hour", "--device", "cpu", "--batch-size", "32",
                 "--steps", "3", "--repeats", "2", "--batch-threads", "1,2",
                 "--positions", "3000")
    assert out.returncode == 0, out.stderr[-2000:]
    r = json.loads(out.stdout)["train"]
    assert (r["preset"], r["batch_size"], r["vcf_plane_budget"]) == ("tiny", 32, 100)
    for threads in (0, 1, 2):
        runs = r[f"steps_per_s_threads_{threads}_runs"]
        assert len(runs) == 2 and min(runs) > 0
    assert r["speedup"] == max(r["steps_per_s_threads_1"],
                               r["steps_per_s_threads_2"]) / r["steps_per_s_threads_0"]
    save = r["save"]
    assert save["positions"] == 3000 and r["source_positions"] > 0
    assert min(save["savez_compressed_s"], save["copy_s"], save["write_s"]) > 0
    assert save["file_mb"] > 0 and save["savez_compressed_mb"] > 0


def test_train_benchmark_times_each_precision_mode_beside_the_first():
    out = _bench("--json", "--recipe", "cpu-hour", "--device", "cpu", "--batch-size", "32",
                 "--steps", "3", "--repeats", "1", "--batch-threads", "0", "--amp", "off,on",
                 "--positions", "2000")
    assert out.returncode == 0, out.stderr[-2000:]
    r = json.loads(out.stdout)["train"]
    assert r["amp"] == {"off": "fp32", "on": "bfloat16"}
    assert min(r["steps_per_s_threads_0_runs"] + r["steps_per_s_amp_on_runs"]) > 0
    assert r["amp_on_over_off"] == r["steps_per_s_amp_on"] / r["steps_per_s_threads_0"]


def test_train_benchmark_refuses_a_negative_thread_count_an_unknown_mode_and_recipe():
    out = _bench("--batch-threads", "2,-1")
    assert out.returncode == 2 and "thread counts of 0 or more" in out.stderr
    out = _bench("--amp", "off,bf16")
    assert out.returncode == 2 and "auto, on, off" in out.stderr
    out = _bench("--recipe", "no-such-recipe", "--device", "cpu")
    assert out.returncode == 2 and "no-such-recipe" in out.stderr
