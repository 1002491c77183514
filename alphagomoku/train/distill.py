"""Distillation: a student network learns to play as a teacher does, on a run's stored positions.

The all-rules network (``kata``, every board and rule) gets a fraction of the 15x15 positions in
its hour that a network trained on 15x15 alone gets, and plays 15x15 worse for it. Its shape
differs from the 15x15 network's (a convolutional policy head, the rule planes), so it cannot
take those weights; it can learn their play. Each step draws a batch from one of the replay
buffers in a run directory; where the teacher plays the batch's board, the teacher's policy
(masked to the legal moves) and value are the targets, mixed with the buffer's own by
``teacher_share``; elsewhere (a 20x20 buffer, for a 15x15 teacher) the buffer's own targets
stay, so the student keeps what it knows there. The result is a model file that
``train.py --init-weights`` goes on from with self-play.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F

from alphagomoku.device import flush_denormals
from alphagomoku.game.config import GameConfig
from alphagomoku.nn.io import load_model, save_model
from alphagomoku.progress import progress
from alphagomoku.train.augment import draw_symmetries, make_batch
from alphagomoku.train.buffer import BufferFileError, ReplayBuffer
from alphagomoku.train.loss import AuxWeights, training_loss
from alphagomoku.train.teacher import check_pair, legal_mask, mix_targets, teacher_targets


@dataclass(frozen=True)
class DistillConfig:
    teacher: str                 # model file whose play is learnt
    student: str                 # model file the student starts from (its shape and weights)
    positions: str               # a run directory: its replay*.npz files
    out: str                     # the student's model file, written every ``save_every`` steps
    steps: int = 2000
    batch_size: int = 256
    lr: float = 2e-3             # Adam; falls linearly to a tenth over the steps
    weight_decay: float = 1e-4
    teacher_share: float = 1.0   # of each target from the teacher; the rest from the buffer
    value_q_weight: float = 0.5  # the buffer's value target, as the trainer mixes it
    soft_policy_weight: float = 1.0   # the student's soft-policy head, on the same targets
    short_value_weight: float = 0.5   # the student's short-term-value head, on the buffer's
    held_out: int = 1024         # positions a buffer keeps out of training, to measure on
    save_every: int = 500
    seed: int = 0

    def check(self) -> None:
        for name in ("steps", "batch_size", "save_every"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(self, name)}")
        if not 0.0 <= self.teacher_share <= 1.0:
            raise ValueError(f"--teacher-share must be from 0 to 1, got {self.teacher_share}")
        if not self.lr > 0:
            raise ValueError(f"--lr must be positive, got {self.lr}")
        if self.held_out < 0:
            raise ValueError(f"--held-out must be 0 or more, got {self.held_out}")


def run_buffers(run_dir: str | Path) -> list[tuple[GameConfig, ReplayBuffer]]:
    """Every replay buffer of ``run_dir`` (``replay*.npz``) with the game it holds, read from
    the file itself (and ``n_in_row`` from the run's ``config.json``, 5 without one)."""
    run_dir = Path(run_dir)
    paths = sorted(run_dir.glob("replay*.npz"))
    if not paths:
        raise BufferFileError(f"{run_dir} holds no replay buffer (replay*.npz): give a run directory")
    n_in_row = 5
    config = run_dir / "config.json"
    if config.exists():
        n_in_row = int(json.loads(config.read_text()).get("n_in_row", 5))
    out = []
    for path in paths:
        try:
            with np.load(path) as data:
                width, height = int(data["width"]), int(data["height"])
                rule = str(data["rule"]) if "rule" in data.files else "freestyle"
                size = len(data["values"])
        except Exception as e:  # noqa: BLE001 - any failure to read means not a buffer file
            raise BufferFileError(f"replay buffer {path} cannot be read: {e}") from None
        game = GameConfig(width=width, height=height, n_in_row=n_in_row, rule=rule)
        buffer, _ = ReplayBuffer.load(path, game, max(1, size))
        if len(buffer):
            out.append((game, buffer))
    if not out:
        raise BufferFileError(f"the replay buffers in {run_dir} are empty")
    return out


class Distiller:
    """Trains ``config.student`` on ``config.teacher``'s play; :meth:`run` does the steps."""

    def __init__(self, config: DistillConfig, log: Callable[[str], None] = print,
                 show_progress: bool = True):
        config.check()
        self.cfg = config
        self.log = log
        self.show_progress = show_progress
        flush_denormals()   # as the trainer: weights that decay to denormals slow a CPU step manyfold
        torch.manual_seed(config.seed)
        self.rng = np.random.default_rng(config.seed)
        self.teacher = load_model(config.teacher).eval()
        self.student = load_model(config.student)
        t, s = self.teacher.config, self.student.config
        check_pair(t, s)
        self.buffers = []
        for game, buffer in run_buffers(config.positions):
            if not s.plays(game.width, game.height):
                raise ValueError(f"the student ({s.label}) does not play the {game.width}x"
                                 f"{game.height} positions in {config.positions}")
            keep = min(config.held_out, len(buffer) // 2)
            # The newest positions are held out: the oldest come first in the loaded buffer.
            self.buffers.append((game, buffer, len(buffer) - keep))
        taught = [g for g, _, _ in self.buffers if t.plays(g.width, g.height)]
        if not taught:
            raise ValueError(f"the teacher ({t.label}) plays none of the boards in {config.positions}")
        # The auxiliary heads exist in a kata network only.
        self.aux = AuxWeights(soft_policy=config.soft_policy_weight,
                              short_value=config.short_value_weight) if s.arch == "kata" else AuxWeights()
        self.optimizer = torch.optim.Adam(self.student.parameters(), lr=config.lr)

    def _teaches(self, game: GameConfig) -> bool:
        return self.teacher.config.plays(game.width, game.height)

    def _own_batch(self, game: GameConfig, buffer: ReplayBuffer, indices: np.ndarray,
                   symmetries: np.ndarray | None):
        """The student's planes and the buffer's own targets, as the trainer makes them."""
        return make_batch(buffer, indices, None, game, self.cfg.value_q_weight,
                          self.student.config.vcf_plane_budget, self.student.config.rule_planes,
                          symmetries=symmetries,
                          threat_planes=self.student.config.threat_planes)

    def _batch(self, game: GameConfig, buffer: ReplayBuffer, indices: np.ndarray,
               symmetries: np.ndarray | None) -> list[torch.Tensor]:
        tensors = [torch.from_numpy(a) for a in self._own_batch(game, buffer, indices, symmetries)]
        if self._teaches(game):
            tensors = mix_targets(self.teacher, tensors, self.cfg.teacher_share)
            tensors[3] = tensors[4].clone()   # so every position has a policy term
        return tensors

    def _lr(self, step: int) -> float:
        return self.cfg.lr * (1.0 - 0.9 * step / max(1, self.cfg.steps - 1))

    def measure(self) -> dict[str, dict[str, float]]:
        """On each taught buffer's held-out positions: the KL from the teacher's policy to the
        student's, the squared gap between their values, and how often their first choices
        agree."""
        out = {}
        self.student.eval()
        with torch.no_grad():
            for game, buffer, cut in self.buffers:
                if cut == len(buffer) or not self._teaches(game):
                    continue
                indices = np.arange(cut, len(buffer))
                planes = torch.from_numpy(self._own_batch(game, buffer, indices, None).planes)
                policy, value = teacher_targets(self.teacher, planes)
                logits, student_value = self.student(planes)
                logits = logits.float().masked_fill(~legal_mask(planes), float("-inf"))
                log_q = F.log_softmax(logits, dim=1)
                log_p = torch.log(policy.clamp_min(1e-12))
                kl = (policy * (log_p - log_q)).nan_to_num(0.0).sum(dim=1).mean()
                out[f"{game.width}x{game.height}-{game.rule}"] = {
                    "policy_kl": round(float(kl), 4),
                    "value_mse": round(float(((student_value.float() - value) ** 2).mean()), 4),
                    "top_move_agrees": round(float((logits.argmax(1) == policy.argmax(1)).float().mean()), 4),
                }
        return out

    def run(self) -> dict:
        cfg = self.cfg
        before = self.measure()
        self.log(f"before: {json.dumps(before)}")
        sizes = np.array([cut for _, _, cut in self.buffers], dtype=np.float64)
        sums: dict[str, float] = {}
        t0 = time.perf_counter()
        bar = progress(range(cfg.steps), desc="distilling", unit="step", disable=not self.show_progress)
        for step in bar:
            game, buffer, cut = self.buffers[int(self.rng.choice(len(self.buffers), p=sizes / sizes.sum()))]
            indices = self.rng.integers(0, cut, size=cfg.batch_size)
            batch = self._batch(game, buffer, indices, draw_symmetries(game, cfg.batch_size, self.rng))
            for group in self.optimizer.param_groups:
                group["lr"] = self._lr(step)
            self.student.train()
            parts = training_loss(self.student, *batch[:3], cfg.weight_decay, *batch[3:], aux=self.aux)
            if not math.isfinite(parts["loss"].item()):
                raise FloatingPointError(f"the distillation loss is {parts['loss'].item()} at step {step}")
            self.optimizer.zero_grad(set_to_none=True)
            parts["loss"].backward()
            self.optimizer.step()
            for k in ("policy", "value"):
                sums[k] = sums.get(k, 0.0) + parts[k].item()
            if (step + 1) % cfg.save_every == 0 or step + 1 == cfg.steps:
                save_model(cfg.out, self.student.eval())
                n = cfg.save_every if (step + 1) % cfg.save_every == 0 else (step + 1) % cfg.save_every
                bar.set_postfix(policy=f"{sums['policy'] / n:.3f}", value=f"{sums['value'] / n:.3f}")
                sums = {}
        after = self.measure()
        report = {"config": asdict(cfg), "seconds": round(time.perf_counter() - t0, 1),
                  "before": before, "after": after}
        self.log(f"after {cfg.steps} steps: {json.dumps(after)}; the student is in {cfg.out}")
        return report
