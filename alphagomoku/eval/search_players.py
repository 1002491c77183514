"""The players that search: pure MCTS with random playouts, and the PUCT search guided by
uniform priors or by the network.

Without a move time each runs one search of its size; with one it grows a single tree step by
step until the time is up (:mod:`alphagomoku.eval.move_budget`). None of this imports torch
until a network player loads a ``.pt`` file.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import OrderedDict
import dataclasses
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np

from alphagomoku.checks import non_negative_int, positive_int
from alphagomoku.device import DeviceChoice, cpu_name, select_device
from alphagomoku.eval.move_budget import (
    CACHE_MEMORY_SHARE,
    FIRST_CHUNK,
    MAX_TIMED_PLAYOUTS,
    MAX_TIMED_SIMULATIONS,
    fill_budget,
    move_budget,
    tree_cap,
)
from alphagomoku.eval.player_types import check_can_move
from alphagomoku.game import GameConfig, Position
from alphagomoku.mcts import Forest, PureMCTS, SearchConfig, search, uniform_evaluator
from alphagomoku.mcts import search_config as player_defaults
from alphagomoku.mcts.leaf_evaluator import LeafEvaluator, NetworkEvaluator
from alphagomoku.mcts.search import fit_to_evaluator
from alphagomoku.nn.cache import EvaluationCache, entry_bytes
from alphagomoku.nn.inference_backend import make_evaluator
from alphagomoku.nn.onnx_file import is_onnx_file, read_onnx_file

# The network answers a NetworkPlayer keeps. Each move's search meets again much of what the two
# searches before it evaluated below the new root (`benchmark.py cache` measures how much).
# About 1.2 KB a position on 15x15 (nn.cache.entry_bytes): 40 MB.
PLAYER_EVAL_CACHE = 32_768

# A match's workers build fresh players for every game (alphagomoku.eval.arena). Reading a
# weights file and exporting it for ONNX Runtime took a sixth of a worker's time in a match at
# 200 simulations a move, so a process keeps the networks it last read from files, by path,
# size and modification time. A network read from a file never changes its weights, so the
# players of one process can share it; each keeps its own evaluation cache.
_FILE_NETWORKS: OrderedDict = OrderedDict()
_FILE_NETWORKS_KEPT = 4


def _say(line: str) -> None:
    """A network's notes (a fall-back, int8 starting): on stderr, since a player's stdout may be
    a board or a protocol."""
    print(line, file=sys.stderr, flush=True)


def _file_network(path, options: tuple, read: Callable[[], tuple]) -> tuple:
    """``read()``'s answer for the file at ``path`` read with ``options``, from this process's
    last reads when the file is unchanged since."""
    stat = Path(path).stat()
    key = (str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns, options)
    if key in _FILE_NETWORKS:
        _FILE_NETWORKS.move_to_end(key)
        return _FILE_NETWORKS[key]
    loaded = _FILE_NETWORKS[key] = read()
    while len(_FILE_NETWORKS) > _FILE_NETWORKS_KEPT:
        _FILE_NETWORKS.popitem(last=False)
    return loaded


class PureMCTSPlayer:
    """MCTS with random playouts and no network (``alphagomoku.mcts.PureMCTS``): ``playouts``
    per move, or as many as fit in a time budget (at most MAX_TIMED_PLAYOUTS), searched as
    one tree continued step by step."""

    def __init__(self, playouts: int = 1000, seed: int = 0, time_per_move: float | None = None,
                 name: str | None = None):
        self.playouts = positive_int("playouts", playouts)
        self.seed = seed
        self.time_per_move = time_per_move
        self.name = name or f"pure:{playouts}"
        self.game: GameConfig | None = None
        self.memory_bytes: int | None = None  # the most its tree may take (limit_memory)
        self._mcts: PureMCTS | None = None  # the last search's, kept to reuse its arrays

    def reset(self, game: GameConfig) -> None:
        self.game = game
        # Compile or load the kernels now, not mid-game; a fresh search and a continued one
        # call the same kernel.
        PureMCTS(game, FIRST_CHUNK, seed=self.seed).search(Position(game))

    def _tree(self, game: GameConfig, capacity: int) -> PureMCTS:
        m = self._mcts
        if m is None or m.playouts != capacity or m.game != game:
            m = self._mcts = PureMCTS(game, capacity, seed=self.seed)
        return m

    def choose(self, position: Position, time_left_s: float | None = None) -> int:
        check_can_move(position)
        budget = move_budget(self.time_per_move, time_left_s)
        seed = self.seed + len(position.moves)
        if budget is None:
            visits = self._tree(position.config, self.playouts).search(position, seed=seed)
        else:
            limit = min(self.playouts, tree_cap(self.memory_bytes, position.config.area,
                                                MAX_TIMED_PLAYOUTS))
            mcts = self._tree(position.config, limit)

            def step(n: int, more: bool) -> np.ndarray:
                if more:
                    return mcts.search(position, n, continue_=True)
                return mcts.search(position, n, seed=seed)

            visits = fill_budget(step, limit, budget)
        # The most visited move (the lowest point among equals), as PureMCTS.best_move has it.
        return int(np.argmax(np.where(position.legal_mask(), visits, -1)))


class PuctPlayer(ABC):
    """Shared by the players that run the PUCT search of ``alphagomoku.mcts``; each subclass
    supplies ``_evaluator()``. Without a time budget: one ``search`` of the simulation limit.
    With one: a single tree searched one evaluator batch at a time until the budget or the
    limit is reached, so no work is thrown away."""

    simulations: int | None
    time_per_move: float | None
    seed: int
    search_config = None  # a SearchConfig whose constants replace the defaults
    last_visits: np.ndarray | None = None  # visits per move of the last choice
    memory_bytes: int | None = None  # the most its tree (and cache) may take (limit_memory)

    # A player with a time budget keeps its last search's tree for think_more():
    # (game, moves, forest, evaluator, limit).
    _tree: tuple | None = None

    @abstractmethod
    def _evaluator(self) -> LeafEvaluator:
        """What evaluates this player's leaves (its network, or uniform priors)."""

    def _config(self, n: int) -> SearchConfig:
        if self.search_config is None:
            return player_defaults(num_simulations=n)
        return dataclasses.replace(self.search_config, num_simulations=n)

    def _search(self, position: Position, n: int) -> np.ndarray:
        """Visits per move after ``n`` simulations."""
        return search(position, self._evaluator(), self._config(n),
                      seed=self.seed + len(position.moves)).visits

    def _search_until(self, position: Position, limit: int, budget_s: float,
                      clock: Callable[[], float] = time.monotonic) -> np.ndarray:
        """Visits per move after simulating on one tree until ``limit`` simulations or the
        budget runs out, whichever is first. A batch is started only when one more is expected
        to end in time (a network on a slow CPU can take tens of milliseconds a batch); at least
        one batch is always made. The tree is kept for :meth:`think_more`."""
        evaluator = self._evaluator()
        forest = Forest(position.config, fit_to_evaluator(self._config(limit), evaluator), 1,
                        seed=self.seed + len(position.moves))
        forest.reset(0, position)
        self._tree = (position.config, tuple(position.moves), forest, evaluator, limit)
        return self._grow(forest, evaluator, limit, budget_s, clock)

    def _grow(self, forest: Forest, evaluator: LeafEvaluator, limit: int, budget_s: float,
              clock: Callable[[], float]) -> np.ndarray:
        start = clock()
        deadline = start + budget_s
        active = np.ones(1, dtype=np.bool_)
        batches = 0
        last = 0.0
        while forest.root_visits(0) < limit:
            t0 = clock()
            before = forest.root_visits(0)
            n = forest.gather(active)
            if n:
                priors, values = evaluator(forest.planes[:n], forest.legal[:n])
                forest.apply(priors, values)
            now = clock()
            batches += 1
            last = now - t0
            expected = max(last, (now - start) / batches)
            if forest.root_visits(0) == before or now + expected > deadline:
                break
        return forest.visit_counts(0)

    def think_more(self, position: Position, budget_s: float,
                   clock: Callable[[], float] = time.monotonic) -> int | None:
        """The move after searching the last timed search's tree for ``budget_s`` more
        seconds; None unless that search was of ``position`` and its tree could still grow
        (a simulation cap ends it). A TacticalPlayer gives it the time its check of the move
        did not use."""
        kept = self._tree
        if kept is None or kept[:2] != (position.config, tuple(position.moves)):
            return None
        _, _, forest, evaluator, limit = kept
        before = forest.root_visits(0)
        visits = self._grow(forest, evaluator, limit, budget_s, clock)
        if forest.root_visits(0) == before:
            return None
        self.last_visits = visits
        return self._pick(np.where(position.legal_mask(), visits, -1))

    def _warm_up(self, game: GameConfig) -> None:
        """A tiny search both ways (the kernels differ), so that compiling or loading them does
        not eat into the first move's time."""
        self._search(Position(game), FIRST_CHUNK)
        self._search_until(Position(game), FIRST_CHUNK, budget_s=3600.0)

    def _tree_memory(self) -> int | None:
        """The bytes a timed search's tree may take (None: no limit)."""
        return self.memory_bytes

    def _limit(self, budget: float | None, area: int) -> int:
        if self.simulations is not None:
            return self.simulations
        if budget is not None:
            return tree_cap(self._tree_memory(), area, MAX_TIMED_SIMULATIONS)
        if self.search_config is not None:
            return self.search_config.num_simulations
        return player_defaults().num_simulations

    def choose(self, position: Position, time_left_s: float | None = None) -> int:
        check_can_move(position)
        budget = move_budget(self.time_per_move, time_left_s)
        limit = self._limit(budget, position.config.area)
        if budget is None:
            self._tree = None
            visits = self._search(position, limit)
        else:
            visits = self._search_until(position, limit, budget)
        self.last_visits = visits  # the TacticalPlayer's next choices if this move loses
        # The legal mask only guards against a bad search result.
        return self._pick(np.where(position.legal_mask(), visits, -1))

    def _pick(self, visits: np.ndarray) -> int:
        """The most visited move (the lowest point among equals)."""
        return int(np.argmax(visits))


# (UniformMCTSPlayer) Relative size of the random factor on its uniform priors.
PRIOR_JITTER = 1e-3


class UniformMCTSPlayer(PuctPlayer):
    """PUCT search with uniform priors and zero values: the network-free baseline of the
    network player (same search, no knowledge).

    It sees only what the search proves (wins, forced blocks, lost lines); between moves the
    proofs cannot tell apart it has no preference at all. Equal priors would be tried in board
    order, so on a quiet board it would always play the top-left corner; instead each prior
    gets a random factor of up to 1 + PRIOR_JITTER, which shuffles the order moves are tried
    in, and ties of the visit counts are broken at random: its quiet moves are random moves.
    """

    def __init__(self, simulations: int = 200, seed: int = 0, time_per_move: float | None = None,
                 name: str | None = None):
        self.simulations = positive_int("simulations", simulations)
        self.seed = seed
        self.time_per_move = time_per_move
        self.name = name or f"uniform:{simulations}"
        self._rng = np.random.default_rng(seed)

    def _evaluator(self) -> LeafEvaluator:
        rng = self._rng

        def jittered(planes, legal):
            priors, values = uniform_evaluator(planes, legal)
            priors *= 1.0 + PRIOR_JITTER * rng.random(priors.shape, dtype=np.float32)
            return priors, values

        return jittered

    def _pick(self, visits: np.ndarray) -> int:
        best = np.flatnonzero(visits == visits.max())
        return int(best[0]) if best.size == 1 else int(self._rng.choice(best))

    def reset(self, game: GameConfig) -> None:
        self._warm_up(game)
        self._rng = np.random.default_rng(self.seed)  # each game from the same stream


class NetworkPlayer(PuctPlayer):
    """The trained network guiding MCTS: no exploration noise, the most visited move.

    ``source`` is a weights file (``alphagomoku.nn.io.load_model``) or a model object.
    ``simulations`` caps the search; ``time_per_move`` (seconds) bounds it by time instead or as
    well; with neither, the SearchConfig default number of simulations. Each move's search
    starts a new tree, so the network's answers are kept in an evaluation cache of
    ``eval_cache`` positions (0: none), emptied by :meth:`reset`: a game, one set of weights.

    ``source`` may also be an ONNX file written by :mod:`alphagomoku.nn.onnx_file`, which runs
    on ONNX Runtime on the CPU without torch.

    ``backend`` (:mod:`alphagomoku.nn.inference_backend`): with ``auto`` a network read from a
    file runs on ONNX Runtime on a CPU, with ``threads`` threads, where it searches more
    simulations a move than with torch (docs/benchmarks.md, "The players on ONNX Runtime"). A
    model object stays on torch: its caller may change its weights between games, and ONNX
    Runtime runs a copy. ``precision="int8"`` runs ONNX Runtime's convolutions in int8 once the
    network has read enough positions to calibrate on
    (:class:`~alphagomoku.nn.onnx_file.OnnxNetwork`).
    """

    def __init__(self, source, simulations: int | None = None, time_per_move: float | None = None,
                 device: str = "auto", seed: int = 0, search_config=None, name: str | None = None,
                 eval_cache: int = PLAYER_EVAL_CACHE, backend: str = "auto", threads: int = 1,
                 precision: str = "fp32"):
        positive_int("simulations", simulations, none_ok=True)
        if time_per_move is not None and not time_per_move > 0:
            raise ValueError(f"time_per_move must be a positive number of seconds, got {time_per_move!r}")
        non_negative_int("eval_cache (0: off)", eval_cache)
        if is_onnx_file(source):
            # Written by alphagomoku.nn.onnx_file: runs on the CPU, without importing torch.
            if device not in ("auto", "cpu") or backend == "torch":
                raise ValueError(f"{source} is an ONNX file, which runs on ONNX Runtime on the "
                                 f"CPU; give the .pt weights for device {device!r} or torch")
            self.device = DeviceChoice("cpu", "cpu", cpu_name(), "an ONNX file runs on the CPU")
            self.model = self.evaluator = _file_network(
                source, ("onnx", threads, precision),
                lambda: read_onnx_file(source, threads, precision, log=_say))
            label = Path(source).name
        else:
            self._load(source, device, backend, threads, precision)
            label = Path(source).name if isinstance(source, (str, Path)) else "model"
        self.eval_cache = eval_cache
        self.cache: EvaluationCache | None = None  # this game's, once the search first asks
        self.game_area: int | None = None  # points of the board of the game being played
        self.simulations = simulations
        self.time_per_move = time_per_move
        self.seed = seed
        self.search_config = search_config
        self.name = name or (f"net:{label}" + (f":{simulations}" if simulations else ""))

    def _load(self, source, device: str, backend: str, threads: int, precision: str) -> None:
        from alphagomoku.nn.io import load_model  # imports torch: only for a .pt file

        self.device = select_device(device)
        if isinstance(source, (str, Path)):
            def read():
                model = load_model(source, device=self.device.device)
                return model, make_evaluator(model, self.device.device, backend, threads=threads,
                                             precision=precision, log=_say)

            self.model, self.evaluator = _file_network(
                source, (self.device.device, backend, threads, precision), read)
        else:
            self.model = source
            self.evaluator = make_evaluator(source, self.device.device, "torch", threads=threads)

    def _entry_bytes(self) -> int:
        """The bytes of one cached answer on the board being played."""
        config = self.model.config
        # The game's board: a network that plays every size was trained on one of them.
        return entry_bytes(self.game_area or config.width * config.height, config.num_planes)

    def cache_capacity(self) -> int:
        """The answers its cache keeps: ``eval_cache``, or fewer when they would take more than
        CACHE_MEMORY_SHARE of a memory limit (the tree of a timed search gets the rest)."""
        if self.memory_bytes is None:
            return self.eval_cache
        share = int(self.memory_bytes * CACHE_MEMORY_SHARE)
        return min(self.eval_cache, share // self._entry_bytes())

    def _tree_memory(self) -> int | None:
        if self.memory_bytes is None:
            return None
        return self.memory_bytes - self.cache_capacity() * self._entry_bytes()

    def _evaluator(self) -> NetworkEvaluator:
        capacity = self.cache_capacity()
        if not capacity:
            return self.evaluator
        if self.cache is None:
            self.cache = EvaluationCache(self.evaluator, capacity)
        self.cache.capacity = capacity  # a new limit mid-game: the oldest answers go as new come
        return self.cache

    def reset(self, game: GameConfig) -> None:
        self.cache = None  # the caller may have changed the model's weights between games
        config = self.model.config
        if not config.plays(game.width, game.height):
            raise ValueError(f"the network ({config.label}) plays {config.boards_played}; this "
                             f"game is {game.width}x{game.height}")
        self.game_area = game.area
        self._warm_up(game)
