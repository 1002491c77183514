"""A teacher network's play as a training target: for distillation (:mod:`alphagomoku.train.distill`)
and for self-play training that starts with a teacher and weans itself off it.

A student of another shape (the all-rules network, say, taught by the 15x15 network) can learn
a teacher's play. Self-play training from such a student at full learning rate forgets much of
what it learnt before its own data can replace it; keeping a share of the teacher's policy and
value in the targets, falling to none over the first part of the run, holds the student near
the teacher while the search's targets take over (kickstarting: Schmitt et al., 2018).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from alphagomoku.game.config import GameConfig
from alphagomoku.nn.config import ModelConfig
from alphagomoku.nn.io import CheckpointError, load_model
from alphagomoku.train.config import ConfigError, TrainConfig

# The own-stones, opponent-stones and forbidden-point planes (alphagomoku.game.kernels): a
# point is a legal move where all three are zero.
_OCCUPIED_PLANES = (0, 1, 4)


def legal_mask(planes: np.ndarray | torch.Tensor):
    """(B, H*W) True where the side to move may play: empty and, under renju for black, not
    forbidden (the planes of :func:`alphagomoku.game.kernels.encode_planes_into`)."""
    occupied = sum(planes[:, k] for k in _OCCUPIED_PLANES)
    return (occupied == 0).reshape(planes.shape[0], -1)


@torch.no_grad()
def teacher_targets(teacher: torch.nn.Module, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The teacher's policy (only on legal moves, summing to 1) and value on ``planes``: the
    student's, whose rule planes come last, after the planes a teacher that does not read the
    rule takes."""
    logits, value = teacher(planes[:, :teacher.config.num_planes])
    logits = logits.float().masked_fill(~legal_mask(planes), float("-inf"))
    return F.softmax(logits, dim=1), value.float().reshape(-1)


def check_pair(teacher: ModelConfig, student: ModelConfig) -> None:
    """Raises ValueError unless ``teacher`` can read every position ``student`` is trained on."""
    if teacher.vcf_plane_budget != student.vcf_plane_budget:
        raise ValueError(f"the teacher reads VCF planes at budget {teacher.vcf_plane_budget}, the "
                         f"student at {student.vcf_plane_budget}: they must read the same inputs")
    if teacher.threat_planes != student.threat_planes:
        raise ValueError("one of the teacher and the student reads the threat planes and the other "
                         "does not: they must read the same inputs")
    if teacher.rule_planes and not student.rule_planes:
        raise ValueError("the teacher reads the rule and the student does not: a student "
                         "must read every input its teacher does")


def mix_targets(teacher: torch.nn.Module, tensors: list[torch.Tensor], share: float) -> list[torch.Tensor]:
    """A batch's tensors (:class:`alphagomoku.train.augment.Batch`'s, in order) with ``share``
    of the policy and value targets from ``teacher`` and the rest from the batch's own. A
    position without a policy target of its own (a fast search) takes the teacher's; its
    policy weight, left as it was, says whether it counts."""
    tensors = list(tensors)
    policy, value = teacher_targets(teacher, tensors[0])
    total = tensors[1].sum(dim=1, keepdim=True)
    own_policy = torch.where(total > 0, tensors[1] / total.clamp_min(1e-12), policy)
    tensors[1] = share * policy + (1 - share) * own_policy
    tensors[2] = share * value + (1 - share) * tensors[2]
    return tensors


class FadingTeacher:
    """The trainer's teacher (``--teacher``): ``share`` of each target at the start of the run,
    falling linearly to none once ``fade`` of the run is done (of the time budget, else of
    ``--epochs``). Boards the teacher does not play keep their own targets."""

    def __init__(self, path: str | Path, student: ModelConfig, share: float, fade: float):
        self.model = load_model(path).eval()
        check_pair(self.model.config, student)
        self.share, self.fade = share, fade

    @classmethod
    def of_run(cls, cfg: TrainConfig, student: ModelConfig) -> FadingTeacher | None:
        """The teacher of the run ``cfg`` (a TrainConfig), None without ``--teacher``; a model
        file that cannot be read, or a teacher that cannot read the run's positions or plays
        none of its boards, is a ConfigError that says so."""
        if not cfg.teacher:
            return None
        try:
            teacher = cls(cfg.teacher, student, cfg.teacher_share, cfg.teacher_fade)
        except (CheckpointError, ValueError) as e:
            raise ConfigError(f"--teacher {cfg.teacher}: {e}") from None
        if not any(teacher.teaches(v.game) for v in cfg.variants):
            raise ConfigError(f"--teacher {cfg.teacher}: the teacher ({teacher.model.config.label}) "
                              "plays none of this run's boards")
        return teacher

    def share_at(self, done: float) -> float:
        """The teacher's share when ``done`` (0 to 1) of the run is done."""
        return self.share * max(0.0, 1.0 - done / self.fade)

    def teaches(self, game: GameConfig) -> bool:
        return self.model.config.plays(game.width, game.height)

    def mix(self, tensors: list[torch.Tensor], game: GameConfig, share: float) -> list[torch.Tensor]:
        if share <= 0 or not self.teaches(game):
            return tensors
        return mix_targets(self.model, tensors, share)
