"""Player specs: the short strings the command lines and the arena use to name a player.

================================  ===========================================================
spec                              player
================================  ===========================================================
``random``                        a uniformly random legal move
``pure:N``                        MCTS with N random playouts per move, no network
``uniform:N``                     PUCT search with N simulations and uniform priors
``net:PATH`` / ``net:PATH:N``     the network in PATH with MCTS (N simulations per move)
``engine:COMMAND``                a Gomocup engine started with COMMAND (shell-style words)
``default`` / ``default:N``       the network shipped with the package, or pure MCTS without one
``cpu-hour`` / ``cpu-hour:N``     the package's 15x15 freestyle network of the cpu-hour recipe
``tactics:SPEC``                  SPEC behind the engine's check: win now, else block a five
``vcf:SPEC``                      the same, and VCF searches: plays its own, stops the opponent's
``vct:SPEC``                      ``vcf:SPEC``, and plays its own wins by threats (threes too)
================================  ===========================================================

A spec is a string so that it crosses into spawned arena workers as it is, and each worker
builds its own player from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import alphagomoku

# The network everything plays unless told otherwise: the kata-all-rules recipe's, for every
# board from 5x5 to 22x22 and every rule (docs/benchmarks.md, "The shipped network").
DEFAULT_MODEL = Path(alphagomoku.__file__).parent / "assets" / "default.pt"
# The same network as an ONNX file (nn/onnx_file.py), for the engine: it runs without torch.
DEFAULT_ONNX = DEFAULT_MODEL.with_suffix(".onnx")
# The cpu-hour recipe's 15x15 freestyle network, which the shipped one was first taught from:
# kept as an opponent and a ladder rung to measure against.
CPU_HOUR_MODEL = DEFAULT_MODEL.with_name("cpu-hour.pt")
# Playouts of the fallback pure-MCTS player: about what fits in a few seconds on 15x15 (so with
# the usual move times the budget, not this number, decides), and a tree of a few hundred MB at
# most (about 2.3 KB a node on 15x15, 4 KB on 20x20).
FALLBACK_PLAYOUTS = 100_000

SPEC_FORMS = ("random, pure:N, uniform:N, net:PATH[:N], engine:COMMAND, default[:N], "
              "cpu-hour[:N], tactics:SPEC, vcf:SPEC, vct:SPEC")


class PlayerSpecError(ValueError):
    """A player spec that names no player; the message lists the accepted forms."""


@dataclass(frozen=True)
class PlayerSpec:
    kind: str  # random | pure | uniform | net | engine | tactics | vcf | vct
    count: int | None = None  # playouts or simulations
    path: str | None = None
    command: str | None = None
    text: str = ""
    inner: "PlayerSpec | None" = None  # the wrapped player of tactics:, vcf: and vct:


def runnable_onnx(weights: Path) -> Path | None:
    """The ONNX file beside a shipped network's ``weights`` when it exists and onnxruntime is
    installed to run it (without torch), else None."""
    import importlib.util

    onnx = weights.with_suffix(".onnx")
    return onnx if onnx.is_file() and importlib.util.find_spec("onnxruntime") else None


def _count(spec: str, value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise PlayerSpecError(f"player spec {spec!r}: {value!r} is not a whole number") from None
    if n < 1:
        raise PlayerSpecError(f"player spec {spec!r}: the count must be at least 1, got {n}")
    return n


def shipped_network() -> Path | None:
    """The shipped network that plays people and engines (every board from 5x5 to 22x22, every
    rule); None when the package ships none (a source tree without its assets)."""
    return DEFAULT_MODEL if DEFAULT_MODEL.is_file() else None


def default_spec(simulations: str = "") -> str:
    """``net:<shipped network>[:simulations]`` when the package ships one, else pure MCTS."""
    weights = shipped_network()
    if weights is None:
        return f"pure:{FALLBACK_PLAYOUTS}"
    return f"net:{weights}" + (f":{simulations}" if simulations else "")


def parse_player_spec(spec: str, check_files: bool = True) -> PlayerSpec:
    """The parsed ``spec``; PlayerSpecError says what is wrong (``check_files``: a network
    file must exist)."""
    if not isinstance(spec, str) or not spec.strip():
        raise PlayerSpecError(f"empty player spec: use one of {SPEC_FORMS}")
    text = spec.strip()
    kind, sep, rest = text.partition(":")
    kind = kind.lower()
    if kind in ("default", "cpu-hour"):  # the shipped networks by name, [:N] simulations
        if sep:
            _count(spec, rest)
        if kind == "default":
            return parse_player_spec(default_spec(rest), check_files)
        return parse_player_spec(f"net:{CPU_HOUR_MODEL}{sep}{rest}", check_files)
    if kind in ("tactics", "vcf", "vct"):
        if not rest.strip():
            raise PlayerSpecError(f"player spec {spec!r} needs a player: {kind}:SPEC")
        return PlayerSpec(kind, inner=parse_player_spec(rest, check_files), text=text)
    if kind == "random" and not sep:
        return PlayerSpec("random", text=text)
    if kind in ("pure", "uniform"):
        if not rest:
            raise PlayerSpecError(f"player spec {spec!r} needs a count: {kind}:N")
        return PlayerSpec(kind, count=_count(spec, rest), text=text)
    if kind == "net":
        path, count = rest, None
        head, sep2, tail = rest.rpartition(":")
        if sep2 and tail.isdigit():  # net:PATH:N (a path may hold ':' itself)
            path, count = head, _count(spec, tail)
        if not path:
            raise PlayerSpecError(f"player spec {spec!r} needs a weights file: net:PATH[:N]")
        if check_files and not Path(path).is_file():
            raise PlayerSpecError(f"player spec {spec!r}: no model file at {path}")
        return PlayerSpec("net", count=count, path=path, text=text)
    if kind == "engine":
        if not rest.strip():
            raise PlayerSpecError(f"player spec {spec!r} needs a command: engine:COMMAND")
        return PlayerSpec("engine", command=rest.strip(), text=text)
    raise PlayerSpecError(f"unknown player spec {spec!r}: use one of {SPEC_FORMS}")


def _network_config(path: str):
    from alphagomoku.nn.onnx_file import is_onnx_file, read_onnx_file

    if is_onnx_file(path):
        return read_onnx_file(path).config
    from alphagomoku.nn.io import read_model_file

    return read_model_file(path)[0]


def check_player_spec(spec: str, game=None) -> PlayerSpec:
    """:func:`parse_player_spec`, and every network it names read once: a damaged file, or a
    network for another board than ``game`` (a GameConfig), is a PlayerSpecError here, before
    any game starts, rather than a traceback from each game that would load it."""
    p = parse_player_spec(spec)
    if p.inner is not None:
        check_player_spec(p.inner.text, game)
    elif p.kind == "net":
        try:
            config = _network_config(p.path)
        except ValueError as e:  # CheckpointError and OnnxFileError both are
            raise PlayerSpecError(f"player spec {spec!r}: {e}") from None
        if game is not None and not config.plays(game.width, game.height):
            raise PlayerSpecError(f"player spec {spec!r}: the network plays "
                                  f"{config.boards_played}; this game is {game.width}x{game.height}")
    return p


# Search settings a player may not take: the spec or the move time sets the simulations, and the
# network decides which input planes its leaves need.
_FIXED_SEARCH = ("num_simulations", "vcf_plane_budget", "threat_planes", "rule_planes")
# Self-play's Gumbel root: a player's search grows until its time is up and then plays its most
# visited move, where sequential halving needs its whole budget planned ahead.
_SELFPLAY_SEARCH = ("root_rule", "interior_rule", "gumbel_m", "gumbel_c_visit", "gumbel_c_scale")


def search_settings(items, spec: str | None = None) -> dict:
    """``KEY=VALUE`` strings (``c_puct=2.0``, ``leaves_per_tree=4``, ``vcf_root_budget=none``) as
    SearchConfig changes for the network player ``spec`` names; a ValueError names the bad item
    (or a ``spec`` that is no network player) and says why."""
    import dataclasses

    from alphagomoku.mcts import SearchConfig

    if items and spec is not None:
        p = parse_player_spec(spec, check_files=False)
        while p.inner is not None:
            p = p.inner
        if p.kind != "net":
            raise ValueError(f"search settings are for network players, not {spec!r}")

    fields = {f.name: str(f.type) for f in dataclasses.fields(SearchConfig)
              if f.name not in _SELFPLAY_SEARCH}
    changes = {}
    for item in items:
        key, sep, text = str(item).partition("=")
        key, text = key.strip(), text.strip()
        if not sep or not key or not text:
            raise ValueError(f"search setting {item!r}: write KEY=VALUE, such as c_puct=2.0")
        if key in _SELFPLAY_SEARCH:
            raise ValueError(f"search setting {item!r}: {key} belongs to self-play's Gumbel root; "
                             "a player searches with a PUCT root and plays its most visited move")
        if key not in fields:
            names = ", ".join(sorted(set(fields) - set(_FIXED_SEARCH)))
            raise ValueError(f"search setting {item!r}: no setting named {key!r} (a player takes "
                             f"{names})")
        if key in _FIXED_SEARCH:
            raise ValueError(f"search setting {item!r}: {key} is set by the player spec or the "
                             "network, not here")
        kind = fields[key]
        try:
            if "None" in kind and text.lower() == "none":
                changes[key] = None
            elif kind.startswith("int"):
                changes[key] = int(text)
            elif kind.startswith("float"):
                changes[key] = float(text)
            else:
                changes[key] = text
        except ValueError:
            raise ValueError(f"search setting {item!r}: {key} takes {kind.split(' ')[0]}") from None
    try:
        SearchConfig(**changes)
    except ValueError as e:
        raise ValueError(f"search settings {' '.join(map(str, items))}: {e}") from None
    return changes


def make_player(spec: str, seed: int = 0, time_per_move: float | None = None, device: str = "auto",
                backend: str = "auto", threads: int = 1, precision: str = "fp32",
                search: dict | None = None):
    """The player ``spec`` names. ``seed`` varies the random choices of the players that make
    any; ``time_per_move`` (seconds) bounds each move's search; ``device``, ``backend`` (the
    inference backend), ``threads`` and ``precision`` (ONNX Runtime's) are for networks, and so
    is ``search``: SearchConfig fields that replace the players' defaults (see
    :func:`search_settings`)."""
    from alphagomoku.eval import players

    p = parse_player_spec(spec)
    if search and p.kind not in ("tactics", "vcf", "vct", "net"):
        raise PlayerSpecError(f"search settings are for network players, not {p.text!r}")
    if p.kind in ("tactics", "vcf", "vct"):
        inner = make_player(p.inner.text, seed, time_per_move, device, backend, threads,
                            precision, search)
        player = players.TacticalPlayer(inner, vcf=p.kind == "vcf", vct=p.kind == "vct")
        player.name = p.text
        return player
    if p.kind == "random":
        return players.RandomPlayer(seed=seed, name=p.text)
    if p.kind == "pure":
        return players.PureMCTSPlayer(p.count, seed=seed, time_per_move=time_per_move, name=p.text)
    if p.kind == "uniform":
        return players.UniformMCTSPlayer(p.count, seed=seed, time_per_move=time_per_move, name=p.text)
    if p.kind == "net":
        from alphagomoku.mcts import search_config

        return players.NetworkPlayer(p.path, simulations=p.count, time_per_move=time_per_move,
                                     device=device, seed=seed, name=p.text, backend=backend,
                                     threads=threads, precision=precision,
                                     search_config=search_config(**search) if search else None)
    from alphagomoku.eval.external import ExternalEnginePlayer

    return ExternalEnginePlayer(p.command, name=p.text)
