"""Training batches: planes made from stored boards, each sample under a random symmetry."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from alphagomoku.game import kernels, threat_planes as threats, vcf_planes
from alphagomoku.game.config import GameConfig
from alphagomoku.game.constants import NUM_PLANES, RULE_PLANES, THREAT_PLANES, VCF_PLANES
from alphagomoku.game.rule_planes import fill_rule_planes
from alphagomoku.game.solver_state import vcf_state_for
from alphagomoku.game.symmetry import transform_planes, transform_policy, valid_symmetries
from alphagomoku.numba_config import JIT
from alphagomoku.train.buffer import ReplayBuffer


@njit(**JIT)
def encode_batch(boards, to_move, last_move, h, w, rule, out):
    """out[i] = input planes of position i; boards (B, h*w) int8, out (B, NUM_PLANES, h, w)."""
    for i in range(boards.shape[0]):
        kernels.encode_planes_into(boards[i], h, w, rule, to_move[i], last_move[i], out[i])


@njit(**JIT)
def encode_vcf_batch(boards, to_move, last_move, h, w, n, rule, budget, st, out):
    """out[i]'s two VCF planes (out (B, NUM_PLANES + 2, h, w)), proved within ``budget`` nodes
    as the search's leaves have them. They are constant over the board, so a symmetry applied
    afterwards leaves them as they are."""
    for i in range(boards.shape[0]):
        vcf_planes.write_vcf_planes(boards[i], h, w, n, rule, to_move[i], last_move[i], budget,
                                    st, out[i])


class Batch(NamedTuple):
    planes: np.ndarray         # float32 (B, C, H, W)
    policy: np.ndarray         # float32 (B, H*W): policy targets
    value: np.ndarray          # float32 (B,): value targets, z and q mixed
    policy_weight: np.ndarray  # float32 (B,): weight of each policy term (0: no target)
    value_weight: np.ndarray   # float32 (B,): weight of each value term
    reply: np.ndarray          # float32 (B, H*W): the opponent's reply policy (zeros: none)
    reply_weight: np.ndarray   # float32 (B,): 1 where the reply target exists
    short_value: np.ndarray    # float32 (B,): short-term value target
    future: np.ndarray         # float32 (B, H*W): the board FUTURE_PLIES on, +1 own, -1 the opponent's
    future_weight: np.ndarray  # float32 (B,): weight of each future term (0: not known)


@njit(**JIT)
def encode_threat_batch(boards, to_move, h, w, n, rule, first, out):
    """out[i]'s threat planes, from plane ``first`` on."""
    for i in range(boards.shape[0]):
        threats.write_threat_planes(boards[i], h, w, n, rule, to_move[i], out[i], first)


def draw_symmetries(game: GameConfig, count: int, rng: np.random.Generator) -> np.ndarray:
    """A random symmetry of ``game``'s board for each of ``count`` samples."""
    syms = np.asarray(valid_symmetries(game.width, game.height))
    return syms[rng.integers(0, len(syms), size=count)]


def make_batch(
    buffer: ReplayBuffer, indices: np.ndarray, rng: np.random.Generator | None, game: GameConfig,
    q_weight: float = 0.0, vcf_budget: int = 0, rule_planes: bool = False,
    symmetries: np.ndarray | None = None, threat_planes: bool = False,
) -> Batch:
    """The training batch of positions ``indices``; value target (1 - q_weight) z + q_weight q;
    with ``vcf_budget`` > 0, the VCF planes too (a network with ``vcf_plane_budget``); with
    ``threat_planes``, the threat planes after those (a network with ``threat_planes``); with
    ``rule_planes``, the rule planes last (a network that reads the rule).

    With ``rng``, each sample gets one of the board's symmetries at random
    (:func:`draw_symmetries`), the same one for its planes and its policy; ``symmetries`` gives
    them drawn already; with neither the samples are left as stored.
    """
    b = len(indices)
    if rng is not None:
        if symmetries is not None:
            raise ValueError("give make_batch an rng or the symmetries drawn, not both")
        symmetries = draw_symmetries(game, b, rng)
    extra = VCF_PLANES if vcf_budget > 0 else 0
    threat = THREAT_PLANES if threat_planes else 0
    rules = RULE_PLANES if rule_planes else 0
    planes = np.empty((b, NUM_PLANES + extra + threat + rules, game.height, game.width),
                      dtype=np.float32)
    if rules:
        # Constant over the board, so the symmetries below leave them as they are.
        fill_rule_planes(planes, game.rule_id)
    boards = buffer.boards[indices]
    # int64, as the search passes them: the kernels compiled for the search serve here too.
    to_move = buffer.to_move[indices].astype(np.int64)
    last_move = buffer.last_move[indices].astype(np.int64)
    encode_batch(boards, to_move, last_move, game.height, game.width, game.rule_id, planes)
    if extra:
        encode_vcf_batch(boards, to_move, last_move, game.height, game.width, game.n_in_row,
                         game.rule_id, int(vcf_budget), vcf_state_for(game), planes)
    if threat:
        encode_threat_batch(boards, to_move, game.height, game.width, game.n_in_row, game.rule_id,
                            NUM_PLANES + extra, planes)
    policies = buffer.policies[indices].astype(np.float32)
    values = buffer.value_targets(indices, q_weight)
    has_reply = buffer.reply[indices]
    replies = np.where(has_reply[:, None],
                       buffer.policies[(indices + 1) % buffer.capacity].astype(np.float32), 0.0)
    replies = replies.astype(np.float32)
    # From the side to move's view, as everything the network reads and answers.
    later = buffer.future[indices]
    future = ((later == to_move[:, None]).astype(np.float32)
              - ((later != 0) & (later != to_move[:, None])).astype(np.float32))
    if symmetries is not None:
        for k in np.unique(symmetries):
            if k == 0:
                continue
            rows = np.flatnonzero(symmetries == k)
            planes[rows] = transform_planes(planes[rows], int(k))
            policies[rows] = transform_policy(policies[rows], int(k), game.width, game.height)
            replies[rows] = transform_policy(replies[rows], int(k), game.width, game.height)
            future[rows] = transform_policy(future[rows], int(k), game.width, game.height)
    weight = buffer.weight[indices].copy()
    return Batch(planes, policies, values, weight * buffer.policy_weight[indices], weight,
                 replies, weight * has_reply, buffer.short_value[indices].copy(), future,
                 weight * buffer.has_future[indices])
