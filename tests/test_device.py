"""Device selection with CUDA/MPS availability faked, GPU assignment for workers, the memory plan
and CPU threads."""

import subprocess
import sys

import pytest
import torch

from alphagomoku import device as dev
from alphagomoku.nn.config import ModelConfig

GB = 10**9


@pytest.fixture
def machine(monkeypatch):
    """Pretend this machine has ``cuda`` GPUs with the given names and MPS or not."""

    def fake(cuda=(), mps=False):
        names = list(cuda)
        monkeypatch.setattr(torch.cuda, "is_available", lambda: bool(names))
        monkeypatch.setattr(torch.cuda, "device_count", lambda: len(names))
        monkeypatch.setattr(torch.cuda, "get_device_name", lambda i=0: names[i])
        monkeypatch.setattr(torch.backends.mps, "is_available", lambda: mps)

    return fake


# -- selection ----------------------------------------------------------------------------------
def test_auto_prefers_cuda_and_says_why(machine):
    machine(cuda=["Tesla T4", "Tesla T4"], mps=True)
    choice = dev.select_device("auto")
    assert choice.device == torch.device("cuda", 0)
    assert (choice.kind, choice.name) == ("cuda", "Tesla T4")
    assert "CUDA is available (2 devices)" in choice.reason
    assert choice.short == "CUDA: Tesla T4"


def test_auto_takes_mps_without_cuda(machine):
    machine(cuda=[], mps=True)
    choice = dev.select_device()
    assert choice.device == torch.device("mps") and choice.kind == "mps"
    assert "no CUDA" in choice.reason and "MPS is available" in choice.reason


def test_auto_falls_back_to_the_cpu_only_when_nothing_else_is_there(machine):
    machine(cuda=[], mps=False)
    choice = dev.select_device("auto")
    assert choice.device == torch.device("cpu") and choice.kind == "cpu"
    assert "no CUDA" in choice.reason and "no MPS" in choice.reason
    assert choice.name == dev.cpu_name()


def test_explicit_requests_are_honoured(machine):
    machine(cuda=["A100", "H100"], mps=False)
    assert dev.select_device("cuda").device == torch.device("cuda", 0)
    second = dev.select_device("CUDA:1 ")
    assert second.device == torch.device("cuda", 1) and second.name == "H100"
    assert dev.select_device("cpu").kind == "cpu"
    assert dev.available_devices() == ["cuda:0", "cuda:1", "cpu"]


def test_missing_cuda_is_an_error_naming_it_and_what_is_available(machine):
    machine(cuda=[], mps=True)
    with pytest.raises(dev.DeviceError) as info:
        dev.select_device("cuda")
    message = str(info.value)
    assert "'cuda' was requested but CUDA is not available" in message
    assert "Available here: mps, cpu" in message


def test_a_cuda_index_beyond_the_visible_devices_is_an_error(machine):
    machine(cuda=["Tesla T4"], mps=False)
    with pytest.raises(dev.DeviceError, match=r"'cuda:2'.*only 1 CUDA device is visible.*cuda:0, cpu"):
        dev.select_device("cuda:2")


def test_missing_mps_is_an_error_not_a_fall_back_to_the_cpu(machine):
    machine(cuda=[], mps=False)
    with pytest.raises(dev.DeviceError, match=r"'mps' was requested.*Available here: cpu"):
        dev.select_device("mps")


@pytest.mark.parametrize("bad", ["gpu", "cuda:", "cuda:-1", "mps:0", "cpu:1", "", "cuda:x", 0, None])
def test_malformed_requests_list_the_valid_forms(bad):
    with pytest.raises(dev.DeviceError, match="auto, cpu, cuda, cuda:N"):
        dev.select_device(bad)


def test_the_real_machine_answers_consistently():
    # Whatever this machine has, auto picks one of the devices it lists, and cpu always works.
    choice = dev.select_device("auto")
    assert str(choice.device) in dev.available_devices()
    assert dev.select_device("cpu").device == torch.device("cpu")
    assert dev.available_devices()[-1] == "cpu"


@pytest.mark.parametrize("capability, gpu, want", [
    ((7, 5), "T4", torch.float16), ((7, 0), "V100", torch.float16),
    ((8, 0), "A100", torch.bfloat16), ((9, 0), "H100", torch.bfloat16)])
def test_mixed_precision_is_bf16_only_where_the_gpu_computes_it(monkeypatch, capability, gpu, want):
    from alphagomoku.device import DeviceChoice

    asked = []
    monkeypatch.setattr(torch.version, "hip", None)
    monkeypatch.setattr(torch.cuda, "get_device_capability",
                        lambda d: asked.append(str(d)) or capability)
    # What torch.cuda.is_bf16_supported() says by default on a T4 (it can emulate bf16).
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    assert dev.cuda_autocast_dtype(torch.device("cuda", 1)) == want
    # The trainer asks about its own device, not the current one.
    choice = DeviceChoice(torch.device("cuda", 0), "cuda", gpu, "test")
    assert dev.training_autocast_dtype(choice, "auto") == want and asked == ["cuda:1", "cuda:0"]
    assert dev.training_autocast_dtype(choice, "off") is None


# -- worker processes ---------------------------------------------------------------------------
def test_gpus_are_assigned_round_robin():
    assert [dev.assign_gpu(i, 3) for i in range(7)] == [0, 1, 2, 0, 1, 2, 0]
    assert dev.assign_gpu(5, 0) is None
    with pytest.raises(ValueError, match="worker_index"):
        dev.assign_gpu(-1, 2)
    with pytest.raises(ValueError, match="num_gpus"):
        dev.assign_gpu(0, 1.5)


def test_set_worker_gpu_maps_onto_the_parents_visible_devices():
    env = {"CUDA_VISIBLE_DEVICES": "2,3"}
    with pytest.warns(RuntimeWarning, match="torch was imported before"):  # torch is loaded here
        assert dev.set_worker_gpu(3, 2, env) == "3"
    assert env["CUDA_VISIBLE_DEVICES"] == "3"
    env = {}
    with pytest.warns(RuntimeWarning):
        assert dev.set_worker_gpu(4, 4, env) == "0"
    assert env == {"CUDA_VISIBLE_DEVICES": "0"}
    env = {"CUDA_VISIBLE_DEVICES": "1"}
    with pytest.raises(dev.DeviceError, match="lists only 1"), pytest.warns(RuntimeWarning):
        dev.set_worker_gpu(0, 2, env)
    assert dev.set_worker_gpu(0, 0, env) is None and env == {"CUDA_VISIBLE_DEVICES": "1"}


def test_set_worker_gpu_refuses_once_cuda_is_initialised(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    env = {}
    with pytest.raises(dev.DeviceError, match="already initialised.*before any torch import"):
        dev.set_worker_gpu(1, 2, env)
    assert env == {}


def test_a_fresh_worker_sets_its_gpu_before_torch_loads():
    code = (
        "import os, sys, warnings\n"
        "warnings.simplefilter('error')\n"
        "from alphagomoku.device import set_worker_gpu\n"
        "from alphagomoku.nn.config import ModelConfig\n"
        "v = set_worker_gpu(3, 2)\n"
        "print(v, os.environ['CUDA_VISIBLE_DEVICES'], 'torch' in sys.modules)\n"
    )
    env = {k: v for k, v in __import__("os").environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "1", "False"]


def test_cpu_threads_split_the_cores():
    assert dev.cpu_threads_per_worker(2, cores=2) == 1
    assert dev.cpu_threads_per_worker(3, cores=16) == 5
    assert dev.cpu_threads_per_worker(8, cores=2) == 1
    with pytest.raises(ValueError, match="num_workers"):
        dev.cpu_threads_per_worker(0)


def test_limit_cpu_threads_sets_torch_and_the_environment(monkeypatch):
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        monkeypatch.delenv(var, raising=False)
    before = torch.get_num_threads()
    try:
        dev.limit_cpu_threads(1)
        assert torch.get_num_threads() == 1
        assert __import__("os").environ["OMP_NUM_THREADS"] == "1"
        assert "torch uses 1 intra-op thread" in dev.describe_cpu_threads()
    finally:
        torch.set_num_threads(before)
    with pytest.raises(ValueError, match="threads"):
        dev.limit_cpu_threads(0)


# -- memory plan --------------------------------------------------------------------------------
def assert_consistent(plan, total, headroom=0.1):
    assert plan.usable_bytes == int(total * (1 - headroom))
    assert plan.workers_per_gpu * plan.per_worker_bytes <= plan.usable_bytes
    assert (plan.workers_per_gpu + 1) * plan.per_worker_bytes > plan.usable_bytes


def test_plan_for_a_15_gb_t4():
    config = ModelConfig.preset("medium")
    plan = dev.plan_workers(15 * GB, config, batch_size=256)
    assert_consistent(plan, 15 * GB)
    assert plan.fits and plan.workers_per_gpu >= 4
    assert plan.per_worker_bytes > dev.CUDA_CONTEXT_BYTES + config.weight_bytes()
    assert "worker(s) fit" in plan.explanation and "batch 256" in plan.explanation
    assert plan.require() is plan


def test_plan_for_an_80_gb_h100_and_the_cap():
    config = ModelConfig.preset("large")
    h100 = dev.plan_workers(80 * GB, config, batch_size=256)
    t4 = dev.plan_workers(15 * GB, config, batch_size=256)
    assert_consistent(h100, 80 * GB)
    assert h100.workers_per_gpu > 4 * t4.workers_per_gpu
    capped = dev.plan_workers(80 * GB, config, batch_size=256, max_workers=6)
    assert capped.workers_per_gpu == 6 and "capped at 6" in capped.explanation


def test_plan_grows_with_smaller_batches_and_shrinks_with_headroom():
    config = ModelConfig.preset("medium")
    big = dev.plan_workers(15 * GB, config, batch_size=1024)
    small = dev.plan_workers(15 * GB, config, batch_size=16)
    assert small.workers_per_gpu > big.workers_per_gpu
    tight = dev.plan_workers(15 * GB, config, batch_size=16, headroom=0.5)
    assert tight.workers_per_gpu < small.workers_per_gpu


def test_a_small_card_where_not_one_worker_fits_says_what_to_change():
    config = ModelConfig.preset("large")
    plan = dev.plan_workers(1 * GB, config, batch_size=4096)
    assert plan.workers_per_gpu == 0 and not plan.fits
    assert "not even one worker fits" in plan.explanation
    with pytest.raises(dev.DeviceError, match="not even one worker fits"):
        plan.require()
    # The batch it suggests really is the largest power of two that fits.
    best = dev.largest_batch(plan.usable_bytes, config)
    assert f"use a batch of at most {best}" in plan.explanation
    assert dev.plan_workers(1 * GB, config, best).fits
    assert not dev.plan_workers(1 * GB, config, 2 * best).fits


def test_a_card_smaller_than_the_cuda_context_suggests_a_smaller_preset():
    plan = dev.plan_workers(400 * 2**20, ModelConfig.preset("tiny"), batch_size=1)
    assert plan.workers_per_gpu == 0 and "smaller preset" in plan.explanation


@pytest.mark.parametrize("kwargs, word", [
    ({"total_memory_bytes": 0}, "total_memory_bytes"),
    ({"batch_size": 0}, "batch_size"),
    ({"headroom": 1.0}, "headroom"),
])
def test_plan_rejects_bad_numbers(kwargs, word):
    args = {"total_memory_bytes": 15 * GB, "model_config": ModelConfig.preset("tiny"),
            "batch_size": 16, **kwargs}
    with pytest.raises(ValueError, match=word):
        dev.plan_workers(**args)


def test_a_run_saved_without_fp16_resumes_with_an_fp16_scaler():
    import warnings

    from alphagomoku.train.loop import _restore_scaler

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "CUDA is not available. Disabling."
        saved_on_cpu = torch.amp.GradScaler("cuda", enabled=False).state_dict()
        on_t4 = torch.amp.GradScaler("cuda", enabled=True)
    on_t4._enabled, on_t4._scale, on_t4._growth_tracker = True, None, None  # as on a GPU
    with pytest.raises(RuntimeError, match="empty"):
        on_t4.load_state_dict(saved_on_cpu)  # what a resume did before
    _restore_scaler(on_t4, saved_on_cpu)
    _restore_scaler(on_t4, None)  # a checkpoint from before the scaler was saved
    _restore_scaler(on_t4, {"scale": 512.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                            "growth_interval": 100, "_growth_tracker": 0})
    assert on_t4._init_scale == 512.0
