"""tools/ablation.sh's order of work: the early base run, the other seed, each change, the base
run last; every other run matched against that last base run; finished work not done again; and
the table. The script's Python is a recorder that writes what each command would leave behind,
so this checks the orchestration in a second, not what a run learns."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

RECORDER = r'''
import json, sys
from pathlib import Path

args = sys.argv[1:]
with open(LOG, "a") as f:
    f.write(json.dumps(args) + "\n")
if args[0] == "-":  # the table's script, read from stdin, with its arguments as python has them
    sys.argv = args
    exec(sys.stdin.read())
elif args[0].endswith("benchmark.py"):
    out = Path(args[args.index("--out") + 1])
    seed = int(args[args.index("--seed") + 1])
    if out.exists():
        sys.exit(f"{out} exists")  # as the benchmark refuses to train into a used folder
    snapshots = out / "snapshots"
    snapshots.mkdir(parents=True)
    (snapshots / "min_000.50.pt").write_text("weights")
    epochs = 3 + seed + args.count("--set")
    (out / "metrics.csv").write_text("epoch,loss\n" + "".join(f"{i},1.0\n" for i in range(epochs)))
else:  # evaluate.py: A wins 120 of 200, 70 of them as black
    side = lambda w, l: {"wins": w, "draws": 0, "losses": l, "score": w / (w + l)}
    print(json.dumps({"wins": 120, "draws": 0, "losses": 80, "score": 0.6,
                      "elo_paired": {"elo": 70.4, "lower": 20.2, "upper": 121.9},
                      "a_as_black": side(70, 30), "a_as_white": side(50, 50)}))
'''


@pytest.fixture
def ablation(tmp_path):
    """Run tools/ablation.sh in a copy of the repository's layout with the recorder as PY;
    returns (run(args) -> CompletedProcess, the recorded calls, the output folder)."""
    if shutil.which("bash") is None:
        pytest.fail("bash is needed to run tools/ablation.sh")
    log = tmp_path / "calls.jsonl"
    recorder = tmp_path / "py"
    recorder.write_text(f"#!{sys.executable}\nLOG = {str(log)!r}\n{RECORDER}")
    recorder.chmod(0o755)
    out = tmp_path / "out"
    env = dict(os.environ, PY=str(recorder), OUT=str(out), MINUTES="0.5", GAMES="200")

    def run(*changes: str) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", str(ROOT / "tools/ablation.sh"), "kata-hour", *changes],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)

    def calls() -> list[list[str]]:
        return [json.loads(line) for line in log.read_text().splitlines()]

    return run, calls, out


def _trained(calls) -> list[tuple[str, str, list[str]]]:
    """(run name, seed, its --set values) of each training call, in order."""
    out = []
    for args in calls:
        if args[0].endswith("benchmark.py"):
            sets = [args[i + 1] for i, a in enumerate(args) if a == "--set"]
            out.append((Path(args[args.index("--out") + 1]).name,
                        args[args.index("--seed") + 1], sets))
    return out


def _matched(calls) -> list[tuple[str, str]]:
    """(player A's run, player B's run) of each match, in order."""
    runs = []
    for args in calls:
        if args[0].endswith("evaluate.py"):
            a = args[args.index("--player-a") + 1].split(":")[2]
            b = args[args.index("--player-b") + 1].split(":")[2]
            runs.append((Path(a).parents[1].name, Path(b).parents[1].name))
    return runs


def test_the_base_run_is_trained_last_and_every_other_run_plays_it(ablation):
    run, calls, out = ablation
    done = run("no-pool=model_global_pooling=0", "two=soft_policy_weight=0;ema_decay=0")
    assert done.returncode == 0, done.stderr
    assert _trained(calls()) == [
        ("base-early", "1", []), ("base-seed2", "2", []),
        ("no-pool", "1", ["model_global_pooling=0"]),
        ("two", "1", ["soft_policy_weight=0", "ema_decay=0"]), ("base", "1", [])]
    assert _matched(calls()) == [("base-early", "base"), ("base-seed2", "base"),
                                 ("no-pool", "base"), ("two", "base")]
    table = (out / "table.md").read_text()
    assert "base run's (trained last, 4 epochs)" in table
    assert "| two | 6 | 120-0-80 | 0.600 | +70 [+20, +122] | 70-0-30 | 50-0-50 |" in table
    assert "| base-seed2 | 5 |" in table

    # Run again: nothing is trained or played twice.
    before = len(calls())
    assert run("no-pool=model_global_pooling=0", "two=soft_policy_weight=0;ema_decay=0"
               ).returncode == 0
    assert [c[0] for c in calls()[before:]] == ["-"]


def test_a_missing_match_is_played_and_an_unfinished_run_is_named(ablation):
    run, calls, out = ablation
    assert run("no-pool=model_global_pooling=0").returncode == 0
    (out / "no-pool.json").unlink()
    before = len(calls())
    assert run("no-pool=model_global_pooling=0").returncode == 0
    assert _trained(calls()[before:]) == []
    assert _matched(calls()[before:]) == [("no-pool", "base")]

    (out / "base" / "snapshots" / "min_000.50.pt").unlink()  # as a run cut short leaves it
    before = len(calls())
    done = run("no-pool=model_global_pooling=0")
    assert done.returncode == 1
    assert f"base: {out}/base holds an unfinished run" in done.stdout
    assert calls()[before:] == []
