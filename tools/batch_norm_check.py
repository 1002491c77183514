"""How differently a network reads each variant of a run in play and in training.

For every variant's replay buffer in RUN_DIR, a sample of its positions goes through the
network twice: as play runs it (eval mode: batch norm with its running statistics) and as
training ran it (train mode: batch norm with the statistics of this batch, one variant a
batch). Printed per variant: the policy's cross-entropy to the search's targets and the
spread (standard deviation) of the value over the positions, each both ways. A network without
batch norm answers the same both ways; with it, a gap says play and training disagree.

    python tools/batch_norm_check.py runs/all-rules CHECKPOINT [--positions 512] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402


def variant_buffers(run_dir: Path, cfg) -> list:
    """``(variant, buffer)`` for each variant of the run whose buffer file exists."""
    from alphagomoku.train.buffer import ReplayBuffer
    from alphagomoku.train.variants import VariantBuffers, run_variants

    variants = run_variants(cfg.board_size, cfg.rule, cfg.n_in_row, cfg.board_sizes, cfg.rules,
                            cfg.variant_mix)
    files = VariantBuffers(variants, cfg.buffer_positions)
    out = []
    for v in variants:
        path = files.path(run_dir, v)
        if path.exists():
            out.append((v, ReplayBuffer.load(path, v.game, cfg.buffer_positions)[0]))
    return out


def load_run(parser: argparse.ArgumentParser, run_dir: Path, weights: Path):
    """``(model, config)``: the network in ``weights`` (on the CPU, eval mode) and the run's
    TrainConfig; a missing run or an unreadable network is ``parser``'s usage error."""
    from alphagomoku.nn.io import CheckpointError, load_model
    from alphagomoku.train.config import TrainConfig

    if not (run_dir / "config.json").is_file():
        parser.error(f"no run at {run_dir} (no config.json)")
    try:
        model = load_model(weights, device="cpu").eval()
    except CheckpointError as e:
        parser.error(str(e))
    return model, TrainConfig.from_file(run_dir / "config.json")


def read_both_ways(weights: Path, batch) -> dict:
    """The policy's cross-entropy and the value's spread over ``batch``, in play and in training."""
    import torch
    import torch.nn.functional as F

    from alphagomoku.nn.io import load_model

    planes, target = torch.from_numpy(batch.planes), torch.from_numpy(batch.policy)
    out = {}
    for mode in ("play", "training"):
        model = load_model(weights, device="cpu")  # fresh: train mode moves the running statistics
        model.train(mode == "training")
        with torch.no_grad():
            logits, values = model(planes)
        log_p = F.log_softmax(logits.float(), dim=1)
        out[mode] = {"policy_cross_entropy": float(-(target * log_p).sum(dim=1).mean()),
                     "value_spread": float(values.float().std())}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python tools/batch_norm_check.py", description=__doc__.split("\n\n")[0])
    p.add_argument("run_dir", type=Path, help="a training run's directory (its config and buffers)")
    p.add_argument("weights", type=Path, help="the network: a checkpoint, snapshot or model file")
    p.add_argument("--positions", type=int, default=512, help="positions a variant (default 512)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    import torch

    from alphagomoku.train.augment import make_batch

    torch.set_num_threads(1)
    model, cfg = load_run(p, args.run_dir, args.weights)
    config = model.config
    rng = np.random.default_rng(args.seed)
    report = {}
    for variant, buffer in variant_buffers(args.run_dir, cfg):
        indices = rng.choice(len(buffer), min(args.positions, len(buffer)), replace=False)
        batch = make_batch(buffer, indices, None, variant.game, cfg.value_q_weight,
                           config.vcf_plane_budget, config.rule_planes,
                           threat_planes=config.threat_planes)
        report[variant.name] = read_both_ways(args.weights, batch)
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"{'variant':<20} {'policy CE: play':>16} {'training':>9} {'value spread: play':>19} "
          f"{'training':>9}")
    for name, r in report.items():
        print(f"{name:<20} {r['play']['policy_cross_entropy']:>16.3f} "
              f"{r['training']['policy_cross_entropy']:>9.3f} {r['play']['value_spread']:>19.3f} "
              f"{r['training']['value_spread']:>9.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
