"""The policy-value networks, one class per shape, built from a ModelConfig.

``PolicyValueNet(config)`` returns the shape ``config.arch`` names:

* ``"az"``: :class:`AlphaZeroNet`, AlphaGo Zero's residual tower with fully connected heads. The
  heads flatten the board, so its weights fit one board size.
* ``"kata"``: :class:`KataNet`, KataGo's shape: some tower blocks carry a global pooling branch,
  the policy head is convolutional and the value head pools over the board, so the same weights
  run on every board size. It reads the rule planes (``ModelConfig.rule_planes``).

``forward(x)`` with ``x`` float ``(B, num_planes, H, W)`` returns ``(policy_logits (B, H*W),
value (B,))`` for both: logits indexed ``y * W + x`` (unmasked: the evaluator masks illegal
points), value in [-1, 1] for the side to move.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from alphagomoku.nn.config import POLICY_CHANNELS, POLICY_OUTPUTS, VALUE_CHANNELS, ModelConfig


class _ConvBN(nn.Sequential):
    def __init__(self, cin: int, cout: int, kernel: int, batch_norm: bool = True):
        # No convolution bias before a batch norm: it has its own.
        layers = [nn.Conv2d(cin, cout, kernel, padding=kernel // 2, bias=not batch_norm)]
        if batch_norm:
            layers.append(nn.BatchNorm2d(cout))
        super().__init__(*layers)


def _last_conv(channels: int, batch_norm: bool) -> _ConvBN:
    """A residual block's last convolution. Without batch norm it starts at zero, so that the
    block starts as the identity and a deeper tower does not blow up its inputs' scale."""
    conv = _ConvBN(channels, channels, 3, batch_norm)
    if not batch_norm:
        nn.init.zeros_(conv[0].weight)
        nn.init.zeros_(conv[0].bias)
    return conv


class ResidualBlock(nn.Module):
    def __init__(self, channels: int, batch_norm: bool = True):
        super().__init__()
        self.conv1 = _ConvBN(channels, channels, 3, batch_norm)
        self.conv2 = _last_conv(channels, batch_norm)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.conv1(x))
        return F.relu(x + self.conv2(y))


class PolicyValueNet(nn.Module):
    """The network ``config`` describes: ``PolicyValueNet(config)`` builds the class of
    ``config.arch``, so every caller constructs networks the same way whatever their shape."""

    config: ModelConfig

    def __new__(cls, config: ModelConfig | None = None, *args, **kwargs):
        # Copies and unpickling call __new__ with no arguments on the concrete class.
        if config is not None or cls is PolicyValueNet:
            if not isinstance(config, ModelConfig):
                raise TypeError(f"PolicyValueNet needs a ModelConfig, got {type(config).__name__}")
            if cls is PolicyValueNet:
                cls = AlphaZeroNet if config.arch == "az" else KataNet
        return super().__new__(cls)

    def _check_input(self, x: torch.Tensor) -> None:
        cfg = self.config
        if x.dim() != 4 or x.shape[1] != cfg.num_planes or not cfg.plays(x.shape[3], x.shape[2]):
            raise ValueError(f"network input must have shape {cfg.input_shape} for this "
                             f"{cfg.label} model, got {tuple(x.shape)}")


class AlphaZeroNet(PolicyValueNet):
    """A residual tower, then AlphaGo Zero's heads: a 1x1 convolution down to a few planes and
    fully connected layers over the board."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config
        c, area, bn = config.channels, config.area, config.batch_norm
        self.stem = _ConvBN(config.num_planes, c, 3, bn)
        self.tower = nn.Sequential(*(ResidualBlock(c, bn) for _ in range(config.blocks)))
        self.policy_conv = _ConvBN(c, POLICY_CHANNELS, 1, bn)
        self.policy_fc = nn.Linear(POLICY_CHANNELS * area, area)
        self.value_conv = _ConvBN(c, VALUE_CHANNELS, 1, bn)
        self.value_fc1 = nn.Linear(VALUE_CHANNELS * area, config.value_hidden)
        self.value_fc2 = nn.Linear(config.value_hidden, 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        self._check_input(x)
        h = self.tower(F.relu(self.stem(x)))
        p = F.relu(self.policy_conv(h))
        # reshape, not view: the tensor may be channels-last on CUDA.
        logits = self.policy_fc(p.reshape(p.shape[0], -1))
        v = F.relu(self.value_conv(h))
        v = F.relu(self.value_fc1(v.reshape(v.shape[0], -1)))
        value = torch.tanh(self.value_fc2(v)).squeeze(1)
        return logits, value


def global_pool(x: torch.Tensor) -> torch.Tensor:
    """``(B, C, H, W) -> (B, 3C)``: the mean, the mean scaled by the board's width, and the max.

    The scale ``(sqrt(H*W) - 14) / 10`` is KataGo's: it lets a layer read how large the board is,
    so one set of weights can judge, say, a 9x9 and a 20x20 board differently. The point count
    comes from a tensor sum rather than from ``x.shape`` so that the ONNX export keeps the board
    size dynamic instead of freezing the size it was traced with."""
    count = torch.ones_like(x[:, :1]).sum(dim=(2, 3))           # (B, 1)
    mean = x.sum(dim=(2, 3)) / count
    scale = (torch.sqrt(count) - 14.0) / 10.0
    return torch.cat([mean, mean * scale, x.amax(dim=(2, 3))], dim=1)


class GlobalPoolBlock(nn.Module):
    """A residual block whose first convolution has a pooled branch: ``pool_channels`` channels are
    pooled over the board and added back to the others as a per-channel bias. That gives the
    tower board-wide context (whose move it is in a race of threats, how crowded the board is)
    that 3x3 convolutions reach only after many layers."""

    def __init__(self, channels: int, pool_channels: int, batch_norm: bool = True):
        super().__init__()
        self.conv1 = _ConvBN(channels, channels, 3, batch_norm)
        self.pool_conv = _ConvBN(channels, pool_channels, 3, batch_norm)
        self.pool_fc = nn.Linear(3 * pool_channels, channels)
        self.conv2 = _last_conv(channels, batch_norm)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        g = global_pool(F.relu(self.pool_conv(x)))
        y = F.relu(self.conv1(x) + self.pool_fc(g)[:, :, None, None])
        return F.relu(x + self.conv2(y))


class KataNet(PolicyValueNet):
    """KataGo's fully convolutional shape (see the module docstring).

    ``forward(x, all_heads=True)`` also gives the auxiliary outputs the trainer may learn (KataGo's): the
    policy of the opponent's reply, a softened policy, a short-term value and, with
    ``future_head``, each point's stone a few plies later. Play reads only the first of each."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config
        c, g, k, bn = config.channels, config.pool_channels, config.head_channels, config.batch_norm
        self.stem = _ConvBN(config.num_planes, c, 3, bn)
        self.tower = nn.Sequential(*(
            GlobalPoolBlock(c, g, bn) if config.pools_in_block(i) else ResidualBlock(c, bn)
            for i in range(config.blocks)))
        self.policy_conv = _ConvBN(c, k, 1, bn)
        if config.global_pooling:
            self.policy_pool_conv = _ConvBN(c, k, 1, bn)
            self.policy_pool_fc = nn.Linear(3 * k, k)
        self.policy_out = nn.Conv2d(k, POLICY_OUTPUTS, 1, bias=False)
        self.value_conv = _ConvBN(c, k, 1, bn)
        self.value_fc1 = nn.Linear(3 * k, config.value_hidden)
        self.value_fc2 = nn.Linear(config.value_hidden, 2)  # game result, short-term value
        if config.future_head:
            # From the value head's planes: where the stones will be is about who is winning.
            self.future_out = nn.Conv2d(k, 1, 1)

    def forward(self, x: torch.Tensor, all_heads: bool = False):
        """As every network's (see the module docstring); with ``all_heads``,
        ``(policy_logits (B, POLICY_OUTPUTS, H*W), values (B, 2), future (B, H*W) or None)``.
        Policies: the move, the opponent's reply, the soft policy. Values: the game's result,
        the short-term value. Future: each point's stone a few plies on
        (:data:`alphagomoku.train.buffer.FUTURE_PLIES`), from -1 (the
        opponent's) to 1 (the side to move's), None without ``future_head``. A flag rather than
        a second method, so that a DDP or compiled wrapper passes it through."""
        self._check_input(x)
        h = self.tower(F.relu(self.stem(x)))
        p = self.policy_conv(h)
        if self.config.global_pooling:
            g = global_pool(F.relu(self.policy_pool_conv(h)))
            p = p + self.policy_pool_fc(g)[:, :, None, None]
        p = F.relu(p)
        logits = self.policy_out(p)
        planes = F.relu(self.value_conv(h))
        v = global_pool(planes)
        values = torch.tanh(self.value_fc2(F.relu(self.value_fc1(v))))
        logits = logits.reshape(logits.shape[0], POLICY_OUTPUTS, -1)
        if all_heads:
            future = None
            if self.config.future_head:
                future = torch.tanh(self.future_out(planes)).reshape(planes.shape[0], -1)
            return logits, values, future
        return logits[:, 0], values[:, 0]
