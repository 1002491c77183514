"""Game records: one finished (or abandoned) game, written as Piskvork ``.psq`` or as text.

``.psq`` is the format Piskvork and the Gomocup tools read::

    Piskvorky 15x15, 11:11, 0      header: board size (the rest is window placement, unused)
    8,8,0                          one line per move: x,y (1-based), thinking time in ms
    9,7,1250
    ...
    pure:2000                      trailer: black's name, white's name, -1
    net:latest.pt
    -1
    alphagomoku {"rule": ...}      our own line: rule, n in a row, result, opening length

Readers of the format stop at the first line that is not a move, so the extra line is harmless to
them, and it lets :func:`read_psq` restore what ``.psq`` cannot hold (the rule, the line length,
a result that is not on the board such as a forfeit).

The text form is for people: a header, the moves in ``h8`` notation two to a line, the final
board. :func:`parse_text` reads it back.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from alphagomoku.game import BLACK, DRAW, NO_RESULT, WHITE, GameConfig, IllegalMoveError, Position
from alphagomoku.game import coords

_RESULT_WORDS = {BLACK: "black", WHITE: "white", DRAW: "draw", NO_RESULT: "none"}
_WORD_RESULTS = {v: k for k, v in _RESULT_WORDS.items()}

_PSQ_HEADER = re.compile(r"^\s*Piskvorky\s+(\d+)\s*x\s*(\d+)\s*,")
_PSQ_MOVE = re.compile(r"^\s*(-?\d+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*$")
_PSQ_OURS = "alphagomoku "


class RecordError(ValueError):
    """A record file that cannot be read; the message names the file, line and problem."""


@dataclass
class GameRecord:
    """The moves of one game as flat indices, their thinking times, who played and how it
    ended. The first ``opening`` moves were set by the arena, not chosen by the players."""

    game: GameConfig
    moves: list[int] = field(default_factory=list)
    times_ms: list[int] = field(default_factory=list)
    black: str = "black"
    white: str = "white"
    winner: int = NO_RESULT
    reason: str = ""
    opening: int = 0

    def __post_init__(self):
        if not self.times_ms:
            self.times_ms = [0] * len(self.moves)
        if len(self.times_ms) != len(self.moves):
            raise ValueError(f"{len(self.moves)} moves but {len(self.times_ms)} move times")
        if self.winner not in _RESULT_WORDS:
            raise ValueError(f"winner must be BLACK, WHITE, DRAW or NO_RESULT, got {self.winner!r}")
        if not 0 <= self.opening <= len(self.moves):
            raise ValueError(f"opening length {self.opening} is outside 0..{len(self.moves)}")

    @classmethod
    def from_position(cls, position: Position, times_ms=None, black="black", white="white",
                      opening: int = 0, winner: int | None = None, reason: str | None = None) -> "GameRecord":
        """The record of ``position``'s game; the result is the position's unless given."""
        return cls(
            game=position.config, moves=list(position.moves),
            times_ms=list(times_ms) if times_ms is not None else [],
            black=black, white=white,
            winner=position.winner if winner is None else winner,
            reason=position.win_reason if reason is None else reason,
            opening=opening,
        )

    def position(self) -> Position:
        """The final position, replayed move by move (so an illegal record raises here)."""
        return Position.from_moves(self.moves, self.game)

    @property
    def result_text(self) -> str:
        if self.winner == DRAW:
            return f"draw ({self.reason})" if self.reason else "draw"
        if self.winner == NO_RESULT:
            return f"unfinished ({self.reason})" if self.reason else "unfinished"
        name = self.black if self.winner == BLACK else self.white
        colour = _RESULT_WORDS[self.winner]
        return f"{colour} ({name}) wins" + (f" {self.reason}" if self.reason else "")

    def to_dict(self) -> dict:
        """Plain data (for JSON and for crossing process boundaries)."""
        return {
            "game": self.game.to_dict(), "moves": list(self.moves), "times_ms": list(self.times_ms),
            "black": self.black, "white": self.white, "winner": _RESULT_WORDS[self.winner],
            "reason": self.reason, "opening": self.opening,
        }

    @classmethod
    def from_dict(cls, data: dict) -> "GameRecord":
        return cls(
            game=GameConfig(**data["game"]), moves=[int(m) for m in data["moves"]],
            times_ms=[int(t) for t in data["times_ms"]], black=data["black"], white=data["white"],
            winner=_WORD_RESULTS[data["winner"]], reason=data["reason"], opening=int(data["opening"]),
        )


# -- .psq ------------------------------------------------------------------------------------------
def _one_line(name: str) -> str:
    # A name is one trailer line: a newline inside it would shift every later line.
    return " ".join(str(name).split()) or "?"


def psq_text(record: GameRecord) -> str:
    g = record.game
    lines = [f"Piskvorky {g.width}x{g.height}, 11:11, 0"]
    for move, ms in zip(record.moves, record.times_ms):
        x, y = coords.to_xy(move, g.width, g.height)
        lines.append(f"{x + 1},{y + 1},{int(ms)}")
    lines += [_one_line(record.black), _one_line(record.white), "-1"]
    extra = {"rule": g.rule, "n_in_row": g.n_in_row, "winner": _RESULT_WORDS[record.winner],
             "reason": record.reason, "opening": record.opening}
    lines.append(_PSQ_OURS + json.dumps(extra))
    return "\n".join(lines) + "\n"


def write_psq(record: GameRecord, path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(psq_text(record), encoding="utf-8")
    return path


def parse_psq(text: str, game: GameConfig | None = None, source: str = "<psq>") -> GameRecord:
    """A record from ``.psq`` text. ``game`` gives the rule and line length when the file lacks
    our trailer line (files from other tools); its size must match the header's."""
    lines = text.splitlines()
    if not lines or not _PSQ_HEADER.match(lines[0]):
        first = lines[0][:60] if lines else ""
        raise RecordError(f"{source}: not a .psq file: the first line should read "
                          f"'Piskvorky WxH, ...', got {first!r}")
    m = _PSQ_HEADER.match(lines[0])
    width, height = int(m.group(1)), int(m.group(2))
    if game is not None and (game.width, game.height) != (width, height):
        raise RecordError(f"{source}: the file is for a {width}x{height} board, the game "
                          f"config says {game.width}x{game.height}")

    moves_xy: list[tuple[int, int, int, int]] = []  # x, y, ms, line number
    i = 1
    while i < len(lines) and _PSQ_MOVE.match(lines[i]):
        mm = _PSQ_MOVE.match(lines[i])
        moves_xy.append((int(mm.group(1)), int(mm.group(2)), int(mm.group(3)), i + 1))
        i += 1
    trailer = [ln.strip() for ln in lines[i:] if ln.strip()]

    extra: dict = {}
    for ln in trailer:
        if ln.startswith(_PSQ_OURS):
            try:
                extra = json.loads(ln[len(_PSQ_OURS):])
            except json.JSONDecodeError as e:
                raise RecordError(f"{source}: damaged alphagomoku trailer line: {e}") from None
    names = [ln for ln in trailer if not ln.startswith(_PSQ_OURS) and ln != "-1"]
    if game is None:
        try:
            game = GameConfig(width=width, height=height, n_in_row=int(extra.get("n_in_row", 5)),
                              rule=str(extra.get("rule", "freestyle")))
        except (TypeError, ValueError) as e:
            raise RecordError(f"{source}: {e}") from None

    position = Position(game)
    times = []
    for x, y, ms, lineno in moves_xy:
        try:
            position.play((x - 1, y - 1))
        except IllegalMoveError as e:
            raise RecordError(f"{source}, line {lineno}: move {x},{y} (1-based): {e}") from None
        times.append(ms)
    winner = _WORD_RESULTS.get(extra.get("winner"), position.winner)
    reason = extra.get("reason", position.win_reason)
    return GameRecord(
        game=game, moves=list(position.moves), times_ms=times,
        black=names[0] if len(names) > 0 else "black", white=names[1] if len(names) > 1 else "white",
        winner=winner, reason=str(reason), opening=int(extra.get("opening", 0)),
    )


def read_psq(path, game: GameConfig | None = None) -> GameRecord:
    path = Path(path)
    return parse_psq(path.read_text(encoding="utf-8", errors="replace"), game, source=str(path))


# -- text ------------------------------------------------------------------------------------------
def text_record(record: GameRecord) -> str:
    """The record for people: header, numbered moves (opening moves marked ``*``), final board."""
    g = record.game
    lines = [
        "alphagomoku game",
        f"board: {g.width}x{g.height}",
        f"n_in_row: {g.n_in_row}",
        f"rule: {g.rule}",
        f"black: {_one_line(record.black)}",
        f"white: {_one_line(record.white)}",
        f"winner: {_RESULT_WORDS[record.winner]}",
        f"reason: {_one_line(record.reason) if record.reason else ''}".rstrip(),
        f"result: {record.result_text}",
        f"opening: {record.opening}",
        "moves:",
    ]
    names = [coords.to_name(m, g.width, g.height) + ("*" if k < record.opening else "")
             for k, m in enumerate(record.moves)]
    for k in range(0, len(names), 2):
        lines.append(f"{k // 2 + 1:4d}. " + "  ".join(f"{n:<5}" for n in names[k:k + 2]).rstrip())
    lines += ["", str(record.position()), ""]
    return "\n".join(lines)


def write_text(record: GameRecord, path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text_record(record), encoding="utf-8")
    return path


def parse_text(text: str, source: str = "<text>") -> GameRecord:
    """The inverse of :func:`text_record` (move times are not in the text form: all zero)."""
    header: dict[str, str] = {}
    moves: list[str] = []
    lines = text.splitlines()
    k = 0
    while k < len(lines) and lines[k].strip() != "moves:":
        key, sep, value = lines[k].partition(":")
        if sep:
            header[key.strip()] = value.strip()
        k += 1
    if k == len(lines):
        raise RecordError(f"{source}: no 'moves:' line: not an alphagomoku text record")
    for line in lines[k + 1:]:
        if not line.strip():
            break
        _, _, rest = line.partition(".")
        moves += [tok.rstrip("*") for tok in rest.split()]
    size = re.fullmatch(r"(\d+)x(\d+)", header.get("board", ""))
    if size is None:
        raise RecordError(f"{source}: the 'board:' line should read WxH, got {header.get('board')!r}")
    try:
        game = GameConfig(width=int(size.group(1)), height=int(size.group(2)),
                          n_in_row=int(header["n_in_row"]), rule=header["rule"])
        winner = _WORD_RESULTS[header["winner"]]
        opening = int(header["opening"])
    except KeyError as e:
        raise RecordError(f"{source}: header line {e} is missing or invalid") from None
    except ValueError as e:
        raise RecordError(f"{source}: {e}") from None
    try:
        position = Position.from_moves(moves, game)
    except IllegalMoveError as e:
        raise RecordError(f"{source}: {e}") from None
    return GameRecord(game=game, moves=list(position.moves), black=header.get("black", "black"),
                      white=header.get("white", "white"), winner=winner,
                      reason=header.get("reason", ""), opening=opening)


def read_saved_games(folder) -> list[tuple[Path, GameRecord]]:
    """The games saved in ``folder`` as ``game_*.txt`` (what ``scripts/evaluate.py --out`` and
    ``benchmark.py vcf --match-out`` write), in file order, each with its path."""
    paths = sorted(Path(folder).glob("game_*.txt"))
    if not paths:
        raise FileNotFoundError(f"{folder}: no game_*.txt records here")
    return [(p, parse_text(p.read_text(encoding="utf-8"), source=str(p))) for p in paths]
