"""AlphaZero's loss: value MSE + policy cross-entropy + L2 on the weights."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def l2_penalty(model: torch.nn.Module) -> torch.Tensor:
    """Sum of squares of the weight matrices and kernels (biases and norms are not penalised)."""
    return sum((p.float() ** 2).sum() for p in model.parameters() if p.dim() > 1)


def alphazero_loss(model, planes, target_policy, target_value, weight_decay: float) -> dict:
    """Returns a dict of tensors: loss (to minimise), value, policy, l2, entropy."""
    logits, value = model(planes)
    logits = logits.float()
    log_p = F.log_softmax(logits, dim=1)
    policy_loss = -(target_policy * log_p).sum(dim=1).mean()
    value_loss = F.mse_loss(value.float(), target_value)
    l2 = l2_penalty(model)
    loss = value_loss + policy_loss + weight_decay * l2
    with torch.no_grad():
        entropy = -(log_p.exp() * log_p).sum(dim=1).mean()
    return {"loss": loss, "value": value_loss, "policy": policy_loss, "l2": l2, "entropy": entropy}


@torch.no_grad()
def policy_kl(old_log_p: torch.Tensor, new_log_p: torch.Tensor) -> float:
    """Mean KL(old || new) between two policies given as log-probabilities."""
    return float((old_log_p.exp() * (old_log_p - new_log_p)).sum(dim=1).mean())
