"""The kernel cache follows the kernels' sources, so an edit never runs stale compiled code."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

from alphagomoku import numba_config


def test_cache_directory_changes_when_a_kernel_source_changes(tmp_path, monkeypatch):
    copy = tmp_path / "alphagomoku"
    shutil.copytree(numba_config._PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(numba_config, "_PACKAGE", copy)
    before = numba_config.kernel_sources_digest()
    # A file without kernels does not matter...
    (copy / "train" / "config.py").write_text("# edited\n" + (copy / "train" / "config.py").read_text())
    assert numba_config.kernel_sources_digest() == before
    # ...a kernel file does, even one that other kernels only import from.
    kernels = copy / "game" / "kernels.py"
    kernels.write_text(kernels.read_text() + "\n# edited\n")
    assert numba_config.kernel_sources_digest() != before


def test_cache_lives_under_numba_cache_dir_when_set(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    path = numba_config.cache_dir()
    assert path.parent == tmp_path and path.name.startswith("kernels-")


_RUN_ONE_KERNEL = ("import numpy as np; from alphagomoku.game.kernels import run_length; "
                   "run_length(np.zeros(25, np.int8), 5, 5, 0, 0, 1, 0, 1)")


def _run_one_kernel(cache: str) -> str:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    done = subprocess.run([sys.executable, "-c", _RUN_ONE_KERNEL], env=env, capture_output=True,
                          text=True, timeout=300, check=True)
    return done.stderr


def test_a_cold_compile_says_so_once_and_a_warm_cache_says_nothing(tmp_path):
    assert _run_one_kernel(str(tmp_path)).count(numba_config.COLD_COMPILE_NOTICE) == 1
    assert numba_config.COLD_COMPILE_NOTICE not in _run_one_kernel(str(tmp_path))


def test_every_make_target_uses_the_cache_that_direct_runs_use():
    # A second cache for make alone made the first `python scripts/play.py` after `make train`
    # compile every kernel again.
    makefile = (numba_config._PACKAGE.parent / "Makefile").read_text()
    assert not re.search(r"^\s*(export\s+)?NUMBA_CACHE_DIR\s*[:?+]?=", makefile, re.MULTILINE)
    assert "-m alphagomoku.compile_kernels" in makefile


def test_the_set_up_warm_up_plays_every_path_it_compiles_without_an_error():
    from alphagomoku import compile_kernels

    answers = compile_kernels._engine_game()
    assert "OK" in answers
    moves = [a for a in answers if re.fullmatch(r"\d+,\d+", a)]
    assert len(moves) == 2, answers  # one after BOARD, one after TURN
    assert not [a for a in answers if a.startswith(("ERROR", "UNKNOWN"))]


def test_entry_points_call_the_compiled_function_after_the_first_call():
    import numpy as np

    from alphagomoku.game.kernels import run_length

    board = np.zeros(25, np.int8)
    board[[0, 1, 2]] = 1
    run = numba_config.EntryPoints()
    first = run(run_length, board, 5, 5, 0, 0, 1, 0, 1)
    # Now past the dispatcher, with the same answers.
    assert run._entries[run_length] is not run_length
    assert run(run_length, board, 5, 5, 0, 0, 1, 0, 1) == first == 2  # from one step on
    board[3] = 1
    assert run(run_length, board, 5, 5, 0, 0, 1, 0, 1) == 3


_WARM_UP_THEN_A_RUN = '''
import sys
import numpy as np
from numba.core.dispatcher import Dispatcher

from alphagomoku.game.config import GameConfig
from alphagomoku.selfplay.warmup import compile_selfplay_kernels


def loaded():
    """Each package kernel's argument types met from Python in this process so far."""
    import alphagomoku.train.augment  # noqa: F401 - its kernels too
    out = set()
    for name, module in list(sys.modules.items()):
        if name.startswith("alphagomoku."):
            for attr in vars(module).values():
                if isinstance(attr, Dispatcher):
                    out |= {(attr.py_func.__qualname__, str(s)) for s in attr.signatures}
    return out


game = GameConfig(width=9)
compile_selfplay_kernels(game)
before = loaded()

from alphagomoku.selfplay.game_loop import play_games
from alphagomoku.train.augment import draw_symmetries, make_batch
from alphagomoku.train.buffer import ReplayBuffer
from alphagomoku.train.recipes import recipe_path
from alphagomoku.train.config import TrainConfig
from alphagomoku.train.selfplay_epoch import worker_spec
from alphagomoku.device import select_device
from alphagomoku.mcts import uniform_evaluator

for recipe in ("cpu-hour", "kata-hour", "plain"):  # at 8 simulations, so without a rising count
    cfg = TrainConfig.from_file(recipe_path(recipe), board_size=9, simulations=8,
                                simulations_start=0, games_per_task=2, device="cpu")
    spec = worker_spec(cfg, select_device("cpu"))
    records, _ = play_games(lambda p, l: uniform_evaluator(p, l), cfg.game, spec.search,
                            spec.settings, num_games=2, seed=1)
    buffer = ReplayBuffer(cfg.game, 256)
    for record in records:
        buffer.add_game(record)
    rng = np.random.default_rng(0)
    idx = buffer.sample_indices(16, rng)
    make_batch(buffer, idx, None, cfg.game, cfg.value_q_weight, cfg.vcf_plane_budget,
               cfg.model_arch == "kata", symmetries=draw_symmetries(cfg.game, 16, rng),
               threat_planes=bool(cfg.model_threat_planes))
missed = sorted(loaded() - before)
print("MISSED", missed)
'''


def test_the_warm_up_compiles_every_kernel_a_recipes_workers_and_trainer_call():
    """Numba compiles a kernel again for each new set of argument types: a type the warm-up
    never passes makes every worker of a fresh machine compile for a minute."""
    done = subprocess.run([sys.executable, "-c", _WARM_UP_THEN_A_RUN], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("MISSED []"), done.stdout[-3000:]
