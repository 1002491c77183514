"""The web page's server, message by message (Starlette's test client), and under load on
127.0.0.1: every message type, each bad input answered with an error and the connection kept,
twenty connections searching at once, and a search freed within a second of its page going."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
import warnings
from types import SimpleNamespace

import numpy as np
import pytest

try:
    import httpx  # noqa: F401 - Starlette's test client runs on it
    import starlette  # noqa: F401
    import uvicorn  # noqa: F401
    import websockets  # noqa: F401
except ImportError as e:
    # CI installs the web extras (.ci/run): there a missing one is a failure, not a skip.
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        raise
    pytest.skip(f"the web extras are not installed: pip install '.[web,web-test]' ({e})",
                allow_module_level=True)

with warnings.catch_warnings():
    # Starlette suggests httpx2 for its test client; httpx is what it runs on today.
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

from alphagomoku.game import GameConfig, Position  # noqa: E402
from alphagomoku.records import GameRecord, psq_text  # noqa: E402
from alphagomoku.web.app import create_app  # noqa: E402
from alphagomoku.web.models import Catalog, ModelEntry  # noqa: E402
from tests.web_helpers import WEB_GAME, LiveServer, receive_json, receive_until, tiny_model  # noqa: E402

FAST = {"kind": "simulations", "value": 16}


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("web-models")
    tiny_model(folder, name="tiny.pt")
    tiny_model(folder, name="other.pt")
    (folder / "broken.pt").write_bytes(b"not a model")
    return folder


@pytest.fixture(scope="module")
def catalog(model_dir):
    return Catalog([ModelEntry("tiny", model_dir / "tiny.pt"),
                    ModelEntry("other", model_dir / "other.pt"),
                    ModelEntry("broken", model_dir / "broken.pt")])


@pytest.fixture(scope="module")
def client(catalog):
    with TestClient(create_app(catalog)) as c:
        yield c


def open_game(ws, **fields):
    """A fresh 9x9 game with fast model moves and no analysis on the person's turn."""
    receive_until(ws, "state")
    ws.send_json({"type": "settings", "strength": FAST, "think": False})
    receive_until(ws, "state")
    ws.send_json({"type": "new", "size": WEB_GAME.width, "rule": "freestyle", "black": "human",
                  "white": "tiny", **fields})
    return receive_until(ws, "state", lambda m: m["size"] == WEB_GAME.width)[0]


def error_after(ws, message) -> str:
    ws.send_text(message if isinstance(message, str) else json.dumps(message))
    return receive_until(ws, "error")[0]["message"]


def test_page_and_static_files_are_served(client):
    page = client.get("/")
    assert page.status_code == 200 and "alphagomoku" in page.text
    for name in ("app.js", "board.js", "graph.js", "style.css"):
        assert client.get(f"/static/{name}").status_code == 200
    # Nothing is loaded from outside the machine.
    assert "http" not in page.text.replace("http-equiv", "")
    status = client.get("/status").json()
    assert status["searches"] == 0 and [m["name"] for m in status["models"]][0] == "tiny"


def test_a_game_against_the_model(client):
    with client.websocket_connect("/ws") as ws:
        info = receive_json(ws)
        assert info["type"] == "info" and info["default_model"] == "tiny"
        state = open_game(ws)
        assert state["moves"] == [] and state["to_move"] == 1
        ws.send_json({"type": "move", "move": "e5"})
        state, _ = receive_until(ws, "state", lambda m: m["moves"] == ["e5"])
        assert state["to_move"] == 2
        move, seen = receive_until(ws, "model_move")
        assert any(m["type"] == "thinking" for m in seen)
        assert move["ply"] == 2 and move["model"] == "tiny"
        state, _ = receive_until(ws, "state", lambda m: len(m["moves"]) == 2)
        assert state["moves"][1] == move["move"] != "e5"
        # Undo takes back the model's reply and the person's move.
        ws.send_json({"type": "undo"})
        state, _ = receive_until(ws, "state", lambda m: m["moves"] == [])
        # Resigning ends the game for the person's side.
        ws.send_json({"type": "resign"})
        state, _ = receive_until(ws, "state", lambda m: m["over"])
        assert state["winner"] == 2 and "resigned" in state["reason"]
        assert "over" in error_after(ws, {"type": "move", "move": "a1"})


def test_the_model_plays_both_sides_to_the_end(client):
    with client.websocket_connect("/ws") as ws:
        open_game(ws, black="tiny", white="other")
        state, _ = receive_until(ws, "state", lambda m: m["over"], most=5000)
        assert state["winner"] in (0, 1, 2)
        if state["winner"] in (1, 2):
            assert len(state["win_line"]) >= 5
            assert state["moves"][-1] in state["win_line"]


def test_analysis_shows_policy_values_candidates_and_lines(client):
    with client.websocket_connect("/ws") as ws:
        open_game(ws, black="human", white="human", moves="e5d4")
        ws.send_json({"type": "analyse", "simulations": 60})
        final, _ = receive_until(ws, "analysis", lambda m: not m["live"])
        assert final["ply"] == 2 and final["network"] is True
        assert len(final["policy"]) == len(final["visit_share"]) == WEB_GAME.area
        assert abs(sum(final["policy"]) - 1) < 0.01 and abs(sum(final["visit_share"]) - 1) < 0.01
        assert -1 <= final["value_head"] <= 1 and -1 <= final["search_value"] <= 1
        assert final["visits"] >= 60
        top = final["candidates"][0]
        assert top["pv"][0] == top["move"] and top["visits"] > 0
        assert {"value", "prior"} <= set(top)
        # Occupied points get neither policy nor visits.
        for name in ("e5", "d4"):
            i = Position(WEB_GAME).index(name)
            assert final["policy"][i] == 0 and final["visit_share"][i] == 0
        values, _ = receive_until(ws, "values")
        assert "2" in values["black_win_rate"]


def test_a_proved_vcf_line_is_sent_with_the_analysis(client):
    with client.websocket_connect("/ws") as ws:
        # Black has three in a column with both ends open and is to move: a VCF.
        open_game(ws, black="human", white="human", moves="e3a1e4a2e5b1")
        ws.send_json({"type": "analyse", "simulations": 20})
        final, _ = receive_until(ws, "analysis", lambda m: not m["live"])
        solver = final["solver"]
        assert solver["kind"] == "vcf" and solver["attacker"] == 1
        assert solver["line"][0] in ("e6", "e2") and len(solver["line"]) == 3


def test_review_gives_every_position_a_win_rate(client):
    with client.websocket_connect("/ws") as ws:
        # Black makes an open four at the end: white, to move, has lost.
        open_game(ws, black="human", white="human", moves="e3a1e4a2e5b1e6")
        ws.send_json({"type": "review", "simulations": 24})
        values, _ = receive_until(ws, "values",
                                  lambda m: "review" in m and m["review"]["done"] == m["review"]["of"])
        rates = {int(k): v for k, v in values["black_win_rate"].items()}
        assert set(rates) == set(range(8))
        assert all(0 <= r <= 1 for r in rates.values())
        assert rates[7] == 1.0  # proved: white cannot stop an open four
        for m in values["mistakes"]:
            mover_black = m["ply"] % 2 == 1
            drop = rates[m["ply"] - 1] - rates[m["ply"]]
            assert m["loss"] == pytest.approx(drop if mover_black else -drop, abs=1e-3)


def test_goto_and_position_strings(client):
    with client.websocket_connect("/ws") as ws:
        open_game(ws, black="human", white="human", moves="e5 d4,f6")
        ws.send_json({"type": "goto", "ply": 1})
        state, _ = receive_until(ws, "state", lambda m: m["cursor"] == 1)
        assert state["position"] == "e5" and state["moves"] == ["e5", "d4", "f6"]
        # A move played from an earlier point starts a new line there.
        ws.send_json({"type": "move", "move": "a9"})
        state, _ = receive_until(ws, "state", lambda m: m["cursor"] == 2)
        assert state["moves"] == ["e5", "a9"]
        assert "ply must be" in error_after(ws, {"type": "goto", "ply": 9})
        assert "position string" in error_after(ws, {"type": "new", "moves": "e5e5"})
        assert "position string" in error_after(ws, {"type": "new", "moves": "e5zz"})


def test_renju_forbidden_points_are_sent_for_black(client):
    with client.websocket_connect("/ws") as ws:
        # Black to move at e5 would make two open threes (e3 e4 and c5 d5): a double three.
        state = open_game(ws, black="human", white="human", rule="renju", moves="e3a9e4a7c5a5d5")
        assert state["to_move"] == 2 and state["forbidden"] == []
        ws.send_json({"type": "move", "move": "i1"})
        state, _ = receive_until(ws, "state", lambda m: len(m["moves"]) == 8)
        assert "e5" in state["forbidden"]
        assert "forbidden" in error_after(ws, {"type": "move", "move": "e5"})


def test_compare_two_models_on_one_position(client):
    with client.websocket_connect("/ws") as ws:
        open_game(ws, black="human", white="human", moves="e5")
        ws.send_json({"type": "compare", "models": ["tiny", "other"], "simulations": 16})
        msg, _ = receive_until(ws, "compare")
        a, b = msg["results"]
        assert (a["model"], b["model"]) == ("tiny", "other")
        # Two different networks: their policies differ.
        assert a["policy"] != b["policy"]


def test_psq_files_and_run_games_load_for_review(client, tmp_path, catalog):
    moves = [Position(WEB_GAME).index(n) for n in ("e5", "d4", "f6")]
    text = psq_text(GameRecord(game=WEB_GAME, moves=moves, black="a", white="b"))
    with client.websocket_connect("/ws") as ws:
        open_game(ws)
        ws.send_json({"type": "load_psq", "text": text})
        loaded, _ = receive_until(ws, "loaded")
        assert "a vs b" in loaded["title"]
        state, _ = receive_until(ws, "state")
        assert state["moves"] == ["e5", "d4", "f6"] and state["cursor"] == 0
        assert state["black"] == state["white"] == "human"
        assert "not a .psq" in error_after(ws, {"type": "load_psq", "text": "hello"})
        assert "--run-dir" in error_after(ws, {"type": "run_games"})

    from alphagomoku.train.game_files import save_games

    run = tmp_path / "run"
    (run / "games").mkdir(parents=True)
    games = [SimpleNamespace(moves=np.array(moves), length=3, result=1, resigned=True, opening=0),
             SimpleNamespace(moves=np.array(moves[:2]), length=2, result=0, resigned=False,
                             opening=0)]
    save_games(run / "games" / "epoch_000001.npz", games, WEB_GAME)
    with TestClient(create_app(catalog, run_dir=run)) as c, c.websocket_connect("/ws") as ws:
        info = receive_json(ws)
        assert info["run_games"] is True
        ws.send_json({"type": "run_games"})
        listing, _ = receive_until(ws, "run_games")
        assert listing["files"] == [{"file": "epoch_000001.npz", "games": 2, "lengths": [3, 2]}]
        ws.send_json({"type": "load_run_game", "file": "epoch_000001.npz", "index": 0})
        state, _ = receive_until(ws, "state", lambda m: len(m["moves"]) == 3)
        assert state["moves"] == ["e5", "d4", "f6"]
        assert "no game file" in error_after(ws, {"type": "load_run_game",
                                                  "file": "../secret.npz", "index": 0})
        assert "holds games 0 to 1" in error_after(ws, {"type": "load_run_game",
                                                        "file": "epoch_000001.npz", "index": 7})


def test_run_dir_weights_are_listed(tmp_path, model_dir):
    import shutil

    (tmp_path / "weights").mkdir()
    shutil.copy(model_dir / "tiny.pt", tmp_path / "weights" / "best.pt")
    shutil.copy(model_dir / "tiny.pt", tmp_path / "weights" / "v000003.pt")
    names = list(Catalog.build(run_dir=tmp_path).entries)
    assert names == ["best", "v000003"]


@pytest.mark.parametrize("message, expected", [
    ("{not json", "not JSON"),
    ("[1, 2]", "JSON object"),
    ('{"type": "fly"}', "unknown message type"),
    ('{"type": "move"}', "missing field 'move'"),
    ('{"type": "move", "move": 5}', "must be str"),
    ('{"type": "move", "move": "e5", "extra": 1}', "unknown field"),
    ('{"type": "goto", "ply": true}', "must be int"),
    ('{"type": "new", "rule": "go"}', "rule must be one of"),
    ('{"type": "new", "size": 40}', "board"),
    ('{"type": "new", "white": "nobody"}', "unknown player"),
    ('{"type": "settings", "strength": {"kind": "seconds", "value": 0}}', "seconds per move"),
    ('{"type": "settings", "strength": {"kind": "moves", "value": 3}}', "strength.kind"),
    ('{"type": "analyse", "simulations": 20001}', "simulations must be"),
    ('{"type": "compare", "models": ["tiny"]}', "two model names"),
    ('{"type": "move", "move": "z99"}', "illegal move"),
])
def test_malformed_messages_get_a_clear_error_and_the_connection_stays(client, message, expected):
    with client.websocket_connect("/ws") as ws:
        open_game(ws)
        assert expected in error_after(ws, message)
        ws.send_json({"type": "move", "move": "e5"})  # still answering
        receive_until(ws, "state", lambda m: m["moves"] == ["e5"])


def test_illegal_and_out_of_turn_moves(client):
    with client.websocket_connect("/ws") as ws:
        open_game(ws)
        ws.send_json({"type": "settings", "strength": {"kind": "seconds", "value": 1.0}})
        ws.send_json({"type": "move", "move": "e5"})
        receive_until(ws, "thinking")
        # The model is thinking for a second: until it has moved, it is not the person's turn.
        assert "wait for its move" in error_after(ws, {"type": "move", "move": "a1"})
        receive_until(ws, "model_move")
        # The model's own search of its move is a point of the win-rate curve.
        values, _ = receive_until(ws, "values", lambda m: "1" in m["black_win_rate"])
        assert 0 <= values["black_win_rate"]["1"] <= 1
        assert "occupied" in error_after(ws, {"type": "move", "move": "e5"})
        assert "off the 9x9 board" in error_after(ws, {"type": "move", "move": "j10"})


def test_a_model_that_does_not_load_is_reported_and_pure_mcts_plays(client):
    with client.websocket_connect("/ws") as ws:
        open_game(ws, white="broken")
        ws.send_json({"type": "move", "move": "e5"})
        error, _ = receive_until(ws, "error")
        assert "does not load" in error["message"] and "pure MCTS plays" in error["message"]
        move, _ = receive_until(ws, "model_move")
        assert move["model"] == "broken"


def test_a_board_the_network_cannot_play_falls_back_to_pure_mcts(client):
    with client.websocket_connect("/ws") as ws:
        receive_until(ws, "state")
        ws.send_json({"type": "settings", "strength": FAST, "think": False})
        ws.send_json({"type": "new", "size": 7, "black": "human", "white": "tiny"})
        ws.send_json({"type": "move", "move": "d4"})
        notice, _ = receive_until(ws, "notice")
        assert "7x7" in notice["message"] and "plays 9x9 only" in notice["message"]
        receive_until(ws, "model_move")


def test_each_connection_has_its_own_game(client):
    with client.websocket_connect("/ws") as one, client.websocket_connect("/ws") as two:
        open_game(one, black="human", white="human")
        open_game(two, black="human", white="human")
        one.send_json({"type": "move", "move": "e5"})
        receive_until(one, "state", lambda m: m["moves"] == ["e5"])
        two.send_json({"type": "move", "move": "a1"})
        state, _ = receive_until(two, "state", lambda m: len(m["moves"]) == 1)
        assert state["moves"] == ["a1"]


def test_stop_ends_a_long_analysis(client):
    with client.websocket_connect("/ws") as ws:
        open_game(ws, black="human", white="human", moves="e5")
        ws.send_json({"type": "analyse", "simulations": 20_000})
        receive_until(ws, "analysis", lambda m: m["live"])
        ws.send_json({"type": "stop"})
        receive_until(ws, "stopped")
    assert client.get("/status").json()["searches"] == 0


# -- on a real server: twenty pages at once, and a page that goes mid-search ------------------

async def _until(ws, kind, where=lambda m: True) -> dict:
    """The next message of type ``kind`` (that ``where`` accepts) on a live connection."""
    while True:
        msg = json.loads(await ws.recv())
        if msg["type"] == kind and where(msg):
            return msg


async def _new_game(ws, moves: str) -> None:
    """A 9x9 game between two people from ``moves``, with thinking on one's turn off."""
    await _until(ws, "state")
    await ws.send(json.dumps({"type": "settings", "think": False}))
    await ws.send(json.dumps({"type": "new", "size": 9, "black": "human", "white": "human",
                              "moves": moves}))


async def _analyse(ws, simulations: int) -> dict:
    """Ask a page's server for an analysis and wait for its final snapshot."""
    start = time.monotonic()
    await ws.send(json.dumps({"type": "analyse", "simulations": simulations}))
    final = await _until(ws, "analysis", lambda m: not m["live"])
    return {"seconds": time.monotonic() - start, "visits": final["visits"]}


async def _page(url: str, moves: str, simulations: int) -> dict:
    import websockets

    async with websockets.connect(url, open_timeout=30) as ws:
        await _new_game(ws, moves)
        await _until(ws, "state", lambda m: m["position"] == moves)
        return await _analyse(ws, simulations)


def test_twenty_connections_searching_at_once(catalog):
    import httpx
    import websockets

    with LiveServer(create_app(catalog)) as server:
        url = f"ws://127.0.0.1:{server.port}/ws"
        # Every page builds its own player first: warm the kernels with one page.
        asyncio.run(_page(url, "e5", 16))
        openings = ["e5", "e5d4", "d5", "c3", "e5f6"]

        async def all_pages():
            async with contextlib.AsyncExitStack() as pages, httpx.AsyncClient() as http:
                # Twenty pages open with their games set up, and this client connected, before
                # the clock starts: what is measured is the server while twenty searches run,
                # not its twenty handshakes (nor this process's, which shares its cores).
                (await http.get(f"{server.url}/status", timeout=10)).raise_for_status()
                sockets = [await pages.enter_async_context(websockets.connect(url, open_timeout=30))
                           for _ in range(20)]
                for i, ws in enumerate(sockets):
                    await _new_game(ws, openings[i % 5])
                for i, ws in enumerate(sockets):
                    await _until(ws, "state", lambda m, i=i: m["position"] == openings[i % 5])
                start = time.monotonic()
                searches = asyncio.gather(*[_analyse(ws, 512) for ws in sockets])
                # Meanwhile the server must keep answering other requests promptly.
                waits = []
                while not searches.done():
                    t0 = time.monotonic()
                    (await http.get(f"{server.url}/status", timeout=10)).raise_for_status()
                    waits.append(time.monotonic() - t0)
                    await asyncio.sleep(0.05)
                results = await asyncio.wait_for(searches, timeout=240)
                return results, waits, time.monotonic() - start

        results, waits, wall = asyncio.run(all_pages())
        assert all(r["visits"] >= 512 for r in results)
        status = httpx.get(f"{server.url}/status").json()
        print(f"20 connections x 512 simulations: {wall:.1f} s wall, slowest page "
              f"{max(r['seconds'] for r in results):.1f} s; /status answered {len(waits)} "
              f"times meanwhile, slowest in {max(waits, default=0):.3f} s")
        # Searches that ran on the event loop, or crowded it out of the GIL, would hold a
        # request up for seconds, more the longer they ran; they take turns beside it.
        assert len(waits) >= 3 and max(waits) < min(1.0, wall / 3), waits
        assert status["searches"] == 0


def test_a_page_that_goes_mid_search_frees_it_within_a_second(catalog):
    import httpx
    import websockets

    async def go_away_mid_search(url):
        async with websockets.connect(url) as ws:
            await _new_game(ws, "e5")
            await _until(ws, "state", lambda m: m["position"] == "e5")
            await ws.send(json.dumps({"type": "analyse", "simulations": 20_000}))
            await _until(ws, "analysis", lambda m: m["live"])

    with LiveServer(create_app(catalog)) as server:
        asyncio.run(go_away_mid_search(f"ws://127.0.0.1:{server.port}/ws"))
        gone = time.monotonic()
        while True:
            status = httpx.get(f"{server.url}/status").json()
            if status["searches"] == 0 and status["connections"] == 0:
                break
            assert time.monotonic() - gone < 1.0, f"still running after 1 s: {status}"
            time.sleep(0.02)
        print(f"search freed {time.monotonic() - gone:.3f} s after the page went")


def test_the_command_serves_the_page_and_says_where(model_dir):
    import subprocess
    import sys
    from pathlib import Path

    import httpx

    from tests.web_helpers import free_port

    port = free_port()
    root = Path(__file__).resolve().parent.parent
    proc = subprocess.Popen(
        [sys.executable, str(root / "scripts" / "serve.py"), "--model", str(model_dir / "tiny.pt"),
         "--port", str(port), "--no-warm-up"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()
        assert f"http://127.0.0.1:{port}/" in line
        deadline = time.monotonic() + 30
        while True:
            try:
                page = httpx.get(f"http://127.0.0.1:{port}/")
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline, "the server never answered"
                time.sleep(0.1)
        assert page.status_code == 200
        models = httpx.get(f"http://127.0.0.1:{port}/status").json()["models"]
        assert [m["name"] for m in models] == ["tiny"]
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_the_command_refuses_a_missing_model(capsys, tmp_path):
    from alphagomoku.web.cli import main

    assert main(["--model", str(tmp_path / "nope.pt")]) == 2
    assert "no file at" in capsys.readouterr().err
    assert main(["--run-dir", str(tmp_path / "nope")]) == 2


def test_without_a_model_the_page_offers_the_shipped_networks_and_the_default_plays_20x20():
    from alphagomoku.web.models import WebPlayer

    catalog = Catalog.build()
    assert list(catalog.entries) == ["default", "cpu-hour"]  # the engine's network first
    entry = catalog.entries["default"]
    player = WebPlayer(entry, source=catalog.runnable(entry))
    player.prepare(GameConfig(width=20, height=20, rule="renju"))
    assert player.uses_network and player.supports() == "default (network)"
