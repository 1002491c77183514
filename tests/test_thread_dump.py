"""The trainer's SIGUSR1 dump (alphagomoku/thread_dump.py): what it prints, and that it survives
threads starting and ending while it runs, which faulthandler's C dump does not (CPython 116008)."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from alphagomoku import thread_dump

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="no SIGUSR1 on this platform")


def test_the_dump_names_every_thread_and_where_it_waits():
    release = threading.Event()

    def parked_in_a_named_function():
        release.wait(10)

    t = threading.Thread(target=parked_in_a_named_function, name="parked-worker")
    t.start()
    try:
        text = thread_dump.format_threads()
    finally:
        release.set()
        t.join()
    main_at = text.index("Thread MainThread")
    parked_at = text.index("Thread parked-worker")
    assert main_at < parked_at  # the main thread first
    assert "parked_in_a_named_function" in text[parked_at:]
    assert "test_the_dump_names_every_thread_and_where_it_waits" in text[main_at:parked_at]


def test_the_signal_prints_to_the_descriptor_and_returns_the_old_handler():
    read_fd, write_fd = os.pipe()
    previous = thread_dump.install(signal.SIGUSR1, write_fd)
    try:
        os.kill(os.getpid(), signal.SIGUSR1)
        time.sleep(0.05)  # the handler runs at the main thread's next bytecode
        os.close(write_fd)
        with os.fdopen(read_fd, "rb") as r:
            text = r.read().decode()
    finally:
        restored = signal.signal(signal.SIGUSR1, previous)
    assert "Thread MainThread" in text and "where each thread is" in text
    assert callable(restored) and restored is not previous


CHURN = textwrap.dedent("""
    import signal, sys, threading
    from alphagomoku import thread_dump
    thread_dump.install(signal.SIGUSR1, 2)
    done = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    print("ready", flush=True)
    def work():
        sum(range(2000))
    while not done.is_set():  # until the test closes stdin
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
""")


def test_hundreds_of_dumps_while_threads_start_and_end_do_not_crash_the_process():
    # faulthandler.register(SIGUSR1) crashed this same loop with SIGSEGV within 60 to 850
    # signals, three times in three, on Python 3.11.7.
    proc = subprocess.Popen([sys.executable, "-c", CHURN], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    for sent in range(1, 401):
        os.kill(proc.pid, signal.SIGUSR1)
        time.sleep(0.004)
        if proc.poll() is not None:
            break
    out, err = proc.communicate(input="", timeout=60)
    assert proc.returncode == 0, f"exit {proc.returncode} after {sent} signals:\n{err[-3000:]}"
    # Signals that arrive while one is pending count once, so a busy machine prints fewer.
    assert err.count("Thread MainThread") >= 100, err[-2000:]
