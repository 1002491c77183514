"""AlphaZero's loss: value MSE + policy cross-entropy + L2 on the weights; and the training
loss that adds KataGo's auxiliary targets to it."""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(frozen=True)
class AuxWeights:
    """The weights of the training targets beyond the result and the search policy (KataGo's),
    each 0 (off) unless set. They need a network with the heads for them (``arch`` "kata").

    * ``reply``: the opponent's reply, the search policy at the next ply (KataGo weighs it 0.15);
    * ``soft_policy``: the search policy at temperature ``soft_temperature`` (its
      probabilities to the power ``1 / soft_temperature``, renormalised), which makes the
      network rank the moves the search barely tried;
    * ``short_value``: the short-term value (:func:`alphagomoku.train.buffer.short_term_values`);
    * ``future``: each point's stone FUTURE_PLIES plies on (:mod:`alphagomoku.train.buffer`),
      +1 the side to move's, -1 the opponent's, 0 empty: a squared error per point, averaged
      over the board, so that it weighs about what one value term does;
    * ``surprise``: each sample weighted ``(1 - surprise) + surprise * KL / mean KL``, the KL
      from the search policy to the network's: positions where the search disagreed with the
      network count more. It scales a sample's value term as well as its policy term (KataGo
      weighs value surprise apart, and less; one weight keeps this to one setting).
    """

    reply: float = 0.0
    soft_policy: float = 0.0
    soft_temperature: float = 4.0
    short_value: float = 0.0
    future: float = 0.0
    surprise: float = 0.0

    @property
    def needs_heads(self) -> bool:
        return self.reply > 0 or self.soft_policy > 0 or self.short_value > 0 or self.future > 0


def soft_policy_target(policy: torch.Tensor, temperature: float) -> torch.Tensor:
    """``policy`` (B, N) at ``temperature``: each probability to the power 1/temperature, each
    row renormalised; rows of zeros stay zeros."""
    soft = policy.clamp_min(0) ** (1.0 / temperature)
    return soft / soft.sum(dim=1, keepdim=True).clamp_min(1e-12)


def _cross_entropy(target: torch.Tensor, log_p: torch.Tensor) -> torch.Tensor:
    return -(target * log_p).sum(dim=1)


def training_loss(model, planes, target_policy, target_value, weight_decay: float,
                  policy_weight: torch.Tensor, value_weight: torch.Tensor,
                  reply: torch.Tensor, reply_weight: torch.Tensor, short_value: torch.Tensor,
                  future: torch.Tensor | None = None, future_weight: torch.Tensor | None = None,
                  aux: AuxWeights = AuxWeights()) -> dict:
    """:func:`alphazero_loss` with the targets of ``aux`` added (the tensors are a
    :class:`alphagomoku.train.augment.Batch`'s). A target whose weight is 0 adds nothing,
    and with every weight 0 this is :func:`alphazero_loss` exactly."""
    if not aux.needs_heads and aux.surprise == 0:
        return alphazero_loss(model, planes, target_policy, target_value, weight_decay,
                              policy_weight, value_weight)
    if aux.needs_heads:
        logits_all, values_all, future_all = model(planes, all_heads=True)
        logits, value = logits_all[:, 0].float(), values_all[:, 0].float()
    else:
        logits, value = model(planes)
        logits, value = logits.float(), value.float()
    log_p = F.log_softmax(logits, dim=1)
    ce = _cross_entropy(target_policy, log_p)
    if aux.surprise > 0:
        with torch.no_grad():
            entropy_target = _cross_entropy(target_policy, torch.log(target_policy.clamp_min(1e-12)))
            kl = (ce - entropy_target).clamp_min(0) * (policy_weight > 0)
            mean = kl.sum() / (policy_weight > 0).sum().clamp_min(1)
            scale = (1 - aux.surprise) + aux.surprise * kl / mean.clamp_min(1e-6)
            scale = torch.where(policy_weight > 0, scale, torch.ones_like(scale))
        policy_weight, value_weight = policy_weight * scale, value_weight * scale
    policy_loss = _weighted_mean(ce, policy_weight)
    value_loss = _weighted_mean((value.reshape(-1) - target_value) ** 2, value_weight)
    l2 = l2_penalty(model)
    loss = value_loss + policy_loss + weight_decay * l2
    parts = {"value": value_loss, "policy": policy_loss, "l2": l2}
    if aux.reply > 0:
        reply_log_p = F.log_softmax(logits_all[:, 1].float(), dim=1)
        parts["reply"] = _weighted_mean(_cross_entropy(reply, reply_log_p), reply_weight)
        loss = loss + aux.reply * parts["reply"]
    if aux.soft_policy > 0:
        soft_log_p = F.log_softmax(logits_all[:, 2].float(), dim=1)
        soft = soft_policy_target(target_policy, aux.soft_temperature)
        parts["soft_policy"] = _weighted_mean(_cross_entropy(soft, soft_log_p), policy_weight)
        loss = loss + aux.soft_policy * parts["soft_policy"]
    if aux.short_value > 0:
        short = values_all[:, 1].float().reshape(-1)
        parts["short_value"] = _weighted_mean((short - short_value) ** 2, value_weight)
        loss = loss + aux.short_value * parts["short_value"]
    if aux.future > 0:
        if future_all is None:
            raise ValueError("a future target needs a network with a future head "
                             "(ModelConfig future_head)")
        error = ((future_all.float() - future) ** 2).mean(dim=1)
        parts["future"] = _weighted_mean(error, future_weight)
        loss = loss + aux.future * parts["future"]
    with torch.no_grad():
        entropy = -(log_p.exp() * log_p).sum(dim=1).mean()
    return {"loss": loss, "entropy": entropy, **parts}


@torch.no_grad()
def policy_kl(old_log_p: torch.Tensor, new_log_p: torch.Tensor) -> float:
    """Mean KL(old || new) between two policies given as log-probabilities."""
    return float((old_log_p.exp() * (old_log_p - new_log_p)).sum(dim=1).mean())
