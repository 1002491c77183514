"""Random complete games per second on one core, for each rule (the game kernels' raw speed)."""

from __future__ import annotations

import time

import numpy as np

from alphagomoku.game import kernels
from alphagomoku.game.config import GameConfig
from alphagomoku.game.constants import BLACK, DRAW, RULE_NAMES, WHITE


def add_arguments(parser) -> None:
    parser.add_argument("--games", type=int, default=50_000, help="games per timed run (default 50000)")
    parser.add_argument("--size", type=int, default=15, help="board size (default 15)")
    parser.add_argument("--n-in-row", type=int, default=5, help="stones in a row to win (default 5)")
    parser.add_argument(
        "--rules", nargs="+", default=list(RULE_NAMES), choices=list(RULE_NAMES),
        help="rules to time (default: all)",
    )
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per rule; the best counts")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")


def rng_state(seed: int) -> np.ndarray:
    """A non-zero xorshift state from any integer seed (xorshift stays at zero once there)."""
    x = (seed * 0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D) % 2**64
    return np.array([x or 1], dtype=np.uint64)


def run(args) -> dict:
    if args.games < 1 or args.repeats < 1:
        raise ValueError(f"--games and --repeats must be at least 1, got {args.games} and {args.repeats}")
    result = {"board": f"{args.size}x{args.size}", "n_in_row": args.n_in_row, "games": args.games}
    for rule in args.rules:
        config = GameConfig(width=args.size, n_in_row=args.n_in_row, rule=rule)
        h, w, n, rule_id = config.height, config.width, config.n_in_row, config.rule_id
        state = rng_state(args.seed)
        kernels.random_games(1, h, w, n, rule_id, state)  # compile, or load from the cache
        best = float("inf")
        counts = np.zeros(3, dtype=np.int64)
        for _ in range(args.repeats):
            start = time.perf_counter()
            counts += kernels.random_games(args.games, h, w, n, rule_id, state)
            best = min(best, time.perf_counter() - start)
        total = counts.sum()
        result[f"{rule}_games_per_s"] = args.games / best
        result[f"{rule}_black_share"] = counts[BLACK] / total
        result[f"{rule}_white_share"] = counts[WHITE] / total
        result[f"{rule}_draw_share"] = counts[DRAW] / total
    return result
