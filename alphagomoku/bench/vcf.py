"""The VCF solver: its speed, its cost inside self-play, and what it adds to the engine's play.

Five parts, on the shipped model's board (15x15 freestyle) unless told otherwise:

1. Self-play games (the shipped model, the training loop's ``play_games`` in this process, one
   torch thread as in a worker) with the VCF checks off and on: seconds per move. The games
   differ once a check changes a move, so this figure is noisy; every position of these games
   is kept for parts 2 and 3.
2. The solver on those positions, for both sides: nodes per second and the time of one call at
   the leaf budget (called as a new node calls it) and at the root budget (as the engine does);
   and the VCT search (:mod:`alphagomoku.game.vct`) of the side to move where it has no VCF.
3. The cost of the checks on equal terms: the self-play search (8 trees a batch, the same
   simulations) on those same positions with the checks off and on, timed batch by batch.
4. The engine's player with the solver (``vct:net:MODEL``: its own VCF and VCT played, the
   opponent's VCF stopped and a move that leaves the opponent a VCT replaced; ``--match-player
   vcf`` for the VCF alone) against the same without it (``tactics:net:MODEL``: immediate wins
   and blocks only), at equal time per move, each opening played with both colours: score and
   Elo with a 95% interval, and the score with each colour. When the model reads the two VCF
   input planes, the engine without the solver plays the same weights with those channels cut
   out (:mod:`alphagomoku.nn.vcf_inputs`): with no solver nothing is proved, and the cut network
   answers as the planes' network does when both are zero: the same model with no solver
   anywhere. ``--keep-planes`` lets that engine prove the planes with
   the solver at every leaf, which leaves the solver in its network's inputs and measures only
   its uses in the search and the player. ``--against-model``
   gives it a network of its own instead: one trained without the planes measures the whole
   project without the solver. The openings: by default ones the
   engine without the solver (or, with ``--screen-player``, the one with it) won once with each
   colour against itself (with 2 random stones, or with openings the network calls even, black
   wins most games between these two players whoever has the solver, which hides what the
   solver adds). No opening is played twice with the same colours: candidates are screened in
   rounds until there are enough, and when there are not, the match is shorter and says so: at
   a fixed time a move a repeated opening often replays the same game, which would count one
   result as two.
5. Where each decisive game of the match was decided (:mod:`alphagomoku.eval.decided`), counted
   by who lost: a blunder (the loser let the winner have a VCT that another move would have
   stopped), already lost (every move there left one), or unclear. A solver can only turn the
   blunders around; the rest were lost to moves a threat search does not look at.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default=None,
                   help="weights file (default: the package's 15x15 cpu-hour network)")
    p.add_argument("--selfplay-games", type=int, default=8, help="games per self-play run")
    p.add_argument("--simulations", type=int, default=64, help="self-play simulations per move")
    p.add_argument("--leaf-budget", type=int, default=None,
                   help="VCF nodes per new node (default: SearchConfig's when it is on, else 100)")
    p.add_argument("--root-budget", type=int, default=None,
                   help="VCF nodes at a root (default 10 x the leaf budget)")
    p.add_argument("--vct-depth", type=int, default=3, help="threats of the timed VCT searches")
    p.add_argument("--vct-budget", type=int, default=50_000, help="nodes of each timed VCT search")
    p.add_argument("--against-model", metavar="PATH", default=None,
                   help="the network of the engine without the solver (default: --model's). "
                        "A model trained without the VCF planes measures what the solver adds "
                        "in all its uses, network inputs included")
    p.add_argument("--against-without-planes", action="store_true",
                   help="insist on what a model with the VCF planes gets by default: the engine "
                        "without the solver plays --model's weights with the two VCF input "
                        "channels cut out, the network as it is when no solver proves its "
                        "planes (refused for a model without them)")
    p.add_argument("--keep-planes", action="store_true",
                   help="the engine without the solver proves --model's VCF planes with the "
                        "solver at every leaf: only the solver's uses in the search and the "
                        "player are measured, not its answers in the network's inputs")
    p.add_argument("--games", type=int, default=40, help="engine-match games (even)")
    p.add_argument("--time-per-move", type=float, default=0.5, help="engine-match seconds a move")
    p.add_argument("--match-player", choices=("vct", "vcf"), default="vct",
                   help="the engine with the solver: vct (VCF and wins by threats, the default) "
                        "or vcf (VCF only)")
    p.add_argument("--match-openings", choices=("even", "balanced", "centre"), default="even",
                   help="even (default): openings the engine without the solver won once with "
                        "each colour playing itself; balanced: openings the network values "
                        "close to even; centre: two random stones near the centre")
    p.add_argument("--screen-player", choices=("tactics", "vct", "vcf"), default="tactics",
                   help="whose games against itself pick the even openings: tactics (default), "
                        "the engine without the solver, or the engine with it. Where the solver "
                        "converts what the network only half sees, openings even for the engine "
                        "without it can be won by black under the stronger one")
    p.add_argument("--screen-time-per-move", type=float, default=0.1,
                   help="seconds a move of the games that pick the even openings")
    p.add_argument("--rescreen-time-per-move", type=float, default=None, metavar="SECONDS",
                   help="screen the match's openings again at this many seconds a move (the "
                        "match's own, say) and keep only those even again: openings even at "
                        "the screen's 0.1 s are often won twice by black at 0.5 s")
    p.add_argument("--decided-depth", type=int, default=4,
                   help="free threats of the VCT search that finds where each match game was "
                        "decided (eval/decided.py)")
    p.add_argument("--decided-budget", type=int, default=400_000,
                   help="nodes of each of those searches; 0 skips that part")
    p.add_argument("--match-out", metavar="DIR", default=None,
                   help="write each match game here (.psq and .txt), and decided.json: each "
                        "decisive game's deciding move, to look at the losses one by one")
    p.add_argument("--workers", type=int, default=2, help="engine-match worker processes")
    p.add_argument("--seed", type=int, default=0)


def _selfplay(model, game, search, games: int, seed: int) -> tuple[list, dict]:
    import torch

    from alphagomoku.nn import Evaluator
    from alphagomoku.selfplay.game_loop import SelfPlaySettings, play_games

    torch.set_num_threads(1)
    evaluator = Evaluator(model, torch.device("cpu"))
    settings = SelfPlaySettings(games_at_once=games)
    play_games(evaluator, game, search.replace(num_simulations=2), settings, 1, seed)  # warm-up
    return play_games(evaluator, game, search, settings, games, seed)


def _positions(records, game):
    from alphagomoku.game import Position

    out = []
    for record in records:
        pos = Position(game)
        for move in record.moves[:-1]:
            pos.play(int(move))
            out.append(pos.copy())
    return out


def _solver_timing(positions, budget: int, known: bool) -> dict:
    """Each position searched for both sides, the table kept from call to call as the search
    and the engine keep it. ``known``: as a new node of the search calls it (:func:`solve_known`,
    the immediate wins already found); else as the engine does (:func:`solve`, which scans for
    them)."""
    from alphagomoku.game import vcf
    from alphagomoku.game.kernels import would_win

    cfg = positions[0].config
    h, w, n, rule = cfg.height, cfg.width, cfg.n_in_row, cfg.rule_id
    times = []
    nodes = 0
    found = unknown = 0
    state = vcf.allocate_state(cfg.area)
    vcf.solve_with(positions[0].board.copy(), h, w, n, rule, 1, -1, 1, 0, state)  # load it
    vcf.solve_known_with(positions[0].board.copy(), h, w, n, rule, 1, -1, -1, 1, 0, state)
    for pos in positions:
        for attacker in (1, 2):
            board = pos.board.copy()
            if known:
                empty = np.flatnonzero(board == 0)
                if any(would_win(board, h, w, n, rule, int(p), attacker) for p in empty):
                    continue
                threats = [int(p) for p in empty
                           if would_win(board, h, w, n, rule, int(p), 3 - attacker)]
                if len(threats) > 1:
                    continue
                forced = threats[0] if threats else -1
                t0 = time.perf_counter()
                status, _, k = vcf.solve_known_with(board, h, w, n, rule, attacker,
                                                    pos.last_move, forced, budget, 0, state)
            else:
                t0 = time.perf_counter()
                status, _, k = vcf.solve_with(board, h, w, n, rule, attacker, pos.last_move,
                                              budget, 0, state)
            times.append(time.perf_counter() - t0)
            nodes += k
            found += status == vcf.WIN
            unknown += status == vcf.UNKNOWN
    t = np.array(times)
    return {
        "calls": len(times),
        "nodes_per_second": nodes / t.sum(),
        "mean_nodes": nodes / len(times),
        "mean_call_ms": 1000 * t.mean(),
        "p99_call_ms": 1000 * float(np.quantile(t, 0.99)),
        "max_call_ms": 1000 * t.max(),
        "share_found": found / len(times),
        "share_unknown": unknown / len(times),
    }


def _vct_timing(positions, depth: int, budget: int) -> dict:
    """The VCT search (:func:`alphagomoku.game.solve_vct`) of the side to move on each position
    that has no VCF, at ``depth`` threats and ``budget`` nodes."""
    from alphagomoku.game import solve_vcf, solve_vct

    solve_vct(positions[0], 1)  # load it
    times, nodes, found, unknown = [], 0, 0, 0
    for pos in positions:
        if solve_vcf(pos, budget).status != "none":
            continue
        t0 = time.perf_counter()
        r = solve_vct(pos, budget, depth=depth)
        times.append(time.perf_counter() - t0)
        nodes += r.nodes
        found += r.found
        unknown += r.status == "unknown"
    t = np.array(times)
    return {
        "calls": len(times),
        "nodes_per_second": nodes / t.sum(),
        "mean_call_ms": 1000 * t.mean(),
        "p99_call_ms": 1000 * float(np.quantile(t, 0.99)),
        "share_found": found / len(times),
        "share_unknown": unknown / len(times),
    }


def _search_timing(model, positions, search, rounds: int = 2) -> tuple[float, float]:
    """Seconds per search of ``search`` (as self-play runs it: 8 trees a batch, the network on
    one CPU thread) on the same positions with the VCF checks off and on, interleaved batch by
    batch so that other load on the machine hits both alike; the best of ``rounds``."""
    import torch

    from alphagomoku.mcts import Forest
    from alphagomoku.nn import Evaluator

    torch.set_num_threads(1)
    evaluator = Evaluator(model, torch.device("cpu"))
    k = 8
    configs = (search.replace(vcf_leaf_budget=0, vcf_root_budget=0), search)
    forests = [Forest(positions[0].config, c, k) for c in configs]
    best = [np.inf, np.inf]
    for _ in range(rounds):
        spent = [0.0, 0.0]
        for start in range(0, len(positions) - k + 1, k):
            for which, forest in enumerate(forests):
                for i in range(k):
                    forest.reset(i, positions[start + i])
                t0 = time.perf_counter()
                forest.run(evaluator)
                spent[which] += time.perf_counter() - t0
        best = [min(b, s) for b, s in zip(best, spent)]
    searches = (len(positions) // k) * k
    return best[0] / searches, best[1] / searches


def _write_deciding_moves(path, found: dict, a_black: list) -> None:
    import dataclasses
    import json

    from alphagomoku.atomic import atomic_write_text

    rows = [{"game": i, "a_black": bool(a_black[i]),
             **({"kind": "none"} if move is None
                else {"kind": move.kind, **dataclasses.asdict(move)})}
            for i, move in found.items()]
    atomic_write_text(path, json.dumps(rows, indent=1) + "\n")


def _check_arguments(args) -> None:
    """Refuse a match that cannot be played before the minutes of self-play that come first."""
    from alphagomoku.bench import UsageError

    if args.games < 0 or args.games % 2:
        raise UsageError(f"--games must be 0 (no match) or an even number (each opening is "
                         f"played with both colours), got {args.games}")
    for flag, value in (("--time-per-move", args.time_per_move),
                        ("--screen-time-per-move", args.screen_time_per_move)):
        if not value > 0:
            raise UsageError(f"{flag} must be a positive number of seconds, got {value}")
    if args.rescreen_time_per_move is not None:
        if not args.rescreen_time_per_move > 0:
            raise UsageError(f"--rescreen-time-per-move must be a positive number of seconds, "
                             f"got {args.rescreen_time_per_move}")
        if args.match_openings == "centre":
            raise UsageError("--rescreen-time-per-move screens even or balanced openings; "
                             "--match-openings centre has none to screen")
    for flag, value in (("--selfplay-games", args.selfplay_games),
                        ("--simulations", args.simulations),
                        ("--decided-depth", args.decided_depth)):
        if value < 1:
            raise UsageError(f"{flag} must be at least 1, got {value}")
    if args.workers < 0:
        raise UsageError(f"--workers must be 0 (in this process) or more, got {args.workers}")
    if args.decided_budget < 0:
        raise UsageError(f"--decided-budget must be 0 (skip) or more nodes, got "
                         f"{args.decided_budget}")
    chosen = [flag for flag, on in (("--against-without-planes", args.against_without_planes),
                                    ("--keep-planes", args.keep_planes),
                                    ("--against-model", args.against_model)) if on]
    if len(chosen) > 1:
        raise UsageError(f"{' and '.join(chosen)} each give the engine without the solver its "
                         f"network: choose one")


def _check_against_model(path: str, config) -> None:
    """Refuse, before the minutes of self-play, a model the match could not use."""
    from alphagomoku.bench import UsageError
    from alphagomoku.nn.io import CheckpointError, read_model_file

    try:
        other, _ = read_model_file(path)
    except (CheckpointError, OSError) as e:
        raise UsageError(f"--against-model: {e}") from None
    if (other.width, other.height) != (config.width, config.height):
        raise UsageError(f"--against-model plays {other.width}x{other.height}, --model "
                         f"{config.width}x{config.height}: the two engines must play one board")


def _without_planes_file(model, folder: Path) -> str:
    from alphagomoku.nn.io import save_model
    from alphagomoku.nn.vcf_inputs import without_vcf_planes

    return str(save_model(folder / "without-vcf-planes.pt", without_vcf_planes(model)))


def _against_label(same: bool, cut: bool) -> str:
    if cut:
        return "MODEL_WITHOUT_VCF_PLANES"
    return "MODEL" if same else "AGAINST_MODEL"


def run(args) -> dict:
    _check_arguments(args)
    from alphagomoku.eval.arena import (balanced_openings, distinct_openings, run_arena,
                                        screen_even_openings)
    from alphagomoku.game import BLACK, WHITE
    from alphagomoku.eval.specs import CPU_HOUR_MODEL
    from alphagomoku.game import GameConfig
    from alphagomoku.mcts import SearchConfig
    from alphagomoku.nn.io import load_model

    path = args.model or str(CPU_HOUR_MODEL)
    model = load_model(path, device="cpu").eval()
    size = model.config.width
    game = GameConfig(width=size, height=model.config.height)
    against = args.against_model or path
    if against != path:
        _check_against_model(against, model.config)
    if args.against_without_planes and not model.config.vcf_plane_budget:
        from alphagomoku.bench import UsageError

        raise UsageError(f"--against-without-planes: {path} reads no VCF planes; it plays "
                         f"without the solver as it is")
    cut = (args.games > 0 and model.config.vcf_plane_budget > 0 and not args.keep_planes
           and not args.against_model)
    if cut:
        # Kept until run() returns: the match's workers read the file.
        cut_dir = tempfile.TemporaryDirectory(prefix="alphagomoku-vcf-")
        against = _without_planes_file(model, Path(cut_dir.name))
    leaf = args.leaf_budget or SearchConfig().vcf_leaf_budget or 100
    root = args.root_budget or 10 * leaf
    out: dict = {"model": path, "board": f"{game.width}x{game.height}", "rule": game.rule,
                 "leaf_budget": leaf, "root_budget": root}

    base = SearchConfig(num_simulations=args.simulations, dirichlet_eps=0.25,
                        vcf_plane_budget=model.config.vcf_plane_budget,
                        threat_planes=model.config.threat_planes,
                        rule_planes=model.config.rule_planes)
    rec_off, off = _selfplay(model, game, base.replace(vcf_leaf_budget=0, vcf_root_budget=0),
                             args.selfplay_games, args.seed)
    rec_on, on = _selfplay(model, game, base.replace(vcf_leaf_budget=leaf, vcf_root_budget=root),
                           args.selfplay_games, args.seed)
    per_move_off = off["seconds"] / off["positions"]
    per_move_on = on["seconds"] / on["positions"]
    out.update({
        "selfplay_simulations": args.simulations,
        "selfplay_positions_off": off["positions"],
        "selfplay_positions_on": on["positions"],
        "selfplay_ms_per_move_off": 1000 * per_move_off,
        "selfplay_ms_per_move_on": 1000 * per_move_on,
        "selfplay_extra_share": per_move_on / per_move_off - 1.0,
        "selfplay_network_share_off": off["network_seconds"] / off["seconds"],
    })

    positions = _positions(rec_off + rec_on, game)
    out["positions"] = len(positions)
    for label, budget, known in (("leaf", leaf, True), ("root", root, False)):
        for key, value in _solver_timing(positions, budget, known).items():
            out[f"solver_{label}_{key}"] = value
    for key, value in _vct_timing(positions, args.vct_depth, args.vct_budget).items():
        out[f"vct_depth{args.vct_depth}_{key}"] = value
    off_s, on_s = _search_timing(model, positions, base.replace(vcf_leaf_budget=leaf,
                                                                vcf_root_budget=root))
    out.update({
        "search_ms_off": 1000 * off_s,
        "search_ms_on": 1000 * on_s,
        "search_extra_share": on_s / off_s - 1.0,
    })

    if args.games:
        reference = f"tactics:net:{against}"
        screen = (reference if args.screen_player == "tactics"
                  else f"{args.screen_player}:net:{path}")
        openings = None
        games = args.games
        if args.match_openings == "balanced":
            openings = distinct_openings(balanced_openings(path, game, games // 2, args.seed), game)
        elif args.match_openings == "even":
            def draw(n: int, round_: int) -> list:
                # Round 0 draws what the benchmark drew before it screened in rounds.
                return balanced_openings(path, game, n, args.seed + 1000 * round_)

            openings, tried = screen_even_openings(screen, draw, game, games // 2,
                                                   args.seed + 1, args.workers,
                                                   args.screen_time_per_move, "cpu",
                                                   progress=True)
            out["match_even_openings"] = f"{len(openings)} of {tried}"
            if not openings:
                raise SystemExit("benchmark vcf: no even opening found; try --match-openings "
                                 "balanced")
        if args.rescreen_time_per_move:
            from alphagomoku.eval.arena import even_openings

            screened = len(openings)
            openings, _ = even_openings(screen, openings, game, screened, args.seed + 2,
                                        args.workers, args.rescreen_time_per_move, "cpu",
                                        progress=True)
            out["match_openings_even_again"] = f"{len(openings)} of {screened}"
            if not openings:
                raise SystemExit(f"benchmark vcf: none of the {screened} openings was even "
                                 f"again at {args.rescreen_time_per_move} s a move")
        if openings is not None and len(openings) < games // 2:
            games = 2 * len(openings)
            print(f"benchmark vcf: only {len(openings)} distinct {args.match_openings} openings "
                  f"were found, so the match plays {games} games, not {args.games}; no opening "
                  f"is played twice with the same colours", file=sys.stderr)
        match = run_arena(f"{args.match_player}:net:{path}", reference, games, game,
                          workers=args.workers, seed=args.seed,
                          time_per_move=args.time_per_move, device="cpu", openings=openings,
                          out_dir=args.match_out)
        elo, paired = match.elo, match.paired_elo
        w, d, l = match.counts()
        per_colour = {}
        for name, colour in (("black", BLACK), ("white", WHITE)):
            cw, cd, cl = match.counts(colour)
            per_colour[f"match_as_{name}"] = f"{cw}-{cd}-{cl}"
        out.update({
            "match_player": f"{args.match_player}:net:MODEL against tactics:net:"
                            f"{_against_label(against == path, cut)}",
            "against_model": against,
            "match_openings": args.match_openings,
            "match_screen_player": args.screen_player,
            "match_games": games,
            "match_games_asked": args.games,
            "match_repeated_games": match.repeated_games,
            "match_time_per_move_s": args.time_per_move,
            "match_wins_draws_losses": f"{w}-{d}-{l}",
            **per_colour,
            "match_score": match.score,
            "match_elo": elo.elo,
            "match_elo_95": [elo.lower, elo.upper],
            # Each opening is played with both colours; the interval over those pairs is the
            # honest one (eval/elo.py), and the pairs are kept so that matches can be pooled.
            "match_elo_95_by_pairs": None if paired is None else [paired.lower, paired.upper],
            "match_pair_scores": match.pair_scores,
            # Pairs one colour won twice score 1 of 2 for either engine: they dilute the score
            # towards 0.5 whatever the solver is worth; the other pairs are where it can show.
            "match_pairs_by_colour": match.pairs_by_colour,
            "match_score_other_pairs": match.score_other_pairs,
            "match_mean_moves": float(np.mean([len(r.moves) for r in match.records])),
            "match_seconds": match.seconds,
        })
        if args.decided_budget:
            from alphagomoku.eval.decided import decided_counts, deciding_moves

            # Whether a solver could have changed the losses: a blunder left a VCT that another
            # move would have stopped; "already lost" had no such move by then.
            found = deciding_moves(match.records, args.decided_depth, args.decided_budget,
                                   args.workers, progress=True)
            out["match_decided"] = decided_counts(match.records, match.a_black, found)
            if args.match_out:
                _write_deciding_moves(Path(args.match_out) / "decided.json", found, match.a_black)
    return out
