"""ModelConfig: the shape of the policy-value network, its named presets and its size in bytes;
and ``check_inputs``, the shape checks every evaluator makes on what it is given.

This module does not import torch, so :mod:`alphagomoku.device` can plan memory from a config in
a process that has not loaded torch yet.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace

import numpy as np

from alphagomoku.checks import non_negative_int, positive_int
from alphagomoku.game.constants import MAX_SIZE, MIN_SIZE, NUM_PLANES, VCF_PLANES

# The heads follow AlphaGo Zero: a 1x1 convolution down to a few planes, then fully connected
# layers over the board. Fixed rather than configurable: nobody has needed to tune them.
POLICY_CHANNELS = 2
VALUE_CHANNELS = 1

# name -> (blocks, channels, value_hidden). Named blocks x channels, as KataGo's b6c96.
PRESETS: dict[str, tuple[int, int, int]] = {
    "tiny": (2, 32, 32),      # CI and smoke tests: an epoch in seconds on a CPU
    "small": (6, 64, 64),     # a laptop CPU or Apple MPS
    "medium": (10, 128, 128),  # one consumer GPU (Colab T4)
    "large": (15, 192, 256),  # a data-centre GPU
}


@dataclass(frozen=True)
class ModelConfig:
    """A residual tower of ``blocks`` blocks of ``channels`` channels on a ``width`` x
    ``height`` board (``height`` 0 means square), reading ``num_planes`` input planes.

    ``vcf_plane_budget`` > 0: the network also reads the two VCF planes, proved by the solver
    within that many nodes (:func:`alphagomoku.game.vcf.write_vcf_planes`); everything that
    makes its inputs takes the budget from here. 0, the default and every older model, means
    no such planes."""

    blocks: int
    channels: int
    width: int = 15
    height: int = 0
    num_planes: int = NUM_PLANES
    value_hidden: int = 64
    vcf_plane_budget: int = 0

    def __post_init__(self):
        if self.height == 0:
            object.__setattr__(self, "height", self.width)
        v = non_negative_int("model vcf_plane_budget", self.vcf_plane_budget)
        object.__setattr__(self, "vcf_plane_budget", v)
        want = NUM_PLANES + (VCF_PLANES if v else 0)
        if v and self.num_planes == NUM_PLANES:
            object.__setattr__(self, "num_planes", want)
        if self.num_planes != want:
            raise ValueError(f"a model with vcf_plane_budget {v} reads {want} input planes, "
                             f"not {self.num_planes!r}")
        for name in ("width", "height"):
            v = getattr(self, name)
            if not _is_int(v) or not MIN_SIZE <= v <= MAX_SIZE:
                raise ValueError(
                    f"model board {name} must be an integer from {MIN_SIZE} to {MAX_SIZE} "
                    f"(the sizes the game core supports), got {v!r}"
                )
        for name in ("blocks", "channels", "num_planes", "value_hidden"):
            object.__setattr__(self, name, positive_int(f"model {name}", getattr(self, name)))

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def preset(cls, name: str, width: int = 15, height: int | None = None,
               vcf_plane_budget: int = 0) -> "ModelConfig":
        """The named preset (one of :data:`PRESETS`) for a ``width`` x ``height`` board."""
        if name not in PRESETS:
            raise ValueError(f"unknown model preset {name!r}: choose one of {', '.join(PRESETS)}")
        blocks, channels, value_hidden = PRESETS[name]
        return cls(blocks=blocks, channels=channels, width=width,
                   height=width if height is None else height, value_hidden=value_hidden,
                   vcf_plane_budget=vcf_plane_budget)

    @classmethod
    def from_dict(cls, data: dict) -> "ModelConfig":
        """The inverse of :meth:`to_dict`; unknown or missing keys are an error, not ignored."""
        if not isinstance(data, dict):
            raise ValueError(f"a model config must be a dict, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(
                f"unknown model config key(s) {', '.join(map(repr, unknown))}: "
                f"expected some of {', '.join(sorted(known))}"
            )
        missing = [k for k in ("blocks", "channels") if k not in data]
        if missing:
            raise ValueError(f"model config lacks {', '.join(missing)}")
        return cls(**data)

    def to_dict(self) -> dict:
        return asdict(self)

    def with_board(self, width: int, height: int | None = None) -> "ModelConfig":
        """The same network for another board size."""
        return replace(self, width=width, height=width if height is None else height)

    # -- size -----------------------------------------------------------------------------------
    @property
    def area(self) -> int:
        return self.width * self.height

    @property
    def label(self) -> str:
        """``b6c64 9x9``: blocks, channels and board, for logs (``+vcf200`` with VCF planes)."""
        vcf = f" +vcf{self.vcf_plane_budget}" if self.vcf_plane_budget else ""
        return f"b{self.blocks}c{self.channels} {self.width}x{self.height}{vcf}"

    def num_parameters(self) -> int:
        """Trainable parameters of :class:`alphagomoku.nn.model.PolicyValueNet` (checked
        against torch by the tests)."""
        c, a = self.channels, self.area
        conv_bn = lambda cin, cout, k: cin * cout * k * k + 2 * cout  # noqa: E731 (no bias; BN)
        stem = conv_bn(self.num_planes, c, 3)
        tower = self.blocks * 2 * conv_bn(c, c, 3)
        policy = conv_bn(c, POLICY_CHANNELS, 1) + (POLICY_CHANNELS * a + 1) * a
        value = (conv_bn(c, VALUE_CHANNELS, 1) + (VALUE_CHANNELS * a + 1) * self.value_hidden
                 + self.value_hidden + 1)
        return stem + tower + policy + value

    def weight_bytes(self, bytes_per_value: int = 4) -> int:
        """Bytes of the weights and batch-norm statistics held on the device."""
        bn_layers = 1 + 2 * self.blocks
        bn_stats = 2 * (bn_layers * self.channels + POLICY_CHANNELS + VALUE_CHANNELS)
        return (self.num_parameters() + bn_stats) * bytes_per_value

    def activation_bytes(self, batch_size: int, bytes_per_value: int = 2, factor: float = 2.0) -> int:
        """A deliberately generous estimate of activation memory for one forward pass of
        ``batch_size`` positions: every convolution's output kept alive at once (as in training),
        times ``factor`` for batch-norm/ReLU temporaries and convolution workspace. Inference
        frees most of them early, so the true peak is lower."""
        convs = 1 + 2 * self.blocks
        per_position = self.channels * self.area * convs * bytes_per_value
        return int(per_position * batch_size * factor)


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def check_inputs(cfg, planes, legal) -> tuple[np.ndarray, np.ndarray]:
    """``planes`` and ``legal`` as contiguous float32 and bool arrays, checked against the model
    config ``cfg``: a wrong shape or dtype is a ValueError/TypeError that says what was expected."""
    planes = np.asarray(planes)
    legal = np.asarray(legal)
    want = (cfg.num_planes, cfg.height, cfg.width)
    if planes.ndim != 4 or planes.shape[1:] != want:
        raise ValueError(
            f"planes must have shape (B, {', '.join(map(str, want))}) for the "
            f"{cfg.label} model, got {planes.shape}"
        )
    if legal.shape != (planes.shape[0], cfg.area):
        raise ValueError(
            f"legal must have shape ({planes.shape[0]}, {cfg.area}) to match the planes, "
            f"got {legal.shape}"
        )
    if legal.dtype != np.bool_:
        raise TypeError(f"legal must be a bool array, got {legal.dtype}")
    return np.ascontiguousarray(planes, dtype=np.float32), np.ascontiguousarray(legal)
