"""The compiled checks on either side of a search step: which trees the next ``gather`` may
grow, and whether an evaluator's answers are fit for ``apply``.

Both were numpy expressions in the forest's Python; a handful of reductions and masks a call
cost a small batch more than the checks themselves, so they run here, in one pass each. The
forest turns what they find into its error messages."""

from __future__ import annotations

import numpy as np
from numba import njit

from alphagomoku.mcts.tree import ROOT, VISITS
from alphagomoku.numba_config import JIT

#: What :func:`plan_quota` found (with the tree concerned): nothing wrong, an active tree
#: without a position, or a tree whose leaves await their answer in another lane.
QUOTA_OK = 0
NOTHING_TO_SEARCH = 1
IN_OTHER_LANE = 2


@njit(**JIT)
def plan_quota(nodes, target, live, active, use_active, extra, in_lane, quota):
    """Fill ``quota`` (simulations each tree may run in the next gather). Without
    ``use_active``: the live trees short of their ``target``; with it, exactly the ``active``
    trees, each at least ``extra`` (leaves_per_tree) when it has reached its target. Returns
    (QUOTA_OK, -1) or (what is wrong, the first tree concerned); ``in_lane`` is -1 for trees
    with no leaves awaiting apply."""
    for t in range(quota.shape[0]):
        room = np.int64(target[t]) - np.int64(nodes[t, ROOT, VISITS])
        if use_active:
            if not active[t]:
                quota[t] = 0
                continue
            if not live[t]:
                return NOTHING_TO_SEARCH, t
            quota[t] = room if room > 0 else extra
        else:
            quota[t] = room if (live[t] and room > 0) else 0
    for t in range(quota.shape[0]):
        if quota[t] > 0 and in_lane[t] >= 0:
            return IN_OTHER_LANE, t
    return QUOTA_OK, -1


#: How far past [-1, 1] an evaluator's value may stray (float rounding) and be clipped.
VALUE_SLACK = 1e-4
#: What :func:`apply` found wrong with the answers (it then changed nothing).
ANSWERS_OK = 0
BAD_PRIORS = 1
BAD_VALUES = 2


@njit(**JIT)
def check_answers(n, priors, values):
    """ANSWERS_OK when the first ``n`` rows are usable: every prior finite and non-negative,
    every value within [-1, 1] give or take VALUE_SLACK; else BAD_PRIORS or BAD_VALUES."""
    for j in range(n):
        v = values[j]
        # Comparisons with NaN fail, so one test each covers it.
        if not (-1.0 - VALUE_SLACK <= v <= 1.0 + VALUE_SLACK):
            return BAD_VALUES
        row = priors[j]
        for p in range(row.shape[0]):
            x = row[p]
            if not (0.0 <= x < np.inf):
                return BAD_PRIORS
    return ANSWERS_OK
