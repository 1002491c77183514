"""Elo difference from a match score, with a confidence interval.

The score ``s = (W + D/2) / N`` maps to an Elo difference by the logistic model
``s = 1 / (1 + 10 ** (-elo / 400))``. Its standard error comes from the observed per-game
results (each game scores 1, 1/2 or 0): ``se = sqrt(var / N)`` with ``var`` the variance of those
N scores, so draws narrow the interval as they should. The interval is ``s +- z * se`` mapped
through the same curve (a normal approximation: fine from a few dozen games on).

A perfect or a zero score has no finite Elo and no spread: the score is then pulled half a game
away from the edge ((N - 1/2) / N or 1/(2N)), the variance is taken as the binomial one at that
score, and the estimate says so (``clamped`` and ``note``).

Matches here play each opening twice, A once with each colour. The two games of a pair are not
independent: where black wins most games, a pair mostly splits one game each whatever the players'
strength. :func:`paired_elo_estimate` takes the spread over pairs instead (the "pentanomial" model
of engine testing frameworks: a pair scores 0, 1/2, 1, 3/2 or 2), which is the honest interval for
such a match; it is usually narrower, and wider when the colours cancel less than chance.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from statistics import NormalDist

from alphagomoku.checks import non_negative_int


@dataclass(frozen=True)
class EloEstimate:
    """Elo difference of player A over player B, the 95% (or ``confidence``) interval around it,
    the score it came from and its standard error."""

    elo: float
    lower: float
    upper: float
    score: float
    stderr: float
    games: int
    confidence: float
    clamped: bool = False
    note: str = ""

    def __str__(self) -> str:
        text = (f"Elo {self.elo:+.0f} [{self.lower:+.0f}, {self.upper:+.0f}] "
                f"({self.confidence:.0%} CI), score {self.score:.3f} +- {self.stderr:.3f} "
                f"over {self.games} games")
        return f"{text}; {self.note}" if self.note else text

    def to_dict(self) -> dict:
        return asdict(self)


def elo_from_score(score: float) -> float:
    """Elo difference for an expected score strictly between 0 and 1."""
    if not 0.0 < score < 1.0:
        raise ValueError(f"a score of {score!r} has no finite Elo difference: it must lie in (0, 1)")
    return -400.0 * math.log10(1.0 / score - 1.0)


def score_from_elo(elo: float) -> float:
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def elo_estimate(wins: int, draws: int, losses: int, confidence: float = 0.95) -> EloEstimate:
    """Elo of the player who scored ``wins`` / ``draws`` / ``losses`` against the other."""
    for name, v in (("wins", wins), ("draws", draws), ("losses", losses)):
        non_negative_int(name, v)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    n = wins + draws + losses
    if n == 0:
        raise ValueError("no games were played: an Elo difference needs at least one game")

    score = (wins + 0.5 * draws) / n
    var = (wins * (1.0 - score) ** 2 + draws * (0.5 - score) ** 2 + losses * score**2) / n
    return _estimate(score, var, units=n, games=n, confidence=confidence)


def paired_elo_estimate(pair_scores: Sequence[float], confidence: float = 0.95) -> EloEstimate:
    """Elo of A from pairs of games on the same opening, A once with each colour.
    ``pair_scores[k]`` is A's total in pair k: 0, 0.5, 1, 1.5 or 2."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    if not pair_scores:
        raise ValueError("no pairs of games: a paired Elo difference needs at least one")
    for k, v in enumerate(pair_scores):
        if v not in (0.0, 0.5, 1.0, 1.5, 2.0):
            raise ValueError(f"pair {k} scored {v!r}; a pair of games scores 0, 0.5, 1, 1.5 or 2")
    pairs = len(pair_scores)
    halves = [v / 2.0 for v in pair_scores]  # per game: the scale of elo_estimate's score
    score = sum(halves) / pairs
    var = sum((h - score) ** 2 for h in halves) / pairs
    return _estimate(score, var, units=pairs, games=2 * pairs, confidence=confidence)


def _estimate(score: float, var: float, units: int, games: int, confidence: float) -> EloEstimate:
    """The interval from a score over ``games`` games and the variance of its ``units``
    independent parts (games, or pairs of games)."""
    edge = 0.5 / games  # half a game away from a perfect or zero score
    clamped = False
    note = ""
    point = score
    if score >= 1.0 - edge or score <= edge:
        point = min(max(score, edge), 1.0 - edge)
        clamped = True
        side = "won" if score > 0.5 else "lost"
        note = (f"every game {side}: the score is clamped to {point:.3f} (half a game from "
                f"{score:.0%}); the true difference may be larger")
    if var == 0.0:
        # All alike (all wins, all losses, all draws, or every pair split): the sample shows no
        # spread, which would make the interval a single point. Use the binomial spread of the
        # games at the point instead.
        var = point * (1.0 - point) * units / games
        if not clamped:
            note = ("every game drawn" if units == games else "every pair scored the same") + \
                ": the interval uses the binomial spread of the score"
    stderr = math.sqrt(var / units)
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    lo = min(max(point - z * stderr, edge), 1.0 - edge)
    hi = min(max(point + z * stderr, edge), 1.0 - edge)
    return EloEstimate(
        elo=elo_from_score(point), lower=elo_from_score(lo), upper=elo_from_score(hi),
        score=score, stderr=stderr, games=games, confidence=confidence, clamped=clamped, note=note,
    )
