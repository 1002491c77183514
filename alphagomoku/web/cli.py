"""``alphagomoku-web`` / ``python scripts/serve.py``: serve the page on this machine.

The Numba kernels are compiled (or loaded from the cache) and the default model loaded before
the server accepts connections, so the first page does not wait a minute for its first move.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="alphagomoku-web",
        description="A web page to play the model and see what it thinks (needs the [web] extra).")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--model", metavar="PATH",
                     help="weights file to play (.pt or .onnx; default: the shipped networks)")
    src.add_argument("--run-dir", metavar="DIR",
                     help="a training run: play and compare its networks, replay its games")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--no-warm-up", action="store_true",
                   help="accept connections at once, compiling the kernels on first use")
    return p


def warm_up(catalog) -> None:
    """Compile or load the search and solver kernels, and check the default model loads."""
    import threading

    from alphagomoku.game import GameConfig, Position
    from alphagomoku.web.analysis import analyse
    from alphagomoku.web.models import WebPlayer

    log = logging.getLogger("alphagomoku.web")
    entry = catalog.entries.get(catalog.default) if catalog.default else None
    player = WebPlayer(entry)
    size = 15
    cfg = getattr(getattr(player.network, "model", None), "config", None)
    if cfg is not None and cfg.width == cfg.height:
        size = cfg.width
    game = GameConfig(size)
    player.prepare(game)
    analyse(Position.from_moves([game.area // 2], game), player.evaluator(),
            player.search_config(), 16, threading.Event(), lambda _: None)
    log.info("ready: %s on %dx%d", player.supports(), size, size)
    player.close()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        import uvicorn
        from alphagomoku.web.app import create_app
    except ImportError as e:
        print(f"alphagomoku-web needs the web extra: pip install 'alphagomoku[web]' ({e})",
              file=sys.stderr)
        return 2
    from alphagomoku.web.models import Catalog

    if args.model and not Path(args.model).is_file():
        print(f"--model: no file at {args.model}", file=sys.stderr)
        return 2
    if args.run_dir and not Path(args.run_dir).is_dir():
        print(f"--run-dir: no directory at {args.run_dir}", file=sys.stderr)
        return 2
    if not 0 < args.port < 65536:
        print(f"--port must be from 1 to 65535, got {args.port}", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    catalog = Catalog.build(args.model, args.run_dir)
    if args.run_dir and not catalog.entries:
        logging.getLogger("alphagomoku.web").warning(
            "%s holds no weights yet: pure MCTS plays; its games can still be replayed", args.run_dir)
    if not args.no_warm_up:
        warm_up(catalog)
    app = create_app(catalog, args.run_dir)
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(f"alphagomoku-web: open http://{host}:{args.port}/ in a browser", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", ws="websockets-sansio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
