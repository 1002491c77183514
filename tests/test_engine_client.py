"""ExternalEnginePlayer: playing a real Gomocup engine subprocess, and clear errors when an
engine misbehaves (wrong answers, illegal moves, silence, death)."""

from __future__ import annotations

import shlex
import sys
import textwrap
import time

import pytest

from alphagomoku.eval.arena import run_arena
from alphagomoku.eval.external import ExternalEngineError, ExternalEnginePlayer
from alphagomoku.game import GameConfig, Position

GAME9 = GameConfig(width=9)
OUR_ENGINE = [sys.executable, "-m", "alphagomoku.engine", "--player", "random"]


def fake_engine(on_begin: str, on_start: str = "print('OK', flush=True)") -> list[str]:
    """A stand-in engine: ``on_start`` / ``on_begin`` are Python statements run for those
    commands."""
    code = textwrap.dedent(f"""
        import sys, time
        for line in sys.stdin:
            word = line.split()[0] if line.split() else ''
            if word in ('START', 'RECTSTART'):
                {on_start}
            elif word in ('BEGIN', 'DONE'):
                {on_begin}
            elif word == 'END':
                break
    """)
    return [sys.executable, "-c", code]


def test_plays_our_engine_through_the_protocol():
    player = ExternalEnginePlayer(OUR_ENGINE, timeout_s=30)
    try:
        player.reset(GAME9)
        pos = Position(GAME9)
        pos.play(player.choose(pos))  # BEGIN
        pos.play(int(pos.legal_moves()[0]))
        pos.play(player.choose(pos, time_left_s=1.0))  # BOARD with the whole game
        assert len(pos.moves) == 3 and pos.board[pos.moves[2]] != 0
        # A second game with the same process: START again.
        player.reset(GameConfig(width=9, height=7))
        move = player.choose(Position(GameConfig(width=9, height=7)))
        assert 0 <= move < 63
    finally:
        player.close()
    assert player._proc is None


def test_arena_against_an_engine_spec(tmp_path):
    spec = "engine:" + shlex.join(OUR_ENGINE)
    result = run_arena("random", spec, 2, GAME9, workers=0, out_dir=tmp_path, progress=False)
    assert len(result.records) == 2
    assert result.records[0].white == spec and result.records[1].black == spec
    assert sum(result.counts()) == 2


@pytest.mark.parametrize(
    "command, message",
    [
        (fake_engine("print('0,0', flush=True)", on_start="print('WHAT', flush=True)"),
         "answered START 9 with 'WHAT', not OK"),
        (fake_engine("print('ERROR out of ideas', flush=True)"),
         "answered BEGIN with 'ERROR out of ideas'"),
        (fake_engine("print('MESSAGE thinking', flush=True); print('somewhere', flush=True)"),
         "answered BEGIN with 'somewhere', not a move"),
        (fake_engine("print('12,3', flush=True)"), "played an illegal move '12,3'"),
        (fake_engine("print('MESSAGE bye', flush=True); sys.exit(4)"),
         "exited instead of answering BEGIN (exit status 4; it last said: MESSAGE bye"),
    ],
)
def test_misbehaving_engines_raise_clear_errors(command, message):
    player = ExternalEnginePlayer(command, timeout_s=10)
    try:
        with pytest.raises(ExternalEngineError) as info:
            player.reset(GAME9)
            player.choose(Position(GAME9))
        assert message in str(info.value)
    finally:
        player.close()


def test_a_silent_engine_times_out():
    player = ExternalEnginePlayer(fake_engine("time.sleep(30)"), timeout_s=0.5, grace_s=0.5)
    player.reset(GAME9)
    t0 = time.monotonic()
    with pytest.raises(ExternalEngineError, match="gave no answer to BEGIN within 1.0 s"):
        player.choose(Position(GAME9), time_left_s=0.5)
    assert time.monotonic() - t0 < 5
    assert player._proc is None  # killed, not left running


def test_bad_commands_and_games():
    with pytest.raises(ExternalEngineError, match="cannot start engine"):
        ExternalEnginePlayer("/no/such/engine-binary").reset(GAME9)
    with pytest.raises(ValueError, match="empty"):
        ExternalEnginePlayer("")
    with pytest.raises(ValueError, match="five in a row"):
        ExternalEnginePlayer(OUR_ENGINE).reset(GameConfig(width=9, n_in_row=4))
    with pytest.raises(ExternalEngineError, match="not reset"):
        ExternalEnginePlayer(OUR_ENGINE).choose(Position(GAME9))
