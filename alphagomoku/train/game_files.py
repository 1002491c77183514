"""The games of each epoch, kept in the run directory (``games/epoch_XXXXXX.npz``).

Moves of all games are stored end to end with their lengths, so a file of thousands of games is
a few arrays. :func:`load_games` gives them back as move lists for replay, export or analysis.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from alphagomoku.game.config import GameConfig
from alphagomoku.atomic import atomic_path


def save_games(path: str | Path, records: list, game: GameConfig) -> None:
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as f:
            np.savez_compressed(
                f,
                width=game.width, height=game.height, n_in_row=game.n_in_row, rule=game.rule,
                moves=np.concatenate([r.moves for r in records]).astype(np.int16),
                lengths=np.array([r.length for r in records], dtype=np.int32),
                results=np.array([r.result for r in records], dtype=np.int8),
                resigned=np.array([r.resigned for r in records], dtype=np.bool_),
                openings=np.array([r.opening for r in records], dtype=np.int16),
            )


def load_games(path: str | Path) -> tuple[GameConfig, list[dict]]:
    with np.load(path) as data:
        game = GameConfig(width=int(data["width"]), height=int(data["height"]),
                          n_in_row=int(data["n_in_row"]), rule=str(data["rule"]))
        ends = np.cumsum(data["lengths"])
        moves = np.split(data["moves"], ends[:-1])
        # Files from before openings were recorded start every game from the empty board.
        openings = data["openings"] if "openings" in data.files else np.zeros(len(moves), np.int16)
        games = [
            {"moves": m.astype(int).tolist(), "result": int(r), "resigned": bool(s),
             "opening": int(o)}
            for m, r, s, o in zip(moves, data["results"], data["resigned"], openings)
        ]
    return game, games


def export_psq(path: str | Path, out_dir: str | Path) -> list[Path]:
    """Write each game of an epoch file as ``.psq`` (Piskvork) in ``out_dir``, its random
    opening recorded as such, so the arena and other tools replay the game from its start."""
    from alphagomoku.game.constants import DRAW
    from alphagomoku.records import GameRecord, write_psq

    game, games = load_games(path)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for k, g in enumerate(games):
        reason = "resigned" if g["resigned"] else ("draw" if g["result"] == DRAW else "")
        record = GameRecord(game=game, moves=g["moves"], black="self-play", white="self-play",
                            winner=g["result"], reason=reason, opening=g["opening"])
        written.append(write_psq(record, out_dir / f"{Path(path).stem}_{k:04d}.psq"))
    return written
