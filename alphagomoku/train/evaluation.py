"""Matches during and after training, played by the arena of :mod:`alphagomoku.eval`.

Every ``eval_every`` epochs the new network plays the best one so far (the untrained network at
first) and a fixed pure-MCTS baseline. ``elo`` in metrics.csv is the rating of the best network
relative to the untrained one: each promotion adds the measured difference. With gating, a
network is promoted only when it scores at least ``gating_threshold`` against the best, and
self-play keeps using the best network until then.
"""

from __future__ import annotations

import json
from pathlib import Path

from alphagomoku.eval.arena import run_arena
from alphagomoku.atomic import atomic_write_text
from alphagomoku.train.config import TrainConfig


def _net(path: Path, sims: int) -> str:
    return f"net:{path}:{sims}"


def match(cfg: TrainConfig, a: str, b: str, games: int, seed: int, progress: bool, out_dir=None):
    return run_arena(a, b, games, cfg.game, workers=cfg.parallel_workers, seed=seed,
                     device=cfg.device, progress=progress, out_dir=out_dir)


def evaluate_epoch(cfg: TrainConfig, new: Path, best: Path, best_elo: float, epoch: int,
                   progress: bool, log=None) -> dict:
    """Play the epoch's matches; returns the metrics columns they fill. ``log`` gets a line per
    match with the score as black and as white."""
    sims = cfg.eval_simulations
    vs_best = match(cfg, _net(new, sims), _net(best, sims), cfg.eval_games, seed=epoch, progress=progress)
    vs_base = match(cfg, _net(new, sims), f"pure:{cfg.baseline_playouts}", cfg.eval_games,
                    seed=10_000 + epoch, progress=progress)
    if log is not None:
        log(f"epoch {epoch} vs best: {vs_best.colour_line()}")
        log(f"epoch {epoch} vs pure MCTS {cfg.baseline_playouts}: {vs_base.colour_line()}")
    promoted = cfg.gating_threshold == 0 or vs_best.score >= cfg.gating_threshold
    return {
        "score_vs_best": vs_best.score,
        "elo_vs_best": vs_best.elo.elo,
        "promoted": int(promoted),
        "elo": best_elo + vs_best.elo.elo if promoted else best_elo,
        "score_vs_baseline": vs_base.score,
        "elo_vs_baseline": vs_base.elo.elo,
    }


def final_evaluation(cfg: TrainConfig, final: Path, untrained: Path, run_dir: Path,
                     progress: bool, log) -> dict:
    """The trained network against the untrained one and against pure MCTS; saved as
    ``final_eval.json`` and printed."""
    sims = cfg.eval_simulations
    out = {}
    for name, opponent, seed in (
        ("vs_untrained", _net(untrained, sims), 20_000),
        ("vs_pure_mcts", f"pure:{cfg.baseline_playouts}", 30_000),
    ):
        result = match(cfg, _net(final, sims), opponent, cfg.final_eval_games, seed, progress,
                       out_dir=run_dir / "final_eval" / name)
        out[name] = result.to_dict()
        log(f"final model {name.replace('_', ' ')}: {result.summary()}")
    atomic_write_text(run_dir / "final_eval.json", json.dumps(out, indent=2) + "\n")
    return out
