"""One worker's self-play: many games at once, one network batch per search step.

Every game has its own search tree in one :class:`~alphagomoku.mcts.Forest`. Each step gathers a
leaf from every tree that still needs simulations, evaluates all of them in one call, and backs
the values up; a game whose root has enough visits plays its move. A finished game's tree is
reset for the next game, so the batch stays full until the last games.

The games can be split into groups (``SelfPlaySettings.groups``), each with its own batch in
flight: while one group's batch is on the device, the worker selects, expands and writes the
input planes of the others (:mod:`alphagomoku.nn.inflight`). Each group takes its turn in the
same order: take its batch's answer, play the moves its finished searches chose, gather its
next batch and submit it. With one group that is the plain loop; with more, every tree sees
the same events in the same order, so the games are the same move for move. Game slot i
starts its first search in round i mod ``SelfPlaySettings.stagger``, so the games' moves, and
the CPU work each move takes, are spread over the rounds instead of falling in one.

Most games start from a balanced random opening (:mod:`alphagomoku.selfplay.openings`). With
playout cap randomisation (KataGo), a share of moves gets the full search and becomes a policy
target; the others get a fast search and train the value only. With the Gumbel root the policy
target is Gumbel AlphaZero's improved policy and the move is the search's own choice; with PUCT
it is the visit distribution and a move drawn from it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from alphagomoku.game.config import GameConfig
from alphagomoku.game.constants import BLACK, WHITE
from alphagomoku.game.position import Position
from alphagomoku.game.vcf_search import solve_vcf
from alphagomoku.mcts import Forest, SearchConfig, select_move
from alphagomoku.mcts.leaf_evaluator import LeafEvaluator
from alphagomoku.nn.cache import EvaluationCache
from alphagomoku.nn.inflight import submit
from alphagomoku.selfplay.openings import OpeningSettings, balanced_openings
from alphagomoku.selfplay.training_game import TrainingGame


@dataclass(frozen=True)
class SelfPlaySettings:
    games_at_once: int = 8
    temperature_moves: int = 8       # plies sampled in proportion to visits; then the best move
    resign_threshold: float = 0.0    # resign below -threshold; 0 = never
    resign_playthrough: float = 0.1  # share of games that never resign (false-resignation check)
    openings: OpeningSettings | None = None  # None: every game from the empty board
    full_search_share: float = 1.0   # playout cap randomisation: moves given the full search
    fast_simulations: int = 0        # root visits of the other moves' fast search
    vcf_end_budget: int = 0          # end a game when the side to move has a VCF proved within
                                     # this many solver nodes (0: play every game out)
    eval_cache: int = 16384          # network answers kept for positions met again (0: none)
    groups: int = 1                  # batches in flight: the games split into this many groups
    stagger: int | None = None       # game slot i starts its first search in round i % stagger,
                                     # so the games' moves fall in different rounds (None: the
                                     # search's simulations; 0 or 1: all at once)

    def __post_init__(self):
        if not 0.0 < self.full_search_share <= 1.0:
            raise ValueError(f"full_search_share must be within (0, 1], got {self.full_search_share}")
        if self.full_search_share < 1.0 and self.fast_simulations < 2:
            raise ValueError("playout cap randomisation needs fast_simulations of at least 2")
        if isinstance(self.groups, bool) or not isinstance(self.groups, int) or self.groups < 1:
            raise ValueError(f"groups must be a positive integer, got {self.groups!r}")
        if self.stagger is not None and (isinstance(self.stagger, bool)
                                         or not isinstance(self.stagger, int) or self.stagger < 0):
            raise ValueError(f"stagger must be None or an integer of at least 0, got "
                             f"{self.stagger!r}")
        if self.eval_cache < 0:
            raise ValueError(f"eval_cache must be 0 (off) or more, got {self.eval_cache}")


@dataclass
class _Slot:
    position: Position
    opening: int          # moves of the opening, played before any search
    policies: list
    values: list
    move_values: list
    full: list
    playthrough: bool
    would_resign: int = 0


def play_games(
    evaluator: LeafEvaluator,
    game: GameConfig,
    search: SearchConfig,
    settings: SelfPlaySettings,
    num_games: int,
    seed: int,
    on_step=None,
) -> tuple[list[TrainingGame], dict]:
    """Play ``num_games`` games; return their records and timing statistics.

    ``on_step()``, if given, is called once per search step (a worker's heartbeat).

    ``stats`` has: games, positions (searched plies), evaluations, steps (network calls),
    groups (batches in flight), seconds, network_seconds (waiting for the network: the
    calls, and with groups the time a batch's answer was still being computed), openings (games started from one), unbalanced_openings (no
    candidate was within the balance bound), cache_hits (positions, the openings' included,
    answered by the evaluation cache instead of the network) and cache_misses.
    """
    if num_games < 1:
        raise ValueError(f"num_games must be at least 1, got {num_games}")
    rng = np.random.default_rng(seed)
    # One task, one set of weights: the cache never outlives them.
    cache = EvaluationCache(evaluator, settings.eval_cache) if settings.eval_cache else None
    if cache is not None:
        evaluator = cache
    k = min(num_games, settings.games_at_once)
    groups = min(settings.groups, k)
    forest = Forest(game, search, k, seed=int(rng.integers(2**31)), lanes=groups)
    # Contiguous groups: a group's gather visits its trees in the order one gather of all of
    # them would, so the solvers' shared memory sees the same calls.
    member = np.zeros((groups, k), dtype=np.bool_)
    for g, trees in enumerate(np.array_split(np.arange(k), groups)):
        member[g, trees] = True
    in_flight: list = [None] * groups
    # Searches of one length started together end together: every game's move would then fall
    # in the same round, a burst of CPU work the device waits through. Spread over a search's
    # length, the moves come a few a round and overlap the other group's batch. The starts
    # depend on the slot and the round (each group's turn once) only, so any number of groups
    # plays the same games.
    stagger = search.num_simulations if settings.stagger is None else settings.stagger
    first_round = np.arange(k) % max(1, stagger)
    waiting = stagger > 1
    rounds = 0
    forest.check_evaluator(evaluator)
    slots: list[_Slot | None] = [None] * k
    started = 0
    records: list[TrainingGame] = []
    evaluations = 0
    steps = 0
    network_seconds = 0.0
    openings = unbalanced = 0
    t0 = time.perf_counter()

    def start(indices) -> None:
        """New games in slots ``indices``, their openings' candidates in one call a round."""
        nonlocal started, openings, unbalanced, network_seconds
        op = settings.openings
        opened = [i for i in indices if op is not None and rng.random() < op.share]
        drawn = {}
        if opened:
            t = time.perf_counter()
            chosen, _ = balanced_openings(game, evaluator, op, rng, len(opened),
                                          search.vcf_plane_budget)
            network_seconds += time.perf_counter() - t
            drawn = dict(zip(opened, chosen))
        for i in indices:
            position = Position(game)
            if i in drawn:
                moves, value = drawn[i]
                for m in moves:
                    position.play(m)
                openings += 1
                unbalanced += abs(value) > op.max_value
            playthrough = bool(rng.random() < settings.resign_playthrough)
            slots[i] = _Slot(position, len(position.moves), [], [], [], [], playthrough)
            forest.reset(i, position)
            _choose_budget(forest, i, slots[i], settings, rng)
            started += 1

    start(range(k))
    active = np.ones(k, dtype=np.bool_)
    while active.any():
        for g in range(groups):
            if on_step is not None:
                on_step()
            if in_flight[g] is not None:
                t = time.perf_counter()
                priors, values = in_flight[g].result()
                network_seconds += time.perf_counter() - t
                in_flight[g] = None
                forest.apply(priors, values, lane=g)
            mine = active & member[g]
            for i in np.flatnonzero(mine & ~forest.short_of_target()):
                slot = slots[i]
                record = _play_one_move(forest, i, slot, settings, rng)
                if record is None:
                    _choose_budget(forest, i, slot, settings, rng)
                    continue
                records.append(record)
                if started < num_games:
                    start([i])
                else:
                    active[i] = False
                    slots[i] = None
            need = active & member[g] & forest.short_of_target()
            if waiting:
                need &= first_round <= rounds
            if need.any():
                n = forest.gather(need, lane=g)
                if n:
                    t = time.perf_counter()
                    in_flight[g] = submit(evaluator, forest.lane_planes(g)[:n],
                                          forest.lane_legal(g)[:n])
                    network_seconds += time.perf_counter() - t
                    evaluations += n
                    steps += 1
        rounds += 1
        waiting = rounds < stagger
    stats = {
        "games": len(records),
        "positions": int(sum(r.searched for r in records)),
        "evaluations": evaluations,
        "steps": steps,
        "groups": groups,
        "seconds": time.perf_counter() - t0,
        "network_seconds": network_seconds,
        "openings": openings,
        "unbalanced_openings": unbalanced,
        "cache_hits": 0 if cache is None else cache.hits,
        "cache_misses": 0 if cache is None else cache.misses,
    }
    return records, stats


def _choose_budget(forest: Forest, i: int, slot: _Slot, settings: SelfPlaySettings, rng) -> None:
    """Playout cap randomisation: decide whether the coming move gets the full search."""
    full = settings.full_search_share >= 1.0 or rng.random() < settings.full_search_share
    slot.full.append(full)
    if not full:
        forest.set_budget(i, min(settings.fast_simulations, forest.cfg.num_simulations))


def _play_one_move(forest: Forest, i: int, slot: _Slot, settings: SelfPlaySettings, rng) -> TrainingGame | None:
    """Play tree ``i``'s move; return the game's record when the game is over."""
    position = slot.position
    ply = len(position.moves)
    value = forest.root_value(i)
    mover = position.to_move
    if settings.resign_threshold > 0 and value < -settings.resign_threshold and ply > 0:
        if slot.playthrough:
            slot.would_resign = slot.would_resign or mover
        else:
            return _finish(slot, WHITE if mover == BLACK else BLACK, resigned=True)
    if forest.gumbel:
        policy = forest.improved_policy(i)
        move = forest.gumbel_move(i)
    else:
        visits = forest.visit_counts(i)
        policy = visits / visits.sum()
        temperature = 1.0 if ply < settings.temperature_moves else 0.0
        move = select_move(visits, temperature, rng)
    slot.policies.append(policy.astype(np.float16))
    slot.values.append(value)
    slot.move_values.append(forest.move_value(i, move))
    position.play(move)
    if position.is_over:
        return _finish(slot, position.winner, resigned=False)
    if settings.vcf_end_budget and solve_vcf(position, settings.vcf_end_budget).found:
        # The rest of the game is a forced sequence of fours: playing it out teaches little.
        return _finish(slot, position.to_move, resigned=False, vcf_ended=True)
    forest.advance(i, move)
    return None


def _finish(slot: _Slot, result: int, resigned: bool, vcf_ended: bool = False) -> TrainingGame:
    searched = len(slot.policies)
    return TrainingGame(
        moves=np.asarray(slot.position.moves, dtype=np.int16),
        policies=np.asarray(slot.policies, dtype=np.float16).reshape(
            searched, slot.position.config.area),
        root_values=np.asarray(slot.values, dtype=np.float16),
        result=int(result),
        resigned=resigned,
        would_resign=slot.would_resign,
        opening=slot.opening,
        move_values=np.asarray(slot.move_values, dtype=np.float16),
        full_search=np.asarray(slot.full[:searched], dtype=np.bool_),
        vcf_ended=vcf_ended,
    )
