"""MCTS simulations per second on one core (uniform evaluator) and pure-MCTS playouts per second."""

# The uniform evaluator (uniform priors, value 0) takes the network out, so the figures measure
# the tree alone, on one core. Each setting is timed two ways: ``fused``, the uniform evaluator run
# inside the kernel (``Forest.run(uniform_evaluator)``: one kernel call per search), and ``loop``,
# the real gather / evaluate / apply cycle with a Python evaluator between the kernel calls, as a
# network is used (with K = 1 it gathers --leaves leaves per call, kept apart by virtual loss, to
# spread the Python overhead). The target, 250,000 simulations per second, is for the
# tree alone: the fused figure.
#
# First-play urgency scales with the prior mass already tried (SearchConfig.fpu_reduction), so
# with no knowledge the tree grows wide and shallow; the ``fpu0`` figures (fpu_reduction = 0:
# every move once before any twice) show the widest tree. ``mean_depth`` says which shape was
# measured.

from __future__ import annotations

import time

import numpy as np

from alphagomoku.game.config import GameConfig
from alphagomoku.game.constants import NO_MOVE
from alphagomoku.game.position import Position
from alphagomoku.mcts import SEARCH_LEAVES, Forest, PureMCTS, SearchConfig, uniform_evaluator
from alphagomoku.mcts.threats import scan_wins
from alphagomoku.mcts.tree import NODES_USED, PARENT, ROOT, UNSOLVED, VISITS


#: The target for the tree alone: simulations per second on one core.
TARGET_SIMS_PER_S = 250_000

ABOUT = ("simulations per second on one core with the uniform evaluator (no network). "
         "WHERE_kK_fused: K trees, evaluator inside the kernel (the tree alone; the 250k target); "
         "WHERE_kK_loop: gather / Python evaluator / apply per batch, as with a network "
         "(K=1: --leaves leaves per call). fpu0_: no first-play reduction. mean_depth: mean "
         "node depth of the tree measured. pure_*: random-playout MCTS, playouts per second.")


def add_arguments(parser) -> None:
    parser.add_argument("--size", type=int, default=15, help="board size (default 15)")
    parser.add_argument("--simulations", type=int, default=800, help="simulations per move (default 800)")
    parser.add_argument("--trees", type=int, nargs="+", default=[1, 64],
                        help="numbers of trees searched together (default: 1 64)")
    parser.add_argument("--leaves", type=int, default=SEARCH_LEAVES,
                        help=f"leaves per gather for the K=1 loop (default {SEARCH_LEAVES})")
    parser.add_argument("--stones", type=int, default=40, help="stones in the mid-game position (default 40)")
    parser.add_argument("--playouts", type=int, default=1000, help="pure-MCTS playouts per move (default 1000)")
    parser.add_argument("--repeats", type=int, default=2, help="timed runs per figure; the best counts")
    parser.add_argument("--seed", type=int, default=0, help="random seed of the mid-game position")


def midgame(game: GameConfig, stones: int, seed: int, simulations: int) -> Position:
    """A quiet position of ``stones`` random stones near the centre: the game is not over,
    neither side can win at once, and a uniform search does not solve it (a solved root spends
    its simulations replaying the proof, which would skew the timing)."""
    rng = np.random.default_rng(seed)
    margin = max(0, (game.width - 11) // 2)
    centre = [y * game.width + x for y in range(margin, game.height - margin)
              for x in range(margin, game.width - margin)]
    if stones > len(centre):
        raise ValueError(f"--stones {stones} does not fit in the centre of the board")
    points = np.full(2, NO_MOVE, dtype=np.int32)
    for _ in range(1000):
        pos = Position(game)
        for m in rng.permutation(centre)[:stones]:
            pos.play(int(m))
            if pos.is_over:
                break
        if pos.is_over:
            continue
        b = pos.board.copy()
        if any(scan_wins(b, game.height, game.width, game.n_in_row, game.rule_id, c, points)
               for c in (1, 2)):
            continue
        probe = Forest(game, SearchConfig(num_simulations=simulations, fpu_reduction=0.0), 1)
        probe.reset(0, pos)
        probe.run(uniform_evaluator)
        if probe.root_status(0) == UNSOLVED:
            return pos
    raise RuntimeError("found no quiet mid-game position")


def _looped(planes, legal):
    return uniform_evaluator(planes, legal)


def _mean_depth(forest: Forest, t: int) -> float:
    nodes = forest.arrays.nodes
    used = int(forest.arrays.roots[t, NODES_USED])
    depth = np.zeros(used, dtype=np.int64)
    for x in range(1, used):
        depth[x] = depth[nodes[t, x, PARENT]] + 1
    return float(depth.mean())


def _time_search(game, cfg, position, k, evaluator, repeats) -> tuple[float, float]:
    """Best simulations per second over ``repeats`` runs of K trees from ``position``."""
    forest = Forest(game, cfg, k)
    best = float("inf")
    for _ in range(repeats + 1):  # the first run compiles or loads the kernels
        for i in range(k):
            forest.reset(i, position)
        start = time.perf_counter()
        forest.run(evaluator)
        best = min(best, time.perf_counter() - start)
    assert int(forest.arrays.nodes[:, ROOT, VISITS].min()) == cfg.num_simulations
    return k * cfg.num_simulations / best, _mean_depth(forest, 0)


def run(args) -> dict:
    for name in ("size", "simulations", "leaves", "playouts", "repeats"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name} must be at least 1, got {getattr(args, name)}")
    if any(k < 1 for k in args.trees):
        raise ValueError(f"--trees must be at least 1, got {args.trees}")
    game = GameConfig(width=args.size)
    mid = midgame(game, args.stones, args.seed, args.simulations)
    positions = {"empty": Position(game), "mid": mid}
    result = {"board": f"{args.size}x{args.size}", "simulations": args.simulations,
              "mid_stones": len(positions["mid"].moves), "about": ABOUT,
              "target_sims_per_s": TARGET_SIMS_PER_S}
    settings = {"": SearchConfig(num_simulations=args.simulations),
                "fpu0_": SearchConfig(num_simulations=args.simulations, fpu_reduction=0.0)}
    for prefix, base in settings.items():
        for where, pos in positions.items():
            for k in args.trees:
                rate, depth = _time_search(game, base, pos, k, uniform_evaluator, args.repeats)
                result[f"{prefix}{where}_k{k}_fused_sims_per_s"] = rate
                loop_cfg = base.replace(leaves_per_tree=args.leaves) if k == 1 else base
                rate, _ = _time_search(game, loop_cfg, pos, k, _looped, args.repeats)
                result[f"{prefix}{where}_k{k}_loop_sims_per_s"] = rate
                result[f"{prefix}{where}_k{k}_mean_depth"] = depth
    result["target_met_empty_fused"] = all(
        result[f"empty_k{k}_fused_sims_per_s"] >= TARGET_SIMS_PER_S for k in args.trees)
    for uniform_prior, name in ((False, "uct"), (True, "uniform_prior")):
        player = PureMCTS(game, args.playouts, uniform_prior=uniform_prior)
        best = float("inf")
        for _ in range(args.repeats + 1):
            start = time.perf_counter()
            player.search(positions["empty"])
            best = min(best, time.perf_counter() - start)
        result[f"pure_{name}_playouts_per_s"] = args.playouts / best
    return result
