"""What the trainer asks of self-play each epoch, and what it makes of the games.

:func:`worker_spec` is what every worker is given (the search, the game loop's settings, the
device), :func:`epoch_simulations` the search's size as the run goes on, :func:`plan_tasks` an
epoch's tasks, and :func:`epoch_row` and :func:`colour_counts` the metrics of the games that
come back. The self-play benchmarks build their workers with :func:`worker_spec` too, so that
they time what training runs. :func:`colour_collapse` watches for one colour winning every game
from balanced openings.
"""

from __future__ import annotations

import numpy as np

from alphagomoku.device import DeviceChoice
from alphagomoku.game.constants import BLACK, DRAW, WHITE
from alphagomoku.mcts import SearchConfig
from alphagomoku.selfplay.game_loop import SelfPlaySettings
from alphagomoku.selfplay.openings import OpeningSettings
from alphagomoku.selfplay.worker import SelfPlayTask, WorkerSpec, worker_devices
from alphagomoku.train.config import TrainConfig
from alphagomoku.train.variants import assign_variants


def selfplay_groups(cfg: TrainConfig, kind: str) -> int:
    """Batches in flight per worker: the config's, or for 0 (auto) two on CUDA, where the device
    works while the worker searches, and one elsewhere: on a CPU the network's call holds the
    worker's core, so a second group would only add calls."""
    if cfg.selfplay_groups:
        return cfg.selfplay_groups
    return 2 if kind == "cuda" else 1


def worker_spec(cfg: TrainConfig, device: DeviceChoice) -> WorkerSpec:
    """What every self-play worker of a run with ``cfg`` is given: the search, the game loop's
    settings and the device. The self-play benchmark builds its workers with this too, so that
    it times what training runs."""
    gumbel = cfg.search == "gumbel"
    search = SearchConfig(
        num_simulations=cfg.simulations, c_puct=cfg.c_puct, dirichlet_alpha=cfg.dirichlet_alpha,
        dirichlet_eps=0.0 if gumbel else cfg.dirichlet_eps, root_rule=cfg.search,
        gumbel_m=cfg.gumbel_m, gumbel_c_visit=cfg.gumbel_c_visit,
        gumbel_c_scale=cfg.gumbel_c_scale, interior_rule=cfg.gumbel_interior,
        vcf_leaf_budget=cfg.vcf_leaf_budget, vcf_plane_budget=cfg.vcf_plane_budget,
        rule_planes=cfg.model_arch == "kata", threat_planes=bool(cfg.model_threat_planes),
    )
    openings = None
    if cfg.opening_share > 0:
        openings = OpeningSettings(share=cfg.opening_share, min_stones=cfg.opening_min_stones,
                                   max_stones=cfg.opening_max_stones,
                                   max_value=cfg.opening_max_value)
    settings = SelfPlaySettings(
        games_at_once=cfg.games_at_once or cfg.games_per_task,
        temperature_moves=cfg.temperature_moves,
        resign_threshold=cfg.resign_threshold, resign_playthrough=cfg.resign_playthrough,
        openings=openings, full_search_share=cfg.full_search_share,
        fast_simulations=cfg.fast_simulations, vcf_end_budget=cfg.vcf_end_budget,
        eval_cache=cfg.eval_cache, groups=selfplay_groups(cfg, device.kind),
    )
    device_name, num_gpus = worker_devices(device, cfg.device)
    # One torch thread per CPU worker: workers are the parallelism, and several threads per
    # process on shared cores make each forward pass slower, not faster.
    return WorkerSpec(game=cfg.game, search=search, settings=settings, device=device_name,
                      num_gpus=num_gpus, threads_per_worker=1,
                      inference_backend=cfg.inference_backend, inference_amp=cfg.inference_amp,
                      onnx_precision=cfg.onnx_precision, cuda_graphs=cfg.cuda_graphs)


def epoch_simulations(cfg: TrainConfig, done: float) -> int:
    """Self-play's simulations a move once ``done`` (0 to 1) of the run is done:
    ``cfg.simulations``, or with ``cfg.simulations_start`` set, a geometric rise from it to
    ``cfg.simulations`` (progressive simulation, as MiniZero trains Gumbel Zero). While the
    network's values are still noise, a large search buys little over a small one; the cheaper
    games early give the value head more results to learn from, and the larger searches late
    give a stronger network better policy targets."""
    if not cfg.simulations_start:
        return cfg.simulations
    ratio = cfg.simulations / cfg.simulations_start
    return int(round(cfg.simulations_start * ratio ** min(max(done, 0.0), 1.0)))


def plan_tasks(cfg: TrainConfig, variants: list, opening_targets: dict, weights: str,
               version: int, rng: np.random.Generator, simulations: int = 0) -> list[SelfPlayTask]:
    """The epoch's self-play tasks: ``cfg.selfplay_games`` games in tasks of at most
    ``games_per_task``, each with its seed and, in a run of several boards or rules, its
    variant (by weight, :func:`alphagomoku.train.variants.assign_variants`); each task carries
    its variant's even opening from ``opening_targets`` and the epoch's ``simulations`` (0: the
    workers' search as it is)."""
    sizes = []
    left = cfg.selfplay_games
    while left > 0:
        sizes.append(min(cfg.games_per_task, left))
        left -= sizes[-1]
    plan = assign_variants(variants, len(sizes), rng) if len(variants) > 1 else [None] * len(sizes)
    tasks = []
    for n, variant in zip(sizes, plan):
        seed = int(rng.integers(2**31))
        tasks.append(SelfPlayTask(len(tasks), n, seed, weights, version,
                                  opening_black_target=opening_targets[
                                      (variant or variants[0]).name],
                                  game=None if variant is None else variant.game,
                                  simulations=simulations))
    return tasks


def epoch_row(records: list, totals: dict, elapsed: float) -> dict:
    """The metrics row's self-play columns for an epoch's ``records``, with the workers'
    summed ``totals`` (network and search seconds, unbalanced openings, cache hits and misses)
    and the ``elapsed`` wall seconds."""
    positions = sum(r.searched for r in records)
    results = [r.result for r in records]
    return {
        **colour_counts(records),
        "games": len(records), "positions": positions,
        "avg_length": sum(r.length for r in records) / len(records),
        "black_wins": results.count(BLACK), "white_wins": results.count(WHITE),
        "draws": results.count(DRAW),
        "resignations": sum(r.resigned for r in records),
        "vcf_endings": sum(r.vcf_ended for r in records),
        "false_resignations": sum(r.false_resignation for r in records),
        "selfplay_seconds": elapsed, "positions_per_second": positions / max(elapsed, 1e-9),
        "network_share": totals["network_seconds"] / max(totals["seconds"], 1e-9),
        "unbalanced_openings": totals["unbalanced_openings"],
        "cache_hit_share": totals["cache_hits"]
        / max(totals["cache_hits"] + totals["cache_misses"], 1),
    }


def colour_counts(records: list) -> dict:
    """Black wins, white wins and draws, separately for games from a random opening and games
    from the empty board: only the former measure balance (freestyle from the empty board is
    a proven black win)."""
    out = {}
    for prefix, keep in (("opening_", lambda r: r.opening > 0), ("empty_", lambda r: r.opening == 0)):
        results = [r.result for r in records if keep(r)]
        out[prefix + "games"] = len(results)
        out[prefix + "black_wins"] = results.count(BLACK)
        out[prefix + "white_wins"] = results.count(WHITE)
        out[prefix + "draws"] = results.count(DRAW)
    return out


def colour_collapse(row: dict, cfg: TrainConfig, lopsided_epochs: int) -> tuple[int, str]:
    """The epochs in a row, this one included, in which one colour won more than
    ``cfg.collapse_share`` of the games from balanced openings, and the warning to log once that
    streak reaches ``cfg.collapse_epochs`` (empty before). One colour winning from openings the
    network values as even is the first sign of the colour collapse these openings exist to
    prevent."""
    games = row["opening_games"]
    top = max(row["opening_black_wins"], row["opening_white_wins"])
    lopsided_epochs = lopsided_epochs + 1 if games >= 8 and top > cfg.collapse_share * games else 0
    if lopsided_epochs < cfg.collapse_epochs:
        return lopsided_epochs, ""
    colour = "black" if row["opening_black_wins"] >= row["opening_white_wins"] else "white"
    return lopsided_epochs, (
        f"warning: {colour} won {top} of {games} games from balanced openings "
        f"({top / games:.0%}), above {cfg.collapse_share:.0%} for {lopsided_epochs} "
        "epochs in a row. The value head is probably learning 'this colour wins' rather "
        "than the position (a colour collapse): the losing side's search stops finding "
        "moves. Try --opening-balance-gain 0.25 if it is 0, more --simulations, "
        "--search gumbel, a larger --value-q-weight, "
        "--decided-weight 0.1, or more --selfplay-games per epoch "
        "(docs/troubleshooting.md, 'One colour wins every self-play game')."
    )


def colour_shares(records: list) -> dict:
    """The colours' wins as the progress bar shows them (``open B/W/D``, ``empty B/W/D``)."""
    out = {}
    counts = colour_counts(records)
    for prefix, label in (("opening_", "open B/W/D"), ("empty_", "empty B/W/D")):
        n = counts[prefix + "games"]
        if n:
            out[label] = "/".join(str(counts[prefix + k]) for k in ("black_wins", "white_wins", "draws"))
    return out
