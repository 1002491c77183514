"""The rule as network input: RULE_PLANES constant planes after all the others.

Gomoku's rules differ in what wins (an overline under standard) and in what black may play
(renju), so a network that plays several rules must be told which one holds. Like KataGo's
global inputs these are the same at every point; they are planes so that every input the
network reads travels in the one planes array the search, the trainer and the exports share.
"""

from __future__ import annotations

import numpy as np

from alphagomoku.game.constants import RENJU, RULE_PLANES, STANDARD

# The plane that is all ones under each rule (freestyle has none: both planes zero).
_PLANE_OF_RULE = {STANDARD: 0, RENJU: 1}


def fill_rule_planes(planes: np.ndarray, rule_id: int) -> np.ndarray:
    """Write the rule into the last RULE_PLANES planes of ``planes`` (``(..., C, H, W)``, in
    place) and return it."""
    rule_part = planes[..., -RULE_PLANES:, :, :]
    rule_part[...] = 0.0
    k = _PLANE_OF_RULE.get(int(rule_id))
    if k is not None:
        rule_part[..., k, :, :] = 1.0
    return planes
