"""The troubleshooting pages tell the truth: each failure they describe that the code handles is
provoked here, and the message the user sees is checked against the code's output and against
the quote in the docs (COLAB_TRAINING.md, docs/troubleshooting.md, docs/scaling.md). The pages'
commands, flags and test references are checked too.

Where another test file already checks a failure exactly, the docs name that test, and the test
here looks at what the user sees: the exit status, the line in the log, the advice.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import importlib.util
import os
import pickle
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import faults
from alphagomoku import device as dev
from alphagomoku import device_check as diag
from alphagomoku.mcts import SearchConfig
from alphagomoku.nn import ModelConfig
from alphagomoku.selfplay.game_loop import SelfPlaySettings
from alphagomoku.selfplay.pool import SelfPlayError, SelfPlayPool
from alphagomoku.selfplay.worker import SelfPlayTask, WorkerSpec, play_task, setup_worker
from alphagomoku.train import cli
from alphagomoku.train.checkpoint import load_checkpoint
from conftest import POOL_GAME

ROOT = Path(__file__).resolve().parents[1]
DOCS = {name: (ROOT / name).read_text()
        for name in ("COLAB_TRAINING.md", "docs/troubleshooting.md", "docs/scaling.md")}
TRAIN = ROOT / "scripts" / "train.py"
GAME = POOL_GAME
SEARCH = SearchConfig(num_simulations=8, dirichlet_eps=0.25)
SPEC = WorkerSpec(game=GAME, search=SEARCH, settings=SelfPlaySettings(games_at_once=2), device="cpu")
# The out-of-memory back-off belongs to the torch Evaluator (GPUs run torch); a CPU worker would
# otherwise pick ONNX Runtime where it is installed, and the injected error would never fire.
TORCH_SPEC = dataclasses.replace(SPEC, inference_backend="torch")
TINY = [
    "--board-size", "7", "--n-in-row", "4", "--model-preset", "tiny", "--device", "cpu",
    "--selfplay-games", "2", "--games-per-task", "2", "--simulations", "8", "--batch-size", "16",
    "--min-buffer-positions", "16", "--buffer-positions", "1000", "--steps-per-epoch", "1",
    "--no-progress",
]
# The device this machine lacks: CUDA on a machine without it, else the GPU past the last one.
MISSING_CUDA = f"cuda:{torch.cuda.device_count()}" if torch.cuda.is_available() else "cuda"


def _words(text: str) -> str:
    return " ".join(text.split())


def documented(fragment: str) -> None:
    """``fragment`` is quoted word for word (line breaks aside) on a troubleshooting page."""
    assert any(_words(fragment) in _words(text) for text in DOCS.values()), \
        f"the docs do not quote {fragment!r}"


def train(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(TRAIN), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


# -- worker task functions (module level: spawned workers import them by name) ------------------
_SET_IN_THE_PARENT = None  # the parent sets it; a forked child would inherit it, a spawned one not


def report_inherited_state(task):
    result = play_task(task)
    result.stats["inherited_parent_state"] = _SET_IN_THE_PARENT is not None
    return result


def _out_of_memory_above(task, limit: int):
    """Self-play in which the device runs out of memory on any batch above ``limit`` positions,
    as CUDA would (the same error type and message); patched in the worker process only."""
    from alphagomoku.nn.evaluator import Evaluator

    real = Evaluator.__dict__.get("_unpatched_evaluate") or Evaluator._evaluate
    Evaluator._unpatched_evaluate = real

    def evaluate(self, planes, legal):
        if planes.shape[0] > limit:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real(self, planes, legal)

    Evaluator._evaluate = evaluate
    return play_task(task)


def out_of_memory_above_one(task):
    return _out_of_memory_above(task, 1)


def out_of_memory_always(task):
    return _out_of_memory_above(task, 0)


def _first_time(name: str) -> bool:
    marker = Path(os.environ["ALPHAGOMOKU_FAULT_DIR"]) / name
    try:
        marker.touch(exist_ok=False)
        return True
    except FileExistsError:
        return False


def _break_the_game_loop(error: Exception) -> None:
    """Make this worker's game loop raise ``error``, as a bug in it would (worker process only)."""
    from alphagomoku.selfplay import game_loop

    def broken(*args, **kwargs):
        raise error

    game_loop.play_games = broken


def game_loop_raises_once(task):
    if task.task_id == 1 and _first_time("game-loop"):
        from alphagomoku.selfplay import game_loop

        real = game_loop.play_games
        _break_the_game_loop(RuntimeError("injected failure in the game loop"))
        try:
            return play_task(task)
        finally:
            game_loop.play_games = real  # a transient failure: the retry works
    return play_task(task)


def game_loop_always_raises(task):
    _break_the_game_loop(ValueError("this game loop is broken"))
    return play_task(task)


def unpicklable_result(task):
    return lambda: "a closure cannot be sent back"


# -- fixtures (weights, fault_dir: see conftest.py) ----------------------------------------------
def tasks(weights: str, n: int) -> list[SelfPlayTask]:
    return [SelfPlayTask(i, 1, seed=10 + i, weights_path=weights, weights_version=0) for i in range(n)]


def play(pool: SelfPlayPool, task_list: list[SelfPlayTask]) -> list:
    results: list = []
    pool.play(task_list, results.append)
    return results


# -- set-up -------------------------------------------------------------------------------------
def test_the_set_up_keeps_an_installed_torch_and_the_package_accepts_it():
    # Why `make setup` and Colab's `pip install -e .` never replace a working torch.
    import tomllib

    from packaging.requirements import Requirement

    out = subprocess.run([sys.executable, str(ROOT / "tools" / "install_torch.py")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "install_torch: torch is already installed; keeping it"
    documented("install_torch: torch is already installed; keeping it")
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    torch_req = next(Requirement(d) for d in deps if Requirement(d).name == "torch")
    assert torch_req.specifier.contains(torch.__version__), f"{torch_req} refuses torch {torch.__version__}"
    documented(f"`{torch_req}`")


# -- no GPU, or a CPU build of torch ------------------------------------------------------------
def test_a_missing_cuda_device_gives_the_same_reason_in_train_and_check_device(tmp_path):
    run_dir = tmp_path / "run"
    out = train("--device", MISSING_CUDA, "--run-dir", str(run_dir), "--epochs", "1")
    assert out.returncode == 1
    error = out.stderr.strip().splitlines()[-1]
    assert error.startswith(f"train.py: error: device '{MISSING_CUDA}' was requested but ")
    assert "Available here: " in error
    assert not run_dir.exists(), "nothing is written before the device is known"
    reason = error.removeprefix("train.py: error: ")
    check = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_device.py"), "--device",
                            MISSING_CUDA, "--presets", "tiny", "--no-worker"],
                           capture_output=True, text=True, timeout=120)
    assert check.returncode == 1
    assert f"FAIL  device: {reason}" in check.stdout
    assert "RESULT: FAILED (device)" in check.stdout
    documented("RESULT: FAILED (device)")
    if torch.version.cuda is None:  # a CPU build of torch, as in CI: the page quotes this line
        assert error == ("train.py: error: device 'cuda' was requested but CUDA is not available: "
                         f"this torch build has no CUDA support (torch {torch.__version__}). "
                         f"Available here: {', '.join(dev.available_devices())}")
        documented("train.py: error: device 'cuda' was requested but CUDA is not available: "
                   "this torch build has no CUDA support (torch ")


# -- fork against spawn -------------------------------------------------------------------------
def test_workers_are_spawned_not_forked(weights, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "_SET_IN_THE_PARENT", "parent state")
    with SelfPlayPool(SPEC, num_workers=1, task_timeout=60, task_fn=report_inherited_state) as pool:
        assert pool.ctx.get_start_method() == "spawn"
        results = play(pool, tasks(weights, 1))
    assert results[0].stats["inherited_parent_state"] is False
    documented('multiprocessing.get_context("spawn")')


# -- workers on another device than the trainer -------------------------------------------------
def test_a_worker_that_cannot_get_the_device_stops_the_run(weights, capfd):
    spec = WorkerSpec(game=GAME, search=SEARCH, settings=SPEC.settings, device=MISSING_CUDA)
    with SelfPlayPool(spec, num_workers=1, task_timeout=60, log=lambda s: None) as pool:
        with pytest.raises(SelfPlayError) as info:
            play(pool, tasks(weights, 1))
    line = f"[worker 0] FAILED to set up device '{MISSING_CUDA}': device '{MISSING_CUDA}' was requested but"
    assert str(info.value).startswith(line)
    assert line in capfd.readouterr().err  # what the worker itself prints
    documented("[worker 0] FAILED to set up device 'cuda': device 'cuda' was requested but")


def test_check_device_flags_a_worker_on_another_device(monkeypatch):
    # The parent believes it has an Apple GPU; the spawned worker, a fresh process, finds only what
    # this machine really has. A worker on the wrong device, caught by a real worker.
    apple = dev.DeviceChoice(torch.device("mps"), "mps", "Apple GPU (MPS)", "auto: MPS is available")
    real = dev.select_device("auto")
    monkeypatch.setattr(dev, "select_device", lambda request="auto": apple)
    report = diag.run("auto", presets=(), worker=True)
    text = diag.format_text(report)
    assert report["ok"] is False
    verdict = (f"FAIL  worker: a spawned worker process uses {real.device} ({real.name}) but this "
               f"process uses mps (Apple GPU (MPS)): self-play would run on the wrong device")
    assert "!" * 78 + "\n" + verdict + "\n" + "!" * 78 in text
    assert "RESULT: FAILED (worker)" in text
    documented("but this process uses mps (Apple GPU (MPS)): self-play would run on the wrong device")


# -- all workers on GPU 0 -----------------------------------------------------------------------
def test_what_a_worker_unpickles_before_choosing_its_gpu_does_not_load_torch():
    # A spawned worker imports the trainer's main module and unpickles the WorkerSpec before its
    # initializer sets CUDA_VISIBLE_DEVICES; if any of that loaded torch, the setting could come
    # too late and every worker would see every GPU.
    code = (
        "import pickle, sys\n"
        "import alphagomoku.train.cli\n"
        "from alphagomoku.selfplay.worker import init_worker, play_task\n"
        f"pickle.loads({pickle.dumps(SPEC)!r})\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False"]
    documented("before anything in that process imports torch")


# -- out of memory ------------------------------------------------------------------------------
def test_self_play_survives_out_of_memory_and_says_so(weights, capfd):
    logs: list[str] = []
    with SelfPlayPool(TORCH_SPEC, num_workers=1, task_timeout=60, log=logs.append,
                      task_fn=out_of_memory_above_one) as pool:
        results = play(pool, [SelfPlayTask(0, 2, seed=3, weights_path=weights, weights_version=0)])
    assert len(results[0].records) == 2 and not logs, "no game is lost, nothing fails"
    err = capfd.readouterr().err
    assert "out of memory on cpu at batch 2: evaluating in batches of 1 from now on" in err
    documented("out of memory on cuda:0 at batch 32: evaluating in batches of 16 from now on")


def test_out_of_memory_at_one_position_stops_the_run_with_the_advice(weights):
    logs: list[str] = []
    with SelfPlayPool(TORCH_SPEC, num_workers=1, task_timeout=60, max_failures=0, log=logs.append,
                      task_fn=out_of_memory_always) as pool:
        with pytest.raises(SelfPlayError, match="self-play failed 1 time; stopping"):
            play(pool, tasks(weights, 1))
    first = logs[0].splitlines()[0]
    label = re.escape(ModelConfig.preset("tiny", 7).label)
    assert re.match(r"self-play failure 1/1: worker 0 \(pid \d+\) raised in task 0: "
                    r"EvaluatorOutOfMemoryError: cpu ran out of memory evaluating a single position "
                    rf"with the {label} model: use a smaller preset, fewer workers per GPU, or "
                    r"another device \(CUDA out of memory", first), first
    documented("raised in task 0: EvaluatorOutOfMemoryError: cuda:0 ran out of memory evaluating a "
               "single position with the <model> model: use a smaller preset, fewer workers per GPU, "
               "or another device")


# -- pickling -----------------------------------------------------------------------------------
def test_a_task_function_that_cannot_be_pickled_is_reported(weights):
    with pytest.raises(TypeError) as info:
        SelfPlayPool(SPEC, num_workers=1, task_timeout=60, task_fn=lambda task: play_task(task))
    assert re.match(r"the task function cannot be sent to spawned workers \((AttributeError|PicklingError): "
                    r"Can't pickle local object '\S+<locals>\.<lambda>'\); use module-level functions "
                    r"and plain data", str(info.value)), str(info.value)
    documented("the task function cannot be sent to spawned workers (AttributeError: Can't pickle "
               "local object")


def test_a_result_that_cannot_be_pickled_is_reported(weights):
    logs: list[str] = []
    with SelfPlayPool(SPEC, num_workers=1, task_timeout=60, max_failures=0, log=logs.append,
                      task_fn=unpicklable_result) as pool:
        with pytest.raises(SelfPlayError):
            play(pool, tasks(weights, 1))
    assert logs[0].startswith("self-play failure 1/1: a self-play task failed in its worker: "
                              "MaybeEncodingError: Error sending result: ")
    assert "pickle" in logs[0] and "local object" in logs[0]
    documented("a self-play task failed in its worker: MaybeEncodingError: Error sending result: ")


# -- hangs, raising workers ---------------------------------------------------------------------
def test_a_hung_worker_is_reported_with_the_flag_that_raises_the_limit(weights, fault_dir):
    logs: list[str] = []
    with SelfPlayPool(SPEC, num_workers=1, task_timeout=3, poll_seconds=0.2, log=logs.append,
                      task_fn=faults.hang_once) as pool:
        results = play(pool, tasks(weights, 2))
    assert sorted(r.task_id for r in results) == [0, 1], "the hung task is played again"
    hang = ("no progress from any self-play worker for 3 s while 1 task(s) wait: a worker hangs "
            "(raise --worker-timeout if a single search step can legitimately take this long)")
    # One report; on a badly overloaded machine a slow step may add another of the same kind.
    assert logs and all(line == f"self-play failure {i}/4: {hang}" for i, line in enumerate(logs, 1)), logs
    documented("self-play failure 1/4: no progress from any self-play worker for 180 s while 2 "
               "task(s) wait: a worker hangs (raise --worker-timeout if a single search step can "
               "legitimately take this long)")
    assert "--worker-timeout" in cli.build_parser()._option_string_actions  # the advice is a real flag


def test_a_raising_worker_is_reported_with_its_traceback(weights, fault_dir):
    logs: list[str] = []
    with SelfPlayPool(SPEC, num_workers=1, task_timeout=60, log=logs.append,
                      task_fn=game_loop_raises_once) as pool:
        results = play(pool, tasks(weights, 2))
    assert sorted(r.task_id for r in results) == [0, 1], "the failed task is played again"
    assert len(logs) == 1
    head, *trace = logs[0].splitlines()
    assert re.fullmatch(r"self-play failure 1/4: worker 0 \(pid \d+\) raised in task 1: "
                        r"RuntimeError: injected failure in the game loop", head), head
    assert trace[0] == "Traceback (most recent call last):"
    assert any("worker.py" in line and "run_task" in line for line in trace), "the worker's own frames"
    documented("self-play failure 1/4: worker 1 (pid <pid>) raised in task 1: RuntimeError: ...\n"
               "Traceback (most recent call last):")


def test_train_stops_with_exit_1_when_workers_keep_failing(tmp_path, monkeypatch, capsys):
    from alphagomoku.selfplay import backend

    monkeypatch.setattr(backend, "SelfPlayPool", functools.partial(SelfPlayPool, task_fn=game_loop_always_raises))
    code = cli.main([*TINY, "--parallel-workers", "1", "--max-worker-failures", "1", "--epochs", "1",
                     "--run-dir", str(tmp_path / "run")])
    out = capsys.readouterr()
    assert code == 1
    assert re.search(r"^self-play failure 1/2: worker 0 \(pid \d+\) raised in task 0: ValueError: "
                     r"this game loop is broken$", out.out, re.M)
    assert re.search(r"^train\.py: error: self-play failed 2 times; stopping\. Last failure:\n"
                     r"worker 0 \(pid \d+\) raised in task 0: ValueError: this game loop is broken\n"
                     r"Traceback", out.err, re.M), out.err
    documented("train.py: error: self-play failed 4 times; stopping. Last failure:\n")


# -- a corrupt checkpoint -----------------------------------------------------------------------
def test_a_corrupt_checkpoint_names_the_way_out_and_the_way_out_works(tmp_path, capsys):
    run_dir = tmp_path / "run"
    first = train(*TINY, "--parallel-workers", "0", "--epochs", "1", "--run-dir", str(run_dir))
    assert first.returncode == 0, first.stderr[-2000:]
    ckpts = run_dir / "checkpoints"
    latest = ckpts / "latest.pt"
    latest.write_bytes(latest.read_bytes()[:1000])  # a copy or a sync that did not finish

    def main(*args: str) -> tuple[int, str, str]:
        """scripts/train.py in this process (quicker than a new one): status, stdout, stderr from
        its error line on."""
        capsys.readouterr()
        status = cli.main([*args, "--run-dir", str(run_dir), "--no-progress"])
        out = capsys.readouterr()
        err = out.err.strip()
        return status, out.out, err[err.rfind("train.py: error:"):] if "train.py: error:" in err else err

    status, _, error = main("--resume", "--epochs", "1")
    assert status == 1
    lines = error.splitlines()
    assert lines[0].startswith(f"train.py: error: checkpoint {latest} is corrupt or truncated (")
    assert lines[1:] == [
        f"the newest whole checkpoint is {ckpts / 'epoch_000001.pt'}: resume from it with",
        f"  cp {ckpts / 'epoch_000001.pt'} {latest}",
        "then run again with --resume",
    ]
    documented("is corrupt or truncated (RuntimeError: ...)")
    documented("the newest whole checkpoint is")

    # The way out the page gives: copy the newest whole epoch file over latest.pt and resume.
    shutil.copyfile(ckpts / "epoch_000001.pt", latest)
    status, out, _ = main("--resume", "--epochs", "1")
    assert status == 0
    assert f"resumed {latest} at epoch 1" in out
    assert load_checkpoint(latest)["epoch"] == 1

    # The other two refusals the resume section quotes: a changed setting, a missing --resume.
    status, _, error = main("--resume", "--epochs", "1", "--board-size", "9")
    assert status == 1
    assert error == ("train.py: error: --resume: the checkpoint was trained with board_size=7, this "
                     "run asks for 9; drop the flag or start a new --run-dir")
    documented("the checkpoint was trained with board_size=15, this run asks for 9; drop the flag "
               "or start a new --run-dir")
    status, _, error = main(*TINY, "--epochs", "1")
    assert status == 1
    assert error == (f"train.py: error: {run_dir} already holds a run (found {latest}): continue it "
                     "with --resume, or choose another --run-dir")
    documented("already holds a run (found <run dir>/checkpoints/latest.pt): continue it with "
               "--resume, or choose another --run-dir")


# -- the pages themselves -----------------------------------------------------------------------
def test_every_test_the_pages_name_exists():
    named = {ref for text in DOCS.values() for ref in re.findall(r"tests/(\w+\.py)::(\w+)", text)}
    assert len(named) >= 20
    for file, name in sorted(named):
        path = ROOT / "tests" / file
        assert path.is_file(), f"the docs name {file}, which does not exist"
        assert re.search(rf"^def {name}\(", path.read_text(), re.M), f"the docs name {file}::{name}, which does not exist"


def _load_script(name: str):
    spec = importlib.util.spec_from_file_location(f"_doc_{name}", ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _parsers() -> dict:
    from alphagomoku.engine.__main__ import build_parser as engine_parser
    from alphagomoku.eval.decided import build_parser as decided_parser

    return {
        "scripts/train.py": cli.build_parser(),
        "scripts/check_device.py": diag.build_parser(),
        "scripts/play.py": _load_script("play").build_parser(),
        "scripts/evaluate.py": _load_script("evaluate").build_parser(),
        "scripts/benchmark.py": _load_script("benchmark").build_parser(),
        "scripts/export_model.py": _load_script("export_model").build_parser(),
        "pbrain-alphagomoku": engine_parser(),
        "-m alphagomoku.eval.decided": decided_parser(),
    }


def _documented_commands():
    """(page, program, argv) for every command line in the pages' code blocks."""
    for page, text in DOCS.items():
        for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
            for line in block.replace("\\\n", " ").splitlines():
                line = line.split("  #")[0].strip().lstrip("!").removeprefix("python ")
                if line.startswith(("scripts/", "pbrain-alphagomoku")):
                    words = shlex.split(line)
                    yield page, words[0], words[1:]
                elif line.startswith("-m alphagomoku.eval.decided"):
                    words = shlex.split(line)
                    yield page, " ".join(words[:2]), words[2:]


def test_the_commands_in_the_pages_are_accepted_by_the_scripts():
    parsers = _parsers()
    seen = set()
    for page, program, argv in _documented_commands():
        seen.add(program)
        assert program in parsers, f"{page}: unknown program {program}"
        if argv == ["--help"]:
            continue
        try:
            args = parsers[program].parse_args(argv)
        except SystemExit:
            pytest.fail(f"{page}: {program} rejects {' '.join(argv)}")
        if program == "scripts/train.py":
            cli.resolve_config(args)  # the values are valid too, not only the flag names
    assert {"scripts/train.py", "scripts/check_device.py", "scripts/benchmark.py", "pbrain-alphagomoku"} <= seen


@pytest.mark.parametrize("script, steps_expected", [("cuda_check.sh", 13),
                                                     ("gpu_selfplay_check.sh", 10)])
def test_the_gpu_scripts_run_commands_the_scripts_accept(script, steps_expected):
    """The tools/ scripts run on a GPU machine, never in CI: their commands are parsed here."""
    path = ROOT / "tools" / script
    text = path.read_text().replace("\\\n", " ")
    assert subprocess.run(["bash", "-n", str(path)]).returncode == 0
    parsers, steps = _parsers(), 0
    for line in text.splitlines():
        line = line.strip()   # the steps inside the loop over presets too
        if not line.startswith("step "):
            continue
        line = line.replace("${preset}", "tiny").replace("$preset", "tiny")
        line = line.replace('"$WORKERS"', "8").replace("$((2 * WORKERS))", "16")
        words = shlex.split(line.replace('"$DEVICE"', "cuda").replace("$WORK", "/tmp/w")
                            .replace('"$GAMES"', "256").replace('"$games"', "256")
                            .replace('"$FIRST"', "256"))
        if "pytest" in words:  # the gpu-marked tests: pytest's own flags
            assert "-m" in words and "gpu" in words, line
            continue
        at = next(i for i, word in enumerate(words) if word.startswith("scripts/"))
        program, argv = words[at], words[at + 1:]  # after "$PY" or "$PY -m torch.distributed.run ..."
        try:
            args = parsers[program].parse_args(argv)
        except SystemExit:
            pytest.fail(f"tools/{script}: {program} rejects {' '.join(argv)}")
        if program == "scripts/train.py" and not args.resume:
            cli.resolve_config(args)  # the values are valid too
        steps += 1
    assert steps == steps_expected


def test_the_gpu_hour_script_runs_the_recipe_with_flags_train_accepts():
    text = (ROOT / "tools" / "gpu_hour_check.sh").read_text().replace("\\\n", " ")
    assert subprocess.run(["bash", "-n", str(ROOT / "tools" / "gpu_hour_check.sh")]).returncode == 0
    line = next(x for x in text.splitlines() if "scripts/train.py" in x)
    words = shlex.split(line.replace('"$DEVICE"', "cuda").replace('"$MINUTES"', "6")
                        .replace('"$SNAPSHOT"', "2").replace('"$RUN"', "/tmp/run"))
    argv = words[words.index("scripts/train.py") + 1:words.index("--no-progress") + 1]
    args = cli.build_parser().parse_args(argv)
    cfg = cli.resolve_config(args)
    assert (cfg.model_preset, cfg.parallel_workers, cfg.time_budget_minutes) == ("small", 16, 6)


# Flags of other programs that the pages mention (pip, torchrun, ray).
FOREIGN_FLAGS = {"--force-reinstall", "--index-url", "--extra-index-url", "--nproc-per-node",
                 "--standalone", "--nnodes", "--node-rank", "--rdzv-endpoint",
                 # ray start
                 "--head", "--port", "--address", "--num-cpus", "--block", "--node-ip-address"}


def test_every_flag_the_pages_mention_exists():
    known = set(FOREIGN_FLAGS)
    parsers = list(_parsers().values())
    while parsers:  # subcommands too (scripts/benchmark.py nn --amp ...)
        parser = parsers.pop()
        known |= set(parser._option_string_actions)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                parsers.extend(action.choices.values())
    for page, text in DOCS.items():
        for flag in set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", text)):
            assert flag in known, f"{page} mentions {flag}, which no script accepts"


# -- inference backend -----------------------------------------------------------------------------
def test_a_missing_onnxruntime_is_said_once_and_documented(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # as if the [onnx] extra were missing
    line = setup_worker(0, SPEC).device_line
    assert "; inference: torch (fallback: onnxruntime or onnx is not installed" in line, line
    documented("inference: torch (fallback: onnxruntime or onnx is not installed")
    strict = setup_worker(0, dataclasses.replace(SPEC, inference_backend="onnx"))
    assert "inference backend onnx was asked for, but onnxruntime or onnx is not installed" \
        in strict.init_error
    documented("inference backend onnx was asked for, but onnxruntime or onnx is not installed")
    setup_message = "setup: onnxruntime could not be installed: CPU self-play will use torch (slower)"
    assert setup_message in (ROOT / "Makefile").read_text()
    documented(setup_message)

