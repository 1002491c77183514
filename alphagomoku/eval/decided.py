"""Where a game was decided: the first move after which the loser could not stop a win by threats.

A match score says who won; it does not say whether a solver could have changed that. This
module looks at a finished game from the winner's side. Walking the loser's moves in order, it
finds the first one after which the winner, to move, has a victory by continuous threats that
:func:`alphagomoku.game.solve_vct` proves (at most ``depth`` free threats, ``budget`` nodes a
call, VCF_BUDGET for each VCF inside it). That is the *deciding move*. Then it asks the same
search about each other legal move the loser had there:

- **blunder**: some other move leaves the winner no VCT (the search proves none). The loser lost
  to a tactic a threat search of this size finds, so a player with the solver avoids this loss
  (at least for this move; a later quiet move may still win).
- **already lost**: every other move leaves the winner a proved VCT as well. The game was
  decided earlier, by moves a threat search does not look at (a quiet move that prepares two
  threats at once), so a deeper or faster solver at this point would not have helped.
- **unclear**: no other move is proved safe, but for some the search ran out of budget (a move
  whose search runs out is searched again with RETRY times the budgets).

A game that ends in a draw, or not with a five (a forfeit, an illegal move), has no deciding move.
The moves of the arena's opening are not the players' and are not looked at.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from alphagomoku.game import BLACK, WHITE, Position, solve_vct
from alphagomoku.records import GameRecord

DEPTH = 4
VCT_BUDGET = 400_000
VCF_BUDGET = 20_000   # each VCF inside the VCT; the players' 2,000 leaves many answers unknown
RETRY = 8
KINDS = ("blunder", "already lost", "unclear")


@dataclass(frozen=True)
class DecidingMove:
    """The loser's move after which the winner first had a proved VCT, and what else it had."""

    ply: int                  # index of the move in the record
    loser: int                # BLACK or WHITE
    name: str                 # the move, in h8 notation
    threats: int              # free threats in the shallowest win found after it
    safe: tuple[str, ...]     # other moves after which the search proves no VCT
    unknown: int              # other moves whose search ran out of budget
    checked: int              # other moves searched

    @property
    def kind(self) -> str:
        if self.safe:
            return "blunder"
        return "unclear" if self.unknown else "already lost"


def _winner_threatens(position: Position, winner: int, depth: int, budget: int,
                      scale: int = 1) -> tuple[str, int]:
    """("win", threats) for the shallowest VCT of ``winner`` (to move) proved within ``depth``,
    else ("none", 0) or ("unknown", 0); ``scale`` multiplies both budgets. Shallow first: one
    search at the full depth costs more where a short win exists (it wanders down long lines
    first; 2.6 times the time over one match's games), and where it runs out of budget it hides
    a short win a shallower one proves."""
    for d in range(1, depth + 1):
        result = solve_vct(position, scale * budget, depth=d, attacker=winner,
                           vcf_budget=scale * VCF_BUDGET)
        if result.found:
            return "win", d
        if result.status == "unknown":
            return "unknown", 0
    return "none", 0


def deciding_move(record: GameRecord, depth: int = DEPTH,
                  budget: int = VCT_BUDGET) -> DecidingMove | None:
    """The deciding move of ``record`` (see the module's docstring), or None when the game was
    not won with a five or no loser's move after the opening left the winner a proved VCT."""
    if record.winner not in (BLACK, WHITE):
        return None
    try:
        final = Position.from_moves(record.moves, record.game)
    except ValueError:
        return None  # an illegal move ended it
    if final.winner != record.winner:
        return None  # not won on the board: a forfeit, a timeout, a crash
    winner = record.winner
    loser = BLACK if winner == WHITE else WHITE
    position = Position(record.game)
    for ply, move in enumerate(record.moves):
        mover = position.to_move
        position.play(move)
        if ply < record.opening or mover != loser or position.is_over:
            continue
        status, threats = _winner_threatens(position, winner, depth, budget)
        if status != "win":
            continue
        position.undo()
        safe, unknown, checked = [], 0, 0
        for other in np.flatnonzero(position.legal_mask()):
            other = int(other)
            if other == move:
                continue
            position.play(other)
            answer = "none" if position.is_over else _winner_threatens(position, winner, depth,
                                                                         budget)[0]
            if answer == "unknown":  # few moves half-defend; they get a second, larger search
                answer = _winner_threatens(position, winner, depth, budget, RETRY)[0]
            position.undo()
            checked += 1
            if answer == "none":
                safe.append(position.name(other))
            elif answer == "unknown":
                unknown += 1
        return DecidingMove(ply, loser, position.name(move), threats, tuple(safe), unknown,
                            checked)
    return None


def deciding_moves(records: list[GameRecord], depth: int = DEPTH, budget: int = VCT_BUDGET,
                   workers: int = 0, progress: bool = False) -> dict[int, DecidingMove | None]:
    """``{game number: its deciding move or None}`` for the decisive games of ``records``. With
    ``workers``, games are read in that many spawned processes (one game takes seconds to a
    minute on 15x15: every other move at the deciding point gets its own searches)."""
    from alphagomoku.progress import progress as progress_bar

    decisive = {i: r for i, r in enumerate(records) if r.winner in (BLACK, WHITE)}
    found: dict[int, DecidingMove | None] = {}
    with progress_bar(total=len(decisive), desc="deciding moves", unit="game",
                      disable=not progress) as bar:
        for i, move in _read_games(decisive, depth, budget, workers):
            found[i] = move
            bar.update(1)
    return dict(sorted(found.items()))


def decided_counts(records: list[GameRecord], a_black: list[bool],
                   found: dict[int, DecidingMove | None]) -> dict:
    """How the games of a match (player A's colours in ``a_black``) were decided, from their
    deciding moves ``found`` (:func:`deciding_moves`), by who lost: ``{"a_lost": {kind: games},
    "b_lost": {...}}`` with the kinds of :data:`KINDS` and "none" (no deciding move: forfeited,
    or never a proved VCT). Draws are not counted."""
    counts = {side: {kind: 0 for kind in KINDS + ("none",)} for side in ("a_lost", "b_lost")}
    for i, move in found.items():
        a = BLACK if a_black[i] else WHITE
        side = "a_lost" if records[i].winner != a else "b_lost"
        counts[side]["none" if move is None else move.kind] += 1
    return counts


def _read_games(games: dict, depth: int, budget: int, workers: int, read=deciding_move):
    """(number, ``read(record, depth, budget)``) for each ``number: record`` of ``games``, in
    the order they finish."""
    if not workers:
        for number, record in games.items():
            yield number, read(record, depth, budget)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(read, record, depth, budget): number
                   for number, record in games.items()}
        for future in as_completed(futures):
            try:
                found = future.result()
            except BrokenProcessPool as e:
                left = sorted(futures[f] for f in futures
                              if not f.done() or f.exception() is not None)
                raise RuntimeError(f"a process reading where games were decided died (out of "
                                   f"memory, or killed); games {left} (numbered from 0) were "
                                   f"not read") from e
            yield futures[future], found


def read_folder(folder, depth: int = DEPTH, budget: int = VCT_BUDGET, workers: int = 0,
                progress: bool = False) -> list[dict]:
    """Where each game saved in ``folder`` (the ``game_*.txt`` records that ``scripts/
    evaluate.py --out`` and ``benchmark.py vcf --match-out`` write) was decided: one row per
    game, in file order, with its loser's name (``loser_name``) and the deciding move's fields
    (``kind`` "draw" for a drawn game, "none" where there is no deciding move)."""
    import dataclasses

    from alphagomoku.records import read_saved_games

    saved = read_saved_games(folder)
    found = deciding_moves([record for _, record in saved], depth, budget, workers, progress)
    rows = []
    for i, (path, record) in enumerate(saved):
        row = {"file": path.name, "black": record.black, "white": record.white}
        if record.winner not in (BLACK, WHITE):
            rows.append({**row, "kind": "draw"})
            continue
        row["loser_name"] = record.white if record.winner == BLACK else record.black
        move = found[i]
        rows.append({**row, **({"kind": "none"} if move is None
                               else {"kind": move.kind, **dataclasses.asdict(move)})})
    return rows


def build_parser():
    """The command line of :func:`main` (also read by the docs' tests)."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m alphagomoku.eval.decided",
                                description="Where each game saved in DIR was decided: the "
                                            "loser's first move after which the winner had a "
                                            "proved win by threats.")
    p.add_argument("folder", metavar="DIR", help="folder of game_*.txt records")
    p.add_argument("--depth", type=int, default=DEPTH,
                   help=f"free threats of each VCT search (default {DEPTH})")
    p.add_argument("--budget", type=int, default=VCT_BUDGET,
                   help=f"nodes of each VCT search (default {VCT_BUDGET})")
    p.add_argument("--workers", type=int, default=0,
                   help="spawned processes reading games (default 0: this one)")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    return p


def main(argv: list[str] | None = None) -> int:
    """``python -m alphagomoku.eval.decided DIR``: read saved games again, at another depth or
    budget than the benchmark's, without playing them again."""
    import json
    from collections import Counter

    p = build_parser()
    args = p.parse_args(argv)
    for flag, value in (("--depth", args.depth), ("--budget", args.budget)):
        if value < 1:
            p.error(f"{flag} must be at least 1, got {value}")
    if args.workers < 0:
        p.error(f"--workers must be 0 or more, got {args.workers}")
    try:
        rows = read_folder(args.folder, args.depth, args.budget, args.workers,
                           progress=not args.json)
    except (OSError, ValueError) as e:  # a missing folder, a record that cannot be read
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for row in rows:
        if row["kind"] == "draw":
            print(f"{row['file']}: draw")
            continue
        if row["kind"] == "none":
            print(f"{row['file']}: {row['loser_name']} lost; no deciding move found")
            continue
        colour = "black" if row["loser"] == BLACK else "white"
        threats = f"{row['threats']} threat" + ("s" if row["threats"] != 1 else "")
        safe = f" (safe: {' '.join(row['safe'])})" if row["safe"] else ""
        print(f"{row['file']}: {colour} lost at move {row['ply'] + 1}, {row['name']}, after "
              f"which the winner had a win by {threats}; {row['kind']}{safe}")
    print("losses by player and kind:")
    counts = Counter((row["loser_name"], row["kind"]) for row in rows if "loser_name" in row)
    for (name, kind), count in sorted(counts.items()):
        print(f"  {name}: {kind} {count}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
