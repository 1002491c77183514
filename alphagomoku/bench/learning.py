"""Learning: train from scratch for M minutes, then play each snapshot against a fixed ladder.

Training is the ordinary trainer (:class:`alphagomoku.train.loop.Trainer`) with a time budget of
M minutes and a snapshot every M/K minutes (K = ``--snapshots``, 6 by default), with the
machine's speed probe (:func:`alphagomoku.bench.machine.forward_speed`) timed just before and
just after it. Only after the training ends does the ladder start, so that no match takes CPU
from the timed run. Each snapshot (the network with ``--net-simulations`` simulations a move)
plays every rung of the ladder (``random``, ``pure:1000``, ``pure:5000`` unless ``--rung`` says
otherwise, plus ``engine:COMMAND`` with ``--engine``), ``--games`` games each, every opening
once with each colour. The openings are the arena's (:func:`alphagomoku.eval.arena.make_openings`):
the same fixed list for every snapshot and rung, so the curve compares like with like.

Everything stays in the run directory: the training run itself, ``ladder/`` (each match's result
and games), ``learning.json`` (the report, rewritten after every match, so an interrupted ladder
keeps what it played) and ``learning.png``. ``--evaluate DIR`` plays the ladder again for a run,
skipping matches already played with the same settings; ``--compare A.json B.json`` draws runs
side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import time
from dataclasses import fields
from pathlib import Path

from alphagomoku.bench import UsageError
from alphagomoku.bench.learning_plot import finish_plot, plot_comparison, title

DEFAULT_LADDER = ("random", "pure:1000", "pure:5000")
# Settings a learning run fixes whatever the recipe says: time, not the epoch count, ends it, and
# the ladder replaces the trainer's own final matches.
_EPOCH_CAP = 1_000_000
_TYPES = {"int": int, "float": float, "str": str}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--minutes", type=float, metavar="M", help="wall-clock minutes of training (required to train)")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--recipe", metavar="NAME", help="train with configs/NAME.json (default: the "
                                                      "code's defaults)")
    src.add_argument("--config", metavar="FILE", help="train with the settings in this JSON file")
    p.add_argument("--preset", metavar="P", help="model preset (default: the recipe's)")
    p.add_argument("--board", type=int, metavar="N", help="board size (default: the recipe's)")
    p.add_argument("--n-in-row", type=int, metavar="N", help="stones in a row to win (default: the recipe's)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override one training setting, e.g. --set simulations=32 (repeatable)")
    p.add_argument("--workers", type=int, metavar="W", help="worker processes, for self-play and for the "
                                               "ladder's games (default: the recipe's parallel_workers)")
    p.add_argument("--out", metavar="DIR", help="the run directory, kept afterwards (default "
                                                "runs/learning/RECIPE-BOARD-Mmin-TIME)")
    p.add_argument("--snapshots", type=int, metavar="K", default=6,
                   help="snapshots to evaluate, one every minutes/SNAPSHOTS (default 6)")
    p.add_argument("--games", type=int, metavar="N", default=20,
                   help="games per snapshot and rung, even: each opening with both colours (default 20)")
    p.add_argument("--net-simulations", type=int, metavar="N", default=200,
                   help="simulations a move of the network player in the ladder (default 200)")
    p.add_argument("--rung", action="append", metavar="SPEC",
                   help="an opponent, as a player spec (repeatable; default: "
                        + ", ".join(DEFAULT_LADDER) + "); SPEC@SECONDS plays that match at equal "
                        "time, both sides searching SECONDS a move (e.g. a previous model: "
                        "net:PATH@0.5), where a plain net:PATH:N plays at equal simulations")
    p.add_argument("--engine", metavar="COMMAND", help="add a Gomocup engine to the ladder")
    p.add_argument("--opening-moves", type=int, metavar="N", default=3,
                   help="stones of each ladder opening, placed near the centre (default 3: "
                        "white to move, see docs/benchmarks.md)")
    p.add_argument("--seed", type=int, metavar="N", default=0, help="seed of the training run and the openings")
    p.add_argument("--speed-probe-seconds", type=float, metavar="S", default=1.0,
                   help="before and after training, time the machine's speed probe (the tiny "
                        "network's forward pass, batch 64, one thread) three times for S seconds "
                        "each and record it in learning.json; 0 skips it (default 1)")
    p.add_argument("--evaluate", metavar="DIR",
                   help="no training: play the ladder for the snapshots of the learning run in DIR")
    p.add_argument("--compare", nargs="+", metavar="JSON",
                   help="no training: draw these runs' learning.json side by side (see --png)")
    p.add_argument("--png", metavar="FILE", help="with --compare: the picture (default learning-compare.png)")


# -- options -> a training config -------------------------------------------------------------------
def _parse_sets(items: list[str]) -> dict:
    from alphagomoku.train.config import TrainConfig

    types = {f.name: _TYPES[str(f.type)] for f in fields(TrainConfig)}
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or key not in types:
            raise UsageError(f"--set {item!r}: expected KEY=VALUE with KEY a training setting "
                             f"(see scripts/train.py --help)")
        try:
            out[key] = types[key](value)
        except ValueError:
            kind = {int: "a whole number", float: "a number"}.get(types[key], "text")
            raise UsageError(f"--set {item!r}: {value!r} is not {kind}") from None
    return out


def resolve_config(args, run_dir: Path):
    """``(config, label, file)``: the TrainConfig of a learning run in ``run_dir``, the recipe's
    name for reports and the file it came from (None for the code's defaults)."""
    from alphagomoku.train.config import ConfigError, TrainConfig
    from alphagomoku.train.recipes import recipe_path

    if args.minutes is None or not args.minutes > 0:
        raise UsageError("--minutes: give the training time, a positive number of minutes")
    if args.snapshots < 1:
        raise UsageError(f"--snapshots must be at least 1, got {args.snapshots}")
    changes = _parse_sets(args.set)
    for key, value in (("model_preset", args.preset), ("board_size", args.board),
                       ("n_in_row", args.n_in_row), ("parallel_workers", args.workers)):
        if value is not None:
            changes[key] = value
    changes.update(run_dir=str(run_dir), seed=args.seed, epochs=_EPOCH_CAP, final_eval_games=0,
                   time_budget_minutes=float(args.minutes),
                   snapshot_minutes=float(args.minutes) / args.snapshots)
    try:
        if args.recipe:
            path = recipe_path(args.recipe)
            return TrainConfig.from_file(path, **changes), args.recipe, str(path)
        if args.config:
            return TrainConfig.from_file(args.config, **changes), Path(args.config).stem, args.config
        return TrainConfig.from_dict(changes), "defaults", None
    except ConfigError as e:
        raise UsageError(str(e)) from None


def _ladder(args) -> list[str]:
    from alphagomoku.eval.specs import PlayerSpecError, parse_player_spec

    rungs = list(args.rung or DEFAULT_LADDER)
    if args.engine:
        rungs.append(f"engine:{args.engine}")
    for rung in rungs:
        try:
            spec, seconds = split_timed_rung(rung)
            parse_player_spec(spec)
        except (PlayerSpecError, ValueError) as e:
            raise UsageError(f"--rung: {e}") from None
    if len(set(rungs)) != len(rungs):
        raise UsageError(f"the ladder names a rung twice: {rungs}")
    if args.games < 2 or args.games % 2:
        raise UsageError(f"--games must be even and at least 2 (each opening is played with both "
                         f"colours), got {args.games}")
    if args.net_simulations < 2:
        raise UsageError(f"--net-simulations must be at least 2, got {args.net_simulations}")
    if args.opening_moves < 0:
        raise UsageError(f"--opening-moves must be 0 or more, got {args.opening_moves}")
    return rungs


# -- the ladder ----------------------------------------------------------------------------------
def colour_summary(result) -> dict:
    """W/D/L, score and Elo (95% interval) of the network overall, as black and as white."""
    from alphagomoku.eval.elo import elo_estimate
    from alphagomoku.game import BLACK, WHITE

    def part(colour=None) -> dict:
        w, d, l = result.counts(colour)
        n = w + d + l
        return {"games": n, "wins": w, "draws": d, "losses": l, "score": (w + 0.5 * d) / n,
                "elo": elo_estimate(w, d, l).to_dict()}

    paired = result.paired_elo  # each opening with both colours: the interval over pairs
    return {**part(), "elo_by_pairs": None if paired is None else paired.to_dict(),
            "as_black": part(BLACK), "as_white": part(WHITE), "seconds": round(result.seconds, 2)}


def split_timed_rung(rung: str) -> tuple[str, float | None]:
    """``"net:PATH@0.5"`` -> ``("net:PATH", 0.5)``: the opponent, and the seconds a move both
    sides search in that match (None: the snapshot plays --net-simulations, the opponent its
    spec's). ValueError for a time that is not a positive number."""
    spec, at, seconds = rung.rpartition("@")
    try:
        value = float(seconds)
    except ValueError:
        return rung, None   # an '@' inside a path or an engine's command, not a time
    if not at:
        return rung, None
    if not value > 0:
        raise ValueError(f"{rung!r}: the time after '@' must be a positive number of seconds")
    return spec, value


def variant_key(rung: str, variant: str | None) -> str:
    """The key of a rung's result: the rung itself on the run's main board and rule, else with
    the variant it was played on (``pure:1000 on 20x20-renju``)."""
    return rung if variant is None else f"{rung} on {variant}"


def _slug(i: int, spec: str) -> str:
    return f"{i}_{re.sub(r'[^A-Za-z0-9_.-]+', '_', spec)[:60]}"


def _describe(entry: dict, rung: str, s: dict) -> str:
    b, w, e = s["as_black"], s["as_white"], s["elo"]
    return (f"minute {entry['mark_minutes']:g} (epoch {entry['epoch']}) vs {rung}: "
            f"+{s['wins']} ={s['draws']} -{s['losses']}, score {s['score']:.2f} "
            f"(as black +{b['wins']} ={b['draws']} -{b['losses']}, as white +{w['wins']} ="
            f"{w['draws']} -{w['losses']}), Elo {e['elo'] + 0:+.0f} [{e['lower']:+.0f}, {e['upper']:+.0f}]"
            f" ({s['seconds']:.0f} s)")


def play_ladder(report: dict, run_dir: Path, games: list, workers: int, device: str,
                progress: bool, log, save) -> None:
    """Fill ``report["snapshots"][i]["results"]``, one match at a time (``save()`` after each),
    on each of ``games`` (the run's boards and rules, its main one first; the others' results
    are keyed by :func:`variant_key`). A match whose file in ``ladder/`` was played with the
    same settings is not played again, and snapshots of the same epoch share their results."""
    from alphagomoku.atomic import atomic_write_text
    from alphagomoku.eval.arena import run_arena
    from alphagomoku.eval.specs import PlayerSpecError, check_player_spec

    ladder = report["ladder"]
    settings = {k: ladder[k] for k in ("games", "net_simulations", "opening_moves", "seed")}
    for entry in report["snapshots"]:
        entry.setdefault("results", {})
        for g, game in enumerate(games):
            variant = None if g == 0 else f"{game.width}x{game.height}-{game.rule}"
            for i, rung in enumerate(ladder["rungs"]):
                key = variant_key(rung, variant)
                where = (run_dir / "ladder" / f"epoch_{entry['epoch']:06d}"
                         / (_slug(i, rung) + ("" if variant is None else f"-{variant}")))
                saved = where / "result.json"
                if saved.exists():
                    old = json.loads(saved.read_text())
                    if old["settings"] == settings and old["opponent"] == key:
                        entry["results"][key] = old["result"]
                        continue
                shutil.rmtree(where / "games", ignore_errors=True)  # a replay with other settings
                opponent, seconds = split_timed_rung(rung)
                try:
                    check_player_spec(opponent, game)
                except PlayerSpecError as e:
                    # A network with dense heads plays one board: no match on the others.
                    log(f"{key}: not played ({e})")
                    continue
                net = f"net:{run_dir / 'snapshots' / entry['file']}"
                if seconds is None:
                    net += f":{ladder['net_simulations']}"
                result = run_arena(net, opponent, ladder["games"], game, workers=workers,
                                   seed=ladder["seed"], opening_moves=ladder["opening_moves"],
                                   time_per_move=seconds, out_dir=where / "games", device=device,
                                   progress=progress)
                summary = colour_summary(result)
                atomic_write_text(saved, json.dumps({"opponent": key, "settings": settings,
                                                     "result": summary}, indent=2) + "\n")
                entry["results"][key] = summary
                log(_describe(entry, key, summary))
                save()


# -- the report ----------------------------------------------------------------------------------
def training_summary(run_dir: Path, wall_seconds: float | None) -> dict:
    """What the run did: ``wall_minutes`` the whole training call (start-up and compilation
    included), ``clock_minutes`` the budget's clock at the last checkpoint, the largest colour
    share from openings, and every epoch's metrics row (self-play results by colour among them)."""
    from alphagomoku.train.metrics import read_metrics

    rows = []
    for r in read_metrics(run_dir / "metrics.csv"):
        row = {}
        for k, v in r.items():
            if v in ("", None):
                continue
            try:
                row[k] = int(v) if re.fullmatch(r"-?\d+", v) else float(v)
            except ValueError:
                row[k] = v
        rows.append(row)
    total = {k: sum(r.get(k, 0) for r in rows)
             for k in ("games", "positions", "black_wins", "white_wins", "draws", "opening_games",
                       "opening_black_wins", "opening_white_wins", "opening_draws")}
    clock = None
    latest = run_dir / "checkpoints" / "latest.pt"
    if latest.exists():
        from alphagomoku.train.checkpoint import load_checkpoint

        clock = load_checkpoint(latest).get("wall_seconds")
    return {"wall_minutes": None if wall_seconds is None else round(wall_seconds / 60, 3),
            "clock_minutes": None if clock is None else round(clock / 60, 3),
            "epochs": len(rows), **total, "colour_share": colour_share(rows), "per_epoch": rows}


def colour_share(rows: list[dict], after_epoch: int = 3) -> dict | None:
    """The largest share of self-play games from balanced openings that one colour won in an
    epoch after ``after_epoch`` (the colour-collapse check; the recipe's target is at most 0.75),
    and where."""
    worst = None
    for r in rows:
        n = r.get("opening_games", 0)
        if r["epoch"] <= after_epoch or not n:
            continue
        for colour in ("black", "white"):
            share = r.get(f"opening_{colour}_wins", 0) / n
            if worst is None or share > worst["share"]:
                worst = {"share": round(share, 4), "colour": colour, "epoch": r["epoch"], "games": n}
    return None if worst is None else {"after_epoch": after_epoch, "max": worst}


# -- the modes -----------------------------------------------------------------------------------
def _log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _compare(args) -> dict:
    reports, labels = [], []
    for name in args.compare:
        path = Path(name)
        if path.is_dir():
            path = path / "learning.json"
        try:
            reports.append(json.loads(path.read_text()))
        except FileNotFoundError:
            raise UsageError(f"--compare: no file {path}") from None
        except json.JSONDecodeError as e:
            raise UsageError(f"--compare: {path} is not JSON: {e}") from None
        if reports[-1].get("benchmark") != "learning":
            raise UsageError(f"--compare: {path} is not a learning benchmark report")
        label = f"{reports[-1]['recipe']} ({Path(reports[-1]['run_dir']).name})"
        labels.append(label if label not in labels else f"{label} #{len(labels) + 1}")
    if len(reports) < 2:
        raise UsageError("--compare needs two or more reports")
    out = Path(args.png or "learning-compare.png")
    drawn = plot_comparison(reports, labels, out)
    finals = {}
    for report, label in zip(reports, labels):
        last = next((e for e in reversed(report["snapshots"]) if e.get("results")), None)
        finals[label] = None if last is None else {
            "minutes": last["minutes"], "epoch": last["epoch"],
            "scores": {rung: {"score": s["score"], "as_black": s["as_black"]["score"],
                              "as_white": s["as_white"]["score"]}
                       for rung, s in last["results"].items()},
        }
    return {"mode": "compare", "reports": [str(p) for p in args.compare],
            "png": str(out) if drawn else None,
            **({} if drawn else {"png_note": "matplotlib is not installed: no PNG"}),
            "final_scores": finals}


def run(args) -> dict:
    if args.compare:
        return _compare(args)
    from alphagomoku.atomic import atomic_write_text
    from alphagomoku.bench.machine import describe
    from alphagomoku.train.budget import read_index
    from alphagomoku.train.config import TrainConfig

    progress = sys.stderr.isatty()
    rungs = _ladder(args)
    wall = None
    load: dict = {}  # 1-minute load averages: a busy machine slows the timed run
    speed: dict = {}  # the speed probe: a slower machine trains fewer positions in the same minutes
    if args.evaluate:
        given = [f"--{k.replace('_', '-')}" for k in ("minutes", "recipe", "config", "set", "preset",
                                                      "board", "n_in_row", "out")
                 if getattr(args, k)]
        if given:
            raise UsageError(f"--evaluate plays the ladder of a finished run: {', '.join(given)} "
                             "belongs to training")
        run_dir = Path(args.evaluate)
        if not (run_dir / "config.json").exists():
            raise UsageError(f"--evaluate: {run_dir} holds no training run (no config.json)")
        cfg = TrainConfig.from_file(run_dir / "config.json")
        old = run_dir / "learning.json"
        previous = json.loads(old.read_text()) if old.exists() else {}
        label, recipe_file = previous.get("recipe", run_dir.name), previous.get("recipe_file")
        wall = (previous.get("training") or {}).get("wall_minutes")
        wall = None if wall is None else wall * 60
        load = (previous.get("training") or {}).get("load_average") or {}
        speed = (previous.get("training") or {}).get("machine_speed") or {}
        minutes = cfg.time_budget_minutes
    else:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        cfg, label, recipe_file = resolve_config(args, Path(args.out or "runs/learning/pending"))
        if not args.out:  # the name needs the resolved board
            cfg = cfg.replace(run_dir=str(Path("runs") / "learning" / (
                f"{label}-{cfg.board_size}x{cfg.board_size}-{args.minutes:g}min-{stamp}")))
        run_dir = cfg.run_path
        if (run_dir / "checkpoints" / "latest.pt").exists():
            raise UsageError(f"{run_dir} already holds a run: choose another --out, or play its "
                             f"ladder again with --evaluate {run_dir}")
        minutes = args.minutes
        load["start"] = _load_average()
        speed["before_training"] = _probe(args.speed_probe_seconds)
        if load["start"] is not None and load["start"] > 0.5 * (os.cpu_count() or 1):
            _log(f"note: load average {load['start']:.1f} before training on {os.cpu_count()} cores: "
                 "other work shares the CPU, and the timed run will show it")
        wall = _train(cfg, progress)
        load["after_training"] = _load_average()
        speed["after_training"] = _probe(args.speed_probe_seconds)
        speed = {k: v for k, v in speed.items() if v is not None}
    workers = args.workers if args.workers is not None else cfg.parallel_workers
    report = {
        "benchmark": "learning", "recipe": label, "recipe_file": recipe_file, "minutes": minutes,
        "run_dir": str(run_dir), "machine": describe(), "config": cfg.to_dict(),
        "training": {**training_summary(run_dir, wall), "load_average": load or None,
                     "machine_speed": speed or None},
        "ladder": {"rungs": rungs, "games": args.games, "net_simulations": args.net_simulations,
                   "opening_moves": args.opening_moves, "seed": args.seed, "workers": workers,
                   "network": f"net:SNAPSHOT:{args.net_simulations}"},
        "snapshots": [dict(e) for e in read_index(run_dir)],
    }
    if not report["snapshots"]:
        raise UsageError(f"{run_dir} has no snapshots (snapshots/index.json): only runs trained "
                         "by this benchmark or with --snapshot-minutes have them")

    def save() -> None:
        atomic_write_text(run_dir / "learning.json", json.dumps(report, indent=2) + "\n")

    save()
    distinct = len({e["epoch"] for e in report["snapshots"]})
    _log(f"ladder: {len(report['snapshots'])} snapshots ({distinct} distinct epochs) x "
         f"{len(rungs)} rungs x {args.games} games, network at {args.net_simulations} simulations, "
         f"{workers} workers")
    play_ladder(report, run_dir, [v.game for v in cfg.variants], workers, cfg.device, progress,
                _log, save)
    finish_plot(report, run_dir)
    save()
    _log(f"report: {run_dir / 'learning.json'}" + (f", picture: {report['png']}" if report["png"]
                                                    else f" ({report['png_note']})"))
    return report


def _probe(seconds: float) -> dict | None:
    from alphagomoku.bench.machine import forward_speed

    figure = forward_speed(seconds)
    if figure is not None:
        _log(f"machine speed ({figure['probe']}, {figure['backend']}): "
             + ", ".join(f"{r:,.0f}" for r in figure["positions_per_second"]) + " positions/s")
    return figure


def _load_average() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):  # not on every platform
        return None


def _train(cfg, progress: bool) -> float:
    """Run the trainer to its time budget; returns its wall seconds."""
    from alphagomoku.device import DeviceError
    from alphagomoku.nn.io import CheckpointError
    from alphagomoku.selfplay.pool import SelfPlayError
    from alphagomoku.train.config import ConfigError
    from alphagomoku.train.loop import Trainer

    _log(f"training {cfg.time_budget_minutes:g} minutes into {cfg.run_dir} (snapshot every "
         f"{cfg.snapshot_minutes:g} min)")
    t0 = time.perf_counter()
    try:
        Trainer(cfg, progress=progress, log=_log).run()
    except KeyboardInterrupt:
        _log(f"interrupted: {cfg.run_dir} is kept; play the ladder on the snapshots so far with "
             f"--evaluate {cfg.run_dir}")
        raise
    except (ConfigError, DeviceError, CheckpointError, SelfPlayError) as e:
        raise UsageError(f"training failed: {e}") from None
    return time.perf_counter() - t0


def print_text(result: dict) -> None:
    if result.get("mode") == "compare":
        print(f"== learning comparison: {result['png'] or result['png_note']}")
        for label, final in result["final_scores"].items():
            if final is None:
                print(f"  {label}: no results")
                continue
            scores = ", ".join(f"{rung} {s['score']:.2f} (B {s['as_black']:.2f} / W {s['as_white']:.2f})"
                               for rung, s in final["scores"].items())
            print(f"  {label} at {final['minutes']:.1f} min (epoch {final['epoch']}): {scores}")
        return
    t = result["training"]
    print(f"== learning: {title(result)}")
    wall = "?" if t["wall_minutes"] is None else f"{t['wall_minutes']:.1f}"
    print(f"  training: {wall} min, {t['epochs']} epochs, {t['games']} games "
          f"(black {t['black_wins']}, white {t['white_wins']}, draws {t['draws']}), "
          f"{t['positions']} positions")
    for when, figure in (t.get("machine_speed") or {}).items():
        print(f"  machine speed {when.replace('_', ' ')}: {figure['median']:,.0f} positions/s "
              f"({figure['probe']}, {figure['backend']}; the median of three)")
    if t.get("colour_share"):
        m = t["colour_share"]["max"]
        print(f"  largest colour share from openings after epoch {t['colour_share']['after_epoch']}: "
              f"{m['colour']} {m['share']:.0%} of {m['games']} games in epoch {m['epoch']}")
    for e in result["snapshots"]:
        cells = []
        for rung in result["ladder"]["rungs"]:
            s = e["results"].get(rung)
            if s is not None:
                cells.append(f"{rung} {s['score']:.2f} (B {s['as_black']['score']:.2f} / "
                             f"W {s['as_white']['score']:.2f}, Elo {s['elo']['elo'] + 0:+.0f})")
        print(f"  minute {e['mark_minutes']:g} (epoch {e['epoch']}, ended at {e['minutes']:.2f} min): "
              + "; ".join(cells))
    print(f"  run directory: {result['run_dir']}; picture: {result['png'] or result['png_note']}")
