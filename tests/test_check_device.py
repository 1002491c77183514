"""scripts/check_device.py end to end (subprocesses) and the diagnostics behind it."""

import json
import subprocess
import sys
from pathlib import Path

import torch

from alphagomoku import device as dev
from alphagomoku import device_check as diag

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "check_device.py"


def run_script(*args, timeout=120):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=timeout)


def test_cpu_run_passes_and_names_the_cpu_and_the_worker_check():
    out = run_script("--device", "cpu")
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    assert f"CPU: {dev.cpu_name()}" in text
    for preset in ("tiny", "compact", "small", "medium", "large"):
        assert f"OK    forward {preset}" in text
    assert "OK    worker: a spawned worker process" in text and "sees cpu" in text
    assert "recommended for self-play: device cpu" in text
    assert "RESULT: all checks passed" in text
    assert "FAIL" not in text


def test_requesting_a_missing_cuda_device_fails_loudly():
    # "cuda" on a machine without CUDA (like CI); past the last GPU on a machine with some.
    missing = f"cuda:{torch.cuda.device_count()}" if torch.cuda.is_available() else "cuda"
    out = run_script("--device", missing)
    assert out.returncode == 1
    assert f"FAIL  device: device '{missing}' was requested but" in out.stdout
    assert "Available here:" in out.stdout and "!!!!" in out.stdout
    assert "RESULT: FAILED (device)" in out.stdout


def test_a_malformed_device_is_a_failure_listing_the_forms():
    report = diag.run("gpu0", presets=(), worker=False)
    assert not report["ok"]
    assert "auto, cpu, cuda, cuda:N" in report["checks"][0].detail


def test_json_report_in_process():
    report = diag.run("cpu", presets=("tiny",), worker=False)
    data = json.loads(diag.to_json(report))
    assert data["ok"] is True and data["device"]["kind"] == "cpu"
    names = [c["name"] for c in data["checks"]]
    assert "compute on cpu" in names and any(n.startswith("forward tiny") for n in names)
    assert data["info"]["cpu_cores"] == dev.cpu_count()
    assert data["recommendation"]["workers"] == dev.cpu_count()


def test_unknown_preset_is_a_usage_error(capsys):
    assert diag.main(["--presets", "tiny,huge", "--no-worker"]) == 2
    assert "unknown preset(s) huge" in capsys.readouterr().err


# -- the worker verdict (the failure the seeds hit: workers quietly on the CPU) -----------------
def _choice(kind, name, device):
    return dev.DeviceChoice(torch.device(device), kind, name, "test")


def _probe(kind, name, device, computed=True, error=""):
    return {"pid": 1, "kind": kind, "name": name, "device": device, "computed": computed,
            "error": error, "executable": sys.executable}


def test_a_worker_on_the_cpu_under_an_mps_parent_is_a_loud_failure():
    check = diag.compare_worker(_choice("mps", "Apple GPU (MPS)", "mps"),
                                _probe("cpu", "Apple M2", "cpu"))
    assert not check.ok and check.loud
    assert "worker process uses cpu" in check.detail and "this process uses mps" in check.detail
    report = {"info": diag.gather_info(), "request": "auto", "device": None, "checks": [check],
              "recommendation": None}
    text = diag.format_text(report)
    assert "!" * 78 + "\nFAIL  worker:" in text and "RESULT: FAILED (worker)" in text


def test_a_worker_that_cannot_get_the_device_fails():
    check = diag.compare_worker(_choice("cuda", "Tesla T4", "cuda:0"),
                                _probe("", "", "", computed=False, error="DeviceError: no CUDA"))
    assert not check.ok and "could not get device cuda:0" in check.detail


def test_a_worker_on_the_same_device_passes():
    check = diag.compare_worker(_choice("cuda", "Tesla T4", "cuda:0"),
                                _probe("cuda", "Tesla T4", "cuda:0"), seconds=2.5)
    assert check.ok and "like this process" in check.detail and "2.5 s" in check.detail


def test_the_worker_probe_reports_its_device():
    probe = diag.worker_probe("cpu")
    assert (probe["kind"], probe["name"], probe["computed"]) == ("cpu", dev.cpu_name(), True)
    assert "DeviceError" in diag.worker_probe("gpu")["error"]


# -- recommendations ----------------------------------------------------------------------------
def _info(cores, cuda_memory=()):
    return {"cpu_cores": cores, "cuda_devices": [
        {"index": i, "name": "GPU", "total_memory": m, "capability": "8.0"}
        for i, m in enumerate(cuda_memory)]}


def test_recommendation_on_a_t4_follows_the_memory_plan():
    rec = diag.recommend(_choice("cuda", "Tesla T4", "cuda:0"), _info(8, [15 * 10**9]))
    assert rec["preset"] == "medium" and rec["batch_size"] == diag.GPU_BATCH
    assert 1 <= rec["workers"] <= 7  # one core stays with the trainer
    assert "memory plan" in rec["why"]


def test_recommendation_on_an_h100_takes_the_large_preset():
    rec = diag.recommend(_choice("cuda", "H100", "cuda:0"), _info(16, [80 * 10**9]))
    assert rec["preset"] == "large" and rec["workers"] == 15


def test_the_recommended_flags_give_every_worker_a_task():
    from alphagomoku.train import cli

    report = diag.run("cpu", presets=("tiny",), worker=False)
    report["recommendation"] = diag.recommend(_choice("cpu", "x86", "cpu"), _info(8))
    line = next(x for x in diag.format_text(report).splitlines() if "as flags:" in x)
    argv = line.split("scripts/train.py", 1)[1].split()
    cfg = cli.resolve_config(cli.build_parser().parse_args(argv))
    assert cfg.selfplay_games >= cfg.parallel_workers * cfg.games_per_task
    rec = diag.recommend(_choice("cuda", "H100", "cuda:0"), _info(16, [80 * 10**9]))
    assert rec["selfplay_games"] == rec["workers"] * rec["batch_size"]


def test_recommendation_on_a_cpu_uses_every_core_with_one_thread():
    rec = diag.recommend(_choice("cpu", "x86", "cpu"), _info(2))
    assert (rec["workers"], rec["threads_per_worker"], rec["preset"]) == (2, 1, "tiny")
    assert diag.recommend(_choice("cpu", "x86", "cpu"), _info(16))["preset"] == "small"
