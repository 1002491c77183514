"""The web server: the page's static files, a WebSocket per page, a status endpoint.

Each WebSocket gets its own :class:`~alphagomoku.web.session.Session` (its own game and search);
messages that cannot be acted on are answered with an ``error`` message and logged, and the
connection stays open. Replies are queued and written by one task, so the search thread can
send snapshots without touching the socket.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from pathlib import Path

from starlette.applications import Starlette
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from alphagomoku.device import cpu_count
from alphagomoku.web.messages import MessageError, parse_message
from alphagomoku.web.models import Catalog
from alphagomoku.web.session import Counters, Session
from alphagomoku.web.turns import Turns

log = logging.getLogger("alphagomoku.web")

STATIC = Path(__file__).parent / "static"
# Replies waiting to be written to one page: a page that stops reading is dropped rather than
# letting its snapshots pile up in the server's memory.
MAX_QUEUED = 1000


def create_app(catalog: Catalog | None = None, run_dir: str | Path | None = None) -> Starlette:
    catalog = catalog if catalog is not None else Catalog.build()
    run_dir = Path(run_dir) if run_dir is not None else None
    # Read now, not on the event loop when the first page connects.
    catalog.start_size
    counters = Counters()
    turns = Turns(cpu_count())
    ids = itertools.count(1)

    async def index(request):
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    async def status(request):
        return JSONResponse({"connections": counters.connections, "searches": counters.searches,
                             "models": catalog.describe()})

    async def socket(websocket: WebSocket):
        await websocket.accept()
        name = f"client-{next(ids)}"
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()

        def send(message: dict) -> None:
            # Safe from any thread: the reply is handed to the event loop.
            loop.call_soon_threadsafe(_put, message)

        def _put(message: dict) -> None:
            if queue.qsize() < MAX_QUEUED:
                queue.put_nowait(message)

        async def writer():
            while True:
                message = await queue.get()
                await websocket.send_json(message)

        session = Session(catalog, send, counters, turns, run_dir, name)
        counters.add("connections", 1)
        log.info("%s connected", name)
        pump = asyncio.create_task(writer())
        try:
            await session.open()
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                try:
                    await session.handle(parse_message(message.get("text") or message.get("bytes") or ""))
                except MessageError as e:
                    log.warning("%s: %s", name, e)
                    send({"type": "error", "message": str(e)})
        except WebSocketDisconnect:
            pass
        except Exception:  # noqa: BLE001 - a broken connection must not take the server down
            log.exception("%s: connection failed", name)
        finally:
            await session.close()
            pump.cancel()
            counters.add("connections", -1)
            log.info("%s disconnected", name)

    routes = [
        Route("/", index),
        Route("/status", status),
        WebSocketRoute("/ws", socket),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes)
    app.state.counters = counters
    app.state.catalog = catalog
    return app
