"""Balanced random openings for self-play.

Games that all start from the empty board let one colour's view run away: once the value head
believes the side that happens to win self-play always wins, the loser's search has nothing to
choose between and its play falls apart (the colour collapse). Starting most games from a short
random opening that the current network judges close to even keeps both colours' positions in
the data and rules out openings already decided. The recipe follows KataGomo's random openings
(a few stones, the first near the centre, the rest near earlier stones; a candidate kept with
weight (1 - v^2)^k, v being the network's value).

"Even" is calibrated by results, not taken on the value head's word: on 15x15 freestyle the
first player really is ahead, and late in a one-hour run black won about 65% of the openings
the network had valued as even. ``black_target`` is the value for black
that openings aim at; the trainer moves it each epoch against the colour that won more games
from openings (:func:`steer_target`), so the games themselves come out even.

Everything is drawn from the ``rng`` given, so an opening is reproducible from its seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from alphagomoku.game.config import GameConfig
from alphagomoku.game.constants import BLACK
from alphagomoku.game.position import IllegalMoveError, Position
from alphagomoku.mcts.leaf_evaluator import LeafEvaluator, reads_rule_planes, reads_threat_planes


@dataclass(frozen=True)
class OpeningSettings:
    """``share``: games that start from an opening (the rest from the empty board).
    ``min_stones``/``max_stones``: stones placed, uniform in that range. ``candidates``:
    openings drawn and valued in one evaluator call per accepted opening. ``balance_power``:
    k in the acceptance weight (1 - v^2)^k. ``max_value``: a candidate with |v| above this is
    never taken while one below it exists (up to ``retries`` batches). ``black_target``: the
    value for black that counts as even (0 until the trainer learns otherwise); v above is the
    network's value minus this target, seen from the side to move."""

    share: float = 0.9
    min_stones: int = 1
    max_stones: int = 8
    candidates: int = 16
    balance_power: float = 4.0
    max_value: float = 0.6
    retries: int = 3
    black_target: float = 0.0

    def __post_init__(self):
        if not 0.0 <= self.share <= 1.0:
            raise ValueError(f"opening share must be within [0, 1], got {self.share}")
        if not 0 <= self.min_stones <= self.max_stones:
            raise ValueError(f"opening stones must satisfy 0 <= min ({self.min_stones}) <= max "
                             f"({self.max_stones})")
        if self.candidates < 1 or self.retries < 1:
            raise ValueError("opening candidates and retries must be at least 1")
        if self.balance_power < 0 or not 0.0 < self.max_value <= 1.0:
            raise ValueError("opening balance_power must be >= 0 and max_value within (0, 1]")
        if not -1.0 < self.black_target < 1.0:
            raise ValueError(f"opening black_target must be within (-1, 1), got {self.black_target}")


# The steered target never goes past this: beyond it "balanced" would mean "one side is lost".
MAX_BLACK_TARGET = 0.5


def steer_target(target: float, black_wins: int, white_wins: int, games: int, gain: float) -> float:
    """The next epoch's ``black_target``: an integral controller on the colour gap of the games
    from openings. Black winning 65% to 35% with gain 0.25 lowers the target by 0.075, so the
    next openings are ones the network rates a little worse for black."""
    if games <= 0 or gain <= 0:
        return target
    gap = (black_wins - white_wins) / games
    return float(np.clip(target - gain * gap, -MAX_BLACK_TARGET, MAX_BLACK_TARGET))


def random_stones(game: GameConfig, stones: int, rng: np.random.Generator) -> list[int] | None:
    """``stones`` moves, black first: the first within a few points of the centre, each later
    one within two points (king moves) of an earlier stone. Legal under the rule, and the game
    is not over after them; None when the draw fails (rare: try again)."""
    pos = random_position(game, stones, rng)
    return None if pos is None else list(pos.moves)


def random_position(game: GameConfig, stones: int, rng: np.random.Generator) -> Position | None:
    """The position after :func:`random_stones`' moves (the same draw), or None."""
    pos = Position(game)
    radius = max(1, min(game.width, game.height) // 5)
    cx, cy = game.width // 2, game.height // 2
    placed: list[tuple[int, int]] = []
    for _ in range(stones):
        for _attempt in range(20):
            if placed:
                ax, ay = placed[int(rng.integers(len(placed)))]
                x, y = ax + int(rng.integers(-2, 3)), ay + int(rng.integers(-2, 3))
            else:
                x, y = cx + int(rng.integers(-radius, radius + 1)), cy + int(rng.integers(-radius, radius + 1))
            if not (0 <= x < game.width and 0 <= y < game.height):
                continue
            try:
                pos.play(y * game.width + x)
            except IllegalMoveError:
                continue  # occupied, or forbidden for black under renju
            if pos.is_over:
                pos.undo()
                continue
            placed.append((x, y))
            break
        else:
            return None
    return pos


def choose_balanced(values: np.ndarray, settings: OpeningSettings,
                    rng: np.random.Generator) -> int:
    """Index of the candidate to keep, drawn with weight (1 - v^2)^k among those with
    |v| <= max_value, ``values`` being distances from even (see :func:`distance_from_even`);
    -1 when none is that close."""
    v = np.clip(np.asarray(values, dtype=np.float64), -1.0, 1.0)
    ok = np.abs(v) <= settings.max_value
    if not ok.any():
        return -1
    w = np.where(ok, (1.0 - v * v) ** settings.balance_power, 0.0)
    if w.sum() <= 0.0:
        return int(rng.choice(np.flatnonzero(ok)))
    return int(rng.choice(len(v), p=w / w.sum()))


def distance_from_even(values: np.ndarray, black_to_move: np.ndarray, black_target: float) -> np.ndarray:
    """The network's values (side to move) minus what counts as even for that side."""
    target = np.where(black_to_move, black_target, -black_target)
    return np.asarray(values, dtype=np.float64) - target


def balanced_opening(game: GameConfig, evaluator: LeafEvaluator, settings: OpeningSettings,
                     rng: np.random.Generator, vcf_budget: int = 0) -> tuple[list[int], float, int]:
    """A random opening the network values close to even for the side to move (a network with
    VCF planes proved within ``vcf_budget`` nodes).

    Returns (moves, distance from even, evaluator calls). After ``retries`` batches with no
    candidate within ``max_value``, the most even candidate seen is returned (the caller counts
    those)."""
    [(moves, value)], calls = balanced_openings(game, evaluator, settings, rng, 1, vcf_budget)
    return moves, value, calls


def balanced_openings(game: GameConfig, evaluator: LeafEvaluator, settings: OpeningSettings,
                      rng: np.random.Generator, count: int,
                      vcf_budget: int = 0) -> tuple[list[tuple[list[int], float]], int]:
    """``count`` openings as :func:`balanced_opening` draws each, with the candidates of all of
    them evaluated in one call a round: on a GPU a call of hundreds of positions costs about as
    much as a call of one. Returns ([(moves, distance from even)] in order, evaluator calls)."""
    rule_planes = reads_rule_planes(evaluator)
    threat_planes = reads_threat_planes(evaluator)
    best: list[tuple[list[int], float]] = [([], np.inf)] * count
    chosen: list[tuple[list[int], float] | None] = [None] * count
    calls = 0
    for _ in range(settings.retries):
        todo = [i for i in range(count) if chosen[i] is None]
        if not todo:
            break
        positions = []
        for _i in todo:  # each opening's candidates in turn, as one draw at a time would
            drawn = 0
            while drawn < settings.candidates:
                n = int(rng.integers(settings.min_stones, settings.max_stones + 1))
                pos = random_position(game, n, rng)
                if pos is not None:
                    positions.append(pos)
                    drawn += 1
        planes = np.stack([p.planes(vcf_budget, rule_planes, threat_planes) for p in positions])
        legal = np.stack([p.legal_mask() for p in positions])
        _, values = evaluator(planes, legal)
        calls += 1
        black_to_move = np.array([p.to_move == BLACK for p in positions])
        values = distance_from_even(np.asarray(values).reshape(-1), black_to_move,
                                    settings.black_target)
        c = settings.candidates
        for k, i in enumerate(todo):
            mine, moves = values[k * c:(k + 1) * c], positions[k * c:(k + 1) * c]
            pick = choose_balanced(mine, settings, rng)
            if pick >= 0:
                chosen[i] = (list(moves[pick].moves), float(mine[pick]))
                continue
            j = int(np.argmin(np.abs(mine)))
            if abs(mine[j]) < abs(best[i][1]):
                best[i] = (list(moves[j].moves), float(mine[j]))
    return [c if c is not None else b for c, b in zip(chosen, best)], calls
