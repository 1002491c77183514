"""One connection's game: its moves, who sits at each colour, and the one search it may run.

Messages are handled on the event loop; anything that searches (a model's move, an analysis,
a review, a comparison) runs in the session's own worker thread, one at a time, taking turns
with the other pages' searches (:mod:`alphagomoku.web.turns`). A new request
stops the running search first (its stop flag is seen at the next evaluator batch or
pure-MCTS step), and closing the session stops it too, so a page that goes away leaves nothing
running. ``send`` must be safe to call from the worker thread.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

from alphagomoku.game import BLACK, WHITE, GameConfig, IllegalMoveError, Position
from alphagomoku.game.constants import MAX_SIZE, MIN_SIZE
from alphagomoku.web import run_games, views
from alphagomoku.web.analysis import SNAPSHOT_S, SearchStopped, analyse, search_snapshot
from alphagomoku.web.messages import MessageError
from alphagomoku.web.models import Catalog, WebPlayer
from alphagomoku.web.notation import NotationError, parse_moves
from alphagomoku.web.turns import Turns

log = logging.getLogger("alphagomoku.web")

HUMAN = "human"
DEFAULT_STRENGTH = ("seconds", 1.0)
DEFAULT_THINK_SIMULATIONS = 200
DEFAULT_REVIEW_SIMULATIONS = 64
# A timed model move is given the time asked, less what passed since the person's move reached
# the server (stopping the analysis of their turn) and this much for the answer's way back, so
# the stone appears within the time asked as the person counts it, from their click.
REPLY_MARGIN_S = 0.04
_COLOURS = {BLACK: "black", WHITE: "white"}


class Counters:
    """What the server's status page reports: open connections and running searches."""

    def __init__(self):
        self.lock = threading.Lock()
        self.connections = 0
        self.searches = 0

    def add(self, name: str, delta: int) -> None:
        with self.lock:
            setattr(self, name, getattr(self, name) + delta)


class Session:
    def __init__(self, catalog: Catalog, send: Callable[[dict], None], counters: Counters,
                 turns: Turns, run_dir: Path | None = None, name: str = "client"):
        self.catalog = catalog
        self.send = send
        self.counters = counters
        self.turns = turns
        self.run_dir = run_dir
        self.name = name
        self.game = GameConfig(catalog.start_size)
        self.moves: list[int] = []
        self.cursor = 0
        self.resigned: int | None = None  # the colour that resigned, on the last move
        default = catalog.default or "pure MCTS"
        self.seats = {BLACK: HUMAN, WHITE: default}
        self.strength = DEFAULT_STRENGTH
        self.think = True
        self.think_simulations = DEFAULT_THINK_SIMULATIONS
        self.values: dict[int, float] = {}  # ply -> search value for the side to move then
        self.players: dict[str, WebPlayer] = {}
        self.generation = 0  # bumped by every change of the game, so stale results are dropped
        self._executor = ThreadPoolExecutor(1, thread_name_prefix=f"search-{name}")
        self._stop = threading.Event()
        self._job: asyncio.Task | None = None
        self._lock = asyncio.Lock()
        self._closed = False

    # -- the game -----------------------------------------------------------------------------
    def position(self, ply: int | None = None) -> Position:
        return Position.from_moves(self.moves[:self.cursor if ply is None else ply], self.game)

    def _over(self, position: Position) -> bool:
        return position.is_over or (self.resigned is not None and self.cursor == len(self.moves))

    def _model_to_move(self, position: Position) -> str | None:
        if self._over(position) or self.cursor != len(self.moves):
            return None
        seat = self.seats[position.to_move]
        return None if seat == HUMAN else seat

    def state(self) -> dict:
        p = self.position()
        winner, reason = p.winner, p.win_reason
        if self.resigned is not None and self.cursor == len(self.moves):
            winner, reason = 3 - self.resigned, f"{_COLOURS[self.resigned]} resigned"
        return {
            "type": "state", "size": self.game.width, "rule": self.game.rule,
            "moves": [p.name(m) for m in self.moves], "cursor": self.cursor,
            "to_move": p.to_move, "over": self._over(p), "winner": winner, "reason": reason,
            "win_line": [p.name(m) for m in views.winning_line(p)],
            "forbidden": [p.name(m) for m in views.forbidden_points(p)],
            "black": self.seats[BLACK], "white": self.seats[WHITE],
            "strength": {"kind": self.strength[0], "value": self.strength[1]},
            "think": self.think, "think_simulations": self.think_simulations,
            "position": "".join(p.name(m) for m in p.moves),
        }

    def values_message(self) -> dict:
        p = Position(self.game)
        return {
            "type": "values",
            "black_win_rate": {str(k): round(views.black_win_rate(k, v), 4)
                               for k, v in sorted(self.values.items()) if k <= len(self.moves)},
            "mistakes": views.mistakes(self.values, self.moves, p.name),
        }

    def info(self) -> dict:
        return {
            "type": "info", "models": self.catalog.describe(), "default_model": self.catalog.default,
            "sizes": [MIN_SIZE, MAX_SIZE], "rules": ["freestyle", "standard", "renju"],
            "run_games": self.run_dir is not None,
        }

    def _set_game(self, game: GameConfig, moves: list[int], cursor: int | None = None) -> None:
        self.game = game
        self.moves = moves
        self.cursor = len(moves) if cursor is None else cursor
        self.resigned = None
        self.values = {}
        self.generation += 1

    # -- messages -----------------------------------------------------------------------------
    async def handle(self, msg: dict) -> None:
        """Act on one checked message (messages.parse_message); bad requests raise
        MessageError, which the caller reports to the page."""
        kind = msg["type"]
        handler = getattr(self, f"_on_{kind}")
        await handler(msg)

    async def open(self) -> None:
        """Greet a new page: what it may choose from, the game, and its first analysis."""
        self.send(self.info())
        await self._changed()

    async def _on_info(self, msg):
        self.send(self.info())
        self.send(self.state())

    def _seat(self, value: str) -> str:
        if value != HUMAN and value not in self.catalog.entries and value != "pure MCTS":
            raise MessageError(f"unknown player {value!r}: choose 'human' or one of "
                               f"{', '.join(self.catalog.entries) or 'no models'}")
        return value

    async def _on_new(self, msg):
        size = msg.get("size", self.game.width)
        rule = msg.get("rule", self.game.rule)
        seats = {c: self._seat(msg.get(_COLOURS[c], self.seats[c])) for c in (BLACK, WHITE)}
        try:
            game = GameConfig(width=size, height=size, rule=rule)
        except ValueError as e:
            raise MessageError(f"board: {e}") from None
        moves = []
        if msg.get("moves"):
            try:
                moves = parse_moves(msg["moves"], game)
            except NotationError as e:
                raise MessageError(f"position string: {e}") from None
        await self._stop_job()
        self.seats = seats
        self._set_game(game, moves)
        await self._changed()

    async def _on_settings(self, msg):
        for c in (BLACK, WHITE):
            if _COLOURS[c] in msg:
                self.seats[c] = self._seat(msg[_COLOURS[c]])
        if "strength" in msg:
            self.strength = msg["strength"]
        if "think" in msg:
            self.think = msg["think"]
        if "think_simulations" in msg:
            self.think_simulations = msg["think_simulations"]
        await self._stop_job()
        await self._changed()

    async def _on_move(self, msg):
        received = time.monotonic()
        p = self.position()
        if self._over(p):
            raise MessageError("the game is over: start a new one, or go back to an earlier move")
        seat = self.seats[p.to_move]
        if seat != HUMAN and self.cursor == len(self.moves):
            raise MessageError(f"it is {_COLOURS[p.to_move]}'s turn, played by {seat}: wait for "
                               "its move")
        try:
            index = p.check_move(msg["move"])
        except IllegalMoveError as e:
            raise MessageError(f"illegal move: {e}") from None
        await self._stop_job()
        # Playing from an earlier move starts a new line from there, as in a game review.
        self.moves = self.moves[:self.cursor] + [index]
        self.cursor += 1
        self.resigned = None
        self.values = {k: v for k, v in self.values.items() if k < self.cursor}
        self.generation += 1
        await self._changed(since=received)

    async def _on_undo(self, msg):
        if not self.moves:
            raise MessageError("nothing to undo")
        await self._stop_job()
        cursor = min(self.cursor, len(self.moves)) - 1 if self.resigned is None else self.cursor
        cursor = max(cursor, 0)
        # Back to a position where a person is to move, so a model does not answer at once.
        while cursor > 0 and self.seats[self.position(cursor).to_move] != HUMAN \
                and HUMAN in self.seats.values():
            cursor -= 1
        self.moves = self.moves[:cursor]
        self.cursor = cursor
        self.resigned = None
        self.values = {k: v for k, v in self.values.items() if k <= cursor}
        self.generation += 1
        await self._changed()

    async def _on_resign(self, msg):
        p = self.position()
        if self._over(p):
            raise MessageError("the game is already over")
        humans = [c for c in (BLACK, WHITE) if self.seats[c] == HUMAN]
        if not humans:
            raise MessageError("no person plays in this game: nothing to resign")
        await self._stop_job()
        self.moves = self.moves[:self.cursor]
        self.resigned = p.to_move if p.to_move in humans else humans[0]
        self.generation += 1
        await self._changed()

    async def _on_goto(self, msg):
        ply = msg["ply"]
        if not 0 <= ply <= len(self.moves):
            raise MessageError(f"ply must be from 0 to {len(self.moves)}, got {ply}")
        await self._stop_job()
        self.cursor = ply
        self.generation += 1
        await self._changed()

    async def _on_stop(self, msg):
        await self._stop_job()
        self.send({"type": "stopped"})

    async def _on_analyse(self, msg):
        p = self.position()
        if p.is_over:
            raise MessageError("the game is over in this position: nothing to analyse")
        model = self._model_for_analysis(msg.get("model"))
        sims = msg.get("simulations", self.think_simulations)
        await self._start(self._analysis_job(p, model, sims, self.generation))

    async def _on_review(self, msg):
        if not self.moves:
            raise MessageError("no moves to review")
        sims = msg.get("simulations", DEFAULT_REVIEW_SIMULATIONS)
        await self._start(self._review_job(self._model_for_analysis(None), sims, self.generation))

    async def _on_compare(self, msg):
        p = self.position()
        if p.is_over:
            raise MessageError("the game is over in this position: nothing to compare")
        models = [self._model_for_analysis(m) for m in msg["models"]]
        sims = msg.get("simulations", self.think_simulations)
        await self._start(self._compare_job(p, models, sims, self.generation))

    async def _on_load_psq(self, msg):
        from alphagomoku.records import RecordError, parse_psq

        try:
            record = parse_psq(msg["text"], source="the .psq file")
        except RecordError as e:
            raise MessageError(str(e)) from None
        await self._load_record(record.game, record.moves, f"{record.black} vs {record.white}: "
                                                           f"{record.result_text}")

    # Reading files is not a search: it runs beside the session's search thread, so a page is
    # never kept waiting behind a long analysis.
    async def _on_run_games(self, msg):
        self.send({"type": "run_games",
                   "files": await asyncio.to_thread(run_games.list_games, self.run_dir)})

    async def _on_load_run_game(self, msg):
        game, moves, title = await asyncio.to_thread(run_games.load_game, self.run_dir,
                                                     msg["file"], msg["index"])
        await self._load_record(game, moves, title)

    async def _load_record(self, game: GameConfig, moves: list[int], title: str) -> None:
        await self._stop_job()
        # A recorded game is for review: nobody is to move in it.
        self.seats = {BLACK: HUMAN, WHITE: HUMAN}
        self._set_game(game, list(moves), cursor=0)
        self.send({"type": "loaded", "title": title})
        await self._changed()

    # -- players ------------------------------------------------------------------------------
    def _model_for_analysis(self, name: str | None) -> str:
        if name is not None:
            return self._seat(name) if name != HUMAN else self._model_for_analysis(None)
        for c in (WHITE, BLACK):
            if self.seats[c] != HUMAN:
                return self.seats[c]
        return self.catalog.default or "pure MCTS"

    def _player(self, name: str) -> WebPlayer:
        """(worker thread) The connection's player for model ``name``, built on first use."""
        player = self.players.get(name)
        if player is None:
            entry = self.catalog.entries.get(name)
            player = WebPlayer(entry, source=self.catalog.runnable(entry) if entry else None)
            if player.load_error:
                self.send({"type": "error", "message": f"{player.load_error}; pure MCTS plays "
                                                       "instead"})
            self.players[name] = player
        if player.game != self.game:
            player.prepare(self.game)
            if not player.uses_network:
                self.send({"type": "notice", "message": f"{self.game.width}x{self.game.height}: "
                                                        f"{player.supports()}"})
        return player

    # -- searches -----------------------------------------------------------------------------
    async def _in_thread(self, fn, *args):
        """``fn(*args)`` in the session's worker thread."""
        loop = asyncio.get_running_loop()

        def counted():
            self.counters.add("searches", 1)
            try:
                with self.turns.held():
                    return fn(*args)
            finally:
                self.counters.add("searches", -1)

        return await loop.run_in_executor(self._executor, counted)

    async def _stop_job(self) -> None:
        job = self._job
        if job is not None and not job.done():
            self._stop.set()
            try:
                await job
            except Exception:  # noqa: BLE001 - the job reports its own errors
                pass
        self._job = None

    async def _start(self, coro) -> None:
        """Stop the running job, then run ``coro`` as the session's job."""
        async with self._lock:
            await self._stop_job()
            if self._closed:
                coro.close()
                return
            self._stop = threading.Event()
            self._job = asyncio.create_task(self._guarded(coro))

    async def _guarded(self, coro):
        try:
            await coro
        except SearchStopped:
            pass
        except MessageError as e:
            log.warning("%s: %s", self.name, e)
            self.send({"type": "error", "message": str(e)})
        except Exception as e:  # noqa: BLE001 - one request's failure must not end the session
            log.exception("%s: search failed", self.name)
            self.send({"type": "error", "message": f"the search failed: {type(e).__name__}: {e}"})

    async def _changed(self, since: float | None = None) -> None:
        """After any change: send the state, then start what follows (the model's move, or the
        analysis of the position when thinking is on). ``since``: when the change was asked
        for (the model's time counts from then)."""
        since = time.monotonic() if since is None else since
        self.send(self.state())
        self.send(self.values_message())
        p = self.position()
        model = self._model_to_move(p)
        if model is not None:
            await self._start(self._model_turn(p, model, self.generation, since))
        elif self.think and not p.is_over:
            await self._start(self._analysis_job(p, self._model_for_analysis(None),
                                                 self.think_simulations, self.generation))

    def _changed_soon(self) -> None:
        # Called at the end of a job: the next job may only start once this one has ended.
        asyncio.get_running_loop().create_task(self._changed())

    async def _model_turn(self, position: Position, model: str, generation: int,
                          since: float) -> None:
        stop = self._stop
        kind, amount = self.strength
        ply = len(position.moves)
        self.send({"type": "thinking", "ply": ply, "model": model, "colour": position.to_move,
                   "strength": {"kind": kind, "value": amount}})

        def choose():
            player = self._player(model)
            last = [time.monotonic()]

            def on_batch():
                self.turns.pass_on()
                now = time.monotonic()
                if now - last[0] < SNAPSHOT_S:
                    return
                last[0] = now
                forest = player.kept_forest(position)
                if forest is not None:
                    self.send({"type": "analysis", "ply": ply, "model": model, "source": "move",
                               "live": True, **search_snapshot(forest, position)})

            seconds = None
            if kind == "seconds":
                seconds = max(0.05, amount - (time.monotonic() - since) - REPLY_MARGIN_S)
            move = player.choose(position.copy(), amount if kind == "simulations" else None,
                                 seconds, stop, on_batch)
            elapsed = time.monotonic() - since
            forest = player.kept_forest(position)
            final = search_snapshot(forest, position) if forest is not None else None
            return move, elapsed, player.player.last_note, final

        move, seconds, note, final = await self._in_thread(choose)
        if generation != self.generation or self._closed:
            return
        if final is not None:
            # The model's own search of its move: a point of the win-rate curve too.
            self.values[ply] = final["search_value"]
            self.send({"type": "analysis", "ply": ply, "model": model, "source": "move",
                       "live": False, **final})
        self.moves = self.moves[:self.cursor] + [move]
        self.cursor += 1
        self.generation += 1
        self.send({"type": "model_move", "ply": ply + 1, "move": position.name(move),
                   "model": model, "seconds": round(seconds, 3), "note": note})
        self._changed_soon()

    async def _analysis_job(self, position: Position, model: str, simulations: int,
                            generation: int, source: str = "analysis") -> dict | None:
        stop = self._stop
        ply = len(position.moves)

        def emit(snapshot):
            self.send({"type": "analysis", "ply": ply, "model": model, "source": source,
                       **snapshot})

        def run():
            player = self._player(model)
            result = analyse(position, player.evaluator(), player.search_config(), simulations,
                             stop, emit, seed=ply, between_batches=self.turns.pass_on)
            return result

        result = await self._in_thread(run)
        if generation != self.generation:
            return None
        emit(result)
        self.values[ply] = result["search_value"]
        self.send(self.values_message())
        return result

    async def _review_job(self, model: str, simulations: int, generation: int) -> None:
        stop = self._stop
        total = len(self.moves)
        for ply in range(total + 1):
            p = self.position(ply)
            if p.is_over:
                break
            if ply in self.values:
                continue

            def run(p=p):
                player = self._player(model)
                return analyse(p, player.evaluator(), player.search_config(), simulations,
                               stop, lambda _: None, seed=ply, between_batches=self.turns.pass_on)

            result = await self._in_thread(run)
            if generation != self.generation:
                return
            self.values[ply] = result["search_value"]
            self.send({**self.values_message(), "review": {"done": ply, "of": total}})
        self.send({**self.values_message(), "review": {"done": total, "of": total}})

    async def _compare_job(self, position: Position, models: list[str], simulations: int,
                           generation: int) -> None:
        stop = self._stop
        results = []
        for model in models:
            def run(model=model):
                player = self._player(model)
                result = analyse(position, player.evaluator(), player.search_config(),
                                 simulations, stop, lambda _: None, seed=len(position.moves),
                                 between_batches=self.turns.pass_on)
                return {"model": model, "player": player.supports(), **result}

            results.append(await self._in_thread(run))
        if generation == self.generation:
            self.send({"type": "compare", "ply": len(position.moves), "results": results})

    async def close(self) -> None:
        """Stop the running search and free the worker thread; called when the page goes."""
        self._closed = True
        self._stop.set()
        job = self._job
        if job is not None and not job.done():
            try:
                await asyncio.wait_for(asyncio.shield(job), timeout=5.0)
            except Exception:  # noqa: BLE001 - going away regardless
                pass
        self._executor.shutdown(wait=False, cancel_futures=True)
        for player in self.players.values():
            player.close()
