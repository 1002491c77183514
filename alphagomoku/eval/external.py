"""A Gomocup ("pbrain") engine run as a subprocess and played through the protocol.

Each move sends the whole position with ``BOARD`` (or ``BEGIN`` on an empty board), so the
engine never has to track the game itself and an arena's openings need nothing special. Every
answer is awaited with a timeout; an engine that answers ``ERROR``, says something that is not a
legal move, goes quiet or exits raises :class:`ExternalEngineError` with what it said last.
"""

from __future__ import annotations

import collections
import queue
import re
import shlex
import subprocess
import threading
import time
from typing import Sequence

from alphagomoku.game import BLACK, WHITE, GameConfig, IllegalMoveError, Position
from alphagomoku.game.coords import to_xy

_MOVE = re.compile(r"^\s*(\d+)\s*,\s*(\d+)\s*$")
_GOMOCUP_RULE = {"freestyle": 0, "standard": 1, "renju": 4}


class ExternalEngineError(RuntimeError):
    """The engine broke the protocol, timed out or died; the message says which and how."""


class ExternalEnginePlayer:
    """Plays by asking the engine started with ``command`` (a string split like a shell would,
    or an argument list). Given a move time, the engine is told it (``INFO timeout_turn``) and
    must answer within it plus ``grace_s``; without one, it is told ``timeout_s - grace_s`` and
    must answer within ``timeout_s``. ``start_timeout_s`` bounds the answer to START, which may
    load a model."""

    def __init__(self, command: str | Sequence[str], timeout_s: float = 30.0, grace_s: float = 5.0,
                 start_timeout_s: float = 60.0, name: str | None = None):
        args = shlex.split(command) if isinstance(command, str) else list(command)
        if not args:
            raise ValueError("the engine command is empty")
        self.args = args
        self.timeout_s = timeout_s
        self.grace_s = grace_s
        self.start_timeout_s = start_timeout_s
        self.name = name or f"engine:{' '.join(args)}"
        self._proc: subprocess.Popen | None = None
        self._lines: queue.Queue = queue.Queue()
        self._stderr: collections.deque = collections.deque(maxlen=20)
        self._said: collections.deque = collections.deque(maxlen=5)  # its MESSAGE/DEBUG lines
        self._stderr_thread: threading.Thread | None = None
        self.game: GameConfig | None = None

    # -- process ----------------------------------------------------------------------------------
    def _start(self) -> None:
        try:
            self._proc = subprocess.Popen(
                self.args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True, encoding="utf-8", errors="replace", bufsize=1,
            )
        except OSError as e:
            raise ExternalEngineError(f"cannot start engine {self.args[0]!r}: {e}") from e
        self._lines = queue.Queue()
        threading.Thread(target=self._pump, args=(self._proc.stdout, self._lines), daemon=True).start()
        self._stderr_thread = threading.Thread(target=self._drain, args=(self._proc.stderr,), daemon=True)
        self._stderr_thread.start()

    @staticmethod
    def _pump(stream, lines: queue.Queue) -> None:
        try:
            for line in stream:
                lines.put(line.rstrip("\r\n"))
        except (OSError, ValueError):
            pass  # the pipe was closed under us by close()
        lines.put(None)  # end of output: the engine exited or closed stdout

    def _drain(self, stream) -> None:
        try:
            for line in stream:
                self._stderr.append(line.rstrip())
        except (OSError, ValueError):
            pass

    def _describe_failure(self) -> str:
        parts = []
        if self._proc is not None and self._proc.poll() is not None and self._stderr_thread:
            self._stderr_thread.join(timeout=1.0)  # its last words, if it died
        if self._proc is not None and self._proc.poll() is not None:
            parts.append(f"exit status {self._proc.returncode}")
        if self._said:
            parts.append("it last said: " + " | ".join(self._said))
        if self._stderr:
            parts.append("its stderr ends with:\n  " + "\n  ".join(self._stderr))
        return "; ".join(parts)

    def _fail(self, what: str) -> ExternalEngineError:
        detail = self._describe_failure()
        self.close(force=True)
        return ExternalEngineError(f"engine {self.name!r} {what}" + (f" ({detail})" if detail else ""))

    def _send(self, *lines: str) -> None:
        if self._proc is None or self._proc.poll() is not None:
            raise self._fail("is not running")
        try:
            for line in lines:
                self._proc.stdin.write(line + "\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._fail("closed its input") from None

    def _answer(self, command: str, timeout: float) -> str:
        """The engine's next real answer (MESSAGE and DEBUG lines are set aside)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise self._fail(f"gave no answer to {command} within {timeout:.1f} s")
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                try:
                    self._proc.wait(timeout=2.0)  # for the exit status in the message
                except subprocess.TimeoutExpired:
                    pass
                raise self._fail(f"exited instead of answering {command}")
            text = line.strip()
            word = text.split(" ", 1)[0].upper()
            if not text:
                continue
            if word in ("MESSAGE", "DEBUG"):
                self._said.append(text[:200])
                continue
            if word in ("ERROR", "UNKNOWN"):
                raise self._fail(f"answered {command} with {text[:200]!r}")
            return text

    # -- player interface -------------------------------------------------------------------------
    def reset(self, game: GameConfig) -> None:
        if game.n_in_row != 5:
            raise ValueError(f"a Gomocup engine plays five in a row, not {game.n_in_row}")
        if self._proc is None or self._proc.poll() is not None:
            self._start()
        self.game = game
        if game.square:
            command = f"START {game.width}"
        else:
            command = f"RECTSTART {game.width},{game.height}"
        self._send(command)
        answer = self._answer(command, self.start_timeout_s)
        if answer.split()[0].upper() != "OK":
            raise self._fail(f"answered {command} with {answer[:200]!r}, not OK")
        self._send(f"INFO rule {_GOMOCUP_RULE[game.rule]}", "INFO timeout_match 0")

    def choose(self, position: Position, time_left_s: float | None = None) -> int:
        if self.game is None or self._proc is None:
            raise ExternalEngineError(f"engine {self.name!r} was not reset for a game")
        if position.is_over:
            raise ValueError("the game is over: nothing to choose")
        # The engine is told its move time, so that it answers before we give up on it.
        if time_left_s is None:
            think, wait = max(1.0, self.timeout_s - self.grace_s), self.timeout_s
        else:
            think, wait = time_left_s, time_left_s + self.grace_s
        self._send(f"INFO timeout_turn {max(1, int(think * 1000))}")
        w, h = position.width, position.height
        if not position.moves:
            command = "BEGIN"
            self._send(command)
        else:
            command = "BOARD"
            mine = position.to_move
            lines = ["BOARD"]
            for k, move in enumerate(position.moves):
                colour = BLACK if k % 2 == 0 else WHITE
                x, y = to_xy(move, w, h)
                lines.append(f"{x},{y},{1 if colour == mine else 2}")
            lines.append("DONE")
            self._send(*lines)
        answer = self._answer(command, wait)
        m = _MOVE.match(answer)
        if m is None:
            raise self._fail(f"answered {command} with {answer[:200]!r}, not a move 'x,y'")
        try:
            return position.check_move((int(m.group(1)), int(m.group(2))))
        except IllegalMoveError as e:
            raise self._fail(f"played an illegal move {answer!r}: {e}") from None

    def close(self, force: bool = False) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if not force and proc.poll() is None:
            try:
                proc.stdin.write("END\n")
                proc.stdin.flush()
                proc.wait(timeout=3)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            try:
                stream.close()
            except OSError:
                pass

    def __del__(self):
        try:
            self.close(force=True)
        except Exception:  # noqa: BLE001 - never raise from a finalizer
            pass
