"""Retake the web page's documentation screenshot (docs/web-1280.png, a 1280x800 window).

Starts ``alphagomoku-web`` (the shipped networks) on a free port, opens the page in headless
Chromium, loads the 15x15 freestyle position h8i9j10i8i10j9, reviews the game for the win-rate
graph, analyses the position (the page's 2000 simulations, seeded, on one thread), previews the
second candidate's line on the board, picks ``default`` and ``cpu-hour`` to compare, and saves
the picture. Needs the web and web-test extras and Chromium at /usr/bin/chromium.

    .venv/bin/python tools/web_screenshot.py [--out docs/web-1280.png]
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
# Flags that let Chromium run as root on a machine without a network or a GPU.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-quic"]
POSITION = "h8i9j10i8i10j9"
ANALYSE_VISITS = "2000"  # what the page's Analyse button asks for


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int) -> subprocess.Popen:
    """The server as a person runs it, on one core, once it answers (the warm-up may take a
    minute while Numba compiles its kernels)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
    server = subprocess.Popen([sys.executable, "-m", "alphagomoku.web", "--port", str(port)],
                              cwd=ROOT, env=env)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the web server exited with status {server.returncode}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2).close()
            return server
        except OSError:
            time.sleep(0.5)
    server.terminate()
    raise RuntimeError("the web server did not start in 10 minutes")


def take(url: str, out: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.set_default_timeout(300_000)
            page.goto(url)
            page.wait_for_selector('#connection[data-state="open"]')
            page.wait_for_selector('#compare-b option[value="cpu-hour"]', state="attached")
            page.select_option("#size", "15")
            page.select_option("#rule", "freestyle")
            page.fill("#position", POSITION)
            page.click("#load-position")
            page.wait_for_function(
                "p => document.querySelector('#position').value === p"
                " && document.querySelectorAll('#move-list li').length === 6", arg=POSITION)
            page.click("#review")  # 64 simulations a position, for the win-rate graph
            page.wait_for_function(
                "() => document.querySelector('#graph').dataset.points >= 7"
                " && !document.querySelector('#mistakes').textContent.startsWith('reviewing')")
            page.click("#analyse")
            page.wait_for_function("v => document.querySelector('#visits').textContent === v",
                                   arg=ANALYSE_VISITS)
            page.check('input[name="heatmap"][value="visits"]')
            page.select_option("#compare-a", "default")
            page.select_option("#compare-b", "cpu-hour")
            page.hover("#candidates tbody tr >> nth=1")  # the second candidate's line
            page.wait_for_timeout(300)
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out))
        finally:
            browser.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "web-1280.png")
    args = ap.parse_args()
    port = free_port()
    server = start_server(port)
    try:
        take(f"http://127.0.0.1:{port}/", args.out)
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
