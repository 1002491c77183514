"""``pbrain-alphagomoku`` / ``python -m alphagomoku.engine``: the engine on stdin and stdout.

Which player answers: ``--player SPEC`` if given (any spec of alphagomoku.eval.specs: for tests
and comparisons), else the network in ``--checkpoint PATH``, else the model shipped with the
package, else pure MCTS (said in a MESSAGE line). The player is built at the first START, and
the tactical check (win now, or block the opponent's win) runs before it on every move unless
``--no-tactics``, and so does a VCF search for both sides unless ``--no-vcf``: a proved win by
continuous fours is played at once (``MESSAGE vcf: win in K (...)``), and an opponent's is
stopped when a defence is proved. Unless ``--no-vct``, wins by continuous threats (threes too)
are played as well (``MESSAGE vct: win by threats from h8``), and a move after which the
opponent would have one is replaced by the player's next choice that leaves none.

Only protocol lines go to stdout: anything else that prints (a library warning, say) is sent to
stderr, so it cannot be read by the manager as an answer.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pbrain-alphagomoku",
        description="alphagomoku as a Gomocup engine: speaks the pbrain protocol on stdin/stdout.",
    )
    src = p.add_mutually_exclusive_group()
    src.add_argument("--checkpoint", metavar="PATH", help="model weights file to play with "
                     "(default: the model shipped with the package, else pure MCTS)")
    src.add_argument("--player", metavar="SPEC", help="play with this player instead, e.g. "
                     "random, pure:200, uniform:400, net:PATH:800")
    p.add_argument("--simulations", type=int, default=None, metavar="N",
                   help="most MCTS simulations per move for the network (default: as many as "
                        "the move time allows)")
    p.add_argument("--device", default="auto", help="device for the network: auto, cpu, cuda, "
                                                    "cuda:N, mps (default auto)")
    p.add_argument("--n-in-row", type=int, default=5, metavar="N",
                   help="stones in a row to win (Gomocup plays 5; other values for experiments)")
    p.add_argument("--no-tactics", action="store_true",
                   help="do not play immediate wins and blocks before asking the player")
    p.add_argument("--no-vcf", action="store_true",
                   help="do not search for wins by continuous fours (own, and the opponent's to "
                        "stop) before asking the player")
    p.add_argument("--no-vct", action="store_true",
                   help="do not search for wins by continuous threats (threes as well as fours), "
                        "own or the opponent's, beyond the VCF")
    p.add_argument("--vcf-budget", type=int, default=None, metavar="N",
                   help="most solver nodes of each VCF or VCT search (default: as many as the "
                        "move time allows; 100000 without one)")
    p.add_argument("--inference-backend", choices=("auto", "torch", "onnx"), default="auto",
                   help="the network's runtime: auto (ONNX Runtime on a CPU when installed, "
                        "which searches more simulations than torch; else torch), torch, or onnx "
                        "(an error if it cannot load) (default auto)")
    p.add_argument("--onnx-precision", choices=("fp32", "int8"), default="fp32",
                   help="ONNX Runtime's arithmetic: fp32, or int8 convolutions (faster on a CPU; "
                        "their ranges calibrated on the first 256 positions the searches read, "
                        "which take fp32) (default fp32)")
    p.add_argument("--threads", type=int, default=1, metavar="N",
                   help="CPU threads for the network (default 1: a batch of one position gains "
                        "little from more, and a tournament machine runs two engines at once)")
    p.add_argument("--eval-cache", type=int, default=None, metavar="POSITIONS",
                   help="network answers kept through a game for positions the searches meet "
                        "again (default 32768, about 40 MB on 15x15; 0: none)")
    p.add_argument("--search", action="append", default=[], metavar="KEY=VALUE",
                   help="a search setting of the network player instead of the default, such as "
                        "c_puct=2.0 (a SearchConfig field; repeat for more)")
    p.add_argument("--seed", type=int, default=0, help="seed of the player's random choices")
    return p


def shipped_file(weights: Path, args) -> Path:
    """The ONNX file beside a shipped network's ``weights`` where it can run (onnxruntime
    installed, the CPU allowed, torch not asked for), so that the engine never imports torch and
    its memory. Else the weights. ``--device auto`` takes the CPU even beside a GPU: at one
    position a call, ONNX Runtime on one CPU thread runs this size of network faster than torch
    on a GPU (docs/benchmarks.md, the CPU inference and GPU sections)."""
    from alphagomoku.eval.specs import runnable_onnx

    onnx = runnable_onnx(weights)
    if onnx is not None and args.inference_backend != "torch" and args.device in ("auto", "cpu"):
        return onnx
    return weights


def default_network(args) -> Path | None:
    """The file of the shipped network the engine loads without ``--checkpoint``
    (:func:`alphagomoku.eval.specs.shipped_network`, through :func:`shipped_file`); None when
    the package ships none."""
    from alphagomoku.eval.specs import shipped_network

    weights = shipped_network()
    return None if weights is None else shipped_file(weights, args)


def _networks(player) -> list:
    """The network players inside ``player`` (through board fall-backs)."""
    from alphagomoku.eval.players import BoardFallbackPlayer, NetworkPlayer

    if isinstance(player, BoardFallbackPlayer):
        return _networks(player.primary) + _networks(player.fallback)
    return [player] if isinstance(player, NetworkPlayer) else []


def player_factory(args):
    """A function building ``(player, notes)`` from the parsed arguments, called at START."""

    def make():
        from alphagomoku.eval.players import BoardFallbackPlayer, TacticalPlayer
        from alphagomoku.eval.specs import (DEFAULT_MODEL, FALLBACK_PLAYOUTS, make_player,
                                            search_settings)

        notes = []
        shipped = None if args.player or args.checkpoint else default_network(args)
        if args.player:
            spec = args.player
        elif args.checkpoint:
            spec = f"net:{args.checkpoint}"
        elif shipped is not None:
            spec = f"net:{shipped}"
        else:
            spec = f"pure:{FALLBACK_PLAYOUTS}"
            notes.append(f"no --checkpoint and no model shipped at {DEFAULT_MODEL.parent}: "
                         "playing pure MCTS (random playouts, no network)")
        if spec.startswith("net:") and args.simulations:
            spec = f"{spec}:{args.simulations}"
        player = make_player(spec, seed=args.seed, device=args.device,
                             backend=args.inference_backend, threads=args.threads,
                             precision=args.onnx_precision,
                             search=search_settings(args.search, spec))
        if args.search:
            notes.append(f"search settings: {' '.join(args.search)}")
        cfg = getattr(getattr(player, "model", None), "config", None)
        if shipped is not None:
            # Every board the shipped network does not know gets pure MCTS, never an ERROR.
            player = BoardFallbackPlayer(player, make_player(f"pure:{FALLBACK_PLAYOUTS}",
                                                             seed=args.seed))
            notes.append(f"the shipped network plays {cfg.boards_played}"
                         + (", under the rule the manager sets" if cfg.rule_planes else "")
                         + "; pure MCTS any board beyond")
        elif cfg is not None and cfg.any_board:
            notes.append(f"the network plays {cfg.boards_played}"
                         + (", under the rule the manager sets" if cfg.rule_planes else ""))
        networks = _networks(player)
        for network in networks:
            if args.eval_cache is not None:
                network.eval_cache = args.eval_cache
        if networks:
            evaluator = networks[0].evaluator
            runtime = type(evaluator).__name__ in ("OnnxEvaluator", "OnnxNetwork")
            arithmetic = f", {evaluator.arithmetic}" if runtime else ""
            notes.append(f"network on {'ONNX Runtime' if runtime else 'torch'} "
                         f"({networks[0].device.device}{arithmetic})")
        if "torch" in sys.modules:  # a network player: keep its CPU threads to what we were given
            sys.modules["torch"].set_num_threads(args.threads)
        if args.no_tactics:
            return player, notes
        return TacticalPlayer(player, vcf=not args.no_vcf,
                              vct=not (args.no_vcf or args.no_vct), vcf_budget=args.vcf_budget), notes

    return make


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.checkpoint and not Path(args.checkpoint).is_file():
        parser.error(f"--checkpoint: no file at {args.checkpoint}")
    if args.threads < 1:
        parser.error(f"--threads must be at least 1, got {args.threads}")
    if args.vcf_budget is not None and args.vcf_budget < 1:
        parser.error(f"--vcf-budget must be at least 1, got {args.vcf_budget}")
    if args.simulations is not None and args.simulations < 1:
        parser.error(f"--simulations must be at least 1, got {args.simulations}")
    if args.eval_cache is not None and args.eval_cache < 0:
        parser.error(f"--eval-cache must be 0 (none) or more, got {args.eval_cache}")
    if args.player:
        from alphagomoku.eval.specs import PlayerSpecError, parse_player_spec

        try:
            parse_player_spec(args.player)
        except PlayerSpecError as e:
            parser.error(f"--player: {e}")
    if args.search:
        from alphagomoku.eval.specs import search_settings

        try:
            search_settings(args.search, args.player)
        except ValueError as e:
            parser.error(f"--search: {e}")

    out = sys.stdout.buffer
    sys.stdout = sys.stderr  # stray prints must not reach the manager
    stdin = sys.stdin.buffer

    def write(line: str) -> None:
        # ASCII only: the manager reads bytes, and an echoed bad input may hold anything.
        out.write(line.encode("ascii", "backslashreplace") + b"\n")
        out.flush()

    def read_line() -> str:
        return stdin.readline().decode("utf-8", errors="replace")

    from alphagomoku.engine.protocol import GomocupEngine
    from alphagomoku.eval.player_types import close_player

    engine = GomocupEngine(player_factory(args), write, n_in_row=args.n_in_row, seed=args.seed)
    try:
        engine.run(read_line)
    except (BrokenPipeError, KeyboardInterrupt):
        return 0  # the manager went away: nothing to answer to
    finally:
        if engine.player is not None:
            try:
                close_player(engine.player)
            except Exception:  # noqa: BLE001 - exiting anyway
                pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
