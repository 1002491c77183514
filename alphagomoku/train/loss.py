"""AlphaZero's loss: value MSE + policy cross-entropy + L2 on the weights."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def l2_penalty(model: torch.nn.Module) -> torch.Tensor:
    """Sum of squares of the weight matrices and kernels (biases and norms are not penalised)."""
    return sum((p.float() ** 2).sum() for p in model.parameters() if p.dim() > 1)


def _weighted_mean(x: torch.Tensor, weight: torch.Tensor | None) -> torch.Tensor:
    # Normalised by the weights' sum, so a batch with few policy targets (playout cap
    # randomisation) still trains the policy at full strength on the ones it has.
    if weight is None:
        return x.mean()
    return (x * weight).sum() / weight.sum().clamp_min(1e-6)


def alphazero_loss(model, planes, target_policy, target_value, weight_decay: float,
                   policy_weight: torch.Tensor | None = None,
                   value_weight: torch.Tensor | None = None) -> dict:
    """Returns a dict of tensors: loss (to minimise), value, policy, l2, entropy. The optional
    per-sample weights (B,) scale each sample's policy and value terms."""
    logits, value = model(planes)
    logits = logits.float()
    log_p = F.log_softmax(logits, dim=1)
    policy_loss = _weighted_mean(-(target_policy * log_p).sum(dim=1), policy_weight)
    value_loss = _weighted_mean((value.float().reshape(-1) - target_value) ** 2, value_weight)
    l2 = l2_penalty(model)
    loss = value_loss + policy_loss + weight_decay * l2
    with torch.no_grad():
        entropy = -(log_p.exp() * log_p).sum(dim=1).mean()
    return {"loss": loss, "value": value_loss, "policy": policy_loss, "l2": l2, "entropy": entropy}


@torch.no_grad()
def policy_kl(old_log_p: torch.Tensor, new_log_p: torch.Tensor) -> float:
    """Mean KL(old || new) between two policies given as log-probabilities."""
    return float((old_log_p.exp() * (old_log_p - new_log_p)).sum(dim=1).mean())
