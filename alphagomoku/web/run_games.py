"""The self-play games a training run keeps (``games/epoch_*.npz``, train/game_files.py), listed
and loaded for the page, so a person can watch what self-play is doing."""

from __future__ import annotations

import logging
import re
from pathlib import Path

from alphagomoku.game import GameConfig
from alphagomoku.train.game_files import load_games
from alphagomoku.web.messages import MessageError

log = logging.getLogger("alphagomoku.web")

# Only names the trainer writes: a page cannot reach another file of the machine.
_FILE = re.compile(r"^epoch_\d+\.npz$")
_RESULTS = {1: "black won", 2: "white won", 0: "draw"}


def games_dir(run_dir: Path | None) -> Path:
    if run_dir is None:
        raise MessageError("no training run: start the server with --run-dir DIR")
    return run_dir / "games"


def list_games(run_dir: Path | None) -> list[dict]:
    """Each epoch file, newest first, with its number of games and their lengths; a damaged
    file is left out (and logged)."""
    files = []
    for path in sorted(games_dir(run_dir).glob("epoch_*.npz"), reverse=True):
        try:
            _, games = load_games(path)
        except Exception as e:  # noqa: BLE001 - one damaged file must not hide the others
            log.warning("cannot read %s: %s", path, e)
            continue
        files.append({"file": path.name, "games": len(games),
                      "lengths": [len(g["moves"]) for g in games]})
    return files


def load_game(run_dir: Path | None, name: str, index: int) -> tuple[GameConfig, list[int], str]:
    """Game ``index`` of epoch file ``name``: its board, moves and a title saying how it ended."""
    folder = games_dir(run_dir)
    if not _FILE.match(name) or not (folder / name).is_file():
        raise MessageError(f"no game file {name!r} in {folder}")
    game, games = load_games(folder / name)
    if not 0 <= index < len(games):
        raise MessageError(f"{name} holds games 0 to {len(games) - 1}, not {index}")
    g = games[index]
    result = _RESULTS.get(g["result"], "unfinished")
    title = f"self-play {name} game {index}: {result}{' (resigned)' if g['resigned'] else ''}"
    return game, g["moves"], title
