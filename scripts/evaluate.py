#!/usr/bin/env python
"""Arena between two players: W/L/D, score and Elo difference with a 95% confidence interval.

Players are specs: random, pure:N, uniform:N, net:PATH[:N], engine:COMMAND, default. Games come
in pairs: each opening (a few stones near the centre) is played once with each colour.

    python scripts/evaluate.py --player-a net:runs/x/latest.pt:400 --player-b pure:2000 \\
        --games 40 --board-size 15 --workers 2 --out runs/x/eval
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from alphagomoku.eval.arena import ArenaError, balanced_openings, run_arena, saved_openings
from alphagomoku.eval.specs import SPEC_FORMS, PlayerSpecError, check_player_spec, search_settings
from alphagomoku.game import GameConfig
from alphagomoku.game.constants import RULE_NAMES


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--player-a", required=True, metavar="SPEC", help=f"the player measured ({SPEC_FORMS})")
    p.add_argument("--player-b", required=True, metavar="SPEC", help="the reference player")
    p.add_argument("--search-a", action="append", default=[], metavar="KEY=VALUE",
                   help="a search setting of A's network player instead of the default, such as "
                        "c_puct=2.0 or fpu_reduction=0.1 (a SearchConfig field; repeat for more)")
    p.add_argument("--search-b", action="append", default=[], metavar="KEY=VALUE",
                   help="the same for B")
    p.add_argument("--games", type=int, default=None,
                   help="even number of games (default 20; with --openings-from, two for each "
                        "opening there)")
    p.add_argument("--board-size", type=int, default=15, help="board width and height (default 15)")
    p.add_argument("--n-in-row", type=int, default=5, help="stones in a row to win (default 5)")
    p.add_argument("--rule", default="freestyle", choices=sorted(RULE_NAMES), help="default freestyle")
    p.add_argument("--workers", type=int, default=None,
                   help="parallel game processes (0 = in this process; default: the cores, at "
                        "most the number of games)")
    p.add_argument("--seed", type=int, default=0, help="seed of the openings and the players")
    p.add_argument("--opening-moves", type=int, default=2,
                   help="stones in each opening, placed near the centre (default 2)")
    p.add_argument("--balanced-openings", metavar="MODEL", default=None,
                   help="instead: openings of 2-6 stones that the network in MODEL values close "
                        "to even (between similar players, two stones let black win nearly "
                        "every game)")
    p.add_argument("--openings-from", metavar="DIR", default=None,
                   help="instead: the openings of the games saved in DIR (by --out here or "
                        "benchmark.py vcf --match-out), each once up to symmetry, to play a "
                        "match's openings again with other players or another time a move")
    p.add_argument("--time-per-move", type=float, default=None, metavar="SECONDS",
                   help="time limit of each move's search (default: none, the specs' counts decide)")
    p.add_argument("--device", default="auto", help="device for network players (default auto)")
    p.add_argument("--out", metavar="DIR", help="write every game (.psq and .txt) and summary.json here")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        game = GameConfig(width=args.board_size, n_in_row=args.n_in_row, rule=args.rule)
    except ValueError as e:
        parser.error(str(e))
    for flag, spec in (("--player-a", args.player_a), ("--player-b", args.player_b)):
        try:
            check_player_spec(spec, game)
        except PlayerSpecError as e:
            parser.error(f"{flag}: {e}")
    search = {}
    for flag, items, spec in (("--search-a", args.search_a, args.player_a),
                              ("--search-b", args.search_b, args.player_b)):
        try:
            search[flag] = search_settings(items, spec)
        except ValueError as e:
            parser.error(f"{flag}: {e}")
    if args.balanced_openings and args.openings_from:
        parser.error("--balanced-openings and --openings-from both choose the openings: give one")
    if args.openings_from and not os.path.isdir(args.openings_from):
        parser.error(f"--openings-from: no folder at {args.openings_from}")
    if args.games is None and not args.openings_from:
        args.games = 20
    if args.games is not None and (args.games < 2 or args.games % 2):
        parser.error(f"--games must be an even number of at least 2 (each opening is played with "
                     f"both colours), got {args.games}")
    if args.opening_moves < 0:
        parser.error(f"--opening-moves must be 0 or more, got {args.opening_moves}")
    if args.workers is not None and args.workers < 0:
        parser.error(f"--workers must be 0 or more, got {args.workers}")
    if args.time_per_move is not None and not args.time_per_move > 0:
        parser.error(f"--time-per-move must be a positive number of seconds, got {args.time_per_move}")
    if args.balanced_openings and not os.path.isfile(args.balanced_openings):
        parser.error(f"--balanced-openings: no model file at {args.balanced_openings}")

    try:
        openings = None
        if args.openings_from:
            openings = saved_openings(args.openings_from, game)
            if args.games is None:
                args.games = 2 * len(openings)
            elif args.games > 2 * len(openings):
                raise ValueError(f"--games {args.games}: {args.openings_from} holds "
                                 f"{len(openings)} distinct openings, enough for "
                                 f"{2 * len(openings)} games")
            openings = openings[:args.games // 2]
        elif args.balanced_openings:
            openings = balanced_openings(args.balanced_openings, game, args.games // 2, args.seed)
        workers = args.workers if args.workers is not None else min(os.cpu_count() or 1, args.games)
        result = run_arena(
            args.player_a, args.player_b, args.games, game, workers=workers, seed=args.seed,
            opening_moves=args.opening_moves, time_per_move=args.time_per_move,
            out_dir=args.out, device=args.device, progress=not args.no_progress,
            openings=openings, search_a=search["--search-a"], search_b=search["--search-b"],
        )
    except (ArenaError, ValueError, OSError) as e:
        print(f"evaluate: {e}", file=sys.stderr)
        return 1
    summary = result.to_dict()
    if args.out:
        path = os.path.join(args.out, "summary.json")
        os.makedirs(args.out, exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=2)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(result.summary())
        if args.out:
            print(f"  games written to {args.out}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
