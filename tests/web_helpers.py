"""Shared by the web page's tests: a tiny network, a real server on 127.0.0.1, and reading a
WebSocket until a message arrives."""

from __future__ import annotations

import socket
import threading
import time
import zlib
from pathlib import Path

from alphagomoku.game import GameConfig

# The web tests' board: small, so a tiny network's searches and whole games take seconds.
WEB_GAME = GameConfig(9)


def tiny_model(folder: Path, width: int = WEB_GAME.width, name: str = "tiny.pt") -> Path:
    """An untrained tiny network saved as a weights file."""
    import torch

    from alphagomoku.nn import ModelConfig, PolicyValueNet
    from alphagomoku.nn.io import save_model

    torch.manual_seed(zlib.crc32(name.encode()))  # each name its own network
    path = folder / name
    save_model(path, PolicyValueNet(ModelConfig.preset("tiny", width)))
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    """The app under uvicorn in a thread, as ``alphagomoku-web`` runs it."""

    def __init__(self, app):
        import uvicorn

        self.port = free_port()
        self.app = app
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                ws="websockets-sansio")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the web server did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(timeout=10)


# The longest wait for one message in the message-level tests: a missing answer is a failure,
# not a hung suite.
MESSAGE_TIMEOUT_S = 60


def receive_json(ws, timeout: float = MESSAGE_TIMEOUT_S) -> dict:
    """The next message of a Starlette test WebSocket, or TimeoutError after ``timeout``
    seconds (its own receive_json waits for ever)."""
    import json

    import anyio

    async def receive():
        with anyio.fail_after(timeout):
            return await ws._send_rx.receive()

    message = ws.portal.call(receive)
    ws._raise_on_close(message)
    return json.loads(message["text"])


def receive_until(ws, kind: str, where=lambda m: True, most: int = 500) -> tuple[dict, list[dict]]:
    """Read a Starlette test WebSocket until a message of type ``kind`` that ``where`` accepts;
    returns it and everything read before it."""
    seen = []
    for _ in range(most):
        msg = receive_json(ws)
        if msg["type"] == kind and where(msg):
            return msg, seen
        seen.append(msg)
    raise AssertionError(f"no {kind!r} message in {most}: {[m['type'] for m in seen][-20:]}")
