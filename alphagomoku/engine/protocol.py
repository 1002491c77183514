"""The Gomocup ("pbrain") protocol: commands in, answers out, one line at a time.

Protocol: https://plastovicka.github.io/protocl2en.htm. Coordinates are ``x,y``, 0-based, x the
column and y the row from the top. The loop knows nothing of how moves are chosen: it is given a
factory that builds a :class:`~alphagomoku.eval.players.Player` at the first ``START``.

Every line is handled inside one ``try``: whatever a line holds, the engine answers (``UNKNOWN``
for a command it does not know, ``ERROR ...`` for a malformed or illegal one, ``ERROR internal
...`` for a bug) and reads the next. Asked for a move, it always gives one while a legal one
exists: if the player fails, it says so in a ``MESSAGE`` and plays the tactical or a random move.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Callable

import numpy as np

import alphagomoku
from alphagomoku.engine.memory import megabytes, resident_bytes, search_memory
from alphagomoku.engine.timing import TimeControl
from alphagomoku.eval.player_types import close_player, limit_memory, move_note
from alphagomoku.eval.tactics import tactical_move
from alphagomoku.game import BLACK, WHITE, GameConfig, IllegalMoveError, Position
from alphagomoku.game.constants import MAX_SIZE, MIN_SIZE
from alphagomoku.game.coords import to_xy

ABOUT_REPLY = (f'name="alphagomoku", version="{alphagomoku.__version__}", '
         'author="the alphagomoku developers", country="n/a"')

# Up to 6 digits: larger numbers are no coordinate of any board and only cost time to parse.
_NUM = r"\s*(-?\d{1,6})\s*"
_PAIR = re.compile(rf"^{_NUM},{_NUM}$")
_TRIPLE = re.compile(rf"^{_NUM},{_NUM},{_NUM}$")
_MS = re.compile(r"^\s*(-?\d{1,12})\s*$")

# INFO rule bits (the protocol's): 1 exactly five, 2 continuous game, 4 renju, 8 caro.
_RULE_EXACT, _RULE_RENJU, _RULE_CARO = 1, 4, 8


class ProtocolError(ValueError):
    """A command this engine cannot carry out; answered as ``ERROR <message>``."""


def _short(text: str, n: int = 40) -> str:
    return repr(text if len(text) <= n else text[:n] + "...")


def _xy(arg: str, what: str) -> tuple[int, int]:
    m = _PAIR.match(arg)
    if m is None:
        raise ProtocolError(f"{what} needs coordinates x,y, got {_short(arg)}")
    return int(m.group(1)), int(m.group(2))


def rule_from_bits(bits: int) -> str:
    """The rule an ``INFO rule`` bitmask asks for (continuous game, bit 2, is ignored)."""
    if bits < 0:
        raise ProtocolError(f"INFO rule must be a non-negative bitmask, got {bits}")
    if bits & _RULE_CARO:
        raise ProtocolError(f"INFO rule {bits}: caro (bit 8) is not supported")
    if bits & _RULE_RENJU:
        return "renju"
    return "standard" if bits & _RULE_EXACT else "freestyle"


class GomocupEngine:
    """The protocol state machine. ``make_player()`` returns ``(player, notes)``: the player and
    lines to show the manager as MESSAGEs (which model, or why none); ``write(line)`` sends one
    answer line (the caller flushes)."""

    def __init__(self, make_player: Callable[[], tuple[object, list[str]]],
                 write: Callable[[str], None], n_in_row: int = 5, seed: int = 0,
                 resident: Callable[[], int | None] = resident_bytes):
        self._make_player = make_player
        self._write = write
        self.n_in_row = n_in_row
        self.player = None
        self.game: GameConfig | None = None
        self.position: Position | None = None
        self.rule = "freestyle"
        self.clock = TimeControl()
        self.max_memory = 0  # bytes (INFO max_memory; 0: no limit)
        self._resident = resident
        self._held: int | None = None  # the process's memory once its player was ready
        self._announced: str | None = None  # the player last named in a MESSAGE
        self.running = True
        self._board: list[tuple[int, int, int]] | None = None  # inside BOARD ... DONE
        self._board_errors: list[str] = []
        self._rng = np.random.default_rng(seed)
        self._handlers = {
            "START": self._start, "RECTSTART": self._rectstart, "RESTART": self._restart,
            "BEGIN": self._begin, "TURN": self._turn, "BOARD": self._board_start,
            "DONE": self._done_alone, "INFO": self._info, "TAKEBACK": self._takeback,
            "END": self._end, "ABOUT": self._about,
        }

    # -- input ------------------------------------------------------------------------------------
    def send(self, text: str) -> None:
        self._write(" ".join(text.split("\n")))

    def run(self, read_line: Callable[[], str]) -> None:
        """Handle lines from ``read_line()`` (``""`` = end of input) until END or the end."""
        while self.running:
            line = read_line()
            if not line:
                break
            self.handle(line)

    def handle(self, raw: str) -> None:
        line = raw.strip()
        if not line:
            return  # the protocol's managers ignore empty lines; so do we
        try:
            if self._board is not None and self._board_line(line):
                return
            word, _, arg = line.partition(" ")
            handler = self._handlers.get(word.upper())
            if handler is None:
                self.send(f"UNKNOWN command {_short(word)}")
                return
            handler(arg.strip())
        except ProtocolError as e:
            self.send(f"ERROR {e}")
        except Exception as e:  # noqa: BLE001 - one bad line must never stop the engine
            self.send(f"ERROR internal error on {_short(line)}: {type(e).__name__}: {e}")

    # -- game set-up ------------------------------------------------------------------------------
    def _new_game(self, width: int, height: int) -> None:
        for name, v in (("width", width), ("height", height)):
            if not MIN_SIZE <= v <= MAX_SIZE:
                raise ProtocolError(f"unsupported board {name} {v}: this engine plays "
                                    f"{MIN_SIZE} to {MAX_SIZE}")
        try:
            game = GameConfig(width=width, height=height, n_in_row=self.n_in_row, rule=self.rule)
        except ValueError as e:
            raise ProtocolError(str(e)) from None
        if self.player is None:
            try:
                self.player, notes = self._make_player()
            except Exception as e:  # noqa: BLE001 - a bad weights file, a missing module, ...
                raise ProtocolError(f"cannot set up the player: {type(e).__name__}: {e}") from None
            for note in notes:
                self.send(f"MESSAGE {note}")
        self._reset_player(game)
        # Which player answers can change with the board (a network that plays one size hands
        # the others to another player): say so whenever it does.
        playing = getattr(self.player, "inner", self.player).name
        if playing != self._announced:
            self.send(f"MESSAGE player: {playing}")
            self._announced = playing
        if self._held is None:
            self._held = self._resident()  # the player built and warmed up, before any search
            if self.max_memory:
                self._limit_memory()
        self.game = game
        self.position = Position(game)
        self._board = None
        self.send("OK")

    def _reset_player(self, game: GameConfig) -> None:
        try:
            self.player.reset(game)
        except Exception as e:  # noqa: BLE001 - e.g. a network trained for another board size
            raise ProtocolError(f"{self.player.name} cannot play this game: {e}") from None

    def _start(self, arg: str) -> None:
        m = _MS.match(arg)
        if m is None:
            raise ProtocolError(f"START needs a board size, got {_short(arg)}")
        self._new_game(int(m.group(1)), int(m.group(1)))

    def _rectstart(self, arg: str) -> None:
        w, h = _xy(arg, "RECTSTART")
        self._new_game(w, h)

    def _need_game(self, command: str) -> Position:
        if self.position is None:
            raise ProtocolError(f"{command} before START: no board yet")
        return self.position

    def _restart(self, arg: str) -> None:
        self._need_game("RESTART")
        self._reset_player(self.game)
        self.position = Position(self.game)
        self.send("OK")

    def _end(self, arg: str) -> None:
        self.running = False
        if self.player is not None:
            close_player(self.player)

    def _about(self, arg: str) -> None:
        self.send(ABOUT_REPLY)

    # -- INFO -------------------------------------------------------------------------------------
    def _info(self, arg: str) -> None:
        key, _, value = arg.partition(" ")
        key = key.lower()
        if key in ("timeout_turn", "timeout_match", "time_left", "rule", "max_memory"):
            m = _MS.match(value)
            if m is None:
                raise ProtocolError(f"INFO {key} needs a whole number, got {_short(value)}")
            n = int(m.group(1))
            if key == "rule":
                self._set_rule(rule_from_bits(n))
            elif key == "time_left":
                self.clock.time_left_ms = max(0, n)  # a late manager clock can go below zero
            elif n < 0:
                raise ProtocolError(f"INFO {key} must not be negative, got {n}")
            elif key == "timeout_turn":
                self.clock.timeout_turn_ms = n
            elif key == "max_memory":
                self.max_memory = n
                if self.player is not None:
                    self._limit_memory()
            else:
                self.clock.timeout_match_ms = n
        # Other keys (game_type, max_node, thread_num, folder, evaluate, ...) do not change how
        # this engine plays: ignored, as the protocol allows.

    def _limit_memory(self) -> None:
        """Size the player's trees and cache to what ``max_memory`` leaves them, and say so."""
        if not self.max_memory:
            limit_memory(self.player, None)
            return
        spare = search_memory(self.max_memory, self._held)
        limit_memory(self.player, spare)
        limit = megabytes(self.max_memory)
        if self._held is None:
            self.send(f"MESSAGE max_memory {limit}: this system does not say how much memory "
                      f"the engine holds; its searches keep to {megabytes(spare)}")
        elif spare == 0:
            self.send(f"MESSAGE max_memory {limit} is below the {megabytes(self._held)} the "
                      f"engine holds before it searches (libraries and the network): it plays "
                      f"on over the limit, with small search trees and no cache")
        else:
            self.send(f"MESSAGE max_memory {limit}: {megabytes(self._held)} held before "
                      f"searching, {megabytes(spare)} for the search trees and cache")

    def _set_rule(self, rule: str) -> None:
        if rule == self.rule:
            return
        if self.game is None:
            self.rule = rule
            return
        try:
            game = dataclasses.replace(self.game, rule=rule)
            position = Position.from_moves(self.position.moves, game)
        except (ValueError, IllegalMoveError) as e:
            raise ProtocolError(f"cannot switch to {rule}: {e}; still playing {self.rule}") from None
        self._reset_player(game)
        self.rule, self.game, self.position = rule, game, position

    # -- moves ------------------------------------------------------------------------------------
    def _begin(self, arg: str) -> None:
        position = self._need_game("BEGIN")
        if position.moves:
            raise ProtocolError("BEGIN on a board with stones: send RESTART first")
        self._reply_move()

    def _turn(self, arg: str) -> None:
        position = self._need_game("TURN")
        x, y = _xy(arg, "TURN")
        try:
            position.play((x, y))
        except IllegalMoveError as e:
            raise ProtocolError(f"TURN {x},{y}: {e}") from None
        self._reply_move()

    def _takeback(self, arg: str) -> None:
        position = self._need_game("TAKEBACK")
        x, y = _xy(arg, "TAKEBACK")
        if not position.moves:
            raise ProtocolError("TAKEBACK on an empty board")
        lx, ly = to_xy(position.moves[-1], position.width, position.height)
        if (x, y) != (lx, ly):
            raise ProtocolError(f"TAKEBACK {x},{y}: only the last move ({lx},{ly}) can be taken back")
        position.undo()
        self.send("OK")

    def _board_start(self, arg: str) -> None:
        self._need_game("BOARD")
        self._board = []
        self._board_errors = []

    def _done_alone(self, arg: str) -> None:
        raise ProtocolError("DONE without BOARD")

    def _board_line(self, line: str) -> bool:
        """Take one line inside BOARD; False when it is another command (the board is dropped
        and the caller handles that command)."""
        m = _TRIPLE.match(line)
        if m is not None:
            self._board.append((int(m.group(1)), int(m.group(2)), int(m.group(3))))
            return True
        word = line.split(None, 1)[0].upper()
        if word == "DONE":
            stones, errors = self._board, self._board_errors
            self._board = None
            self._board_done(stones, errors)
            return True
        if word in self._handlers:
            self._board = None
            self.send(f"ERROR BOARD ended by {word} before DONE: the board is dropped")
            return False
        self._board_errors.append(f"bad BOARD line {_short(line)}: expected x,y,field")
        return True

    def _board_done(self, stones: list[tuple[int, int, int]], errors: list[str]) -> None:
        if errors:
            more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
            raise ProtocolError(errors[0] + more)
        own, opp = [], []
        for x, y, field in stones:
            if field == 3:
                raise ProtocolError(f"BOARD {x},{y},3: continuous games (field 3) are not supported")
            if field not in (1, 2):
                raise ProtocolError(f"BOARD {x},{y},{field}: field must be 1 (own) or 2 (opponent)")
            (own if field == 1 else opp).append((x, y))
        if len(own) == len(opp):
            me = BLACK
        elif len(opp) == len(own) + 1:
            me = WHITE
        else:
            raise ProtocolError(f"BOARD has {len(own)} own and {len(opp)} opponent stones: with "
                                "this engine to move it must have as many, or one fewer")
        blacks, whites = (own, opp) if me == BLACK else (opp, own)
        order = [s for pair in zip(blacks, whites) for s in pair] + blacks[len(whites):]
        position = Position(self.game)
        for x, y in order:
            try:
                position.play((x, y))
            except IllegalMoveError as e:
                raise ProtocolError(f"BOARD stone {x},{y}: {e}") from None
        self.position = position
        self._reply_move()

    def _reply_move(self) -> None:
        position = self.position
        if position.is_over:
            raise ProtocolError(f"the game is over ({position.win_reason}): no move to make")
        legal = position.legal_mask()
        if not legal.any():
            raise ProtocolError("no legal move is left for this engine")
        budget = self.clock.budget_s(int((position.board == 0).sum()))
        try:
            move = int(self.player.choose(position.copy(), budget))
            if not (0 <= move < legal.size and legal[move]):
                raise ValueError(f"it chose {move}, not a legal point")
            note = move_note(self.player)
            if note:
                self.send(f"MESSAGE {note}")
        except Exception as e:  # noqa: BLE001 - answer with some move rather than lose on time
            self.send(f"MESSAGE {self.player.name} failed ({type(e).__name__}: {e}); "
                      "playing a fallback move")
            fallback = tactical_move(position)
            move = int(fallback if fallback is not None else self._rng.choice(np.flatnonzero(legal)))
        position.play(move)
        x, y = to_xy(move, position.width, position.height)
        self.send(f"{x},{y}")
