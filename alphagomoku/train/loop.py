"""The trainer: self-play, then gradient steps, then a checkpoint, epoch after epoch.

Files of a run (``run_dir``): ``config.json``; ``checkpoints/epoch_XXXXXX.pt`` and ``latest.pt``;
``weights/vXXXXXX.pt`` (the inference weights the self-play workers load); ``replay.npz``;
``metrics.csv``; ``games/epoch_XXXXXX.npz``. Epoch ``e`` plays with the weights of epoch
``e - 1`` (version 0: the untrained network) and ends with checkpoint ``e``.
"""

from __future__ import annotations

import contextlib
import math
import random
import shutil
import time
import warnings
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from alphagomoku.device import (DeviceChoice, flush_denormals, select_device,
                                training_autocast_dtype, training_memory_format)
from alphagomoku.nn import PolicyValueNet
from alphagomoku.nn.io import CheckpointError, save_model, unwrap
from alphagomoku.progress import progress
from alphagomoku.selfplay.backend import SelfPlayBackend, open_backend
from alphagomoku.selfplay.openings import steer_target
from alphagomoku.selfplay.warmup import compile_selfplay_kernels
from alphagomoku.selfplay.worker import TaskResult
from alphagomoku.train import distributed
from alphagomoku.train.augment import draw_symmetries, make_batch
from alphagomoku.train.budget import Snapshots, WallClock, budget_spent
from alphagomoku.train.background_save import BackgroundSave
from alphagomoku.train.buffer import BufferFileError, ReplayBuffer
from alphagomoku.train.checkpoint import (TrainingState, intact_checkpoint_hint, load_checkpoint,
                                          restore_rng_state, rng_state, save_checkpoint,
                                          starting_weights)
from alphagomoku.train.config import ConfigError, TrainConfig
from alphagomoku.train.evaluation import evaluate_epoch, final_evaluation
from alphagomoku.train.game_files import save_games
from alphagomoku.train.ema import WeightAverage
from alphagomoku.train.loss import AuxWeights, policy_kl, training_loss
from alphagomoku.train.selfplay_epoch import (
    colour_collapse,
    colour_counts,
    colour_shares,
    epoch_row,
    epoch_simulations,
    plan_tasks,
    worker_spec,
)
from alphagomoku.train.variants import VariantBuffers
from alphagomoku.train.metrics import MetricsLog
from alphagomoku.train.prefetch import BatchPrefetch, batch_threads
from alphagomoku.train.teacher import FadingTeacher
from alphagomoku.train.plot import ProgressPlot


class Trainer:
    def __init__(self, cfg: TrainConfig, resume: bool = False, log: Callable[[str], None] = print,
                 progress: bool = True):
        self.cfg = cfg
        self.log = log
        self.progress = progress
        self.run_dir = cfg.run_path
        self.game = cfg.game
        # Under torchrun: this rank's place among the others (docs/scaling.md); else a no-op.
        self.dist = distributed.setup(cfg, log)
        self.device: DeviceChoice = select_device(self.dist.device_request(cfg.device))
        flush_denormals()  # the optimiser's updates on the CPU never leave denormal weights
        self.model_config = cfg.model
        # Seeded before the network is made, so its initial weights follow --seed too (a resumed
        # run restores the saved random states later).
        random.seed(cfg.seed)
        np.random.seed(cfg.seed)
        torch.manual_seed(cfg.seed)
        self.model = PolicyValueNet(self.model_config).to(
            self.device.device, memory_format=training_memory_format(self.device.kind))
        self.average = WeightAverage(self.model, cfg.ema_decay) if cfg.ema_decay else None
        self.teacher, self.teacher_share = FadingTeacher.of_run(cfg, self.model_config), 0.0
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=self._base_lr)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, self._lr_factor)
        self.variants = cfg.variants
        if len(self.variants) > 1 and self.dist.world_size > 1:
            # Each rank would need every variant's buffer in step with rank 0's.
            raise ConfigError("several board sizes or rules (--board-sizes, --rules, --variant-mix) "
                              "train on one process: run without torchrun")
        self.buffers = VariantBuffers(self.variants, cfg.buffer_positions, floor=cfg.batch_size)
        self.rng = np.random.default_rng(cfg.seed)
        self.epoch = 0
        self.saved_epoch = 0  # the newest checkpoint on disk
        self.lopsided_epochs = 0  # epochs in a row with one colour above collapse_share
        # Black's value that counts as an even opening (openings.steer_target), for each board
        # and rule: what is even differs between them (renju, say, is kinder to white).
        self.opening_targets = {v.name: 0.0 for v in self.variants}
        self.best_elo = 0.0  # rating of the best network relative to the untrained one
        self.clock: WallClock | None = None  # started by run(); see alphagomoku.train.budget
        self.spent_seconds = 0.0  # wall time of earlier sessions of this run
        self.snapshots: Snapshots | None = None
        self.buffer_save = BackgroundSave()  # the replay buffer, written while self-play goes on
        self.plot = ProgressPlot(self.run_dir / "metrics.csv", self.run_dir / "progress.png")
        # Set by train.py's signal handler. A stop signal raises KeyboardInterrupt at once, but
        # once in a few hundred runs that exception was lost somewhere inside an epoch (the run
        # went on training; seen with SIGTERM); the flag stops the run at the next epoch then.
        self.stop_requested: Callable[[], bool] = lambda: False
        self.amp_dtype = training_autocast_dtype(self.device, cfg.train_amp)
        self.scaler = torch.amp.GradScaler("cuda", enabled=self.amp_dtype == torch.float16)
        # Rank 0 alone touches the run directory; the other ranks copy its state.
        self.dist.from_main(self._resume if resume else self._start_fresh, "opening the run")
        self.dist.share_training_state(self)
        self.model = self.dist.wrap(self.model)
        self.metrics = MetricsLog(self.run_dir) if self.dist.is_main else None
        if resume and self.metrics:
            self.metrics.truncate_after(self.epoch)

    # -- set-up -------------------------------------------------------------------------------------
    @property
    def _base_lr(self) -> float:
        # --lr is the rate of one rank's batch; several ranks train on a batch that many times larger.
        return self.cfg.lr * distributed.lr_factor(self.cfg.lr_scaling, self.dist.world_size)

    def _done(self, epoch: int) -> float:
        """The share of the run done: of the time budget (the run ends on time), else of the epochs."""
        if self.cfg.time_budget_minutes > 0:
            # Before run() starts the clock (or __init__ sets anything), a resume's spent time.
            clock = getattr(self, "clock", None)
            seconds = clock.seconds() if clock is not None else getattr(self, "spent_seconds", 0.0)
            return min(seconds / (60 * self.cfg.time_budget_minutes), 1.0)
        return min(epoch, self.cfg.epochs) / self.cfg.epochs

    def _lr_factor(self, epoch: int) -> float:
        done = self._done(epoch)
        share = self.cfg.lr_drop_share
        drop = self.cfg.lr_drop_factor if share > 0 and done >= 1.0 - share else 1.0
        if self.cfg.lr_schedule == "constant":
            return drop
        return drop * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * done)))

    def _start_fresh(self) -> None:
        latest = self.run_dir / "checkpoints" / "latest.pt"
        if latest.exists():
            raise ConfigError(
                f"{self.run_dir} already holds a run (found {latest}): continue it with --resume, "
                "or choose another --run-dir"
            )
        if self.cfg.init_weights:
            self.model.load_state_dict(starting_weights(self.cfg.init_weights, self.model_config))
            if self.average is not None:
                self.average.load_state_dict(self.model.state_dict())
            self.log(f"starting from the weights in {self.cfg.init_weights}")
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.cfg.save(self.run_dir / "config.json")
        save_model(self.initial_weights, self.playing_model)
        save_model(self.best_weights, self.playing_model)

    def _resume(self) -> None:
        path = self.run_dir / "checkpoints" / "latest.pt"
        if not path.exists():
            raise CheckpointError(f"--resume: no checkpoint at {path}; start the run without --resume")
        try:
            state = TrainingState.from_dict(load_checkpoint(path), str(path))
        except CheckpointError as e:
            raise CheckpointError(f"{e}\n{intact_checkpoint_hint(path.parent)}") from None
        saved = state.config
        refusal = self.cfg.resume_refusal(saved)
        if refusal:
            raise CheckpointError(refusal)
        try:
            self.model.load_state_dict(state.model)
            if self.average is not None:
                # A run that starts averaging on resume starts from the weights it has.
                self.average.load_state_dict(state.ema if state.ema is not None else state.model)
        except RuntimeError as e:
            raise CheckpointError(f"checkpoint {path} does not fit the {self.cfg.model_preset} "
                                  f"model: {str(e).splitlines()[0]}") from None
        self.optimizer.load_state_dict(state.optimizer)
        self.scheduler.load_state_dict(state.scheduler)
        _restore_scaler(self.scaler, state.scaler)
        restore_rng_state(state.rng)
        self.rng.bit_generator.state = state.selfplay_rng
        self.epoch = self.saved_epoch = state.epoch
        self.best_elo = state.best_elo
        self.lopsided_epochs = state.lopsided_epochs
        saved_targets = state.opening_targets or {self.variants[0].name: state.opening_target}
        for name in self.opening_targets:
            self.opening_targets[name] = saved_targets.get(name, 0.0)
        self.spent_seconds = state.wall_seconds
        # The saved schedule holds its run's --lr and world size: this run's rate decides.
        saved_lr = self.scheduler.base_lrs[0]
        distributed.rescale_lr(self.optimizer, self.scheduler, self._base_lr)
        if state.world_size != self.dist.world_size:
            self.log(f"note: the checkpoint was trained on {state.world_size} rank(s), this run has "
                     f"{self.dist.world_size}: learning rate rescaled to {self._base_lr:g} "
                     f"(--lr-scaling {self.cfg.lr_scaling})")
        elif not math.isclose(saved_lr, self._base_lr):
            self.log(f"note: the checkpoint trained at a rate of {saved_lr:g}, this run at {self._base_lr:g} (--lr)")
        try:
            buffer_epoch = self.buffers.load(self.run_dir)
        except BufferFileError as e:
            raise CheckpointError(f"--resume: {e}") from None
        if buffer_epoch != self.epoch:
            self.log(f"note: replay buffer is from epoch {buffer_epoch}, checkpoint from epoch "
                     f"{self.epoch} (a stop between the two saves); using the buffer as it is")
        self.cfg.save(self.run_dir / "config.json")
        self.log(f"resumed {path} at epoch {self.epoch}: {len(self.buffers)} positions in the buffer")

    @property
    def buffer(self) -> ReplayBuffer:
        """The main variant's buffer: the only one, unless the run trains several variants."""
        return self.buffers.main

    @property
    def mixed(self) -> bool:
        return len(self.variants) > 1

    @property
    def opening_target(self) -> float:
        """The main board and rule's even opening for black (the one the log and metrics show)."""
        return self.opening_targets[self.variants[0].name]

    @opening_target.setter
    def opening_target(self, value: float) -> None:
        self.opening_targets[self.variants[0].name] = value

    # -- the run ------------------------------------------------------------------------------------
    def run(self) -> None:
        cfg = self.cfg
        self.log(f"device: {self.device}")
        pool = self._start_selfplay() if self.dist.is_main else None
        # The budget's clock starts after the one-off compilation (cached on disk), so that runs
        # compare the same with a cold cache and a warm one.
        self.clock = WallClock(self.spent_seconds)
        if cfg.snapshot_minutes > 0 and self.dist.is_main:
            self.snapshots = Snapshots(self.run_dir, cfg.snapshot_minutes, self.epoch,
                                       until_minutes=cfg.time_budget_minutes)
        try:
            with pool or contextlib.nullcontext():
                while self.epoch < cfg.epochs:
                    if self.stop_requested():
                        raise KeyboardInterrupt
                    self._take_snapshots()
                    spent = bool(self.epoch) and budget_spent(cfg.time_budget_minutes, self.clock.seconds())
                    # Rank 0's clock decides for every rank: no rank leaves the loop on its own.
                    if self.dist.decide(int(spent), f"whether the time budget is spent after epoch {self.epoch}"):
                        self.log(f"time budget spent: {self.clock.seconds() / 60:.2f} of "
                                 f"{cfg.time_budget_minutes:g} minutes after epoch {self.epoch}; the "
                                 "checkpoint is whole (raise --time-budget-minutes and --resume to go on)")
                        break
                    self._run_epoch(pool)
                self._take_snapshots()
                self.plot.finish()
            if cfg.final_eval_games and self.dist.is_main:
                final_evaluation(cfg, self._publish_weights(), self.initial_weights,
                                 self.run_dir, self.progress, self.log)
        except KeyboardInterrupt:
            if pool is not None:
                pool.close()
            if not self.dist.is_main:
                pass  # rank 0 says where the last checkpoint is
            elif self.saved_epoch:
                self.log(f"interrupted: workers stopped; the last complete checkpoint is epoch "
                         f"{self.saved_epoch} in {self.run_dir / 'checkpoints'}; continue with --resume")
            else:
                self.log("interrupted: workers stopped; no checkpoint was written yet, so start "
                         "the run again (without --resume)")
            raise
        finally:
            self.buffer_save.finish(self.log)
            if self.metrics is not None:
                self.metrics.close()
            self.dist.close()

    def _start_selfplay(self) -> SelfPlayBackend:
        cfg = self.cfg
        if cfg.selfplay_backend == "ray":
            from alphagomoku.selfplay.ray_backend import import_ray

            import_ray()  # without Ray: one line with the install command, before any work
        t0 = time.perf_counter()
        compile_selfplay_kernels(self.game)
        self.log(f"search kernels ready ({time.perf_counter() - t0:.1f} s; compiled once, cached for the workers)")
        ray_options = None
        if cfg.selfplay_backend == "ray":
            from alphagomoku.selfplay.ray_backend import RayOptions

            ray_options = RayOptions(address=cfg.ray_address, num_cpus=cfg.ray_actor_cpus,
                                     num_gpus=cfg.ray_actor_gpus, max_lag=cfg.ray_max_lag)
        return open_backend(cfg.selfplay_backend, worker_spec(cfg, self.device), cfg.parallel_workers,
                            cfg.task_timeout(cfg.selfplay_backend), cfg.max_worker_failures,
                            log=self.log, ray_options=ray_options)

    def _take_snapshots(self) -> None:
        """Between epochs: the marks passed since the last one get the weights of the epoch just
        ended (before any budget check, so the final mark is never missed)."""
        if self.snapshots is None or not self.epoch:
            return
        for snap in self.snapshots.take(self.epoch, self.clock.seconds(), self.playing_model):
            self.log(f"snapshot at minute {snap['mark_minutes']:g}: epoch {self.epoch} -> "
                     f"{self.run_dir / 'snapshots' / snap['file']}")

    @property
    def playing_model(self) -> torch.nn.Module:
        """The network everything that plays gets: the weight average, when the run keeps one."""
        return self.average.model if self.average is not None else unwrap(self.model)

    @property
    def initial_weights(self) -> Path:
        return self.run_dir / "weights" / "initial.pt"

    @property
    def best_weights(self) -> Path:
        return self.run_dir / "weights" / "best.pt"

    def _publish_weights(self) -> Path:
        """Write the current model as ``weights/vEPOCH.pt`` (atomic; once per epoch) and return
        its path. Keeps the last two versions."""
        path = self.run_dir / "weights" / f"v{self.epoch:06d}.pt"
        if not path.exists():
            save_model(path, self.playing_model)
            for old in sorted((self.run_dir / "weights").glob("v*.pt"))[:-2]:
                old.unlink()
        return path

    def _play_epoch(self, pool: SelfPlayBackend, epoch: int, row: dict) -> list:
        weights = self._publish_weights()
        if self.cfg.gating_threshold > 0:
            weights = self.best_weights  # under gating, self-play uses the best network so far
        records, games = self._self_play(pool, weights, epoch, row)
        self._watch_colours(row)
        row["opening_target"] = self.opening_target
        for v in self.variants:
            mine = [r for r, g in zip(records, games) if g == v.game]
            counts = colour_counts(mine)
            self.opening_targets[v.name] = steer_target(
                self.opening_targets[v.name], counts["opening_black_wins"],
                counts["opening_white_wins"], counts["opening_games"],
                self.cfg.opening_balance_gain)
            if mine:
                suffix = "" if v is self.variants[0] else f"-{v.name}"
                save_games(self.run_dir / "games" / f"epoch_{epoch:06d}{suffix}.npz", mine, v.game)
        return records

    def _add_game(self, record, game=None) -> None:
        cfg = self.cfg
        buffer = self.buffer if game is None else self.buffers.of(game)
        buffer.add_game(record, cfg.decided_threshold, cfg.decided_plies, cfg.decided_weight)

    def _run_epoch(self, pool: SelfPlayBackend | None) -> None:
        cfg = self.cfg
        epoch = self.epoch + 1
        row: dict = {"epoch": epoch}
        # Rank 0 plays; under torchrun the other ranks wait on the control group for its records
        # and add them to their copy of the buffer, in rank 0's order.
        records = self.dist.from_main(lambda: self._play_epoch(pool, epoch, row), f"playing epoch {epoch}")
        if not self.dist.is_main:
            for record in records:
                self._add_game(record)
            row["positions"] = sum(r.searched for r in records)
        self._train(row, new_positions=row["positions"])
        self.epoch = epoch
        with warnings.catch_warnings():
            # The schedule counts epochs (or the clock), trained or not. Until the buffer holds
            # min_buffer_positions no optimizer step has run, and torch warns as if the calls
            # were in the wrong order.
            warnings.filterwarnings("ignore", message=r"Detected call of `lr_scheduler\.step\(\)`")
            self.scheduler.step()
        # A schedule can read the wall clock (--time-budget-minutes): every rank takes rank 0's rate.
        self.dist.align_lr(self.optimizer)
        self.dist.check_epoch(epoch, row["train_steps"], self.buffer, self.model)
        if not self.dist.is_main:
            self.saved_epoch = epoch
            self.dist.barrier(f"after epoch {epoch} (rank 0 saves the checkpoint meanwhile)")
            return
        if cfg.eval_every and epoch % cfg.eval_every == 0:
            self._evaluate(row)
        self.buffers.save(self.run_dir, epoch, self.buffer_save)
        save_checkpoint(self.run_dir, self._state().to_dict(), cfg.keep_checkpoints)
        self.saved_epoch = epoch
        self.dist.barrier(f"after epoch {epoch}'s checkpoint")
        self.metrics.write(row)
        self.plot.update()
        label = (f"epoch {epoch} ({self.clock.seconds() / 60:.2f} of {cfg.time_budget_minutes:g} min)"
                 if cfg.time_budget_minutes > 0 else f"epoch {epoch}/{cfg.epochs}")
        self.log(
            f"{label}: loss {row.get('loss', float('nan')):.3f} "
            f"(value {row.get('value_loss', float('nan')):.3f}, policy {row.get('policy_loss', float('nan')):.3f}), "
            f"{row['games']} games, {row['positions_per_second']:.0f} positions/s "
            f"({row['cache_hit_share']:.0%} answered by the evaluation cache), "
            f"buffer {len(self.buffers)}; black/white/draw from openings "
            f"{row['opening_black_wins']}/{row['opening_white_wins']}/{row['opening_draws']} "
            f"(even at {row['opening_target']:+.2f} for black), "
            f"from the empty board {row['empty_black_wins']}/{row['empty_white_wins']}/{row['empty_draws']}"
        )

    def _evaluate(self, row: dict) -> None:
        current = self._publish_weights()
        result = evaluate_epoch(self.cfg, current, self.best_weights, self.best_elo, self.epoch,
                                self.progress, log=self.log)
        if result["promoted"]:
            shutil.copyfile(current, self.best_weights)
            self.best_elo = result["elo"]
        row.update(result)
        self.log(f"epoch {self.epoch} matches: score {result['score_vs_best']:.2f} vs best "
                 f"({'promoted' if result['promoted'] else 'not promoted'}), "
                 f"{result['score_vs_baseline']:.2f} vs pure MCTS {self.cfg.baseline_playouts}")

    def _self_play(self, pool: SelfPlayBackend, weights: Path, epoch: int,
                   row: dict) -> tuple[list, list]:
        """The epoch's games, and the game (board and rule) each was played on."""
        cfg = self.cfg
        row["simulations"] = epoch_simulations(cfg, self._done(self.epoch))
        tasks = plan_tasks(cfg, self.variants, self.opening_targets, str(weights), self.epoch,
                           self.rng, simulations=row["simulations"])
        records: list = []
        games: list = []
        totals = {"network_seconds": 0.0, "seconds": 0.0, "unbalanced_openings": 0,
                  "cache_hits": 0, "cache_misses": 0}
        t0 = time.perf_counter()
        bar = progress(total=cfg.selfplay_games, desc=f"self-play {epoch}", unit="game",
                       disable=not self.progress, leave=False)

        def on_result(result: TaskResult) -> None:
            game = tasks[result.task_id].game or self.game
            records.extend(result.records)
            games.extend([game] * len(result.records))
            for r in result.records:
                self._add_game(r, game)
            for k in totals:
                totals[k] += result.stats.get(k, 0.0)
            positions = sum(r.searched for r in records)
            bar.update(len(result.records))
            bar.set_postfix(colour_shares(records) | {
                "pos/s": f"{positions / max(time.perf_counter() - t0, 1e-9):.0f}",
                "len": f"{positions / len(records):.1f}",
            })

        try:
            pool.play(tasks, on_result)
        finally:
            bar.close()
        row.update(epoch_row(records, totals, time.perf_counter() - t0))
        return records, games

    def _train(self, row: dict, new_positions: int) -> None:
        cfg = self.cfg
        row["buffer_positions"] = len(self.buffers)
        row["lr"] = self.optimizer.param_groups[0]["lr"]
        if self.teacher is not None:
            self.teacher_share = row["teacher_share"] = self.teacher.share_at(self._done(self.epoch))
        ready = len(self.buffers) >= cfg.min_buffer_positions
        # Every rank trains on its own batch, so an epoch over N ranks needs N times fewer steps
        # for the same reuse. Rank 0 alone decides; no rank ever stops on its own count.
        steps = (cfg.steps_per_epoch or max(1, math.ceil(
            new_positions * cfg.sample_reuse / (cfg.batch_size * self.dist.world_size)))) if ready else 0
        steps = self.dist.decide(steps, f"the step count of epoch {self.epoch + 1}")
        if steps == 0:
            self.log(f"buffer holds {len(self.buffers)} < {cfg.min_buffer_positions} positions: no training yet")
            row["train_steps"] = 0
            return
        # The policy's change over the epoch, measured on one buffer's positions (in a mixed
        # run the main board may have none yet).
        probe_variant, probe_buffer = self._pick_buffer(least=1)
        probe = self._tensors(probe_buffer.sample_indices(min(512, len(probe_buffer)), self.rng),
                              probe_buffer, probe_variant.game)
        old_log_p = self._log_policy(probe[0])
        self.model.train()
        aux = AuxWeights(reply=cfg.aux_reply_weight, soft_policy=cfg.soft_policy_weight,
                         soft_temperature=cfg.soft_policy_temperature,
                         short_value=cfg.short_value_weight, future=cfg.future_weight,
                         surprise=cfg.policy_surprise)
        sums: dict[str, float] = {}
        t0 = time.perf_counter()
        epoch = self.epoch + 1
        dev = self.device.device
        with self.dist.collectives(f"training epoch {epoch}"), BatchPrefetch(
                lambda step: self._plan_batch(epoch, step), self._build_batch, steps,
                batch_threads(cfg.batch_threads, self.device.kind)) as batches:
            for step in progress(range(steps), desc="training", unit="step", disable=not self.progress, leave=False):
                self.dist.step_hook(epoch, step, self.buffer)
                batch = tuple(t.to(dev, non_blocking=True) for t in batches.take(step))
                with torch.autocast(self.device.device.type, dtype=self.amp_dtype or torch.float32,
                                    enabled=self.amp_dtype is not None):
                    parts = training_loss(self.model, *batch[:3], cfg.weight_decay, *batch[3:],
                                          aux=aux)
                self.optimizer.zero_grad(set_to_none=True)
                self.scaler.scale(parts["loss"]).backward()
                self.scaler.step(self.optimizer)
                self.scaler.update()
                if self.average is not None:
                    self.average.update(unwrap(self.model))
                for k, v in parts.items():
                    sums[k] = sums.get(k, 0.0) + v.detach().item()
        elapsed = time.perf_counter() - t0
        self.model.eval()
        row.update(
            train_steps=steps, train_seconds=elapsed, samples_per_second=steps * cfg.batch_size / elapsed,
            loss=sums["loss"] / steps, value_loss=sums["value"] / steps, policy_loss=sums["policy"] / steps,
            l2=sums["l2"] / steps, policy_entropy=sums["entropy"] / steps,
            kl=policy_kl(old_log_p, self._log_policy(probe[0])),
            **{f"{k}_loss": sums[k] / steps for k in ("reply", "soft_policy", "short_value", "future")
               if k in sums},
        )

    def _pick_buffer(self, least: int):
        """A variant and its buffer, drawn by positions held among those holding ``least``
        (any that holds positions when none does yet)."""
        try:
            return self.buffers.pick(self.rng, least)
        except ValueError:
            return self.buffers.pick(self.rng, 1)

    def _plan_batch(self, epoch: int, step: int):
        """What step ``step``'s batch holds, drawn from the run's random stream: its buffer, its
        positions and a symmetry for each (built by :meth:`_build_batch`, maybe on a thread)."""
        cfg = self.cfg
        if self.mixed:
            # One variant a batch: its planes share one board size.
            variant, buffer = self._pick_buffer(least=cfg.batch_size)
            game = variant.game
            indices = buffer.sample_indices(cfg.batch_size, self.rng)
        else:
            buffer, game = self.buffer, self.game
            indices = self.dist.sample(buffer, cfg.batch_size, self.rng, epoch, step)
        return buffer, game, indices, draw_symmetries(game, len(indices), self.rng)

    def _build_batch(self, plan) -> list[torch.Tensor]:
        buffer, game, indices, symmetries = plan
        batch = make_batch(buffer, indices, None, game, self.cfg.value_q_weight,
                           self.cfg.vcf_plane_budget, self.model_config.rule_planes,
                           symmetries=symmetries, threat_planes=self.model_config.threat_planes)
        tensors = [torch.from_numpy(a) for a in batch]
        if self.teacher is not None:
            tensors = self.teacher.mix(tensors, game, self.teacher_share)
        if self.device.kind == "cuda":
            # Page-locked, so that the copy to the device is queued without blocking the step.
            tensors = [t.pin_memory() for t in tensors]
        return tensors

    def _tensors(self, indices: np.ndarray, buffer: ReplayBuffer, game):
        """Positions ``indices`` of ``buffer`` as stored (no symmetry), on the device."""
        return tuple(t.to(self.device.device) for t in self._build_batch((buffer, game, indices, None)))

    @torch.no_grad()
    def _log_policy(self, planes: torch.Tensor) -> torch.Tensor:
        self.model.eval()
        logits, _ = self.model(planes)
        return torch.log_softmax(logits.float(), dim=1)

    def _state(self) -> TrainingState:
        return TrainingState(
            epoch=self.epoch,
            config=self.cfg.to_dict(),
            model_config=self.model_config.to_dict(),
            model=unwrap(self.model).state_dict(),
            ema=self.average.state_dict() if self.average is not None else None,
            optimizer=self.optimizer.state_dict(),
            scheduler=self.scheduler.state_dict(),
            scaler=self.scaler.state_dict(),
            rng=rng_state(),
            selfplay_rng=self.rng.bit_generator.state,
            best_elo=self.best_elo,
            lopsided_epochs=self.lopsided_epochs,
            opening_target=self.opening_target,
            opening_targets=dict(self.opening_targets),
            wall_seconds=self.clock.seconds() if self.clock is not None else self.spent_seconds,
            world_size=self.dist.world_size,
        )

    def _watch_colours(self, row: dict) -> None:
        self.lopsided_epochs, warning = colour_collapse(row, self.cfg, self.lopsided_epochs)
        if warning:
            self.log(warning)


def _restore_scaler(scaler, saved) -> None:
    """Load the fp16 loss scale of a resumed run. A run saved without fp16 (on a CPU or a bf16
    GPU) saved an empty state, which an fp16 scaler refuses: a run begun on one device and
    resumed on a T4 starts a new scale instead."""
    if saved:
        scaler.load_state_dict(saved)


__all__ = ["Trainer"]
