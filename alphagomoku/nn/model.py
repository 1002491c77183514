"""PolicyValueNet: a residual tower with a policy head over the points and a tanh value head."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from alphagomoku.nn.config import POLICY_CHANNELS, VALUE_CHANNELS, ModelConfig


class _ConvBN(nn.Sequential):
    def __init__(self, cin: int, cout: int, kernel: int):
        # No convolution bias: the batch norm right after it has its own.
        super().__init__(
            nn.Conv2d(cin, cout, kernel, padding=kernel // 2, bias=False),
            nn.BatchNorm2d(cout),
        )


class ResidualBlock(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = _ConvBN(channels, channels, 3)
        self.conv2 = _ConvBN(channels, channels, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.conv1(x))
        return F.relu(x + self.conv2(y))


class PolicyValueNet(nn.Module):
    """``forward(x)`` with ``x`` float ``(B, num_planes, height, width)`` returns
    ``(policy_logits (B, height*width), value (B,))``: logits indexed ``y * width + x`` (unmasked:
    the evaluator masks illegal points), value in [-1, 1] for the side to move."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        if not isinstance(config, ModelConfig):
            raise TypeError(f"PolicyValueNet needs a ModelConfig, got {type(config).__name__}")
        self.config = config
        c, area = config.channels, config.area
        self.stem = _ConvBN(config.num_planes, c, 3)
        self.tower = nn.Sequential(*(ResidualBlock(c) for _ in range(config.blocks)))
        self.policy_conv = _ConvBN(c, POLICY_CHANNELS, 1)
        self.policy_fc = nn.Linear(POLICY_CHANNELS * area, area)
        self.value_conv = _ConvBN(c, VALUE_CHANNELS, 1)
        self.value_fc1 = nn.Linear(VALUE_CHANNELS * area, config.value_hidden)
        self.value_fc2 = nn.Linear(config.value_hidden, 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        cfg = self.config
        if x.dim() != 4 or tuple(x.shape[1:]) != (cfg.num_planes, cfg.height, cfg.width):
            raise ValueError(
                f"network input must have shape (B, {cfg.num_planes}, {cfg.height}, {cfg.width}) "
                f"for this {cfg.label} model, got {tuple(x.shape)}"
            )
        h = self.tower(F.relu(self.stem(x)))
        p = F.relu(self.policy_conv(h))
        # reshape, not view: the tensor may be channels-last on CUDA.
        logits = self.policy_fc(p.reshape(p.shape[0], -1))
        v = F.relu(self.value_conv(h))
        v = F.relu(self.value_fc1(v.reshape(v.shape[0], -1)))
        value = torch.tanh(self.value_fc2(v)).squeeze(1)
        return logits, value
