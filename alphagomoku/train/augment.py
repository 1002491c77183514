"""Training batches: planes made from stored boards, each sample under a random symmetry."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from alphagomoku.game import kernels
from alphagomoku.game.config import GameConfig
from alphagomoku.game.constants import NUM_PLANES
from alphagomoku.game.symmetry import transform_planes, transform_policy, valid_symmetries
from alphagomoku.numba_config import JIT
from alphagomoku.train.buffer import ReplayBuffer


@njit(**JIT)
def encode_batch(boards, to_move, last_move, h, w, rule, out):
    """out[i] = input planes of position i; boards (B, h*w) int8, out (B, NUM_PLANES, h, w)."""
    for i in range(boards.shape[0]):
        kernels.encode_planes_into(boards[i], h, w, rule, to_move[i], last_move[i], out[i])


class Batch(NamedTuple):
    planes: np.ndarray         # float32 (B, C, H, W)
    policy: np.ndarray         # float32 (B, H*W): policy targets
    value: np.ndarray          # float32 (B,): value targets, z and q mixed
    policy_weight: np.ndarray  # float32 (B,): weight of each policy term (0: no target)
    value_weight: np.ndarray   # float32 (B,): weight of each value term


def make_batch(
    buffer: ReplayBuffer, indices: np.ndarray, rng: np.random.Generator | None, game: GameConfig,
    q_weight: float = 0.0,
) -> Batch:
    """The training batch of positions ``indices``; value target (1 - q_weight) z + q_weight q.

    With ``rng``, each sample gets one of the board's symmetries at random, the same one for its
    planes and its policy; with ``rng=None`` the samples are left as stored.
    """
    b = len(indices)
    planes = np.empty((b, NUM_PLANES, game.height, game.width), dtype=np.float32)
    encode_batch(
        buffer.boards[indices], buffer.to_move[indices], buffer.last_move[indices].astype(np.int64),
        game.height, game.width, game.rule_id, planes,
    )
    policies = buffer.policies[indices].astype(np.float32)
    values = buffer.value_targets(indices, q_weight)
    if rng is not None:
        syms = np.asarray(valid_symmetries(game.width, game.height))
        choice = syms[rng.integers(0, len(syms), size=b)]
        for k in np.unique(choice):
            if k == 0:
                continue
            rows = np.flatnonzero(choice == k)
            planes[rows] = transform_planes(planes[rows], int(k))
            policies[rows] = transform_policy(policies[rows], int(k), game.width, game.height)
    weight = buffer.weight[indices].copy()
    return Batch(planes, policies, values, weight * buffer.policy_weight[indices], weight)
