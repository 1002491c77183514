"""What ``scripts/check_device.py`` checks: the devices here, that each one computes, that every
preset runs, that a spawned worker sees the same device as its parent, and what to run with.

Each check gives an OK or FAIL line; any FAIL makes the script exit non-zero. The worker check
exists because of a real failure: self-play workers that print "MPS not available, using CPU"
and train on the CPU for hours while the parent process had the GPU.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import platform
import sys
import time
from dataclasses import asdict, dataclass

from alphagomoku import device as dev
from alphagomoku.nn.config import PRESETS, ModelConfig

WORKER_TIMEOUT_S = 120
CPU_BATCH = 16
GPU_BATCH = 256
MPS_BATCH = 64


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    loud: bool = False  # a failure that must not scroll by unnoticed

    def line(self) -> str:
        return f"{'OK  ' if self.ok else 'FAIL'}  {self.name}: {self.detail}"


# -- what is installed and attached ------------------------------------------------------------
def gather_info() -> dict:
    import numba
    import numpy
    import torch

    info = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "torch": torch.__version__,
        "torch_cuda_build": torch.version.cuda,
        "numpy": numpy.__version__,
        "numba": numba.__version__,
        "cpu": dev.cpu_name(),
        "cpu_cores": dev.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "cuda_devices": [],
        "cuda_status": "",
        "mps_available": dev.mps_available(),
        "mps_status": "available" if dev.mps_available() else dev.why_no_mps(),
    }
    n = dev.cuda_device_count()
    if n == 0:
        info["cuda_status"] = dev.why_no_cuda()
    for i in range(n):
        props = torch.cuda.get_device_properties(i)
        info["cuda_devices"].append({
            "index": i, "name": props.name, "total_memory": int(props.total_memory),
            "capability": f"{props.major}.{props.minor}",
        })
    if n:
        info["cuda_status"] = f"{n} device(s)"
    return info


# -- checks -----------------------------------------------------------------------------------
def compute_check(device: str) -> Check:
    """A matrix product on ``device`` compared with a float64 product on the CPU."""
    import torch

    name = f"compute on {device}"
    try:
        g = torch.Generator().manual_seed(0)
        a = torch.randn(256, 256, generator=g)
        b = torch.randn(256, 256, generator=g)
        start = time.perf_counter()
        got = (a.to(device) @ b.to(device)).cpu()
        elapsed = time.perf_counter() - start
        want = (a.double() @ b.double()).float()
        err = float((got - want).abs().max())
    except Exception as e:  # noqa: BLE001 - any failure of the device is the finding
        return Check(name, False, f"{type(e).__name__}: {e}")
    # TF32 on recent NVIDIA GPUs rounds inputs to 10 bits of mantissa: allow for it.
    ok = err < 0.5
    return Check(name, ok, f"256x256 matmul, max error {err:.2g} vs a float64 reference, "
                           f"{elapsed * 1e3:.1f} ms")


def preset_check(preset: str, choice: dev.DeviceChoice, size: int = 15) -> Check:
    """One forward pass of ``preset`` through the Evaluator (AMP and channels-last as in
    self-play) with a random position; checks shapes, that priors are a distribution over the
    legal points and that values lie in [-1, 1]."""
    import numpy as np
    import torch

    from alphagomoku.nn.evaluator import Evaluator
    from alphagomoku.nn.model import PolicyValueNet

    batch = 1 if preset == "large" else 2  # keep the biggest model cheap on a CPU
    name = f"forward {preset:<6} on {choice.device}"
    try:
        config = ModelConfig.preset(preset, size)
        torch.manual_seed(0)
        evaluator = Evaluator(PolicyValueNet(config), choice.device)
        rng = np.random.default_rng(0)
        planes = (rng.random((batch, config.num_planes, size, size)) < 0.2).astype(np.float32)
        legal = rng.random((batch, config.area)) < 0.7
        start = time.perf_counter()
        priors, values = evaluator(planes, legal)
        elapsed = time.perf_counter() - start
    except Exception as e:  # noqa: BLE001
        return Check(name, False, f"{type(e).__name__}: {e}")
    problems = []
    if priors.shape != (batch, config.area) or values.shape != (batch,):
        problems.append(f"shapes {priors.shape}, {values.shape}")
    if not (np.isfinite(priors).all() and np.isfinite(values).all()):
        problems.append("non-finite output")
    elif not np.allclose(priors.sum(1), 1, atol=1e-3) or priors[~legal].any():
        problems.append("priors are not a distribution over the legal points")
    if np.abs(values).max(initial=0) > 1:
        problems.append("value outside [-1, 1]")
    detail = (f"{evaluator.describe()}, {config.num_parameters() / 1e6:.2f}M parameters, "
              f"batch {batch}, {elapsed * 1e3:.0f} ms")
    return Check(name, not problems, "; ".join(problems + [detail]) if problems else detail)


def worker_probe(request: str) -> dict:
    """Runs in a spawned worker: what device does a fresh process get for ``request``?"""
    import os

    try:
        choice = dev.select_device(request)
        computed = compute_check(str(choice.device))
        return {"pid": os.getpid(), "device": str(choice.device), "kind": choice.kind,
                "name": choice.name, "computed": computed.ok, "error": "" if computed.ok
                else computed.detail, "executable": sys.executable}
    except Exception as e:  # noqa: BLE001 - report it to the parent instead of dying
        return {"pid": os.getpid(), "device": "", "kind": "", "name": "", "computed": False,
                "error": f"{type(e).__name__}: {e}", "executable": sys.executable}


def compare_worker(parent: dev.DeviceChoice, probe: dict, seconds: float | None = None) -> Check:
    """The verdict on a worker probe: the same kind and hardware as the parent, and it computed."""
    name = "worker"
    took = f" (worker started and answered in {seconds:.1f} s)" if seconds is not None else ""
    if probe.get("error") and not probe.get("kind"):
        return Check(name, False, f"a spawned worker process could not get device "
                                  f"{parent.device} ({parent.name}): {probe['error']}", loud=True)
    if (probe["kind"], probe["name"]) != (parent.kind, parent.name):
        return Check(
            name, False,
            f"a spawned worker process uses {probe['device']} ({probe['name']}) but this process "
            f"uses {parent.device} ({parent.name}): self-play would run on the wrong device",
            loud=True,
        )
    if not probe["computed"]:
        return Check(name, False, f"a spawned worker got {probe['device']} but could not compute "
                                  f"on it: {probe['error']}", loud=True)
    return Check(name, True, f"a spawned worker process (pid {probe['pid']}) sees "
                             f"{probe['device']} ({probe['name']}) like this process{took}")


def worker_check(request: str, parent: dev.DeviceChoice, timeout: float = WORKER_TIMEOUT_S) -> Check:
    """Start one worker the way self-play does (spawn context) and compare its device."""
    ctx = multiprocessing.get_context("spawn")
    start = time.perf_counter()
    pool = ctx.Pool(1)
    try:
        probe = pool.apply_async(worker_probe, (request,)).get(timeout=timeout)
    except multiprocessing.TimeoutError:
        return Check("worker", False, f"a spawned worker did not answer within {timeout:.0f} s",
                     loud=True)
    except Exception as e:  # noqa: BLE001 - the worker died or could not import
        return Check("worker", False, f"a spawned worker failed: {type(e).__name__}: {e}",
                     loud=True)
    finally:
        pool.terminate()
        pool.join()
    return compare_worker(parent, probe, time.perf_counter() - start)


# -- recommendation ---------------------------------------------------------------------------
def recommend(choice: dev.DeviceChoice, info: dict) -> dict:
    """Workers, preset and batch size for self-play on ``choice``, and why; with the games an
    epoch that give every worker a task of that many games (fewer would leave workers idle)."""
    rec = _recommend(choice, info)
    rec["selfplay_games"] = rec["workers"] * rec["batch_size"]
    return rec


def _recommend(choice: dev.DeviceChoice, info: dict) -> dict:
    cores = info["cpu_cores"]
    if choice.kind == "cuda":
        gpus = len(info["cuda_devices"])
        total = info["cuda_devices"][choice.device.index or 0]["total_memory"]
        preset = "large" if total >= 40 * dev.GiB else "medium"
        config = ModelConfig.preset(preset)
        batch = min(GPU_BATCH, max(1, dev.largest_batch(int(total * 0.9), config)))
        plan = dev.plan_workers(total, config, batch)
        # One core stays with the trainer; each worker needs a core to run its searches.
        workers = max(1, min(plan.workers_per_gpu * gpus, max(1, cores - 1)))
        why = (f"memory plan: {plan.explanation}; {gpus} GPU(s), {cores} CPU cores "
               "(one kept for the trainer)")
        return {"device": str(choice.device), "workers": workers, "preset": preset,
                "batch_size": batch, "threads_per_worker": 1, "why": why}
    if choice.kind == "mps":
        workers = max(1, min(2, cores - 1))
        return {"device": "mps", "workers": workers, "preset": "small", "batch_size": MPS_BATCH,
                "threads_per_worker": 1,
                "why": "the Apple GPU is shared by all workers: a few workers with mid-size "
                       "batches keep it busy"}
    preset = "tiny" if cores <= 4 else "small"
    return {"device": "cpu", "workers": cores, "preset": preset, "batch_size": CPU_BATCH,
            "threads_per_worker": dev.cpu_threads_per_worker(cores, cores),
            "why": f"{cores} CPU cores: one worker per core with one torch thread each; "
                   f"{preset} is the largest preset that trains in reasonable time on a CPU"}


# -- the whole run ----------------------------------------------------------------------------
def run(request: str = "auto", presets=tuple(PRESETS), worker: bool = True) -> dict:
    """Every check for ``request``; the report is a plain dict (``ok`` False on any FAIL)."""
    info = gather_info()
    checks: list[Check] = []
    report = {"request": request, "info": info, "device": None, "checks": checks,
              "recommendation": None}
    try:
        choice = dev.select_device(request)
    except dev.DeviceError as e:
        checks.append(Check("device", False, str(e), loud=True))
        choice = None
    else:
        report["device"] = {"device": str(choice.device), "kind": choice.kind,
                            "name": choice.name, "reason": choice.reason}
    for device in dev.available_devices():
        checks.append(compute_check(device))
    if choice is not None:
        for preset in presets:
            checks.append(preset_check(preset, choice))
        if worker:
            checks.append(worker_check(request, choice))
        report["recommendation"] = recommend(choice, info)
    report["ok"] = all(c.ok for c in checks)
    return report


def format_text(report: dict) -> str:
    info = report["info"]
    lines = [
        "alphagomoku device check",
        f"  python {info['python']} on {info['platform']}",
        f"  torch {info['torch']} (CUDA build: {info['torch_cuda_build'] or 'none'}), "
        f"numpy {info['numpy']}, numba {info['numba']}",
        f"  CPU: {info['cpu']}, {info['cpu_cores']} cores available, torch uses "
        f"{info['torch_threads']} thread(s)",
    ]
    if info["cuda_devices"]:
        for d in info["cuda_devices"]:
            lines.append(f"  CUDA {d['index']}: {d['name']}, {d['total_memory'] / dev.GiB:.1f} GiB, "
                         f"compute capability {d['capability']}")
    else:
        lines.append(f"  CUDA: none ({info['cuda_status']})")
    lines.append(f"  MPS: {info['mps_status']}")
    if report["device"]:
        d = report["device"]
        lines.append(f"  selected --device {report['request']}: {d['device']} ({d['name']}), {d['reason']}")
    lines.append("")
    for c in report["checks"]:
        if c.loud and not c.ok:
            bar = "!" * 78
            lines += [bar, c.line(), bar]
        else:
            lines.append(c.line())
    rec = report["recommendation"]
    if rec:
        lines += ["", f"recommended for self-play: device {rec['device']}, {rec['workers']} "
                      f"worker(s), preset {rec['preset']}, batch size {rec['batch_size']}, "
                      f"{rec['threads_per_worker']} torch thread(s) per worker",
                  f"  why: {rec['why']}",
                  f"  as flags: python scripts/train.py --device {rec['device']} --parallel-workers "
                  f"{rec['workers']} --model-preset {rec['preset']} --games-per-task {rec['batch_size']} "
                  f"--selfplay-games {rec['selfplay_games']}"]
    failed = [c.name for c in report["checks"] if not c.ok]
    lines += ["", "RESULT: all checks passed" if not failed
              else f"RESULT: FAILED ({', '.join(failed)}); see the FAIL lines above"]
    return "\n".join(lines)


def to_json(report: dict) -> str:
    out = dict(report)
    out["checks"] = [asdict(c) for c in report["checks"]]
    return json.dumps(out, indent=2)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="Check the devices alphagomoku can use and what to "
                                            "run with on this machine.")
    p.add_argument("--device", default="auto",
                   help=f"the device to check ({dev.VALID_FORMS}); default auto")
    p.add_argument("--presets", default=",".join(PRESETS),
                   help="comma-separated presets to run a forward pass of (default: all)")
    p.add_argument("--no-worker", action="store_true",
                   help="skip the spawned-worker check")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    presets = [p.strip() for p in args.presets.split(",") if p.strip()]
    unknown = [p for p in presets if p not in PRESETS]
    if unknown:
        print(f"check_device: unknown preset(s) {', '.join(unknown)}: choose from "
              f"{', '.join(PRESETS)}", file=sys.stderr)
        return 2
    report = run(args.device, presets, worker=not args.no_worker)
    print(to_json(report) if args.json else format_text(report))
    return 0 if report["ok"] else 1
