"""The compiled checks around a search step against their numpy twins (the expressions the
forest used before they were compiled), on random trees, targets and answers."""

from __future__ import annotations

import numpy as np

from alphagomoku.mcts import batch_checks as bc
from alphagomoku.mcts.tree import NODE_FIELDS, ROOT, VISITS


def _quota_twin(visits, target, live, active, use_active, extra, in_lane):
    room = target - visits
    if use_active:
        if not live[active].all():
            return bc.NOTHING_TO_SEARCH, int(np.flatnonzero(active & ~live)[0]), None
        quota = np.where(active, np.where(room > 0, room, extra), 0)
    else:
        quota = np.where(live & (room > 0), room, 0)
    busy = (quota > 0) & (in_lane >= 0)
    if busy.any():
        return bc.IN_OTHER_LANE, int(np.flatnonzero(busy)[0]), None
    return bc.QUOTA_OK, -1, quota


def test_plan_quota_matches_its_numpy_twin(rng):
    seen = set()
    for _ in range(400):
        k = int(rng.integers(1, 12))
        nodes = np.zeros((k, 3, NODE_FIELDS), np.int32)
        nodes[:, ROOT, VISITS] = rng.integers(0, 12, k)
        target = rng.integers(2, 12, k).astype(np.int64)
        live = rng.random(k) < 0.9
        active = rng.random(k) < 0.6
        in_lane = np.where(rng.random(k) < 0.1, rng.integers(0, 2, k), -1).astype(np.int64)
        use_active = bool(rng.random() < 0.5)
        extra = int(rng.integers(1, 4))
        quota = np.full(k, -7, np.int64)
        found, t = bc.plan_quota(nodes, target, live, active, use_active, extra, in_lane, quota)
        want, want_t, want_quota = _quota_twin(nodes[:, ROOT, VISITS].astype(np.int64), target,
                                               live, active, use_active, extra, in_lane)
        assert (found, t) == (want, want_t)
        if found == bc.QUOTA_OK:
            assert np.array_equal(quota, want_quota)
        seen.add(found)
    assert seen == {bc.QUOTA_OK, bc.NOTHING_TO_SEARCH, bc.IN_OTHER_LANE}


def _answers_twin(priors, values):
    if not (-1.0 - bc.VALUE_SLACK <= values.min() and values.max() <= 1.0 + bc.VALUE_SLACK):
        return "values"
    if not (priors.min() >= 0.0 and np.isfinite(priors).all()):
        return "priors"
    return "ok"


def test_check_answers_matches_its_numpy_twin(rng):
    names = {bc.ANSWERS_OK: "ok", bc.BAD_PRIORS: "priors", bc.BAD_VALUES: "values"}
    seen = set()
    for _ in range(400):
        n, area = int(rng.integers(1, 6)), int(rng.integers(1, 30))
        priors = rng.random((n, area)).astype(np.float32)
        values = rng.uniform(-1, 1, n).astype(np.float32)
        for _ in range(int(rng.integers(0, 3))):
            bad = rng.choice([np.nan, np.inf, -np.inf, -1e-7, 1.00005, -1.00005, 1.01, -2.0])
            if rng.random() < 0.5:
                priors[rng.integers(n), rng.integers(area)] = bad
            else:
                values[rng.integers(n)] = bad
        got = names[bc.check_answers(n, priors, values)]
        # The kernel stops at the first bad row; the twin looks at all values first.
        first_bad_row = next((j for j in range(n) if _answers_twin(priors[j:j + 1],
                                                                   values[j:j + 1]) != "ok"),
                             None)
        want = "ok" if first_bad_row is None else _answers_twin(
            priors[first_bad_row:first_bad_row + 1], values[first_bad_row:first_bad_row + 1])
        assert got == want
        seen.add(got)
    assert seen == {"ok", "priors", "values"}
