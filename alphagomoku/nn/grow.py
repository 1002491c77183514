"""A larger network that starts by computing exactly what a smaller one did.

A network without batch norm may grow deeper (more residual blocks) and wider (more channels)
and go on training from a smaller one's weights, so the larger network starts from the smaller
one's play instead of from nothing (Net2Net: Chen, Goodfellow and Shlens, 2016).

- **Deeper.** Every block's last convolution starts at zero (``nn.model``), so an added block
  is the identity.
- **Wider.** The old weights keep their places, and each old output reads no new input: those
  weights start at zero. The new outputs get the fresh network's random weights. So the new
  channels compute something from the start, which nothing reads yet, and the zero weights that
  will read them get gradients at the first step. Zero on both sides instead would stay zero:
  a channel that is exactly zero before a ReLU passes no gradient back.

With batch norm neither holds: its statistics would not start as the identity.

- **More inputs.** A network may also start reading the threat planes: the first layer's
  weights from them start at zero, so it computes what it did, and those weights learn from the
  first step. This holds with batch norm too, since nothing after the first convolution
  changes.
"""

from __future__ import annotations

from dataclasses import replace

import torch

from alphagomoku.game.constants import NUM_PLANES, THREAT_PLANES, VCF_PLANES
from alphagomoku.nn.config import ModelConfig
from alphagomoku.nn.model import PolicyValueNet

# A kata network's layers that read a global pooling's output: three groups of the pooled
# channels (mean, scaled mean, max), so an old input keeps its place within its group.
_POOLED_READERS = ("pool_fc.weight", "value_fc1.weight")
# The first convolution's weights, which read the input planes.
_STEM = "stem.0.weight"


def can_grow(saved: ModelConfig, config: ModelConfig) -> bool:
    """Whether ``config`` is ``saved`` grown deeper, wider or both, or reading the threat planes
    as well, and can start as it."""
    resized = (saved.blocks, saved.channels) != (config.blocks, config.channels)
    threats = config.threat_planes and not saved.threat_planes
    if resized and (config.batch_norm or saved.blocks > config.blocks
                    or saved.channels > config.channels):
        return False
    if saved.threat_planes and not config.threat_planes:
        return False
    return ((resized or threats)
            and replace(saved, blocks=config.blocks, channels=config.channels,
                        threat_planes=config.threat_planes, num_planes=NUM_PLANES) == config)


def grown_state(saved: ModelConfig, state: dict, config: ModelConfig) -> dict:
    """The weights of the network ``config`` that compute what ``saved``'s weights ``state``
    compute (to float rounding); the new random weights come from torch's generator. Raises
    ValueError where ``config`` is not a growth of ``saved`` (:func:`can_grow`)."""
    if not can_grow(saved, config):
        raise ValueError(f"a {config.label} network cannot start as the {saved.label} one: "
                         "it may only add blocks or channels, without batch norm, or the "
                         "threat planes")
    grown = PolicyValueNet(config).state_dict()
    for name, old in state.items():
        new = grown[name].clone()
        if new.shape == old.shape:
            grown[name] = old.clone()
            continue
        rows = old.shape[0]
        if old.dim() == 1:
            new[:rows] = old
        else:
            if config.arch == "kata" and name.endswith(_POOLED_READERS):
                columns = _pooled_columns(old.shape[1] // 3, new.shape[1] // 3)
            elif name == _STEM:
                columns = _input_columns(saved, config)
            else:
                columns = torch.arange(old.shape[1])
            new[:rows] = 0
            new[:rows, columns] = old
        grown[name] = new
    return grown


def _input_columns(saved: ModelConfig, config: ModelConfig) -> torch.Tensor:
    """Where each input plane of ``saved`` goes among ``config``'s: the threat planes, if new,
    come in after the VCF planes, and the rule planes move along."""
    columns = torch.arange(saved.num_planes)
    if config.threat_planes and not saved.threat_planes:
        first = NUM_PLANES + (VCF_PLANES if saved.vcf_plane_budget else 0)
        columns[first:] += THREAT_PLANES
    return columns


def _pooled_columns(old: int, new: int) -> torch.Tensor:
    """Where each of a pooled reader's ``3 * old`` inputs goes among its ``3 * new``."""
    return torch.cat([torch.arange(old) + group * new for group in range(3)])
