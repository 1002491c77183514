"""The arena: N games between two players, each opening played once with each colour.

Games run in spawned worker processes (``workers=0``: in this process, one after another). A
worker gets the players' spec strings, never live objects, and builds fresh players per game
from them with a seed that depends only on the game's number, so a match gives the same games
with any number of workers. A game that raises anywhere is reported with its traceback as an
:class:`ArenaError`; no game is ever dropped or counted silently.
"""

from __future__ import annotations

import multiprocessing
import os
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from alphagomoku.checks import non_negative_int, positive_int
from alphagomoku.eval.elo import EloEstimate, elo_estimate, paired_elo_estimate
from alphagomoku.game import BLACK, DRAW, NO_RESULT, WHITE, GameConfig, IllegalMoveError, Position
from alphagomoku.game.symmetry import index_map, valid_symmetries
from alphagomoku.records import GameRecord, write_psq, write_text

# Openings use the points at most this far (in rows or columns) from the centre.
_CENTRE_RADIUS = 2


class ArenaError(RuntimeError):
    """A game could not be played; the message names the game and carries the traceback."""


# -- openings --------------------------------------------------------------------------------------
def _canonical(moves: tuple[int, ...], game: GameConfig) -> tuple:
    """The same key for openings that a symmetry of the board maps onto each other."""
    keys = []
    for k in valid_symmetries(game.width, game.height):
        m = index_map(k, game.width, game.height)
        keys.append((tuple(sorted(int(m[p]) for p in moves[0::2])),
                     tuple(sorted(int(m[p]) for p in moves[1::2]))))
    return min(keys)


def distinct_openings(openings: list, game: GameConfig) -> list[tuple[int, ...]]:
    """``openings`` without those that repeat an earlier one up to the board's symmetries."""
    seen: set = set()
    out = []
    for opening in openings:
        key = _canonical(tuple(opening), game)
        if key not in seen:
            seen.add(key)
            out.append(tuple(int(m) for m in opening))
    return out


def _rules(game: GameConfig) -> str:
    return f"{game.width}x{game.height}, {game.n_in_row} in a row, {game.rule}"


def saved_openings(folder, game: GameConfig) -> list[tuple[int, ...]]:
    """The openings of the games saved in ``folder`` (the ``game_*.txt`` records that
    ``scripts/evaluate.py --out`` and ``benchmark.py vcf --match-out`` write), in file order,
    each once up to the board's symmetries: to play a match's openings again with other players
    or another time a move. Records of another board or rule are refused, not skipped."""
    from alphagomoku.records import read_saved_games

    openings = []
    for path, record in read_saved_games(folder):
        if record.game != game:
            raise ValueError(f"{path}: a game on {_rules(record.game)}, but this match plays "
                             f"{_rules(game)}")
        openings.append(tuple(record.moves[:record.opening]))
    return distinct_openings(openings, game)


def make_openings(game: GameConfig, count: int, moves: int = 2, seed: int = 0,
                  radius: int = _CENTRE_RADIUS) -> list[tuple[int, ...]]:
    """``count`` short openings of ``moves`` stones each, on points within ``radius`` of the
    centre, no two the same up to the board's symmetries, the same list for the same arguments.
    Near the centre and a few stones long, none gives either side much; playing each with both
    colours cancels what edge remains. When fewer distinct openings exist, the list repeats."""
    positive_int("the number of openings", count)
    non_negative_int("opening length", moves)
    cx, cy = game.width // 2, game.height // 2
    region = [y * game.width + x
              for y in range(max(0, cy - radius), min(game.height, cy + radius + 1))
              for x in range(max(0, cx - radius), min(game.width, cx + radius + 1))]
    if moves > len(region):
        raise ValueError(f"an opening of {moves} stones does not fit in the {len(region)} points "
                         f"within {radius} of the centre")
    if moves == 0:
        return [()] * count

    def draw(rng):
        pick = tuple(int(p) for p in rng.choice(region, size=moves, replace=False))
        try:
            pos = Position.from_moves(pick, game)
        except IllegalMoveError:
            return None  # a renju-forbidden point for black
        return None if pos.is_over else pick

    return _distinct(draw, game, count, 200 * count, seed)


def _distinct(draw, game: GameConfig, count: int, tries: int, seed: int) -> list[tuple[int, ...]]:
    """``count`` openings from ``draw(rng)`` (moves, or None for a rejected draw), no two the
    same up to the board's symmetries; repeated in turn when ``tries`` draws give fewer."""
    rng = np.random.default_rng(seed)
    found: list[tuple[int, ...]] = []
    seen: set = set()
    for _ in range(tries):
        if len(found) == count:
            break
        pick = draw(rng)
        if pick is None:
            continue
        key = _canonical(pick, game)
        if key not in seen:
            seen.add(key)
            found.append(pick)
    if not found:
        raise ValueError(f"no opening could be drawn in {tries} tries")
    return [found[i % len(found)] for i in range(count)]


# -- one game --------------------------------------------------------------------------------------
def play_game(black, white, game: GameConfig, opening=(), time_per_move: float | None = None) -> GameRecord:
    """One game from ``opening`` (flat indices, black first) between two reset players. A
    player's illegal move raises IllegalMoveError naming the player."""
    position = Position.from_moves(opening, game)
    times = [0] * len(position.moves)
    while not position.is_over:
        player = black if position.to_move == BLACK else white
        t0 = time.perf_counter()
        move = player.choose(position, time_per_move)
        times.append(int(round((time.perf_counter() - t0) * 1000)))
        try:
            position.play(move)
        except IllegalMoveError as e:
            raise IllegalMoveError(f"player {player.name!r} chose an illegal move {move!r}: {e}") from None
    return GameRecord.from_position(position, times_ms=times, black=black.name, white=white.name,
                                    opening=len(opening))


@dataclass(frozen=True)
class GameTask:
    """Everything a worker needs for one game, as plain data."""

    index: int
    spec_a: str
    spec_b: str
    a_black: bool
    game: dict
    opening: tuple
    seed: int
    time_per_move: float | None
    device: str
    search_a: tuple = ()  # (field, value) pairs of SearchConfig that A's network player takes
    search_b: tuple = ()


def player_label(spec: str, search: dict | tuple | None) -> str:
    """``spec``, and the search settings it plays with: how a match names the player."""
    pairs = dict(search or {})
    if not pairs:
        return spec
    return f"{spec} [{' '.join(f'{k}={v}' for k, v in pairs.items())}]"


def _worker_init() -> None:
    from alphagomoku.parent_watch import exit_with_parent

    exit_with_parent()
    # Several workers share the cores: one BLAS/torch thread each (set before torch loads).
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = "1"


def _play_task(task: GameTask) -> tuple[int, str, dict | str]:
    """Play one game; ``(index, "ok", record dict)`` or ``(index, "error", traceback text)``."""
    from alphagomoku.eval.players import close_player
    from alphagomoku.eval.specs import make_player

    made = []
    try:
        game = GameConfig(**task.game)
        a = make_player(task.spec_a, seed=2 * task.seed, device=task.device,
                        search=dict(task.search_a))
        made.append(a)
        b = make_player(task.spec_b, seed=2 * task.seed + 1, device=task.device,
                        search=dict(task.search_b))
        made.append(b)
        a.name, b.name = player_label(a.name, task.search_a), player_label(b.name, task.search_b)
        if a.name == b.name:  # the record must still tell the two sides apart
            a.name, b.name = f"{a.name} (A)", f"{b.name} (B)"
        black, white = (a, b) if task.a_black else (b, a)
        black.reset(game)
        white.reset(game)
        record = play_game(black, white, game, task.opening, task.time_per_move)
        return task.index, "ok", record.to_dict()
    except Exception:  # noqa: BLE001 - reported to the parent with the traceback
        return task.index, "error", traceback.format_exc()
    finally:
        for p in made:
            try:
                close_player(p)
            except Exception:  # noqa: BLE001 - a failed close must not hide the game's outcome
                pass


# -- the match -------------------------------------------------------------------------------------
@dataclass
class ArenaResult:
    """Results from player A's side. ``records[i]`` is game i; ``a_black[i]`` its colours."""

    player_a: str
    player_b: str
    game: GameConfig
    records: list[GameRecord] = field(default_factory=list)
    a_black: list[bool] = field(default_factory=list)
    seconds: float = 0.0

    def outcome(self, i: int) -> float:
        """A's score in game i: 1, 0.5 or 0."""
        r = self.records[i]
        if r.winner == DRAW:
            return 0.5
        if r.winner == NO_RESULT:
            raise ValueError(f"game {i} has no result")
        return 1.0 if (r.winner == BLACK) == self.a_black[i] else 0.0

    def counts(self, a_colour: int | None = None) -> tuple[int, int, int]:
        """(wins, draws, losses) of A, over all games or those where A had ``a_colour``."""
        w = d = l = 0
        for i in range(len(self.records)):
            if a_colour is not None and self.a_black[i] != (a_colour == BLACK):
                continue
            s = self.outcome(i)
            w += s == 1.0
            d += s == 0.5
            l += s == 0.0
        return w, d, l

    @property
    def wins(self) -> int:
        return self.counts()[0]

    @property
    def draws(self) -> int:
        return self.counts()[1]

    @property
    def losses(self) -> int:
        return self.counts()[2]

    @property
    def score(self) -> float:
        return self.score_as()

    def score_as(self, a_colour: int | None = None) -> float | None:
        """A's score (wins plus half the draws, over games) with ``a_colour`` (BLACK or WHITE),
        or over all games; None when A never had that colour."""
        w, d, l = self.counts(a_colour)
        return (w + 0.5 * d) / (w + d + l) if w + d + l else None

    def colour_line(self) -> str:
        """``score 0.600: as black 0.800 (+4 =0 -1), as white 0.400 (+2 =0 -3)``: one colour
        can win nearly every game while the total looks even, so a result always says both."""
        parts = []
        for name, colour in (("black", BLACK), ("white", WHITE)):
            w, d, l = self.counts(colour)
            score = self.score_as(colour)
            parts.append(f"as {name} " + ("-" if score is None else f"{score:.3f}")
                         + f" (+{w} ={d} -{l})")
        return f"score {self.score:.3f}: " + ", ".join(parts)

    @property
    def elo(self) -> EloEstimate:
        return elo_estimate(*self.counts())

    @property
    def pair_scores(self) -> list[float] | None:
        """A's total in each pair of games 2k, 2k+1 (one opening, A once with each colour, as
        :func:`make_tasks` lays them out), or None when the games do not come in such pairs."""
        n = len(self.records)
        if n == 0 or n % 2 or any(self.a_black[i] == self.a_black[i + 1] for i in range(0, n, 2)):
            return None
        for first, second in zip(self.records[0::2], self.records[1::2]):
            if (first.opening != second.opening
                    or list(first.moves[:first.opening]) != list(second.moves[:second.opening])):
                return None
        return [self.outcome(i) + self.outcome(i + 1) for i in range(0, n, 2)]

    def _pair_colours(self) -> list[int | None] | None:
        """For each pair of games, the colour that won both (BLACK or WHITE), else None; None
        when the games do not come in pairs."""
        if self.pair_scores is None:
            return None
        return [first.winner if first.winner == second.winner in (BLACK, WHITE) else None
                for first, second in zip(self.records[0::2], self.records[1::2])]

    @property
    def pairs_by_colour(self) -> dict | None:
        """How the pairs went by colour: ``{"black": k, "white": m, "other": rest}``, k pairs
        won twice by black and m twice by white; None when the games do not come in pairs.
        Such a pair scores 1 of 2 for either player, however much stronger one is: a match on
        openings that one colour wins anyway stays near 0.5, and only the other pairs can
        move it (:attr:`score_other_pairs`)."""
        colours = self._pair_colours()
        if colours is None:
            return None
        return {"black": colours.count(BLACK), "white": colours.count(WHITE),
                "other": colours.count(None)}

    @property
    def score_other_pairs(self) -> float | None:
        """A's score over the pairs that neither colour won twice (None when there are none or
        the games do not come in pairs)."""
        colours = self._pair_colours()
        if colours is None:
            return None
        kept = [score for score, colour in zip(self.pair_scores, colours) if colour is None]
        return sum(kept) / (2 * len(kept)) if kept else None

    @property
    def paired_elo(self) -> EloEstimate | None:
        """The Elo interval over pairs of games (see :mod:`alphagomoku.eval.elo`), or None."""
        pairs = self.pair_scores
        return None if pairs is None else paired_elo_estimate(pairs)

    @property
    def repeated_games(self) -> int:
        """Games that repeat an earlier one move for move, A with the same colour. At a fixed
        time or number of simulations a replayed opening often gives the same game again; the
        interval counts it as a new game, so it is too narrow when this is not 0."""
        seen: set = set()
        repeats = 0
        for record, a_black in zip(self.records, self.a_black):
            key = (a_black, tuple(record.moves))
            repeats += key in seen
            seen.add(key)
        return repeats

    def summary(self) -> str:
        w, d, l = self.counts()
        bw, bd, bl = self.counts(BLACK)
        ww, wd, wl = self.counts(WHITE)
        g = self.game
        paired = self.paired_elo
        return "\n".join([
            f"{self.player_a} vs {self.player_b}: {len(self.records)} games on "
            f"{_rules(g)} ({self.seconds:.1f} s)",
            f"  A wins {w}, draws {d}, loses {l}: score {self.score:.3f}",
            f"  A as black: +{bw} ={bd} -{bl}, score {_fmt_score(self.score_as(BLACK))};  "
            f"A as white: +{ww} ={wd} -{wl}, score {_fmt_score(self.score_as(WHITE))}",
            f"  {self.elo}",
        ] + ([f"  by pairs of games on one opening: {paired}"] if paired is not None else [])
          + ([self._colour_pairs_line()] if paired is not None else [])
          + ([f"  {self.repeated_games} games repeat an earlier one move for move; the interval "
              f"counts them as new games"] if self.repeated_games else []))

    def _colour_pairs_line(self) -> str:
        c = self.pairs_by_colour
        other = self.score_other_pairs
        return (f"  pairs won twice by black {c['black']}, by white {c['white']}; A's score over "
                f"the other {c['other']}: {_fmt_score(other)}")

    def to_dict(self) -> dict:
        w, d, l = self.counts()
        paired = self.paired_elo
        return {
            "player_a": self.player_a, "player_b": self.player_b, "game": self.game.to_dict(),
            "games": len(self.records), "wins": w, "draws": d, "losses": l, "score": self.score,
            "a_as_black": dict(zip(("wins", "draws", "losses"), self.counts(BLACK)),
                               score=self.score_as(BLACK)),
            "a_as_white": dict(zip(("wins", "draws", "losses"), self.counts(WHITE)),
                               score=self.score_as(WHITE)),
            "elo": self.elo.to_dict(), "repeated_games": self.repeated_games,
            "elo_paired": None if paired is None else paired.to_dict(),
            "pair_scores": self.pair_scores,
            "pairs_by_colour": self.pairs_by_colour, "score_other_pairs": self.score_other_pairs,
            "seconds": self.seconds,
        }


def _fmt_score(score: float | None) -> str:
    return "-" if score is None else f"{score:.3f}"


def balanced_openings(model_path: str, game: GameConfig, count: int, seed: int = 0,
                      max_stones: int = 6) -> list[tuple[int, ...]]:
    """``count`` openings of 2 to ``max_stones`` stones that the network in ``model_path``
    values close to even for the side to move, no two the same up to symmetry: drawn as
    self-play draws its openings (:func:`alphagomoku.selfplay.openings.balanced_opening`), but
    with a tighter bar (|v| <= 0.3, 32 candidates a draw). Between players of similar strength,
    two stones at the centre let black win nearly every game; these let either colour win."""
    import torch

    from alphagomoku.nn import Evaluator
    from alphagomoku.nn.io import load_model
    from alphagomoku.selfplay.openings import OpeningSettings, balanced_opening

    model = load_model(model_path, device="cpu").eval()
    if not model.config.plays(game.width, game.height):
        raise ValueError(f"the model in {model_path} plays {model.config.boards_played}, not "
                         f"{game.width}x{game.height}")
    evaluator = Evaluator(model, torch.device("cpu"))
    settings = OpeningSettings(min_stones=2, max_stones=max_stones, candidates=32, max_value=0.3)

    def draw(rng):
        moves, _, _ = balanced_opening(game, evaluator, settings, rng,
                                       model.config.vcf_plane_budget)
        return tuple(int(m) for m in moves) or None

    return _distinct(draw, game, count, 20 * count, seed)


def even_openings(spec: str, candidates: list, game: GameConfig, count: int, seed: int = 0,
                  workers: int = 0, time_per_move: float | None = None,
                  device: str = "auto", progress: bool = False) -> tuple[list[tuple[int, ...]], int]:
    """The openings among ``candidates`` on which the player ``spec``, playing itself once from
    each side, won once with black and once with white: even for that player, whichever colour
    is stronger from openings in general. Returns (at most ``count`` of them, candidates
    tried); the caller decides what too few means."""
    result = run_arena(spec, spec, 2 * len(candidates), game, workers=workers, seed=seed,
                       time_per_move=time_per_move, device=device, progress=progress,
                       openings=list(candidates))
    even = [tuple(candidates[k]) for k in range(len(candidates))
            if {result.records[2 * k].winner, result.records[2 * k + 1].winner} == {BLACK, WHITE}]
    return even[:count], len(candidates)


def screen_even_openings(spec: str, draw, game: GameConfig, count: int, seed: int = 0,
                         workers: int = 0, time_per_move: float | None = None,
                         device: str = "auto", max_candidates: int | None = None,
                         progress: bool = False) -> tuple[list[tuple[int, ...]], int]:
    """``count`` openings even for ``spec`` (:func:`even_openings`), no two the same up to the
    board's symmetries. ``draw(n, round)`` gives n candidates; they are screened in rounds,
    3 x ``count`` first, then as many as the rate found so far says are missing, until
    ``count`` are found, ``max_candidates`` (default 10 x ``count``) have been tried, or a round
    draws nothing new. Returns (the openings, candidates tried). Fewer than ``count`` is
    returned as it is, never padded with repeats: a repeated opening at a fixed time a move
    often replays the same game, which a confidence interval would count as new evidence."""
    positive_int("count", count)
    limit = 10 * count if max_candidates is None else max_candidates
    found: list[tuple[int, ...]] = []
    seen: set = set()
    tried = 0
    for round_ in range(limit):
        need = count - len(found)
        if need <= 0 or tried >= limit:
            break
        n = 3 * need if not tried else int(np.ceil(1.25 * need / max(len(found) / tried, 0.1)))
        n = min(limit - tried, max(need, n))
        fresh = [c for c in distinct_openings(draw(n, round_), game)
                 if _canonical(c, game) not in seen]
        seen.update(_canonical(c, game) for c in fresh)
        if not fresh:
            break
        even, _ = even_openings(spec, fresh, game, need, seed + round_, workers, time_per_move,
                                device, progress)
        found += even
        tried += len(fresh)
    return found, tried


def make_tasks(spec_a: str, spec_b: str, games: int, game: GameConfig, seed: int = 0,
               opening_moves: int = 2, time_per_move: float | None = None,
               device: str = "auto", openings: list | None = None,
               search_a: dict | None = None, search_b: dict | None = None) -> list[GameTask]:
    """Games 2k and 2k+1 play opening k (of ``openings`` if given, else of
    :func:`make_openings`), A black in the first and white in the second."""
    if not isinstance(games, int) or games < 2 or games % 2:
        raise ValueError(f"games must be an even number of at least 2 (each opening is played "
                         f"once with each colour), got {games!r}")
    if openings is None:
        openings = make_openings(game, games // 2, opening_moves, seed)
    elif len(openings) < games // 2:
        raise ValueError(f"{games} games need {games // 2} openings, got {len(openings)}")
    return [GameTask(i, spec_a, spec_b, i % 2 == 0, game.to_dict(), openings[i // 2],
                     seed * 100_003 + i, time_per_move, device,
                     tuple((search_a or {}).items()), tuple((search_b or {}).items()))
            for i in range(games)]


def run_arena(spec_a: str, spec_b: str, games: int, game: GameConfig | None = None,
              workers: int = 0, seed: int = 0, opening_moves: int = 2,
              time_per_move: float | None = None, out_dir=None, device: str = "auto",
              progress: bool = True, openings: list | None = None,
              search_a: dict | None = None, search_b: dict | None = None) -> ArenaResult:
    """Play ``games`` games of A (``spec_a``) against B; see :mod:`alphagomoku.eval.specs` for
    the specs. ``openings``: the openings to play (each twice), instead of ``opening_moves``
    random stones (see :func:`balanced_openings`). ``search_a``, ``search_b``: SearchConfig
    fields a side's network player takes instead of the defaults
    (:func:`alphagomoku.eval.specs.search_settings`). ``out_dir``: each game is written there as
    ``game_NNNN.psq`` and ``.txt`` as it finishes. Raises ArenaError if any game fails."""
    from alphagomoku.eval.specs import check_player_spec
    from alphagomoku.progress import progress as progress_display

    game = game or GameConfig()
    for spec in (spec_a, spec_b):
        check_player_spec(spec, game)
    non_negative_int("workers", workers)
    tasks = make_tasks(spec_a, spec_b, games, game, seed, opening_moves, time_per_move, device,
                       openings, search_a, search_b)
    out = Path(out_dir) if out_dir is not None else None
    result = ArenaResult(player_label(spec_a, search_a), player_label(spec_b, search_b), game)
    done: dict[int, GameRecord] = {}
    tally = [0, 0, 0]  # A's wins, draws, losses so far
    desc = f"{result.player_a} vs {result.player_b}"
    bar = progress_display(total=len(tasks), desc=desc if len(desc) <= 50 else desc[:47] + "...",
                           unit="game", disable=not progress)
    t0 = time.perf_counter()

    def collect(index: int, status: str, payload) -> None:
        task = tasks[index]
        if status != "ok":
            black, white = ((result.player_a, result.player_b) if task.a_black
                            else (result.player_b, result.player_a))
            raise ArenaError(f"game {index} ({black} black vs {white} white, opening "
                             f"{list(task.opening)}) failed:\n{payload}")
        record = GameRecord.from_dict(payload)
        done[index] = record
        if record.winner == DRAW:
            tally[1] += 1
        else:
            tally[0 if (record.winner == BLACK) == task.a_black else 2] += 1
        bar.set_postfix_str(f"A +{tally[0]} ={tally[1]} -{tally[2]}", refresh=False)
        if out is not None:
            write_psq(record, out / f"game_{index:04d}.psq")
            write_text(record, out / f"game_{index:04d}.txt")
        bar.update(1)

    try:
        if workers == 0:
            for task in tasks:
                collect(*_play_task(task))
        else:
            ctx = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(max_workers=min(workers, len(tasks)), mp_context=ctx,
                                     initializer=_worker_init) as pool:
                futures = [pool.submit(_play_task, task) for task in tasks]
                try:
                    for fut in as_completed(futures):
                        try:
                            collect(*fut.result())
                        except BrokenProcessPool as e:
                            raise ArenaError(f"a worker process died (killed or crashed) while "
                                             f"playing: {e}") from e
                finally:
                    for fut in futures:
                        fut.cancel()
    finally:
        bar.close()
    result.records = [done[i] for i in range(len(tasks))]
    result.a_black = [t.a_black for t in tasks]
    result.seconds = time.perf_counter() - t0
    return result
