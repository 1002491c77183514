"""Training on several processes under ``torchrun``: one trainer per rank, DDP for the step.

``torchrun --nproc-per-node G scripts/train.py ...`` starts G copies of the ordinary trainer.
:func:`setup` sees torchrun's ``RANK``/``WORLD_SIZE``/``LOCAL_RANK`` and returns a
:class:`Distributed`; without them it returns :class:`Single`, whose methods keep the one-process
trainer exactly as it was. The design follows KataGo's multi-GPU trainer (docs/scaling.md):

* rank 0 alone plays self-play, writes files and decides; every other rank holds the same replay
  buffer, filled from the records rank 0 broadcasts once per epoch;
* every step, each rank draws the same index set from a seed shared by all ranks and trains on
  its own slice of it, so no data moves between ranks during the epoch;
* rank 0 decides how many steps an epoch has and every rank runs exactly that many (no rank ever
  leaves the loop on local state); after the epoch the ranks compare step counts and buffer
  sizes and stop, naming the ranks, if they differ;
* waits that can be long (rank 0's self-play, its checkpoint) happen on a gloo *control* group
  with its own long timeout, never inside a collective of the compute group (NCCL on GPUs), whose
  shorter timeout is then a real sign of a stalled rank.

Every failure here raises :class:`DistributedError` naming the rank and the cause, with the entry
of docs/troubleshooting.md that explains it.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import threading
import time
from datetime import timedelta
from typing import Callable

import numpy as np

DOCS = "docs/troubleshooting.md"
# Test-only fault injection: "KIND:rank=R:epoch=E" with KIND stall|raise|die|drop. Read once at
# start-up; a production run never sets it.
FAULT_ENV = "ALPHAGOMOKU_DIST_FAULT"
_DIAGNOSE_SECONDS = 30.0  # how long a rank waits to learn which peers are gone after a failure


class DistributedError(RuntimeError):
    """A multi-process run cannot go on; the message names the rank, the cause and the fix."""


def torchrun_env(environ=None) -> tuple[int, int, int] | None:
    """``(rank, world_size, local_rank)`` when started by torchrun (or any launcher that sets the
    same variables), else None."""
    env = os.environ if environ is None else environ
    if "RANK" not in env or "WORLD_SIZE" not in env:
        return None
    try:
        rank, world = int(env["RANK"]), int(env["WORLD_SIZE"])
        local = int(env.get("LOCAL_RANK", "0"))
    except ValueError:
        raise DistributedError(
            f"RANK={env['RANK']!r}, WORLD_SIZE={env['WORLD_SIZE']!r}, LOCAL_RANK="
            f"{env.get('LOCAL_RANK')!r} are not integers; start multi-process runs with torchrun"
        ) from None
    if not 0 <= rank < world:
        raise DistributedError(f"RANK={rank} is outside WORLD_SIZE={world}")
    return rank, world, local


def lr_factor(scaling: str, world_size: int) -> float:
    """How much the learning rate grows with the number of ranks (the effective batch is
    ``world_size * batch_size``). ``sqrt`` is the square-root rule for Adam (Malladi et al.,
    "On the SDEs and Scaling Rules for Adaptive Gradient Algorithms", NeurIPS 2022); ``linear``
    is the rule for SGD (Goyal et al. 2017; KataGo scales by world*batch/256)."""
    if scaling == "none" or world_size == 1:
        return 1.0
    return float(world_size) if scaling == "linear" else math.sqrt(world_size)


def rescale_lr(optimizer, scheduler, base_lr: float) -> None:
    """Put ``base_lr`` under a loaded LambdaLR schedule, at the factor the schedule gives now (a
    resume: the saved schedule holds the rate of the run's start, for its old world size and
    --lr, and the factor of its last epoch)."""
    scheduler.base_lrs = [base_lr for _ in optimizer.param_groups]
    factors = [f(scheduler.last_epoch) for f in scheduler.lr_lambdas]
    for group, factor in zip(optimizer.param_groups, factors):
        group["initial_lr"] = base_lr
        group["lr"] = base_lr * factor


class Single:
    """One process: every hook is the plain trainer's behaviour."""

    enabled = False
    rank = 0
    world_size = 1
    is_main = True

    def device_request(self, request: str) -> str:
        return request

    def wrap(self, model):
        return model

    def from_main(self, fn: Callable, what: str):
        return fn()

    def share_training_state(self, trainer) -> None:
        pass

    def decide(self, value: int, what: str) -> int:
        return value

    def sample(self, buffer, batch_size: int, rng, epoch: int, step: int) -> np.ndarray:
        return buffer.sample_indices(batch_size, rng)

    def align_lr(self, optimizer) -> None:
        pass

    def step_hook(self, epoch: int, step: int, buffer=None) -> None:
        pass

    @contextlib.contextmanager
    def collectives(self, what: str):
        yield

    def check_epoch(self, epoch: int, steps: int, buffer, model) -> None:
        pass

    def barrier(self, what: str) -> None:
        pass

    def close(self) -> None:
        pass


def setup(cfg, log: Callable[[str], None] = print) -> Single:
    """The context for this process: :class:`Distributed` under torchrun, else :class:`Single`."""
    env = torchrun_env()
    if env is None:
        return Single()
    return Distributed(cfg, *env, log=log)


class Distributed(Single):
    enabled = True

    def __init__(self, cfg, rank: int, world_size: int, local_rank: int, log=print):
        import torch
        import torch.distributed as dist

        self.cfg = cfg
        self.rank, self.world_size, self.local_rank = rank, world_size, local_rank
        self.is_main = rank == 0
        self.seed = cfg.seed
        self.log = log
        self.control_timeout = cfg.dist_control_timeout
        self._fault = _parse_fault(os.environ.get(FAULT_ENV, ""))
        self.backend = self._backend(cfg)
        if self.backend == "nccl":
            torch.cuda.set_device(local_rank)
        try:
            # The compute group carries DDP's gradient all-reduce; its timeout only has to cover
            # one step, so a stalled rank is found in minutes, not hours.
            dist.init_process_group(self.backend, timeout=timedelta(seconds=cfg.dist_timeout))
            # The control group carries everything that waits on rank 0 (self-play, saves): a gloo
            # group on the CPU with a long timeout, so no rank ever sits in an NCCL collective
            # while rank 0 plays games (the watchdog would kill it after its timeout).
            self.ctrl = dist.new_group(backend="gloo", timeout=timedelta(seconds=self.control_timeout))
        except Exception as e:  # noqa: BLE001 - store, network or backend failures
            raise DistributedError(
                f"[rank {rank}] could not join the {world_size} ranks ({type(e).__name__}: "
                f"{_first_line(e)}); check MASTER_ADDR/MASTER_PORT or --rdzv-endpoint and that every "
                f"node can reach it; see {DOCS}#the-ranks-do-not-start"
            ) from None
        self.dist = dist
        log(f"[rank {rank}] joined {world_size} ranks: compute backend {self.backend} "
            f"(timeout {cfg.dist_timeout:.0f} s), control backend gloo (timeout "
            f"{self.control_timeout:.0f} s)")

    def _backend(self, cfg) -> str:
        if cfg.dist_backend != "auto":
            return cfg.dist_backend
        # device_request names a GPU ("cuda:N") only when this node has one; a bare "cuda" means
        # none is there, and select_device will say why, so do not start NCCL for it.
        return "nccl" if self.device_request(cfg.device).startswith("cuda:") else "gloo"

    # -- set-up -------------------------------------------------------------------------------------
    def device_request(self, request: str) -> str:
        """Each rank takes the GPU of its LOCAL_RANK; two ranks on one GPU would make NCCL fail."""
        from alphagomoku.device import cuda_device_count

        if request.startswith("cuda:") and self.world_size > 1:
            raise DistributedError(
                f"[rank {self.rank}] --device {request} under torchrun would put every rank on one "
                f"GPU; use --device cuda (each rank takes GPU LOCAL_RANK); see {DOCS}#devices-under-torchrun"
            )
        if request == "mps":
            raise DistributedError(f"[rank {self.rank}] DDP does not run on MPS; use --device cpu")
        if request in ("auto", "cuda"):
            n = cuda_device_count()
            if n == 0:
                if request == "cuda":
                    return request  # select_device explains why CUDA is missing
                return "cpu"
            if self.local_rank >= n:
                raise DistributedError(
                    f"[rank {self.rank}] LOCAL_RANK {self.local_rank} has no GPU: this node shows {n}; "
                    f"start at most {n} processes per node (--nproc-per-node); see {DOCS}#devices-under-torchrun"
                )
            return f"cuda:{self.local_rank}"
        return request

    def wrap(self, model):
        from torch.nn.parallel import DistributedDataParallel as DDP

        device = next(model.parameters()).device
        # Both heads enter the loss on every step, so every parameter gets a gradient: the
        # unused-parameter search is not needed, and without it an "Expected to have finished
        # reduction" error cannot come from this model.
        return DDP(model, device_ids=[device.index] if device.type == "cuda" else None,
                   find_unused_parameters=False, gradient_as_bucket_view=True)

    # -- rank 0 decides, the others follow ----------------------------------------------------------
    def _broadcast(self, value, what: str):
        box = [value]
        with self._control(what):
            self.dist.broadcast_object_list(box, src=0, group=self.ctrl)
        return box[0]

    def from_main(self, fn: Callable, what: str):
        """Run ``fn`` on rank 0 and hand its result to every rank. If it raises on rank 0, the
        other ranks stop at once with that reason instead of waiting out a timeout."""
        if self.is_main:
            try:
                value = fn()
            except BaseException as e:
                with contextlib.suppress(Exception):
                    self._broadcast({"stop": f"{type(e).__name__}: {_first_line(e)}"}, what)
                raise
            return self._broadcast({"value": value}, what)["value"]
        message = self._broadcast(None, what)
        if "stop" in message:
            raise DistributedError(
                f"[rank {self.rank}] rank 0 stopped while {what} ({message['stop']}); this rank "
                "stops too. Rank 0's log has the details"
            )
        return message["value"]

    def share_training_state(self, trainer) -> None:
        """Rank 0's optimizer, schedule, epoch and replay buffer, copied to every rank (a fresh
        run or a resume, whatever the world size it was saved with). The model's weights are
        broadcast by DDP itself when it wraps the model."""
        buf = trainer.buffer
        state = None
        if self.is_main:
            state = {
                "optimizer": trainer.optimizer.state_dict(), "scheduler": trainer.scheduler.state_dict(),
                "scaler": trainer.scaler.state_dict(), "epoch": trainer.epoch,
                "best_elo": trainer.best_elo,
                # Every field of the ring (arrays, size, write position), whatever the buffer holds.
                "buffer": {k: v for k, v in vars(buf).items() if k not in ("game", "capacity")},
            }
        state = self._broadcast(state, "sharing the training state")
        if self.is_main:
            return
        trainer.optimizer.load_state_dict(state["optimizer"])
        trainer.scheduler.load_state_dict(state["scheduler"])
        trainer.scaler.load_state_dict(state["scaler"])
        trainer.epoch = trainer.saved_epoch = state["epoch"]
        trainer.best_elo = state["best_elo"]
        for k, v in state["buffer"].items():
            setattr(buf, k, v.copy() if isinstance(v, np.ndarray) else v)

    def decide(self, value: int, what: str) -> int:
        """Rank 0's ``value`` on every rank."""
        return int(self._broadcast(int(value) if self.is_main else None, f"agreeing on {what}"))

    def align_lr(self, optimizer) -> None:
        """Rank 0's learning rates on every rank, bit for bit (a time-budget schedule reads each
        rank's own clock, which would make the ranks' weights drift apart)."""
        rates = self._broadcast([g["lr"] for g in optimizer.param_groups] if self.is_main else None,
                                "agreeing on the learning rate")
        for group, lr in zip(optimizer.param_groups, rates):
            group["lr"] = lr

    def sample(self, buffer, batch_size: int, rng, epoch: int, step: int) -> np.ndarray:
        """This rank's slice of the step's index set, which every rank draws alike."""
        shared = np.random.default_rng([self.seed, epoch, step])
        return shared.integers(0, len(buffer), size=(self.world_size, batch_size))[self.rank]

    def step_hook(self, epoch: int, step: int, buffer=None) -> None:
        fault = self._fault
        if not fault or fault["rank"] != self.rank or fault["epoch"] != epoch or step != 0:
            return
        kind = fault["kind"]
        self.log(f"[rank {self.rank}] injected fault: {kind} at epoch {epoch}")
        if kind == "stall":
            time.sleep(3600)
        elif kind == "raise":
            raise RuntimeError(f"injected fault on rank {self.rank} at epoch {epoch}")
        elif kind == "die":
            os.kill(os.getpid(), signal.SIGKILL)
        elif kind == "drop" and buffer is not None:
            buffer.size -= 1  # a replica that lost a position: the epoch check must catch it

    # -- checks and waits ---------------------------------------------------------------------------
    @contextlib.contextmanager
    def collectives(self, what: str):
        """Around code whose collectives run on the compute group (DDP's all-reduce): a failure
        there is reported with the ranks that stopped answering."""
        try:
            yield
        except (RuntimeError, ValueError) as e:
            if not _is_collective_failure(e):
                raise
            missing = self._missing_ranks()
            raise DistributedError(
                f"[rank {self.rank}] a collective of the {self.backend} group failed while {what} "
                f"({type(e).__name__}: {_first_line(e)}). {missing} "
                f"See {DOCS}#a-rank-stalled-or-died"
            ) from None

    @contextlib.contextmanager
    def _control(self, what: str):
        try:
            yield
        except (RuntimeError, ValueError) as e:
            if not _is_collective_failure(e):
                raise
            raise DistributedError(
                f"[rank {self.rank}] the control group failed while {what} ({type(e).__name__}: "
                f"{_first_line(e)}): another rank died or did not arrive within "
                f"--dist-control-timeout ({self.control_timeout:.0f} s). See {DOCS}#a-rank-stalled-or-died"
            ) from None

    def _missing_ranks(self) -> str:
        """Which ranks are gone, asked on the control group with a short monitored barrier."""
        try:
            self.dist.monitored_barrier(group=self.ctrl, wait_all_ranks=True,
                                        timeout=timedelta(seconds=min(_DIAGNOSE_SECONDS, self.cfg.dist_timeout)))
        except Exception as e:  # noqa: BLE001 - the barrier's message names the missing ranks
            return f"Rank(s) that stopped answering, by a monitored barrier on rank {self.rank}: {_first_line(e)}."
        return "Every rank still answers on the control group, so the failure was in the transport."

    def check_epoch(self, epoch: int, steps: int, buffer, model) -> None:
        """Every rank ran the same number of steps on the same buffer (size and contents) and
        holds the same weights, or the run stops here with the ranks that differ."""
        import torch

        crc, bcrc = parameter_crc(model), buffer_crc(buffer)
        self.log(f"[rank {self.rank}] epoch {epoch}: {steps} steps, buffer {len(buffer)} positions, "
                 f"parameters crc32 {crc:08x}, buffer crc32 {bcrc:08x}")
        mine = torch.tensor([steps, len(buffer), buffer.total_added, crc, bcrc], dtype=torch.int64)
        lo, hi = mine.clone(), mine.clone()
        with self._control(f"comparing the ranks after epoch {epoch}"):
            self.dist.all_reduce(lo, op=self.dist.ReduceOp.MIN, group=self.ctrl)
            self.dist.all_reduce(hi, op=self.dist.ReduceOp.MAX, group=self.ctrl)
        if torch.equal(lo, hi):
            return
        every = [None] * self.world_size
        with self._control(f"gathering the ranks' counts after epoch {epoch}"):
            self.dist.all_gather_object(every, mine.tolist(), group=self.ctrl)
        table = "; ".join(f"rank {r}: {s} steps, buffer {n} positions ({t} ever added), "
                          f"parameters crc32 {c:08x}, buffer crc32 {b:08x}"
                          for r, (s, n, t, c, b) in enumerate(every))
        odd = [r for r, row in enumerate(every) if row != every[0]]
        raise DistributedError(
            f"[rank {self.rank}] the ranks disagree after epoch {epoch}: rank(s) "
            f"{', '.join(map(str, odd))} differ from rank 0 ({table}). Their next collectives would "
            f"not match and the run would hang; it stops instead. See {DOCS}#the-ranks-disagree"
        )

    def barrier(self, what: str) -> None:
        """A barrier on the control group that names the ranks that did not arrive."""
        try:
            self.dist.monitored_barrier(group=self.ctrl, timeout=timedelta(seconds=self.control_timeout),
                                        wait_all_ranks=True)
        except RuntimeError as e:
            raise DistributedError(
                f"[rank {self.rank}] not every rank arrived {what}: {_first_line(e)}. "
                f"See {DOCS}#a-rank-stalled-or-died"
            ) from None

    def close(self) -> None:
        # destroy_process_group can block forever when a peer has died (KataGo's experience):
        # give it a few seconds in a daemon thread, then leave it to process exit.
        t = threading.Thread(target=self.dist.destroy_process_group, daemon=True)
        t.start()
        t.join(10.0)


def parameter_crc(model) -> int:
    """A CRC-32 of the model's parameters, bit for bit: equal on every rank after a DDP step."""
    import zlib

    import torch

    from alphagomoku.nn.io import unwrap

    crc = 0
    with torch.no_grad():
        for p in unwrap(model).parameters():
            # numpy's bytes follow the logical order, whatever layout the weights are kept in.
            crc = zlib.crc32(p.detach().cpu().numpy().tobytes(), crc)
    return crc


def buffer_crc(buffer) -> int:
    """A CRC-32 of every array of the replay buffer: equal on every rank that added the same
    games in the same order."""
    import zlib

    crc = 0
    for name, value in sorted(vars(buffer).items()):
        if isinstance(value, np.ndarray):
            crc = zlib.crc32(np.ascontiguousarray(value).view(np.uint8).tobytes(), crc)
    return crc


def _parse_fault(text: str) -> dict | None:
    if not text:
        return None
    kind, *parts = text.split(":")
    fields = dict(p.split("=", 1) for p in parts)
    if kind not in ("stall", "raise", "die", "drop"):
        raise DistributedError(f"{FAULT_ENV}={text!r}: unknown fault {kind!r}")
    return {"kind": kind, "rank": int(fields.get("rank", 1)), "epoch": int(fields.get("epoch", 1))}


def _is_collective_failure(e: BaseException) -> bool:
    import torch.distributed as dist

    if isinstance(e, getattr(dist, "DistError", ())):
        return True
    text = str(e).lower()
    return any(s in text for s in ("timed out", "timeout", "connection closed", "connection reset",
                                   "broken pipe", "nccl", "gloo", "peer", "monitoredbarrier"))


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
