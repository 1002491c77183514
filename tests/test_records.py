"""Game records: .psq and text round trips, reading files from other tools, clear errors."""

from __future__ import annotations

import pytest

from alphagomoku.game import BLACK, DRAW, NO_RESULT, WHITE, GameConfig, Position
from alphagomoku.records import (
    GameRecord,
    RecordError,
    parse_psq,
    parse_text,
    psq_text,
    read_psq,
    text_record,
    write_psq,
    write_text,
)

GAME9 = GameConfig(width=9)


def _won_game(game=GAME9) -> Position:
    # Black e5 f5 g5 h5 i5 against white in row 3: black wins on its fifth stone.
    moves = ["a5", "a3", "b5", "b3", "c5", "c3", "d5", "d3", "e5"]
    return Position.from_moves(moves, game)


def _record(**kw) -> GameRecord:
    pos = _won_game(kw.pop("game", GAME9))
    times = [0, 0] + [100 * k for k in range(1, len(pos.moves) - 1)]
    return GameRecord.from_position(pos, times_ms=times, black="pure:200", white="net:model.pt:50",
                                    opening=2, **kw)


def test_psq_layout_matches_piskvork():
    text = psq_text(_record())
    lines = text.splitlines()
    assert lines[0] == "Piskvorky 9x9, 11:11, 0"
    # a5 on 9x9 is x=0, y=4 (0-based) -> "1,5" 1-based; its time is the first entry.
    assert lines[1] == "1,5,0"
    assert lines[3] == "2,5,100"
    assert lines[10:13] == ["pure:200", "net:model.pt:50", "-1"]


def test_psq_round_trip(tmp_path):
    rec = _record()
    path = write_psq(rec, tmp_path / "sub" / "g.psq")
    back = read_psq(path)
    assert back.moves == rec.moves
    assert back.times_ms == rec.times_ms
    assert (back.black, back.white) == (rec.black, rec.white)
    assert back.winner == BLACK and back.reason == rec.reason
    assert back.game == rec.game and back.opening == 2


def test_psq_keeps_rule_line_length_and_a_result_off_the_board(tmp_path):
    game = GameConfig(width=7, height=6, n_in_row=4, rule="standard")
    pos = Position.from_moves(["d4", "d3", "a1"], game)
    rec = GameRecord.from_position(pos, black="x", white="y", winner=WHITE, reason="black forfeits on time")
    back = read_psq(write_psq(rec, tmp_path / "g.psq"))
    assert back.game == game
    assert back.winner == WHITE and back.reason == "black forfeits on time"
    assert back.moves == pos.moves


def test_psq_from_another_tool_without_our_trailer():
    text = "Piskvorky 15x15, 11:11, 0\n8,8,0\n9,9,1200\n8,9,800\nPela.zip\nfiverow.zip\n-1\n"
    rec = parse_psq(text)
    assert rec.game == GameConfig(width=15)
    assert rec.moves == [7 * 15 + 7, 8 * 15 + 8, 8 * 15 + 7]
    assert rec.times_ms == [0, 1200, 800]
    assert (rec.black, rec.white) == ("Pela.zip", "fiverow.zip")
    assert rec.winner == NO_RESULT
    # The caller may say which rule the file was played under.
    assert parse_psq(text, GameConfig(width=15, rule="renju")).game.rule == "renju"


@pytest.mark.parametrize(
    "text, message",
    [
        ("hello\n1,1,0\n", "not a .psq file"),
        ("Piskvorky 9x9, 11:11, 0\n1,1,0\n1,1,5\n", "line 3"),
        ("Piskvorky 9x9, 11:11, 0\n10,1,0\n", "off the 9x9 board"),
        ("", "not a .psq file"),
    ],
)
def test_psq_errors_name_the_problem(text, message):
    with pytest.raises(RecordError, match=message):
        parse_psq(text)


def test_psq_size_must_match_a_given_config():
    with pytest.raises(RecordError, match="9x9 board"):
        parse_psq("Piskvorky 9x9, 11:11, 0\n", GameConfig(width=15))


def test_text_record_is_readable_and_round_trips(tmp_path):
    rec = _record()
    text = text_record(rec)
    assert "black: pure:200" in text
    assert "result: black (pure:200) wins with 5 in a row" in text
    assert "   1. a5*    a3*" in text  # opening moves are starred
    assert str(rec.position()) in text  # the final board
    back = parse_text(write_text(rec, tmp_path / "g.txt").read_text())
    assert back.moves == rec.moves and back.winner == rec.winner and back.game == rec.game
    assert (back.black, back.white, back.opening, back.reason) == (
        rec.black, rec.white, rec.opening, rec.reason)


def test_text_round_trip_of_a_draw_and_an_unfinished_game():
    game = GameConfig(width=5)
    # The top two rows, alternating colours along each row: no line of five anywhere.
    pos = Position.from_moves([(x, y) for y in range(2) for x in range(5)], game)
    rec = GameRecord.from_position(pos)
    assert rec.winner == NO_RESULT and "unfinished" in text_record(rec)
    assert parse_text(text_record(rec)).moves == rec.moves
    draw = GameRecord(game=game, moves=list(pos.moves), winner=DRAW, reason="agreed")
    back = parse_text(text_record(draw))
    assert back.winner == DRAW and back.reason == "agreed"


def test_record_validation():
    with pytest.raises(ValueError, match="move times"):
        GameRecord(game=GAME9, moves=[1, 2], times_ms=[5])
    with pytest.raises(ValueError, match="opening"):
        GameRecord(game=GAME9, moves=[1], opening=2)
    rec = _record()
    assert GameRecord.from_dict(rec.to_dict()) == rec
