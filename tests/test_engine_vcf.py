"""VCF in the engine and the players: a proved win is played out, an opponent's is stopped."""

from __future__ import annotations

import numpy as np

from alphagomoku.engine.protocol import GomocupEngine
from alphagomoku.eval.players import RandomPlayer, TacticalPlayer
from alphagomoku.eval.specs import make_player, parse_player_spec
from alphagomoku.eval.tactics import tactical_move, vcf_defences
from alphagomoku.game import BLACK, WHITE, GameConfig, Position, solve_vcf
from tests.test_vcf import NINE_MOVES, THREE_MOVES


def engine_after_board(player, start: Position) -> tuple[GomocupEngine, list[str]]:
    """An engine playing ``player``, given ``start`` with a BOARD command (so it moves next);
    the lines it wrote."""
    out: list[str] = []
    engine = GomocupEngine(lambda: (player, []), out.append)
    w = start.width
    engine.handle(f"START {w}")
    engine.handle("BOARD")
    for m in start.moves:
        engine.handle(f"{m % w},{m // w},{1 if start.board[m] == BLACK else 2}")
    engine.handle("DONE")
    return engine, out


def test_engine_converts_a_vcf_against_a_defender_that_always_blocks():
    start = Position.from_picture(NINE_MOVES, GameConfig(width=11))
    length = solve_vcf(start).length
    engine, out = engine_after_board(TacticalPlayer(RandomPlayer(seed=1), vcf=True), start)
    assert out[-2].startswith(f"MESSAGE vcf: win in {length} ("), out[-2:]
    rng = np.random.default_rng(0)
    for _ in range(length - 1):
        pos = engine.position
        block = tactical_move(pos)  # the defender stops the four every time
        assert block is not None
        reply = block if block >= 0 else int(rng.choice(pos.legal_moves()))
        engine.handle(f"TURN {reply % 11},{reply // 11}")
    assert engine.position.winner == BLACK
    assert len(engine.position.moves) == len(start.moves) + 2 * length - 1


def test_player_stops_the_opponents_vcf():
    # Black passes (a1); white to move must stop black's VCF (f4 ...). A player that would play
    # a2 is overruled by a move proved to stop it.
    pos = Position.from_picture(THREE_MOVES, GameConfig(width=9))
    pos.play("a1")
    assert pos.to_move == WHITE
    threat = solve_vcf(pos, attacker=BLACK)
    assert threat.found

    class Corner:
        name = "corner"

        def reset(self, game):
            pass

        def choose(self, position, time_left_s=None):
            return position.index("a2")

    player = TacticalPlayer(Corner(), vcf=True)
    move = player.choose(pos.copy())  # no time limit: the defences are all checked
    assert move in vcf_defences(pos, threat, 10_000)
    after = pos.copy().play(move)
    assert solve_vcf(after).status == "none"
    assert player.last_note.startswith("vcf: opponent threatens win in")
    # Without VCF the same wrapper trusts its player.
    assert TacticalPlayer(Corner()).choose(pos.copy(), 1.0) == pos.index("a2")


def test_vcf_specs_wrap_any_player():
    spec = parse_player_spec("vcf:pure:50")
    assert spec.kind == "vcf" and spec.inner.kind == "pure"
    player = make_player("vcf:random")
    assert isinstance(player, TacticalPlayer) and player.vcf and player.name == "vcf:random"
    assert not make_player("tactics:random").vcf
