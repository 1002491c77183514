"""Task functions that fail on purpose, for the failure tests of the self-play pool and others.

They live in a module (not a test function) because spawned workers import task functions by
name. Each fault fires once per marker directory (``ALPHAGOMOKU_FAULT_DIR``, inherited by the
workers), so the retry after a pool rebuild succeeds, as a transient failure would.
"""

from __future__ import annotations

import os
import signal
import time

from alphagomoku.selfplay.worker import play_task


def _first_time(name: str) -> bool:
    path = os.path.join(os.environ["ALPHAGOMOKU_FAULT_DIR"], name)
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL))
        return True
    except FileExistsError:
        return False


def raise_once(task):
    if task.task_id == 1 and _first_time("raise"):
        raise RuntimeError("injected failure in task 1")
    return play_task(task)


def kill_once(task):
    if task.task_id == 1 and _first_time("kill"):
        os.kill(os.getpid(), signal.SIGKILL)
    return play_task(task)


def hang_once(task):
    if task.task_id == 1 and _first_time("hang"):
        time.sleep(3600)
    return play_task(task)


def always_raise(task):
    raise ValueError("this worker is broken")


def return_none(task):
    return None


def return_no_games(task):
    result = play_task(task)
    result.records = []
    return result


# -- Ray actors: called in the actor before each task (RayOptions.fault_fn). The marker directory
# is bound with functools.partial, since actors do not see environment variables set after Ray started.
def _first_time_in(marker_dir: str, name: str) -> bool:
    try:
        os.close(os.open(os.path.join(marker_dir, name), os.O_CREAT | os.O_EXCL))
        return True
    except FileExistsError:
        return False


def ray_raise_once(marker_dir, task, actor_index):
    if task.task_id == 1 and _first_time_in(marker_dir, "raise"):
        raise RuntimeError("injected failure in task 1")


def ray_die_once(marker_dir, task, actor_index):
    if task.task_id == 1 and _first_time_in(marker_dir, "die"):
        os.kill(os.getpid(), signal.SIGKILL)


def ray_hang_once(marker_dir, task, actor_index):
    if task.task_id == 1 and _first_time_in(marker_dir, "hang"):
        time.sleep(3600)


def ray_always_raise(marker_dir, task, actor_index):
    raise ValueError("this actor is broken")


def die_reading(record, depth, budget):
    """A deciding-move reader (eval/decided.py) whose process dies as one killed would."""
    os.kill(os.getpid(), signal.SIGKILL)
