"""Compile every Numba kernel the project runs, once, into the shared kernel cache.

    python -m alphagomoku.compile_kernels

``make setup`` runs this, so that ``make train``, ``make test``, ``python scripts/play.py`` and
``pbrain-alphagomoku`` all start from compiled kernels (alphagomoku.numba_config says where they
live). Run on a warm cache it only loads them, in a few seconds.

It drives the same paths the entry points take, rather than listing kernels by name, so that a
kernel added to one of those paths is compiled here without anyone remembering to add it:
self-play (the general gather / evaluate / back-up search), the Gomocup engine's player on the
shipped model (both search modes, the VCF and VCT solvers, the VCF input planes) and pure MCTS
(random playouts, the player on board sizes a network given to the engine or the web page does
not play).
"""

from __future__ import annotations

import sys
import time


def _engine_game() -> list[str]:
    """The engine's answers to a short game with threats on the board, so that the solvers run,
    not only the search."""
    from alphagomoku.engine.__main__ import build_parser, player_factory
    from alphagomoku.engine.protocol import GomocupEngine

    lines = iter(["START 15", "INFO timeout_turn 300", "BOARD", "8,8,2", "8,7,1", "7,8,2",
                  "9,9,1", "6,8,2", "DONE", "TURN 10,10", "END", ""])
    answers: list[str] = []
    engine = GomocupEngine(player_factory(build_parser().parse_args([])), answers.append)
    engine.run(lambda: next(lines) + "\n")
    close = getattr(engine.player, "close", None)
    if callable(close):
        close()
    return answers


def _pure_search() -> None:
    from alphagomoku.eval.specs import make_player
    from alphagomoku.game import GameConfig, Position

    player = make_player("pure:20", seed=0)
    game = GameConfig(width=9)
    player.reset(game)
    player.choose(Position.from_moves(["e5"], game))


def main() -> int:
    from alphagomoku.game.config import GameConfig
    from alphagomoku.numba_config import cache_dir
    from alphagomoku.selfplay.warmup import compile_selfplay_kernels

    start = time.perf_counter()
    compile_selfplay_kernels(GameConfig(width=9))
    _pure_search()
    # The engine answers a failure with an ERROR line instead of raising; a warm-up that went
    # wrong must not pass for one that compiled everything.
    errors = [line for line in _engine_game() if line.startswith(("ERROR", "UNKNOWN"))]
    if errors:
        print("compile_kernels: the engine's game failed: " + "; ".join(errors), file=sys.stderr)
        return 1
    print(f"search kernels ready in {time.perf_counter() - start:.0f} s ({cache_dir()})",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
