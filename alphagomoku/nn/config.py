"""ModelConfig: the shape of the policy-value network, its named presets and its size in bytes;
and ``check_inputs``, the shape checks every evaluator makes on what it is given.

This module does not import torch, so :mod:`alphagomoku.device` can plan memory from a config in
a process that has not loaded torch yet.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace

import numpy as np

from alphagomoku.checks import non_negative_int, positive_int
from alphagomoku.game.constants import (MAX_SIZE, MIN_SIZE, NUM_PLANES, RULE_PLANES, THREAT_PLANES,
                                       VCF_PLANES)

# The heads follow AlphaGo Zero: a 1x1 convolution down to a few planes, then fully connected
# layers over the board. Fixed rather than configurable: nobody has needed to tune them.
POLICY_CHANNELS = 2
VALUE_CHANNELS = 1

# name -> (blocks, channels, value_hidden). Named blocks x channels, as KataGo's b6c96.
PRESETS: dict[str, tuple[int, int, int]] = {
    "tiny": (2, 32, 32),      # CI and smoke tests: an epoch in seconds on a CPU
    "compact": (4, 48, 48),   # hours of training on a few CPU cores
    "small": (6, 64, 64),     # a laptop CPU or Apple MPS
    "medium": (10, 128, 128),  # one consumer GPU (Colab T4)
    "large": (15, 192, 256),  # a data-centre GPU
}

# The network shapes (alphagomoku.nn.model): AlphaGo Zero's, tied to one board size, and KataGo's
# fully convolutional one with global pooling, which plays every size and reads the rule.
ARCHS = ("az", "kata")
# A "kata" network's policy planes: the move to play, and two the trainer may learn beside it,
# the opponent's reply and the softened policy (alphagomoku.train.loss).
POLICY_OUTPUTS = 3


@dataclass(frozen=True)
class ModelConfig:
    """A residual tower of ``blocks`` blocks of ``channels`` channels on a ``width`` x
    ``height`` board (``height`` 0 means square), reading ``num_planes`` input planes.

    ``arch`` names the shape (:data:`ARCHS`). An ``"az"`` network plays only its ``width`` x
    ``height`` board; a ``"kata"`` network plays every size from MIN_SIZE to MAX_SIZE (its
    ``width`` and ``height`` are then the board it is trained on by default) and reads
    RULE_PLANES more inputs, the last ones: the rule (:func:`alphagomoku.game.rule_planes.fill_rule_planes`).

    ``vcf_plane_budget`` > 0: the network also reads the two VCF planes, proved by the solver
    within that many nodes (:func:`alphagomoku.game.vcf_planes.write_vcf_planes`); everything that
    makes its inputs takes the budget from here. 0, the default and every older model, means
    no such planes.

    ``threat_planes``: the network also reads the six threat planes after those, for each
    empty point whether a stone there makes a five, a four or a three for either side
    (:mod:`alphagomoku.game.threat_planes`). Off in every older model.

    ``global_pooling`` (``"kata"`` only): the tower's pooled branches and the policy head's
    pooled bias. Without them the value head still pools, as it must to play every size; the
    option exists to measure what the pooling is worth.

    ``future_head`` (``"kata"`` only): one more output the trainer may learn, each point's stone
    a few plies later (KataGo's "futurepos"); play never reads it. Off in every older model.

    ``batch_norm``: each convolution is followed by a batch norm (every older model). False: no
    batch statistics anywhere; each convolution has its own bias and each residual block starts
    as the identity (its last convolution zeroed). A run that trains several board sizes or
    rules needs it off: it trains on one variant a batch, and batch norm then normalises each
    batch by that variant's own statistics, which takes out what the variants differ by (the
    rule planes' offset, how full the board is), while play normalises by the running blend of
    all of them, so the network reads each variant differently in play than it learnt it."""

    blocks: int
    channels: int
    width: int = 15
    height: int = 0
    num_planes: int = NUM_PLANES
    value_hidden: int = 64
    vcf_plane_budget: int = 0
    arch: str = "az"
    global_pooling: bool = True
    future_head: bool = False
    batch_norm: bool = True
    threat_planes: bool = False

    def __post_init__(self):
        if self.height == 0:
            object.__setattr__(self, "height", self.width)
        if self.arch not in ARCHS:
            raise ValueError(f"model arch must be one of {', '.join(ARCHS)}, got {self.arch!r}")
        if not isinstance(self.global_pooling, bool):
            raise ValueError(f"model global_pooling must be true or false, got {self.global_pooling!r}")
        if not self.global_pooling and self.arch != "kata":
            raise ValueError("global_pooling can be turned off only in a 'kata' network "
                             "(an 'az' network has none)")
        if not isinstance(self.future_head, bool):
            raise ValueError(f"model future_head must be true or false, got {self.future_head!r}")
        if self.future_head and self.arch != "kata":
            raise ValueError("a future-stones head needs a 'kata' network")
        if not isinstance(self.batch_norm, bool):
            raise ValueError(f"model batch_norm must be true or false, got {self.batch_norm!r}")
        if not isinstance(self.threat_planes, bool):
            raise ValueError(f"model threat_planes must be true or false, got {self.threat_planes!r}")
        v = non_negative_int("model vcf_plane_budget", self.vcf_plane_budget)
        object.__setattr__(self, "vcf_plane_budget", v)
        want = (NUM_PLANES + (VCF_PLANES if v else 0) + (THREAT_PLANES if self.threat_planes else 0)
                + (RULE_PLANES if self.rule_planes else 0))
        if self.num_planes == NUM_PLANES:
            object.__setattr__(self, "num_planes", want)
        if self.num_planes != want:
            threats = ", threat planes" if self.threat_planes else ""
            rules = f" and arch {self.arch!r}" if self.rule_planes else ""
            raise ValueError(f"a model with vcf_plane_budget {v}{threats}{rules} reads {want} "
                             f"input planes, not {self.num_planes!r}")
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
               vcf_plane_budget: int = 0, arch: str = "az",
               global_pooling: bool = True, future_head: bool = False,
               batch_norm: bool = True, threat_planes: bool = False) -> "ModelConfig":
        """The named preset (one of :data:`PRESETS`) for a ``width`` x ``height`` board."""
        if name not in PRESETS:
            raise ValueError(f"unknown model preset {name!r}: choose one of {', '.join(PRESETS)}")
        blocks, channels, value_hidden = PRESETS[name]
        return cls(blocks=blocks, channels=channels, width=width,
                   height=width if height is None else height, value_hidden=value_hidden,
                   vcf_plane_budget=vcf_plane_budget, arch=arch, global_pooling=global_pooling,
                   future_head=future_head, batch_norm=batch_norm, threat_planes=threat_planes)

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

    # -- shape ----------------------------------------------------------------------------------
    @property
    def rule_planes(self) -> bool:
        """Whether the network reads the rule as input planes (every ``"kata"`` network)."""
        return self.arch == "kata"

    @property
    def any_board(self) -> bool:
        """Whether the same weights play every board size (a fully convolutional network)."""
        return self.arch == "kata"

    def plays(self, width: int, height: int | None = None) -> bool:
        """Whether this network can play a ``width`` x ``height`` board."""
        height = width if height is None else height
        if self.any_board:
            return MIN_SIZE <= width <= MAX_SIZE and MIN_SIZE <= height <= MAX_SIZE
        return (width, height) == (self.width, self.height)

    @property
    def input_shape(self) -> str:
        """The planes' shape this network reads, in words for messages."""
        if self.any_board:
            return (f"(B, {self.num_planes}, H, W) with H and W from {MIN_SIZE} to {MAX_SIZE}")
        return f"(B, {self.num_planes}, {self.height}, {self.width})"

    @property
    def boards_played(self) -> str:
        """The boards :meth:`plays` accepts, in words for messages."""
        if self.any_board:
            return f"every board from {MIN_SIZE}x{MIN_SIZE} to {MAX_SIZE}x{MAX_SIZE}"
        return f"{self.width}x{self.height} boards"

    @property
    def pool_channels(self) -> int:
        """Channels pooled in each global pooling block of a ``"kata"`` tower."""
        return max(8, self.channels // 4)

    @property
    def head_channels(self) -> int:
        """Channels of a ``"kata"`` network's policy and value heads."""
        return max(16, self.channels // 4)

    def pools_in_block(self, i: int) -> bool:
        """Whether block ``i`` of a ``"kata"`` tower has the global pooling branch: every third
        block from the second, as KataGo spreads them through its tower."""
        return self.global_pooling and i % 3 == 1

    # -- size -----------------------------------------------------------------------------------
    @property
    def area(self) -> int:
        return self.width * self.height

    @property
    def label(self) -> str:
        """``b6c64 9x9``: blocks, channels and board, for logs (``+vcf200`` with VCF planes,
        ``+threats`` with the threat planes); ``b6c64 kata 15x15`` for a network that plays every
        board (trained on 15x15)."""
        vcf = f" +vcf{self.vcf_plane_budget}" if self.vcf_plane_budget else ""
        vcf += " +threats" if self.threat_planes else ""
        arch = (" kata" if self.global_pooling else " kata-nopool") if self.arch == "kata" else ""
        norm = "" if self.batch_norm else " nobn"
        return f"b{self.blocks}c{self.channels}{arch}{norm} {self.width}x{self.height}{vcf}"

    def _layers(self) -> tuple[int, list[int]]:
        """(trainable parameters, channels of every batch norm) of the network; no torch."""
        c, a, hid = self.channels, self.area, self.value_hidden
        norms: list[int] = []

        def conv_bn(cin, cout, k):   # a batch norm's shift and scale, or the convolution's bias
            if not self.batch_norm:
                return cin * cout * k * k + cout
            norms.append(cout)
            return cin * cout * k * k + 2 * cout

        params = conv_bn(self.num_planes, c, 3)
        if self.arch == "az":
            params += sum(conv_bn(c, c, 3) + conv_bn(c, c, 3) for _ in range(self.blocks))
            params += conv_bn(c, POLICY_CHANNELS, 1) + (POLICY_CHANNELS * a + 1) * a
            params += conv_bn(c, VALUE_CHANNELS, 1) + (VALUE_CHANNELS * a + 1) * hid + hid + 1
            return params, norms
        g, k = self.pool_channels, self.head_channels
        for i in range(self.blocks):
            params += conv_bn(c, c, 3) + conv_bn(c, c, 3)
            if self.pools_in_block(i):
                params += conv_bn(c, g, 3) + 3 * g * c + c
        params += conv_bn(c, k, 1) + POLICY_OUTPUTS * k
        if self.global_pooling:
            params += conv_bn(c, k, 1) + 3 * k * k + k
        params += conv_bn(c, k, 1) + (3 * k + 1) * hid + (hid + 1) * 2
        if self.future_head:
            params += k + 1
        return params, norms

    def num_parameters(self) -> int:
        """Trainable parameters of the :class:`alphagomoku.nn.model.PolicyValueNet` of this
        config (checked against torch by the tests)."""
        return self._layers()[0]

    def weight_bytes(self, bytes_per_value: int = 4) -> int:
        """Bytes of the weights and batch-norm statistics held on the device."""
        params, norms = self._layers()
        return (params + 2 * sum(norms)) * bytes_per_value

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
    if planes.ndim != 4 or planes.shape[1] != cfg.num_planes or not cfg.plays(planes.shape[3],
                                                                               planes.shape[2]):
        raise ValueError(f"planes must have shape {cfg.input_shape} for the {cfg.label} model, "
                         f"got {planes.shape}")
    area = planes.shape[2] * planes.shape[3]
    if legal.shape != (planes.shape[0], area):
        raise ValueError(
            f"legal must have shape ({planes.shape[0]}, {area}) to match the planes, "
            f"got {legal.shape}"
        )
    if legal.dtype != np.bool_:
        raise TypeError(f"legal must be a bool array, got {legal.dtype}")
    return np.ascontiguousarray(planes, dtype=np.float32), np.ascontiguousarray(legal)
