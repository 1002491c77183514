"""The models a page may play and compare, and the players built from them.

A catalog maps short names to weights files: ``--model PATH`` (or the model shipped with the
package), and with ``--run-dir`` a training run's weights (best, latest, versions, time
snapshots). A player is the one the Gomocup engine plays with: the network's search behind the
tactical and VCF/VCT checks, with pure MCTS on the boards the network does not play. Which
boards those are is asked of the player (its ``reset`` refuses a board), never assumed.

Each connection builds its own players (a player keeps a search tree and a cache between
moves); a model file that does not load is reported, and pure MCTS plays instead.
"""

from __future__ import annotations

import importlib.util
import logging
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from alphagomoku.eval.players import (
    BoardFallbackPlayer,
    NetworkPlayer,
    PureMCTSPlayer,
    TacticalPlayer,
    limit_memory,
)
from alphagomoku.game import GameConfig
from alphagomoku.nn.onnx_file import is_onnx_file

log = logging.getLogger("alphagomoku.web")

# Playouts of the pure-MCTS player on boards the network does not play, when the strength is
# given as network simulations: random playouts are much cheaper than network calls.
PLAYOUTS_PER_SIMULATION = 20
# What one page's player may keep (search trees, the network's cache of answers): on 15x15, the
# cache at its full size (about 40 MB) and a timed search's tree of about 25,000 nodes beside it.
PAGE_MEMORY_BYTES = 96 * 2**20
# Without a time per move, a pure-MCTS move still runs under this budget: it is searched in
# short steps only when timed, and short steps are what lets a search be stopped.
UNTIMED_PURE_S = 30.0


# Loading a network may export it to ONNX (the engine's default runtime on a CPU), and torch's
# exporter is not thread-safe: connections load their players one at a time.
_LOAD_LOCK = threading.Lock()


@dataclass(frozen=True)
class ModelEntry:
    name: str
    path: Path
    note: str = ""


def shipped_path(weights: Path) -> Path | None:
    """A network shipped with the package: its ONNX file where onnxruntime can run it (as the
    engine does), else its weights; None when the package ships none."""
    from alphagomoku.eval.specs import runnable_onnx

    return runnable_onnx(weights) or (weights if weights.is_file() else None)


def default_model_path() -> Path | None:
    """The package's shipped network, the engine's (:func:`shipped_path`)."""
    from alphagomoku.eval.specs import DEFAULT_MODEL

    return shipped_path(DEFAULT_MODEL)


def cpu_hour_model_path() -> Path | None:
    """The package's 15x15 freestyle network of the cpu-hour recipe (:func:`shipped_path`)."""
    from alphagomoku.eval.specs import CPU_HOUR_MODEL

    return shipped_path(CPU_HOUR_MODEL)


def run_models(run_dir: Path) -> list[ModelEntry]:
    """The weights a training run keeps, best first, then the newest versions and snapshots."""
    entries = []
    weights = run_dir / "weights"
    if (weights / "best.pt").is_file():
        entries.append(ModelEntry("best", weights / "best.pt", "the run's best network"))
    latest = run_dir / "checkpoints" / "latest.pt"
    if latest.is_file():
        entries.append(ModelEntry("latest", latest, "the last checkpoint"))
    for p in sorted(weights.glob("v*.pt"), reverse=True):
        entries.append(ModelEntry(p.stem, p, "an epoch's network"))
    for p in sorted((run_dir / "snapshots").glob("*.pt"), reverse=True):
        entries.append(ModelEntry(f"snapshot {p.stem}", p, "a time snapshot"))
    if (weights / "initial.pt").is_file():
        entries.append(ModelEntry("initial", weights / "initial.pt", "the untrained network"))
    return entries


class Catalog:
    """Named weights files; the first is the default."""

    def __init__(self, entries: list[ModelEntry]):
        self.entries = {e.name: e for e in entries}
        self._size: int | None = None
        self._runnable: dict[str, Path] = {}
        self._exports: tempfile.TemporaryDirectory | None = None

    @property
    def start_size(self) -> int:
        """The board a new page starts on (read once)."""
        if self._size is None:
            self._size = self.board_size()
        return self._size

    @classmethod
    def build(cls, model: str | Path | None = None, run_dir: str | Path | None = None) -> "Catalog":
        entries = []
        if model is not None:
            entries.append(ModelEntry(Path(model).stem, Path(model), "given with --model"))
        if run_dir is not None:
            entries.extend(run_models(Path(run_dir)))
        if not entries:
            # The engine's network first, so that a new page plays what pbrain-alphagomoku plays.
            shipped = default_model_path()
            if shipped is not None:
                entries.append(ModelEntry("default", shipped,
                                          "every board and rule; the engine's network"))
            fifteen = cpu_hour_model_path()
            if fifteen is not None:
                entries.append(ModelEntry("cpu-hour", fifteen,
                                          "the cpu-hour recipe's 15x15 freestyle network"))
        return cls(entries)

    @property
    def default(self) -> str | None:
        return next(iter(self.entries), None)

    def board_size(self, fallback: int = 15) -> int:
        """The board the default model was trained on (a new page starts there), read from the
        file; ``fallback`` when there is no model or the file does not say."""
        entry = self.entries.get(self.default) if self.default else None
        if entry is None:
            return fallback
        try:
            from alphagomoku.nn.onnx_file import is_onnx_file, read_onnx_file

            if is_onnx_file(entry.path):
                config = read_onnx_file(entry.path).config
            else:
                from alphagomoku.nn.io import read_model_file

                config = read_model_file(entry.path)[0]
        except Exception as e:  # noqa: BLE001 - the page reports it when the model is used
            log.warning("cannot read %s: %s", entry.path, e)
            return fallback
        width, height = getattr(config, "width", None), getattr(config, "height", None)
        return width if isinstance(width, int) and width == height else fallback

    def runnable(self, entry: ModelEntry) -> Path:
        """The file a connection's player loads for ``entry``: a ``.pt`` is exported to ONNX
        once here where onnxruntime can run it (as the engine runs the shipped model), so that
        each new page loads it in milliseconds instead of exporting it again; else the file
        itself (a file that does not load is reported by the player)."""
        with _LOAD_LOCK:
            if entry.name in self._runnable:
                return self._runnable[entry.name]
            path = entry.path
            if not is_onnx_file(path) and importlib.util.find_spec("onnxruntime") \
                    and importlib.util.find_spec("onnx"):
                try:
                    from alphagomoku.nn.io import load_model
                    from alphagomoku.nn.onnx_file import write_onnx_file

                    if self._exports is None:
                        self._exports = tempfile.TemporaryDirectory(prefix="alphagomoku-web-")
                    out = Path(self._exports.name) / f"{len(self._runnable)}.onnx"
                    path = write_onnx_file(load_model(entry.path), out)
                except Exception as e:  # noqa: BLE001 - the player loads the .pt itself then
                    log.info("%s: no ONNX export (%s); torch runs it", entry.path, e)
                    path = entry.path
            self._runnable[entry.name] = path
            return path

    def describe(self) -> list[dict]:
        return [{"name": e.name, "file": e.path.name, "note": e.note} for e in self.entries.values()]


class StoppablePureMCTS(PureMCTSPlayer):
    """Pure MCTS whose search steps check a stop flag, so that a closed page frees it within a
    step. Always searched in timed steps (see UNTIMED_PURE_S)."""

    stop: threading.Event | None = None
    on_step: Callable[[], None] | None = None  # called after each step

    def _tree(self, game, capacity):
        from alphagomoku.web.analysis import SearchStopped

        tree = super()._tree(game, capacity)
        player = self

        class Checked:
            playouts = tree.playouts
            game = tree.game

            def search(self, *args, **kwargs):
                if player.stop is not None and player.stop.is_set():
                    raise SearchStopped()
                out = tree.search(*args, **kwargs)
                if player.on_step is not None:
                    player.on_step()
                return out

        return Checked()


class WebPlayer:
    """One model's player for one connection: the engine's TacticalPlayer around the network
    (pure MCTS on other boards). ``prepare`` readies it for a board and says which of the two
    plays there."""

    def __init__(self, entry: ModelEntry | None, seed: int = 0, source: Path | None = None):
        """``source``: the file to load for ``entry`` (Catalog.runnable), by default its own."""
        self.entry = entry
        self.seed = seed
        self.network: NetworkPlayer | None = None
        self.load_error: str | None = None
        if entry is not None:
            try:
                with _LOAD_LOCK:
                    self.network = NetworkPlayer(str(source or entry.path), seed=seed,
                                                 threads=1)
            except Exception as e:  # noqa: BLE001 - any failure to load is the file's fault here
                self.load_error = f"model {entry.name!r} ({entry.path}) does not load: {e}"
                log.warning("%s", self.load_error)
        self.pure = StoppablePureMCTS(1000, seed=seed)
        inner = self.pure if self.network is None else BoardFallbackPlayer(self.network, self.pure)
        self.player = TacticalPlayer(inner, vcf=True, vct=True)
        # Twenty pages must fit beside each other: each page's trees and network cache are
        # kept within this, as the engine keeps them within a tournament's memory limit.
        limit_memory(self.player, PAGE_MEMORY_BYTES)
        self.game: GameConfig | None = None
        self.uses_network = False

    @property
    def name(self) -> str:
        return self.entry.name if self.entry is not None and self.network is not None else "pure MCTS"

    def prepare(self, game: GameConfig) -> None:
        """Reset for ``game`` (compiling or loading the kernels, so the first move is on time);
        afterwards ``uses_network`` says whether the network plays this board."""
        if game == self.game:
            return
        self.player.reset(game)
        self.game = game
        inner = self.player.inner
        self.uses_network = isinstance(inner, BoardFallbackPlayer) and inner.active is inner.primary

    def supports(self) -> str:
        if self.uses_network:
            return f"{self.name} (network)"
        if self.network is not None:
            cfg = getattr(self.network.model, "config", None)
            size = f"{cfg.width}x{cfg.height}" if cfg is not None else "another size"
            return f"pure MCTS: {self.name} plays {size} only"
        return "pure MCTS (no network)"

    def evaluator(self):
        """The network's evaluator for analysis, or None when the network does not play this
        board."""
        return self.network.evaluator if self.uses_network else None

    def search_config(self):
        return self.network.search_config if self.uses_network else None

    def choose(self, position, simulations: int | None, seconds: float | None,
               stop: threading.Event, on_batch=None) -> int:
        """The player's move, at ``simulations`` per move or ``seconds``; SearchStopped when
        ``stop`` is set meanwhile."""
        from alphagomoku.web.analysis import StoppableEvaluator

        self.pure.stop = stop
        self.pure.on_step = on_batch
        budget = seconds
        if self.uses_network:
            net = self.network
            original = net.evaluator
            net.simulations = simulations if seconds is None else None
            net.evaluator = StoppableEvaluator(original, stop, on_batch)
            # The player's cache wraps the evaluator it saw first: wrap that one too.
            if net.cache is not None:
                net.cache.evaluator = StoppableEvaluator(net.cache.evaluator, stop, on_batch)
            try:
                return self.player.choose(position, budget)
            finally:
                net.evaluator = original
                if net.cache is not None and isinstance(net.cache.evaluator, StoppableEvaluator):
                    net.cache.evaluator = net.cache.evaluator.inner
        if seconds is None:
            self.pure.playouts = max(100, (simulations or 100) * PLAYOUTS_PER_SIMULATION)
            budget = UNTIMED_PURE_S
        else:
            self.pure.playouts = 1_000_000
        return self.player.choose(position, budget)

    def kept_forest(self, position):
        """The tree of the network's timed search of ``position``, for live snapshots (None
        when there is none). It reads the search the player keeps for its ``think_more``,
        which only timed searches keep."""
        kept = getattr(self.network, "_tree", None) if self.uses_network else None
        if not kept or kept[0] != position.config or tuple(kept[1]) != tuple(position.moves):
            return None
        return kept[2]

    def close(self) -> None:
        try:
            self.player.close()
        except Exception:  # noqa: BLE001 - closing anyway
            pass
