"""Pool workers leave with their parent: a parent killed outright runs no clean-up, and its
workers must not go on holding the cores."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

PARENT = textwrap.dedent('''
    import multiprocessing, os, sys, time
    from concurrent.futures import ProcessPoolExecutor
    from {module} import {init}

    def task(path):
        with open(path + ".part", "w") as f:
            f.write(str(os.getpid()))
        os.replace(path + ".part", path)
        time.sleep(120)

    if __name__ == "__main__":
        pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                                   initializer={init}{args})
        pool.submit(task, sys.argv[1])
        time.sleep(120)
''')


def alive(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    if Path("/proc/self").exists():
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
        except FileNotFoundError:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_an_arena_worker_exits_when_its_parent_is_killed(tmp_path):
    if not hasattr(signal, "SIGKILL"):
        pytest.skip("no SIGKILL on this platform")
    script = tmp_path / "parent.py"
    script.write_text(PARENT.format(module="alphagomoku.eval.arena", init="_worker_init", args=""))
    pid_file = tmp_path / "worker.pid"
    parent = subprocess.Popen([sys.executable, str(script), str(pid_file)],
                              env={**os.environ, "PYTHONPATH": str(Path.cwd())})
    try:
        deadline = time.monotonic() + 120
        while not pid_file.exists():
            assert parent.poll() is None, "the parent died before its worker started"
            assert time.monotonic() < deadline, "the worker never started its task"
            time.sleep(0.2)
        worker = int(pid_file.read_text())
        assert alive(worker)
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 15
        while alive(worker) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not alive(worker), f"worker {worker} outlived its killed parent"
    finally:
        if parent.poll() is None:
            parent.kill()
