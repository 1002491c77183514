"""A person at the terminal (HumanGame over StringIO), and the play/evaluate scripts end to end."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from alphagomoku.eval.human import HumanGame
from alphagomoku.game import BLACK, NO_RESULT, WHITE, GameConfig
from alphagomoku.records import read_psq

ROOT = Path(__file__).resolve().parents[1]
GAME9 = GameConfig(width=9)


class Scripted:
    """Plays its list of moves in order, skipping occupied points; counts the calls."""

    name = "scripted"

    def __init__(self, moves):
        self.moves = list(moves)
        self.calls = 0

    def reset(self, game):
        self.calls = 0

    def choose(self, position, time_left_s=None):
        self.calls += 1
        for m in self.moves:
            idx = position.index(m)
            if position.board[idx] == 0:
                return idx
        return int(position.legal_moves()[0])


def play(lines, opponent_moves=("a1", "b1", "c1", "d1", "f1", "g1"), human=BLACK):
    out = io.StringIO()
    opponent = Scripted(opponent_moves)
    game = HumanGame(opponent, GAME9, human=human, inp=io.StringIO("".join(l + "\n" for l in lines)),
                     out=out, time_per_move=0.1)
    record = game.run()
    return record, out.getvalue(), opponent


def test_the_person_wins_with_five():
    record, text, _ = play(["e5", "e6", "e7", "e8", "e9"])
    assert record.winner == BLACK and record.black == "you" and record.white == "scripted"
    assert "Game over: You win, black (X) with 5 in a row." in text
    assert "scripted plays a1" in text
    assert "    a b c d e f g h i" in text  # the board is drawn with coordinates


def test_moves_in_gomocup_coordinates_too():
    record, _, _ = play(["4,4", "4,3", "4,2", "4,1", "4,0"])
    assert record.winner == BLACK
    assert record.moves[0] == 4 * 9 + 4


def test_bad_input_is_explained_and_asked_again():
    record, text, _ = play(["z99", "e5", "a1", "e5", "", "hello", "e6", "e7", "e8", "e9"])
    assert "not a move: 'z99' is off the 9x9 board" in text
    assert "not a move: a1 is occupied by white" in text
    assert "not a move: e5 is occupied by black" in text
    assert "not a move: 'hello' is not a point name" in text
    assert record.winner == BLACK and len(record.moves) == 9


def test_undo_takes_back_the_move_and_the_reply():
    record, text, opponent = play(["e5", "undo", "d4", "undo", "undo", "quit"])
    assert text.count("took back your last move and the reply to it") == 2
    assert "nothing to undo" in text
    assert record.moves == [] and record.winner == NO_RESULT and record.reason == "you quit"


def test_hint_asks_the_engine_without_playing():
    record, text, opponent = play(["hint", "quit"], opponent_moves=("c3",))
    assert "hint: c3" in text
    assert record.moves == [] and opponent.calls == 1


def test_end_of_input_exits_cleanly():
    record, text, _ = play(["e5"])
    assert record.winner == NO_RESULT and record.reason == "you quit"
    assert "Game over: you quit after 2 moves." in text


def test_the_engine_opens_when_the_person_is_white():
    record, text, _ = play(["e5", "quit"], opponent_moves=("a9", "b9"), human=WHITE)
    assert record.black == "scripted" and record.white == "you"
    assert record.moves[:2] == [0, 4 * 9 + 4]
    assert text.index("scripted plays a9") < text.index("your move (white (O))")


def test_the_engine_wins():
    record, text, _ = play(["i9", "i8", "i7", "i6", "h9"], opponent_moves=("a1", "b1", "c1", "d1", "e1"))
    assert record.winner == WHITE
    assert "Game over: scripted wins, white (O) with 5 in a row." in text


# -- scripts -----------------------------------------------------------------------------------------
def run_script(name, *args, stdin="", timeout=120):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / name), *args], input=stdin,
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def test_play_script_against_a_spec(tmp_path):
    save = tmp_path / "game.psq"
    r = run_script("play.py", "--opponent", "random", "--board-size", "9", "--seed", "1",
                   "--save", str(save), stdin="e5\nundo\ne5\nquit\n")
    assert r.returncode == 0, r.stderr
    assert "You play black (X); random plays white (O)" in r.stdout
    assert "took back your last move" in r.stdout
    assert len(read_psq(save).moves) == 2


def test_play_script_plays_the_shipped_network_on_any_board_and_rule(tmp_path):
    """Without --checkpoint or --opponent, the engine's network: 20x20 renju as well as 15x15."""
    save = tmp_path / "game.psq"
    r = run_script("play.py", "--board-size", "20", "--rule", "renju", "--simulations", "16",
                   "--seed", "1", "--save", str(save), stdin="k10\nquit\n")
    assert r.returncode == 0, r.stderr
    assert "assets/default." in r.stdout  # the ONNX file where onnxruntime runs, else .pt
    assert ":16 plays white (O). 5 in a row wins (renju)" in r.stdout
    assert len(read_psq(save).moves) == 2  # the person's move and the network's reply


def test_play_script_rejects_bad_arguments():
    r = run_script("play.py", "--opponent", "magic:3")
    assert r.returncode == 2 and "unknown player spec 'magic:3'" in r.stderr
    r = run_script("play.py", "--checkpoint", "/nope.pt")
    assert r.returncode == 2 and "no model file at /nope.pt" in r.stderr
    r = run_script("play.py", "--opponent", "random", "--board-size", "30")
    assert r.returncode == 2 and "board width must be" in r.stderr


def test_evaluate_script_plays_balanced_openings(tmp_path):
    from alphagomoku.eval.specs import CPU_HOUR_MODEL, DEFAULT_MODEL

    r = run_script("evaluate.py", "--player-a", "random", "--player-b", "random", "--games", "2",
                   "--workers", "0", "--balanced-openings", str(DEFAULT_MODEL), "--out",
                   str(tmp_path), "--json", "--no-progress")
    assert r.returncode == 0, r.stderr
    stones = {int(line.split(":")[1]) for f in tmp_path.glob("game_*.txt")
              for line in f.read_text().splitlines() if line.startswith("opening:")}
    assert len(stones) == 1 and 2 <= stones.pop() <= 6  # one opening, played with each colour
    r = run_script("evaluate.py", "--player-a", "random", "--player-b", "random", "--games", "2",
                   "--board-size", "9", "--workers", "0", "--balanced-openings", str(CPU_HOUR_MODEL))
    assert r.returncode == 1 and "plays 15x15 boards, not 9x9" in r.stderr


def test_evaluate_script_json_and_records(tmp_path):
    r = run_script("evaluate.py", "--player-a", "random", "--player-b", "random", "--games", "4",
                   "--board-size", "9", "--workers", "0", "--out", str(tmp_path), "--json",
                   "--no-progress")
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["games"] == 4 and result["wins"] + result["draws"] + result["losses"] == 4
    assert set(result["elo"]) >= {"elo", "lower", "upper", "score", "stderr"}
    for colour in ("a_as_black", "a_as_white"):  # two games each, with a score of their own
        c = result[colour]
        assert c["wins"] + c["draws"] + c["losses"] == 2
        assert c["score"] == (c["wins"] + 0.5 * c["draws"]) / 2
    assert len(list(tmp_path.glob("game_*.psq"))) == 4
    assert json.loads((tmp_path / "summary.json").read_text()) == result


def _openings(folder):
    from alphagomoku.records import read_saved_games

    return [tuple(r.moves[:r.opening]) for _, r in read_saved_games(folder)]


def test_evaluate_script_plays_the_openings_of_saved_games_again(tmp_path):
    first, again = tmp_path / "first", tmp_path / "again"
    common = ["--player-a", "random", "--player-b", "random", "--board-size", "9",
              "--workers", "0", "--no-progress", "--json"]
    r = run_script("evaluate.py", *common, "--games", "6", "--seed", "3", "--out", str(first))
    assert r.returncode == 0, r.stderr
    r = run_script("evaluate.py", *common, "--seed", "4", "--openings-from", str(first),
                   "--out", str(again))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["games"] == 6  # two games for each of the 3 openings there
    assert _openings(again) == _openings(first)
    assert _openings(first)[0::2] == _openings(first)[1::2]  # each played with both colours

    r = run_script("evaluate.py", *common, "--games", "8", "--openings-from", str(first))
    assert r.returncode == 1 and "holds 3 distinct openings, enough for 6 games" in r.stderr
    r = run_script("evaluate.py", "--player-a", "random", "--player-b", "random", "--workers",
                   "0", "--openings-from", str(first))
    assert r.returncode == 1 and "a game on 9x9, 5 in a row, freestyle, but this match plays " \
        "15x15" in r.stderr
    r = run_script("evaluate.py", *common, "--openings-from", str(tmp_path))
    assert r.returncode == 1 and "no game_*.txt records here" in r.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["--player-a", "random", "--player-b", "pure"], "--player-b: player spec 'pure' needs a count"),
        (["--player-a", "random", "--player-b", "random", "--games", "3"], "--games must be an even"),
        (["--player-a", "random", "--player-b", "random", "--n-in-row", "12", "--board-size", "9"],
         "n_in_row=12 cannot fit"),
        (["--player-a", "random", "--player-b", "random", "--rule", "caro"], "invalid choice: 'caro'"),
        (["--player-a", "net:/no/model.pt", "--player-b", "random"], "no model file at /no/model.pt"),
        (["--player-a", "random", "--player-b", "random", "--balanced-openings", "/no/model.pt"],
         "--balanced-openings: no model file at /no/model.pt"),
        (["--player-a", "random", "--player-b", "random", "--openings-from", "/no/dir"],
         "--openings-from: no folder at /no/dir"),
        (["--player-a", "random", "--player-b", "random", "--openings-from", "/tmp",
          "--balanced-openings", "/tmp/m.pt"], "both choose the openings: give one"),
    ],
)
def test_evaluate_script_validates(args, message):
    r = run_script("evaluate.py", *args)
    assert r.returncode == 2 and message in r.stderr, r.stderr


def test_evaluate_script_refuses_a_damaged_or_misfit_network_before_any_game(tmp_path):
    from alphagomoku.nn.config import ModelConfig
    from alphagomoku.nn.io import save_model
    from alphagomoku.nn.model import PolicyValueNet

    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"\x00\x01 this is not a torch file" * 10)
    nine = save_model(tmp_path / "nine.pt", PolicyValueNet(ModelConfig.preset("tiny", 9)))
    for spec, message in ((f"vct:net:{garbage}", "is not a readable model file"),
                          (f"net:{nine}", "the network plays 9x9 boards; this game is 15x15")):
        r = run_script("evaluate.py", "--player-a", spec, "--player-b", "random", "--games", "2")
        assert r.returncode == 2 and message in r.stderr, r.stderr
        # One usage line, not a traceback from each game, nor torch's advice to load unsafely.
        assert "Traceback" not in r.stderr and "weights_only" not in r.stderr
