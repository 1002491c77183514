#!/usr/bin/env python
"""Play Gomoku against the engine in the terminal.

    python scripts/play.py --checkpoint runs/x/latest.pt          # against a trained network
    python scripts/play.py --opponent pure:3000 --board-size 9    # no network needed

Moves: h8 (column letter, row from the bottom) or x,y (0-based, from the top left). Commands:
undo, hint, quit, help.
"""

from __future__ import annotations

import argparse
import random
import sys

from alphagomoku.eval.human import HumanGame
from alphagomoku.eval.players import TacticalPlayer
from alphagomoku.eval.specs import (FALLBACK_PLAYOUTS, SPEC_FORMS, PlayerSpecError, make_player,
                                    parse_player_spec, runnable_onnx, shipped_network)
from alphagomoku.game import BLACK, WHITE, GameConfig
from alphagomoku.game.constants import RULE_NAMES
from alphagomoku.records import write_psq


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    src = p.add_mutually_exclusive_group()
    src.add_argument("--checkpoint", metavar="PATH", help="model weights file to play against")
    src.add_argument("--opponent", metavar="SPEC",
                     help=f"any player spec instead ({SPEC_FORMS}); default: the shipped "
                          "network (every board and rule), else pure MCTS")
    p.add_argument("--simulations", type=int, default=None, metavar="N",
                   help="MCTS simulations per move for the network (default: as the time allows)")
    p.add_argument("--time-per-move", type=float, default=3.0, metavar="SECONDS",
                   help="the engine's thinking time per move (default 3)")
    p.add_argument("--color", choices=("black", "white", "random"), default="black",
                   help="your colour; black moves first (default black)")
    p.add_argument("--board-size", type=int, default=15, help="board width and height (default 15)")
    p.add_argument("--n-in-row", type=int, default=5, help="stones in a row to win (default 5)")
    p.add_argument("--rule", default="freestyle", choices=sorted(RULE_NAMES), help="default freestyle")
    p.add_argument("--device", default="auto", help="device for the network (default auto)")
    p.add_argument("--no-tactics", action="store_true",
                   help="let the engine miss an immediate win or block (by default it never does, "
                        "as in the Gomocup engine)")
    p.add_argument("--save", metavar="PATH.psq", help="write the game here when it ends")
    p.add_argument("--seed", type=int, default=None, help="seed of the engine's random choices")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.checkpoint:
        spec = f"net:{args.checkpoint}" + (f":{args.simulations}" if args.simulations else "")
    elif args.opponent:
        spec = args.opponent
    else:
        weights = shipped_network()  # the engine's: every board and rule
        if weights is None:
            spec = f"pure:{FALLBACK_PLAYOUTS}"
            print("No --checkpoint and no shipped model: playing pure MCTS.", file=sys.stderr)
        else:
            # Its ONNX file where it can run, as the engine plays it: the same network without
            # importing torch, which took most of the seconds before the board appeared.
            onnx = runnable_onnx(weights) if args.device in ("auto", "cpu") else None
            spec = f"net:{onnx or weights}" + (f":{args.simulations}" if args.simulations else "")
    try:
        parse_player_spec(spec)
    except PlayerSpecError as e:
        parser.error(str(e))
    try:
        game = GameConfig(width=args.board_size, n_in_row=args.n_in_row, rule=args.rule)
    except ValueError as e:
        parser.error(str(e))
    if not args.time_per_move > 0:
        parser.error(f"--time-per-move must be a positive number of seconds, got {args.time_per_move}")
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    colour = args.color if args.color != "random" else random.choice(("black", "white"))

    try:
        opponent = make_player(spec, seed=seed, device=args.device)
    except ValueError as e:  # a damaged weights file, an unknown device, ...
        print(f"play: cannot set up {spec}: {e}", file=sys.stderr)
        return 1
    if not args.no_tactics:
        opponent = TacticalPlayer(opponent)
    session = HumanGame(opponent, game, human=BLACK if colour == "black" else WHITE,
                        time_per_move=args.time_per_move)
    try:
        record = session.run()
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except ValueError as e:  # e.g. a network trained for another board size
        print(f"play: {e}", file=sys.stderr)
        return 1
    if args.save:
        print(f"game saved to {write_psq(record, args.save)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
