"""The Gomocup engine as a real subprocess: whole games, tactics on BOARD positions, errors, fuzz.

Every answer is awaited with a timeout, so an engine that hangs fails the test instead of
stalling the suite. These use ``--player random``: the moves that matter here come from the
engine's own tactical check (win now, else block), and no search module is needed.
"""

from __future__ import annotations

import queue
import random
import re
import subprocess
import sys
import threading
import time

import pytest

from alphagomoku.game import GameConfig, Position


class EngineSession:
    """``python -m alphagomoku.engine ARGS``; ``ask(line)`` sends and returns the next answer
    that is not MESSAGE/DEBUG (those are kept in ``messages``), failing the test on a timeout."""

    def __init__(self, *args: str, timeout: float = 30.0):
        self.timeout = timeout
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "alphagomoku.engine", *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        self.lines: queue.Queue = queue.Queue()
        self.messages: list[str] = []
        self.answers: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()
        self.stderr: list[bytes] = []
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()

    def _pump(self) -> None:
        for raw in self.proc.stdout:
            self.lines.put(raw.decode("ascii").rstrip("\r\n"))
        self.lines.put(None)

    def send(self, *lines: str | bytes) -> None:
        data = b"".join((ln if isinstance(ln, bytes) else ln.encode()) + b"\n" for ln in lines)
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def next_answer(self, timeout: float | None = None) -> str:
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"the engine gave no answer within {timeout or self.timeout} s; "
                                     f"stderr: {b''.join(self.stderr)[-2000:]!r}")
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise AssertionError(f"the engine exited (status {self.proc.wait()}); "
                                     f"stderr: {b''.join(self.stderr)[-2000:]!r}")
            if line.startswith(("MESSAGE", "DEBUG")):
                self.messages.append(line)
                continue
            self.answers.append(line)
            return line

    def ask(self, *lines: str, timeout: float | None = None) -> str:
        self.send(*lines)
        return self.next_answer(timeout)

    def close(self) -> int:
        if self.proc.poll() is None:
            try:
                self.send("END")
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
        status = self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except OSError:
                pass
        return status

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# -- helpers -----------------------------------------------------------------------------------------
MOVE = re.compile(r"^(\d+),(\d+)$")


def parse_move(answer: str) -> tuple[int, int]:
    m = MOVE.match(answer)
    assert m is not None, f"expected a move 'x,y', got {answer!r}"
    return int(m.group(1)), int(m.group(2))


def board_command(stones):
    """BOARD lines for (x, y, field) stones."""
    return ["BOARD", *(f"{x},{y},{f}" for x, y, f in stones), "DONE"]


# -- conversations -----------------------------------------------------------------------------------
def test_about_and_start():
    with EngineSession("--player", "random") as eng:
        about = eng.ask("ABOUT")
        assert about.startswith('name="alphagomoku"') and "version=" in about
        assert eng.ask("START 9") == "OK"
        assert any("player: random" in m for m in eng.messages)
        eng.send("INFO max_memory 1048576")  # 1 MB: less than the engine holds already
        assert eng.ask("START 4").startswith("ERROR unsupported board width 4")
        assert any(m.startswith("MESSAGE max_memory 1 MB is below the ") for m in eng.messages)
        assert eng.ask("START 40").startswith("ERROR")
        assert eng.ask("RECTSTART 9,7") == "OK"
        x, y = parse_move(eng.ask("BEGIN"))
        assert 0 <= x < 9 and 0 <= y < 7


def test_whole_game_against_a_scripted_opponent():
    """The test plays white along a fixed order of points; the engine, black, must answer every
    TURN with a legal move until the game ends, keeping the same board as the test."""
    game = GameConfig(width=9)
    pos = Position(game)
    order = [(x, y) for y in range(9) for x in range(9)]
    with EngineSession("--player", "random", "--seed", "3") as eng:
        assert eng.ask("START 9") == "OK"
        eng.send("INFO timeout_turn 2000", "INFO timeout_match 0", "INFO rule 0")
        answer = eng.ask("BEGIN")
        while True:
            pos.play(parse_move(answer))  # raises if the engine's move is illegal here
            if pos.is_over:
                break
            mine = next(p for p in order if pos.board[pos.index(p)] == 0)
            pos.play(mine)
            if pos.is_over:
                break
            answer = eng.ask(f"TURN {mine[0]},{mine[1]}")
        assert pos.winner != -1
        assert len(pos.moves) >= 9
        # A fresh game after RESTART; the engine must be white now after our BEGIN-less TURN.
        assert eng.ask("RESTART") == "OK"
        x, y = parse_move(eng.ask("TURN 4,4"))
        assert (x, y) != (4, 4)


def test_takeback_then_the_point_is_free_again():
    with EngineSession("--player", "random") as eng:
        eng.ask("START 9")
        x, y = parse_move(eng.ask("TURN 4,4"))
        assert eng.ask(f"TAKEBACK {x},{y}") == "OK"
        assert eng.ask("TAKEBACK 4,4") == "OK"
        assert eng.ask("TAKEBACK 4,4").startswith("ERROR")  # the board is empty now
        parse_move(eng.ask("BEGIN"))  # the engine opens on the empty board


@pytest.mark.parametrize(
    "stones, expected",
    [
        # Own four in column 2 (rows 2..5), opponent scattered: the engine completes five.
        ([(2, 2, 1), (7, 7, 2), (2, 3, 1), (7, 6, 2), (2, 4, 1), (6, 7, 2), (2, 5, 1), (0, 8, 2)],
         {(2, 1), (2, 6)}),
        # The opponent has four on the top row (x 1..4) with x=0 taken: the engine blocks at 5,0.
        ([(0, 0, 1), (1, 0, 2), (8, 8, 1), (2, 0, 2), (8, 6, 1), (3, 0, 2), (6, 8, 1), (4, 0, 2)],
         {(5, 0)}),
        # Engine is white (the opponent has one more stone) and must block a diagonal four.
        ([(0, 0, 2), (8, 0, 1), (1, 1, 2), (8, 2, 1), (2, 2, 2), (0, 8, 1), (3, 3, 2)],
         {(4, 4)}),
    ],
)
def test_board_with_a_win_or_a_forced_block(stones, expected):
    with EngineSession("--player", "random") as eng:
        eng.ask("START 9")
        assert parse_move(eng.ask(*board_command(stones))) in expected


def test_the_win_comes_before_the_block():
    # Both sides have four; the engine (to move) must win rather than block.
    stones = [(0, 1, 1), (0, 7, 2), (1, 1, 1), (1, 7, 2), (2, 1, 1), (2, 7, 2), (3, 1, 1), (3, 7, 2)]
    with EngineSession("--player", "random") as eng:
        eng.ask("START 9")
        assert parse_move(eng.ask(*board_command(stones))) == (4, 1)


MALFORMED = [
    (["HELLO"], "UNKNOWN command 'HELLO'"),
    (["TURN 4"], "ERROR TURN needs coordinates"),
    (["TURN 9,9"], "ERROR TURN 9,9: point (9, 9) is off the 9x9 board"),
    (["TURN 1,1", "TURN 1,1"], "ERROR TURN 1,1: b8 is occupied"),
    (["INFO timeout_turn soon"], "ERROR INFO timeout_turn needs a whole number"),
    (["INFO rule 8"], "ERROR INFO rule 8: caro"),
    (["DONE"], "ERROR DONE without BOARD"),
    (["BOARD", "1,1,1", "1,1,2", "DONE"], "ERROR BOARD stone 1,1"),
    (["BOARD", "1,1,3", "DONE"], "ERROR BOARD 1,1,3: continuous"),
    (["BOARD", "1,1,1", "2,2,1", "DONE"], "ERROR BOARD has 2 own and 0 opponent"),
    (["BOARD", "what", "DONE"], "ERROR bad BOARD line"),
    (["BOARD", "1,1,1", "ABOUT"], "ERROR BOARD ended by ABOUT"),  # then ABOUT's own answer
]


def test_malformed_and_illegal_commands_are_answered():
    with EngineSession("--player", "random") as eng:
        for lines, prefix in MALFORMED:
            assert eng.ask("START 9") == "OK"
            eng.send(*lines)
            answer = eng.next_answer()
            while MOVE.match(answer):  # the replies to the legal moves before the bad one
                answer = eng.next_answer()
            assert answer.startswith(prefix), (lines, answer)
        assert eng.next_answer().startswith("name=")  # the interrupting command is still served
        assert eng.ask("ABOUT").startswith("name=")  # and it goes on


def test_commands_before_start_are_errors():
    with EngineSession("--player", "random") as eng:
        for line in ("BEGIN", "TURN 1,1", "RESTART", "BOARD", "TAKEBACK 1,1"):
            assert eng.ask(line).startswith(f"ERROR {line.split()[0]} before START"), line


def test_command_line_errors():
    def run(*args):
        return subprocess.run([sys.executable, "-m", "alphagomoku.engine", *args],
                              input="", capture_output=True, text=True, timeout=60)

    r = run("--checkpoint", "/no/such/model.pt")
    assert r.returncode == 2 and "no file at /no/such/model.pt" in r.stderr
    r = run("--player", "bogus:3")
    assert r.returncode == 2 and "unknown player spec" in r.stderr
    r = run("--player", "random", "--checkpoint", "x.pt")
    assert r.returncode == 2 and "not allowed with" in r.stderr
    r = run("--player", "random")  # end of input at once: a clean exit
    assert r.returncode == 0 and r.stdout == ""
    r = run("--eval-cache", "-1")
    assert r.returncode == 2 and "--eval-cache must be 0 (none) or more, got -1" in r.stderr
    r = run("--search", "cpuct=2")
    assert r.returncode == 2 and "no setting named 'cpuct'" in r.stderr and "c_puct" in r.stderr
    r = run("--player", "pure:100", "--search", "c_puct=2")
    assert r.returncode == 2 and "for network players, not 'pure:100'" in r.stderr


def test_search_flag_sets_the_network_players_search_and_says_so():
    from alphagomoku.engine.__main__ import build_parser, player_factory

    args = build_parser().parse_args(["--search", "c_puct=0.8", "--search", "fpu_reduction=0.1"])
    player, notes = player_factory(args)()
    network = player.inner.primary  # the solvers around the shipped network and its fall-back
    assert (network.search_config.c_puct, network.search_config.fpu_reduction) == (0.8, 0.1)
    assert network.search_config.vct_leaf_budget > 0  # the solvers' own settings kept beside them
    assert "search settings: c_puct=0.8 fpu_reduction=0.1" in notes


@pytest.mark.parametrize("flags, size", [([], None), (["--eval-cache", "0"], 0),
                                         (["--eval-cache", "1000"], 1000)])
def test_eval_cache_flag_sizes_the_network_players_cache(flags, size):
    from alphagomoku.engine.__main__ import build_parser, player_factory
    from alphagomoku.eval.players import PLAYER_EVAL_CACHE

    player, _ = player_factory(build_parser().parse_args(["--no-tactics", *flags]))()
    expected = PLAYER_EVAL_CACHE if size is None else size
    assert player.primary.eval_cache == expected
    assert not hasattr(player.fallback, "eval_cache")  # beyond the network's boards: pure MCTS
    assert f"default {PLAYER_EVAL_CACHE}" in " ".join(build_parser().format_help().split())


# -- fuzz --------------------------------------------------------------------------------------------
_WORDS = ["START", "RECTSTART", "BEGIN", "TURN", "BOARD", "DONE", "INFO", "RESTART", "TAKEBACK",
          "PLAY", "SWAP2BOARD", "start", "Turn", "board", "GO", "\u00e9t\u00e9", "\u2603"]
_INFO_KEYS = ["timeout_turn", "timeout_match", "time_left", "max_memory", "rule", "game_type",
              "max_node", "thread_num", "folder", "evaluate", "no_such_key", ""]


def _fuzz_value(rng: random.Random) -> str:
    kind = rng.randrange(10)
    if kind == 0:
        return str(rng.randint(-5, 25))
    if kind == 1:
        return f"{rng.randint(-3, 24)},{rng.randint(-3, 24)}"
    if kind == 2:
        return "9" * rng.choice([7, 30, 5000])
    if kind == 3:
        return f"{rng.randint(0, 10)},{rng.randint(0, 10)},{rng.randint(-1, 4)}"
    if kind == 4:
        return rng.choice(["a,b", "1.5,2", " 3 , 4 ", ",", "1,", "-0,-0", "1,2,3,4", "0x10"])
    if kind == 5:
        return "".join(chr(rng.randrange(0x20, 0x3000)) for _ in range(rng.randrange(1, 12)))
    if kind == 6:
        return "\t".join(rng.choice(["x", "1", ",", " "]) for _ in range(5))
    return str(rng.randint(5, 22))


def _fuzz_lines(rng: random.Random, n: int) -> list[bytes]:
    lines: list[bytes] = []
    while len(lines) < n:
        kind = rng.randrange(12)
        if kind < 6:
            word = rng.choice(_WORDS)
            line = word + (" " + _fuzz_value(rng) if rng.random() < 0.8 else "")
        elif kind == 6:
            line = f"INFO {rng.choice(_INFO_KEYS)} {_fuzz_value(rng)}"
        elif kind == 7:
            line = f"{rng.randint(-2, 12)},{rng.randint(-2, 12)},{rng.randint(0, 3)}"  # stray board line
        elif kind == 8:
            line = rng.choice(["", "   ", "\r", "START 9", "START 15", "BEGIN", "TURN 7,7"])
        elif kind == 9:
            lines.append(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40))).replace(b"\n", b""))
            continue
        elif kind == 10:
            line = "TURN " + rng.choice(["7,7", "0,0", "8,8"])  # often occupied
        else:
            line = rng.choice(["X" * 200_000, "\x00\x01\x02", "TURN \x00,\x00", "INFO rule 99999999999"])
        lines.append(line.encode("utf-8", errors="surrogatepass"))
    return lines


_ANSWER = re.compile(r"^(OK|\d+,\d+|ERROR .+|UNKNOWN .+|name=.+)$")


def test_fuzz_neither_crashes_nor_stalls():
    rng = random.Random(20240611)
    lines = _fuzz_lines(rng, 3000)
    assert not any(ln.strip().upper().startswith((b"END", b"ABOUT")) for ln in lines)
    t0 = time.monotonic()
    with EngineSession("--player", "random") as eng:
        assert eng.ask("START 9") == "OK"
        # Sent in bulk (a writer thread, so a full output pipe cannot block us while we read).
        writer = threading.Thread(target=eng.send, args=(*lines, "ABOUT"), daemon=True)
        writer.start()
        deadline = time.monotonic() + 20
        while True:
            answer = eng.next_answer(timeout=max(0.1, deadline - time.monotonic()))
            if answer.startswith("name="):
                break
        writer.join(timeout=5)
        assert eng.proc.poll() is None, "the engine died"
        assert eng.ask("ABOUT").startswith('name="alphagomoku"')
        bad = [a for a in eng.answers if not _ANSWER.match(a)]
        assert not bad, bad[:5]
        internal = [a for a in eng.answers if "internal error" in a]
        assert not internal, internal[:5]
        # The engine really played along (moves were asked for and given).
        assert sum(bool(MOVE.match(a)) for a in eng.answers) > 50
        assert eng.close() == 0
    assert time.monotonic() - t0 < 30
