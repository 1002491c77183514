"""How closely a network in int8 (``--onnx-precision int8``) answers as in fp32, and how fast.

For every variant's replay buffer in RUN_DIR, positions from self-play (with a random symmetry
each) are split in two: the first half calibrates the int8 network as a worker would, the
second is read by both networks. Printed per variant: how often the two name the same most
likely move, the mean and largest difference of their values, and each network's forward passes
a second on one thread at batches of 1, 16 and 64.

    python tools/int8_check.py runs/learning/cpu-hour-60 WEIGHTS [--positions 512] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from tools.batch_norm_check import load_run, variant_buffers  # noqa: E402


BATCHES = (1, 16, 64)


def forward_rate(network, planes, legal, batch: int, seconds: float = 1.5) -> float:
    planes, legal = planes[:batch], legal[:batch]
    network(planes, legal)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        network(planes, legal)
        n += len(planes)
    return n / (time.perf_counter() - t0)


def compare(model, planes: np.ndarray, seconds: float = 1.5) -> dict:
    """int8 calibrated on the first half of ``planes`` against fp32 on the second half."""
    from alphagomoku.nn.int8 import CALIBRATION_POSITIONS
    from alphagomoku.nn.onnx_evaluator import OnnxEvaluator

    legal = (planes[:, 0] + planes[:, 1] == 0).reshape(len(planes), -1)
    half = len(planes) // 2
    fp32 = OnnxEvaluator(model)
    int8 = OnnxEvaluator(model, precision="int8")
    for i in range(0, half, 16):
        int8(planes[i:i + 16], legal[i:i + 16])
    if not int8.quantized:
        raise SystemExit(f"{half} positions do not calibrate int8: give --positions of at least "
                         f"{2 * CALIBRATION_POSITIONS}")
    test, test_legal = planes[half:], legal[half:]
    (p8, v8), (p32, v32) = int8(test, test_legal), fp32(test, test_legal)
    out = {"positions": len(test),
           "same_best_move": float((p8.argmax(1) == p32.argmax(1)).mean()),
           "value_difference_mean": float(np.abs(v8 - v32).mean()),
           "value_difference_max": float(np.abs(v8 - v32).max())}
    for batch in BATCHES:
        for name, network in (("fp32", fp32), ("int8", int8)):
            out[f"{name}_per_second_batch{batch}"] = forward_rate(network, test, test_legal, batch,
                                                                  seconds)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python tools/int8_check.py", description=__doc__.split("\n\n")[0])
    p.add_argument("run_dir", type=Path, help="a training run's directory (its config and buffers)")
    p.add_argument("weights", type=Path, help="the network: a checkpoint, snapshot or model file")
    p.add_argument("--positions", type=int, default=1024,
                   help="positions a variant, half to calibrate and half to compare (default 1024)")
    p.add_argument("--seconds", type=float, default=1.5,
                   help="seconds each forward rate is timed for (default 1.5)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    import torch

    from alphagomoku.nn.inference_backend import onnx_problem
    from alphagomoku.train.augment import make_batch

    torch.set_num_threads(1)
    if onnx_problem():
        p.error(onnx_problem())
    model, cfg = load_run(p, args.run_dir, args.weights)
    rng = np.random.default_rng(args.seed)
    report = {}
    for variant, buffer in variant_buffers(args.run_dir, cfg):
        indices = rng.choice(len(buffer), min(args.positions, len(buffer)), replace=False)
        batch = make_batch(buffer, indices, rng, variant.game, 0.0,
                           model.config.vcf_plane_budget, model.config.rule_planes,
                           threat_planes=model.config.threat_planes)
        report[variant.name] = compare(model, batch.planes, args.seconds)
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    rates = "".join(f" {f'batch {b}: fp32':>15} {'int8':>6}" for b in BATCHES)
    print(f"{'variant':<20} {'same best move':>15} {'value diff: mean':>17} {'max':>6}{rates}")
    for name, r in report.items():
        rates = "".join(f" {r[f'fp32_per_second_batch{b}']:>15,.0f} "
                        f"{r[f'int8_per_second_batch{b}']:>6,.0f}" for b in BATCHES)
        print(f"{name:<20} {r['same_best_move']:>15.3f} {r['value_difference_mean']:>17.3f} "
              f"{r['value_difference_max']:>6.3f}{rates}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
