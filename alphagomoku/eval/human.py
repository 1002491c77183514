"""A person against a player in the terminal: the game loop behind ``scripts/play.py``.

It reads commands from any text stream and writes to another, so the tests drive it with
StringIO. Moves are ``h8`` (column letter, row counted from the bottom) or ``x,y`` (0-based column
and row from the top left, as in the Gomocup protocol). Commands: ``undo`` (your last move and
the reply to it), ``hint`` (what the engine would play for you), ``quit``, ``help``. A bad input
is explained and asked again; the end of input ends the game as if by ``quit``.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from alphagomoku.game import BLACK, DRAW, WHITE, GameConfig, IllegalMoveError, Position
from alphagomoku.records import GameRecord

_COLOUR = {BLACK: "black (X)", WHITE: "white (O)"}

HELP = """\
Enter a move as h8 (column letter, row number from the bottom) or x,y (0-based column and row
from the top left). Commands: undo (take back your last move and the reply), hint (the engine's
suggestion for you), quit, help."""


class HumanGame:
    """One game of a person (``human`` colour) against ``opponent``, over ``inp``/``out``."""

    def __init__(self, opponent, game: GameConfig, human: int = BLACK, inp: TextIO | None = None,
                 out: TextIO | None = None, time_per_move: float | None = None):
        if human not in (BLACK, WHITE):
            raise ValueError(f"human must be BLACK or WHITE, got {human!r}")
        self.opponent = opponent
        self.game = game
        self.human = human
        self.inp = inp if inp is not None else sys.stdin
        self.out = out if out is not None else sys.stdout
        self.time_per_move = time_per_move
        self.other = WHITE if human == BLACK else BLACK
        self.position = Position(game)
        self.times: list[int] = []

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def _ask(self, prompt: str) -> str | None:
        self.out.write(prompt)
        self.out.flush()
        line = self.inp.readline()
        if not line:
            self.say()
            return None
        return line.strip()

    def _engine_move(self) -> None:
        self.say(f"{self.opponent.name} is thinking...")
        t0 = time.perf_counter()
        move = self.opponent.choose(self.position.copy(), self.time_per_move)
        self.times.append(int(round((time.perf_counter() - t0) * 1000)))
        self.position.play(move)
        self.say(f"{self.opponent.name} plays {self.position.name(move)}")

    def _undo(self) -> None:
        mine = [k for k in range(len(self.position.moves)) if (k % 2 == 0) == (self.human == BLACK)]
        if not mine:
            self.say("nothing to undo: you have not moved yet")
            return
        taken = len(self.position.moves) - mine[-1]
        for _ in range(taken):
            self.position.undo()
            self.times.pop()
        self.say("took back your last move" + (" and the reply to it" if taken > 1 else ""))

    def run(self) -> GameRecord:
        """Play until the game ends or the person quits; returns the game's record."""
        self.opponent.reset(self.game)
        name = self.opponent.name
        self.say(f"You play {_COLOUR[self.human]}; {name} plays {_COLOUR[self.other]}. "
                 f"{self.game.n_in_row} in a row wins ({self.game.rule}).")
        self.say("Type help for the commands.")
        quit_reason = ""
        while not self.position.is_over:
            if self.position.to_move != self.human:
                self._engine_move()
                continue
            self.say()
            self.say(str(self.position))
            line = self._ask(f"your move ({_COLOUR[self.human]}) > ")
            if line is None or line.lower() in ("quit", "exit", "q"):
                quit_reason = "you quit"
                break
            command = line.lower()
            if not command:
                continue
            if command in ("help", "?"):
                self.say(HELP)
            elif command == "undo":
                self._undo()
            elif command == "hint":
                move = self.opponent.choose(self.position.copy(), self.time_per_move)
                self.say(f"hint: {self.position.name(move)}")
            else:
                try:
                    move = self.position.check_move(line)
                except IllegalMoveError as e:
                    self.say(f"not a move: {e}. Type help for the commands.")
                    continue
                self.position.play(move)
                self.times.append(0)
        self.say()
        self.say(str(self.position))
        self.say(self._verdict(quit_reason))
        names = {self.human: "you", self.other: name}
        return GameRecord.from_position(
            self.position, times_ms=self.times, black=names[BLACK], white=names[WHITE],
            reason=quit_reason or None,
        )

    def _verdict(self, quit_reason: str) -> str:
        p = self.position
        if quit_reason:
            return f"Game over: {quit_reason} after {len(p.moves)} moves."
        if p.winner == DRAW:
            return f"Game over: a draw ({p.win_reason})."
        who = "You win" if p.winner == self.human else f"{self.opponent.name} wins"
        return f"Game over: {who}, {_COLOUR[p.winner]} {p.win_reason}."
