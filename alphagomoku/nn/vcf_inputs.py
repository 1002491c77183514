"""A network trained with the VCF input planes, run without the solver that proves them.

The planes say "proved within ``vcf_plane_budget`` solver nodes". With no solver nothing is
proved, so both planes are zero, and a zero input channel adds nothing to the stem's
convolution (its padding is zeros as well). Cutting those two channels out of the stem
therefore gives the same network on the inputs it would see with a budget of 0, as a model
that needs no solver at all: the fair "same model without the solver" of the VCF benchmark.
"""

from __future__ import annotations

from dataclasses import replace

import torch

from alphagomoku.game.constants import NUM_PLANES, VCF_PLANES
from alphagomoku.nn.io import unwrap
from alphagomoku.nn.model import PolicyValueNet


def without_vcf_planes(model: torch.nn.Module) -> PolicyValueNet:
    """A copy of ``model`` that reads no VCF planes and answers as ``model`` does when both are
    zero. ValueError for a model trained without them."""
    net = unwrap(model)
    if not net.config.vcf_plane_budget:
        raise ValueError(f"the {net.config.label} model reads no VCF planes: there is nothing "
                         f"to cut")
    config = replace(net.config, vcf_plane_budget=0, num_planes=NUM_PLANES)
    state = {k: v.detach().clone() for k, v in net.state_dict().items()}
    stem = "stem.0.weight"  # the first convolution: (channels, planes, 3, 3)
    # The VCF planes follow the first NUM_PLANES; the rule planes, if any, come after them.
    kept = torch.cat([state[stem][:, :NUM_PLANES], state[stem][:, NUM_PLANES + VCF_PLANES:]], dim=1)
    state[stem] = kept.contiguous()
    out = PolicyValueNet(config)
    out.load_state_dict(state)
    return out.to(next(net.parameters()).device).eval()
