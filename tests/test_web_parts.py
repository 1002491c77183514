"""The web page's pure parts: message checks, position strings, the winning line, forbidden
points and the moves that lost most."""

import pytest

from alphagomoku.game import GameConfig, Position
from alphagomoku.web import views
from alphagomoku.web.messages import MessageError, parse_message
from alphagomoku.web.notation import NotationError, move_string, parse_moves

GAME = GameConfig(15)


def test_position_strings_round_trip():
    moves = parse_moves("h8i9j10h10", GAME)
    position = Position.from_moves(moves, GAME)
    assert move_string(position) == "h8i9j10h10"
    # Separators are accepted, and two-digit rows are read whole.
    assert parse_moves("h8, i9 j10;h10", GAME) == moves
    assert parse_moves("", GAME) == []


@pytest.mark.parametrize("text, expected", [
    ("h8h8", "occupied"),
    ("h8z1", "off the 15x15 board"),
    ("h8-9", "is not a move"),
    ("h16", "off the 15x15 board"),
])
def test_bad_position_strings_say_where(text, expected):
    with pytest.raises(NotationError, match=expected):
        parse_moves(text, GAME)


def test_messages_are_checked():
    assert parse_message('{"type": "move", "move": "h8"}') == {"type": "move", "move": "h8"}
    msg = parse_message('{"type": "settings", "strength": {"kind": "seconds", "value": 1}}')
    assert msg["strength"] == ("seconds", 1.0)
    with pytest.raises(MessageError, match="UTF-8"):
        parse_message(b"\xff\xfe")
    with pytest.raises(MessageError, match="too long"):
        parse_message('{"type": "load_psq", "text": "' + "x" * 300_000 + '"}')
    with pytest.raises(MessageError, match="whole number"):
        parse_message('{"type": "settings", "strength": {"kind": "simulations", "value": 2.5}}')


def test_winning_line_is_the_whole_line():
    p = Position.from_moves(parse_moves("h8a1i8a2j8a3k8a5g8", GAME), GAME)
    assert p.winner == 1
    assert sorted(p.name(m) for m in views.winning_line(p)) == ["g8", "h8", "i8", "j8", "k8"]
    assert views.winning_line(Position.from_moves([0], GAME)) == []


def test_forbidden_points_only_for_black_under_renju():
    renju = GameConfig(15, rule="renju")
    p = Position.from_moves(parse_moves("h6a15h7a13f8a11g8a9", renju), renju)
    # h8 would make two open threes (h6 h7 h8, f8 g8 h8): a double three.
    assert "h8" in [p.name(m) for m in views.forbidden_points(p)]
    free = Position.from_moves(parse_moves("h6a15h7a13f8a11g8a9", GAME), GAME)
    assert views.forbidden_points(free) == []


def test_mistakes_are_the_largest_drops_for_the_mover():
    moves = list(range(6))
    # Black's win rate: 0.5, then black's move 3 drops it to 0.2, white's move 6 lifts it to 0.9.
    values = {0: 0.0, 1: 0.0, 2: 0.0, 3: 0.6, 4: -0.6, 5: 0.6, 6: 0.8}
    rates = {k: views.black_win_rate(k, v) for k, v in values.items()}
    assert rates[3] == pytest.approx(0.2) and rates[6] == pytest.approx(0.9)
    found = views.mistakes(values, moves, str)
    assert [m["ply"] for m in found] == [6, 3]  # white's 0.7 loss first, then black's 0.3
    assert found[0]["loss"] == pytest.approx(0.7) and found[1]["loss"] == pytest.approx(0.3)
    assert views.mistakes({0: 0.0}, moves, str) == []
