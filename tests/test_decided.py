"""Where a game was decided (alphagomoku.eval.decided), on games whose answer is known."""

from __future__ import annotations

import json

import pytest

from alphagomoku.eval.decided import (_read_games, decided_counts, deciding_move, deciding_moves,
                                      main)
from alphagomoku.game import BLACK, DRAW, WHITE, GameConfig, Position
from alphagomoku.records import GameRecord, write_text
from tests import faults

GAME = GameConfig(width=9, height=9)

# Black builds e5-f5-g5 on row 5; white plays in the corners. After g5 the open three threatens
# an open four: white's a9 (ply 5) ignores it, where d5 or h5 would have stopped it (after c5 or
# i5, h5 or d5 still makes an open four).
IGNORED_THREE = ["e5", "a1", "f5", "i9", "g5", "a9", "h5", "d5", "i5"]


def _record(names: list[str], opening: int = 0, winner: int | None = None,
            black: str = "black", white: str = "white") -> GameRecord:
    position = Position(GAME)
    for name in names:
        position.play(position.index(name))
    return GameRecord.from_position(position, opening=opening, winner=winner, black=black,
                                    white=white)


def test_a_move_that_ignores_an_open_three_is_a_blunder_with_the_blocks_as_safe_moves():
    found = deciding_move(_record(IGNORED_THREE))
    assert found is not None
    assert (found.ply, found.loser, found.name, found.kind) == (5, WHITE, "a9", "blunder")
    assert set(found.safe) == {"d5", "h5"}
    assert found.threats == 1  # the open four is a VCF: one move, then two points to finish


def test_an_open_four_set_by_the_opening_is_already_lost_whatever_the_loser_plays():
    found = deciding_move(_record(IGNORED_THREE, opening=7))
    assert found is not None
    assert (found.ply, found.name, found.kind) == (7, "d5", "already lost")
    assert found.safe == () and found.unknown == 0
    assert found.checked == 9 * 9 - 7 - 1  # every other empty point was searched


def test_moves_of_the_opening_are_not_the_losers_and_no_later_one_is_left_to_blame():
    assert deciding_move(_record(IGNORED_THREE, opening=8)) is None


def test_games_not_won_on_the_board_have_no_deciding_move():
    # Stopped after white's a9 and scored as a black win (a forfeit, say): no five was made.
    assert deciding_move(_record(IGNORED_THREE[:6], winner=BLACK)) is None
    assert deciding_move(_record(IGNORED_THREE[:6], winner=DRAW)) is None
    # The record says white won; the board says black did.
    assert deciding_move(_record(IGNORED_THREE, winner=WHITE)) is None


def test_a_match_is_counted_by_who_lost_and_how():
    records = [_record(IGNORED_THREE), _record(IGNORED_THREE, opening=7),
               _record(IGNORED_THREE[:6], winner=DRAW), _record(IGNORED_THREE, opening=8)]
    # Player A is white in the first game (it blundered), black in the others.
    counts = decided_counts(records, [False, True, True, True], deciding_moves(records))
    assert counts["a_lost"] == {"blunder": 1, "already lost": 0, "unclear": 0, "none": 0}
    assert counts["b_lost"] == {"blunder": 0, "already lost": 1, "unclear": 0, "none": 1}


def test_spawned_processes_count_a_match_as_one_process_does():
    records = [_record(IGNORED_THREE), _record(IGNORED_THREE, opening=7)] * 2
    a_black = [False, True, True, False]
    assert (decided_counts(records, a_black, deciding_moves(records, workers=2))
            == decided_counts(records, a_black, deciding_moves(records)))


def test_a_reading_process_that_dies_is_reported_with_the_games_left_unread():
    games = {3: _record(IGNORED_THREE), 5: _record(IGNORED_THREE), 8: _record(IGNORED_THREE)}
    with pytest.raises(RuntimeError, match=r"died .*games \[3, 5, 8\] \(numbered from 0\)"):
        list(_read_games(games, 4, 1000, 2, read=faults.die_reading))


def _saved_match(folder) -> None:
    """Three games of players "solver" and "plain": plain (white) blunders, solver (white) is
    lost from the opening on, and a draw."""
    games = [_record(IGNORED_THREE, black="solver", white="plain"),
             _record(IGNORED_THREE, opening=7, black="plain", white="solver"),
             _record(IGNORED_THREE[:6], winner=DRAW, black="solver", white="plain")]
    for i, record in enumerate(games):
        write_text(record, folder / f"game_{i:04d}.txt")


def test_saved_games_are_read_again_with_each_loss_put_to_its_player(tmp_path, capsys):
    _saved_match(tmp_path)
    assert main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "game_0000.txt: white lost at move 6, a9, after which the winner had a win by " \
           "1 threat; blunder (safe: d5 h5)" in out
    assert "game_0001.txt: white lost at move 8, d5, after which" in out
    assert "1 threat; already lost\n" in out
    assert "game_0002.txt: draw" in out
    assert "  plain: blunder 1" in out and "  solver: already lost 1" in out


def test_a_reading_whose_searches_run_out_blames_no_move(tmp_path, capsys):
    # With a budget too small for even the one-threat win after white's a9, no loser's move is
    # proved to have let a win in: "none", not a guess.
    _saved_match(tmp_path)
    assert main([str(tmp_path), "--budget", "1", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["kind"] for row in rows] == ["none", "none", "draw"]
    assert rows[0]["loser_name"] == "plain" and rows[1]["loser_name"] == "solver"


def test_a_folder_without_games_or_with_a_broken_record_is_refused_by_name(tmp_path, capsys):
    assert main([str(tmp_path)]) == 2
    assert "no game_*.txt records" in capsys.readouterr().err
    (tmp_path / "game_0000.txt").write_text("alphagomoku game\nboard: 9x9\nmoves:\n 1. z99\n")
    assert main([str(tmp_path)]) == 2
    assert "game_0000.txt" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([str(tmp_path), "--depth", "0"])
