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

from alphagomoku.device import DeviceChoice, cuda_autocast_dtype, select_device
from alphagomoku.game.constants import BLACK, DRAW, WHITE
from alphagomoku.mcts import SearchConfig
from alphagomoku.nn import ModelConfig, PolicyValueNet
from alphagomoku.nn.io import CheckpointError, save_model, unwrap
from alphagomoku.progress import progress
from alphagomoku.selfplay.backend import SelfPlayBackend, open_backend
from alphagomoku.selfplay.game_loop import SelfPlaySettings
from alphagomoku.selfplay.openings import OpeningSettings, steer_target
from alphagomoku.selfplay.warmup import compile_selfplay_kernels
from alphagomoku.selfplay.worker import SelfPlayTask, TaskResult, WorkerSpec, worker_devices
from alphagomoku.train import distributed
from alphagomoku.train.augment import make_batch
from alphagomoku.train.budget import Snapshots, WallClock, budget_spent
from alphagomoku.train.buffer import BufferFileError, ReplayBuffer
from alphagomoku.train.checkpoint import (
    TrainingState,
    load_checkpoint,
    restore_rng_state,
    rng_state,
    save_checkpoint,
)
from alphagomoku.train.config import ConfigError, TrainConfig
from alphagomoku.train.evaluation import evaluate_epoch, final_evaluation
from alphagomoku.train.game_files import save_games
from alphagomoku.train.loss import alphazero_loss, policy_kl
from alphagomoku.train.metrics import MetricsLog
from alphagomoku.train.plot import plot_progress

# Settings that define what is being learned: a resumed run must keep them.
_FIXED_ON_RESUME = ("board_size", "n_in_row", "rule", "model_preset", "vcf_plane_budget")


def worker_spec(cfg: TrainConfig, device: DeviceChoice) -> WorkerSpec:
    """What every self-play worker of a run with ``cfg`` is given: the search, the game loop's
    settings and the device. The self-play benchmark builds its workers with this too, so that
    it times what training runs."""
    gumbel = cfg.search == "gumbel"
    search = SearchConfig(
        num_simulations=cfg.simulations, c_puct=cfg.c_puct, dirichlet_alpha=cfg.dirichlet_alpha,
        dirichlet_eps=0.0 if gumbel else cfg.dirichlet_eps, root_rule=cfg.search,
        gumbel_m=cfg.gumbel_m, gumbel_c_visit=cfg.gumbel_c_visit,
        gumbel_c_scale=cfg.gumbel_c_scale, interior_rule=cfg.gumbel_interior,
        vcf_leaf_budget=cfg.vcf_leaf_budget, vcf_plane_budget=cfg.vcf_plane_budget,
    )
    openings = None
    if cfg.opening_share > 0:
        openings = OpeningSettings(share=cfg.opening_share, min_stones=cfg.opening_min_stones,
                                   max_stones=cfg.opening_max_stones,
                                   max_value=cfg.opening_max_value)
    settings = SelfPlaySettings(
        games_at_once=cfg.games_at_once or cfg.games_per_task,
        temperature_moves=cfg.temperature_moves,
        resign_threshold=cfg.resign_threshold, resign_playthrough=cfg.resign_playthrough,
        openings=openings, full_search_share=cfg.full_search_share,
        fast_simulations=cfg.fast_simulations, vcf_end_budget=cfg.vcf_end_budget,
        eval_cache=cfg.eval_cache,
    )
    device_name, num_gpus = worker_devices(device, cfg.device)
    # One torch thread per CPU worker: workers are the parallelism, and several threads per
    # process on shared cores make each forward pass slower, not faster.
    return WorkerSpec(game=cfg.game, search=search, settings=settings, device=device_name,
                      num_gpus=num_gpus, threads_per_worker=1,
                      inference_backend=cfg.inference_backend, inference_amp=cfg.inference_amp)


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
        self.model_config = ModelConfig.preset(cfg.model_preset, cfg.board_size,
                                               vcf_plane_budget=cfg.vcf_plane_budget)
        # Seeded before the network is made, so its initial weights follow --seed too (a resumed
        # run restores the saved random states later).
        random.seed(cfg.seed)
        np.random.seed(cfg.seed)
        torch.manual_seed(cfg.seed)
        self.model = PolicyValueNet(self.model_config).to(self.device.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=self._base_lr)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, self._lr_factor)
        self.buffer = ReplayBuffer(self.game, cfg.buffer_positions)
        self.rng = np.random.default_rng(cfg.seed)
        self.epoch = 0
        self.saved_epoch = 0  # the newest checkpoint on disk
        self.lopsided_epochs = 0  # epochs in a row with one colour above collapse_share
        self.opening_target = 0.0  # black's value that counts as an even opening (openings.steer_target)
        self.best_elo = 0.0  # rating of the best network relative to the untrained one
        self.clock: WallClock | None = None  # started by run(); see alphagomoku.train.budget
        self.spent_seconds = 0.0  # wall time of earlier sessions of this run
        self.snapshots: Snapshots | None = None
        # Set by train.py's signal handler. A stop signal raises KeyboardInterrupt at once, but
        # once in a few hundred runs that exception was lost somewhere inside an epoch (the run
        # went on training; seen with SIGTERM); the flag stops the run at the next epoch then.
        self.stop_requested: Callable[[], bool] = lambda: False
        self.amp_dtype = _amp_dtype(self.device)
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

    def _lr_factor(self, epoch: int) -> float:
        if self.cfg.lr_schedule == "constant":
            return 1.0
        done = min(epoch, self.cfg.epochs) / self.cfg.epochs
        clock = getattr(self, "clock", None)  # the scheduler asks once before __init__ sets it
        if self.cfg.time_budget_minutes > 0 and clock is not None:
            # A budgeted run ends on time, not at cfg.epochs: the cosine runs over the budget.
            done = min(clock.seconds() / (60 * self.cfg.time_budget_minutes), 1.0)
        return 0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * done))

    def _start_fresh(self) -> None:
        latest = self.run_dir / "checkpoints" / "latest.pt"
        if latest.exists():
            raise ConfigError(
                f"{self.run_dir} already holds a run (found {latest}): continue it with --resume, "
                "or choose another --run-dir"
            )
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.cfg.save(self.run_dir / "config.json")
        save_model(self.initial_weights, unwrap(self.model))
        save_model(self.best_weights, unwrap(self.model))

    def _resume(self) -> None:
        path = self.run_dir / "checkpoints" / "latest.pt"
        if not path.exists():
            raise CheckpointError(f"--resume: no checkpoint at {path}; start the run without --resume")
        try:
            state = TrainingState.from_dict(load_checkpoint(path), str(path))
        except CheckpointError as e:
            raise CheckpointError(f"{e}\n{_intact_checkpoint_hint(path.parent)}") from None
        saved = state.config
        for key in _FIXED_ON_RESUME:
            if key in saved and saved[key] != getattr(self.cfg, key):
                raise CheckpointError(
                    f"--resume: the checkpoint was trained with {key}={saved[key]!r}, this run asks "
                    f"for {getattr(self.cfg, key)!r}; drop the flag or start a new --run-dir"
                )
        try:
            self.model.load_state_dict(state.model)
        except RuntimeError as e:
            raise CheckpointError(f"checkpoint {path} does not fit the {self.cfg.model_preset} "
                                  f"model: {str(e).splitlines()[0]}") from None
        self.optimizer.load_state_dict(state.optimizer)
        self.scheduler.load_state_dict(state.scheduler)
        _restore_scaler(self.scaler, state.scaler)
        saved_world = state.world_size
        if saved_world != self.dist.world_size:
            distributed.rescale_lr(self.optimizer, self.scheduler, self._base_lr)
            self.log(f"note: the checkpoint was trained on {saved_world} rank(s), this run has "
                     f"{self.dist.world_size}: learning rate rescaled to {self._base_lr:g} "
                     f"(--lr-scaling {self.cfg.lr_scaling})")
        restore_rng_state(state.rng)
        self.rng.bit_generator.state = state.selfplay_rng
        self.epoch = self.saved_epoch = state.epoch
        self.best_elo = state.best_elo
        self.lopsided_epochs = state.lopsided_epochs
        self.opening_target = state.opening_target
        self.spent_seconds = state.wall_seconds
        try:
            self.buffer, buffer_epoch = ReplayBuffer.load(
                self.run_dir / "replay.npz", self.game, self.cfg.buffer_positions)
        except BufferFileError as e:
            raise CheckpointError(f"--resume: {e}") from None
        if buffer_epoch != self.epoch:
            self.log(f"note: replay buffer is from epoch {buffer_epoch}, checkpoint from epoch "
                     f"{self.epoch} (a stop between the two saves); using the buffer as it is")
        self.cfg.save(self.run_dir / "config.json")
        self.log(f"resumed {path} at epoch {self.epoch}: {len(self.buffer)} positions in the buffer")

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
        for snap in self.snapshots.take(self.epoch, self.clock.seconds(), unwrap(self.model)):
            self.log(f"snapshot at minute {snap['mark_minutes']:g}: epoch {self.epoch} -> "
                     f"{self.run_dir / 'snapshots' / snap['file']}")

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
            save_model(path, unwrap(self.model))
            for old in sorted((self.run_dir / "weights").glob("v*.pt"))[:-2]:
                old.unlink()
        return path

    def _play_epoch(self, pool: SelfPlayBackend, epoch: int, row: dict) -> list:
        weights = self._publish_weights()
        if self.cfg.gating_threshold > 0:
            weights = self.best_weights  # under gating, self-play uses the best network so far
        records = self._self_play(pool, weights, epoch, row)
        self._watch_colours(row)
        row["opening_target"] = self.opening_target
        self.opening_target = steer_target(self.opening_target, row["opening_black_wins"],
                                           row["opening_white_wins"], row["opening_games"],
                                           self.cfg.opening_balance_gain)
        save_games(self.run_dir / "games" / f"epoch_{epoch:06d}.npz", records, self.game)
        return records

    def _add_game(self, record) -> None:
        cfg = self.cfg
        self.buffer.add_game(record, cfg.decided_threshold, cfg.decided_plies, cfg.decided_weight)

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
        self.buffer.save(self.run_dir / "replay.npz", epoch)
        save_checkpoint(self.run_dir, self._state().to_dict(), cfg.keep_checkpoints)
        self.saved_epoch = epoch
        self.dist.barrier(f"after epoch {epoch}'s checkpoint")
        self.metrics.write(row)
        plot_progress(self.run_dir / "metrics.csv", self.run_dir / "progress.png")
        label = (f"epoch {epoch} ({self.clock.seconds() / 60:.2f} of {cfg.time_budget_minutes:g} min)"
                 if cfg.time_budget_minutes > 0 else f"epoch {epoch}/{cfg.epochs}")
        self.log(
            f"{label}: loss {row.get('loss', float('nan')):.3f} "
            f"(value {row.get('value_loss', float('nan')):.3f}, policy {row.get('policy_loss', float('nan')):.3f}), "
            f"{row['games']} games, {row['positions_per_second']:.0f} positions/s "
            f"({row['cache_hit_share']:.0%} answered by the evaluation cache), "
            f"buffer {len(self.buffer)}; black/white/draw from openings "
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

    def _self_play(self, pool: SelfPlayBackend, weights: Path, epoch: int, row: dict) -> list:
        cfg = self.cfg
        tasks = []
        left = cfg.selfplay_games
        while left > 0:
            n = min(cfg.games_per_task, left)
            seed = int(self.rng.integers(2**31))
            tasks.append(SelfPlayTask(len(tasks), n, seed, str(weights), self.epoch,
                                      opening_black_target=self.opening_target))
            left -= n
        records: list = []
        totals = {"network_seconds": 0.0, "seconds": 0.0, "unbalanced_openings": 0,
                  "cache_hits": 0, "cache_misses": 0}
        t0 = time.perf_counter()
        bar = progress(total=cfg.selfplay_games, desc=f"self-play {epoch}", unit="game",
                       disable=not self.progress, leave=False)

        def on_result(result: TaskResult) -> None:
            records.extend(result.records)
            for r in result.records:
                self._add_game(r)
            for k in totals:
                totals[k] += result.stats.get(k, 0.0)
            positions = sum(r.searched for r in records)
            bar.update(len(result.records))
            bar.set_postfix(_shares(records) | {
                "pos/s": f"{positions / max(time.perf_counter() - t0, 1e-9):.0f}",
                "len": f"{positions / len(records):.1f}",
            })

        try:
            pool.play(tasks, on_result)
        finally:
            bar.close()
        elapsed = time.perf_counter() - t0
        positions = sum(r.searched for r in records)
        results = [r.result for r in records]
        row.update(colour_counts(records))
        row.update(
            games=len(records), positions=positions,
            avg_length=sum(r.length for r in records) / len(records),
            black_wins=results.count(BLACK), white_wins=results.count(WHITE), draws=results.count(DRAW),
            resignations=sum(r.resigned for r in records),
            vcf_endings=sum(r.vcf_ended for r in records),
            false_resignations=sum(r.false_resignation for r in records),
            selfplay_seconds=elapsed, positions_per_second=positions / max(elapsed, 1e-9),
            network_share=totals["network_seconds"] / max(totals["seconds"], 1e-9),
            unbalanced_openings=totals["unbalanced_openings"],
            cache_hit_share=totals["cache_hits"]
            / max(totals["cache_hits"] + totals["cache_misses"], 1),
        )
        return records

    def _train(self, row: dict, new_positions: int) -> None:
        cfg = self.cfg
        row["buffer_positions"] = len(self.buffer)
        row["lr"] = self.optimizer.param_groups[0]["lr"]
        ready = len(self.buffer) >= cfg.min_buffer_positions
        # Every rank trains on its own batch, so an epoch over N ranks needs N times fewer steps
        # for the same reuse. Rank 0 alone decides; no rank ever stops on its own count.
        steps = (cfg.steps_per_epoch or max(1, math.ceil(
            new_positions * cfg.sample_reuse / (cfg.batch_size * self.dist.world_size)))) if ready else 0
        steps = self.dist.decide(steps, f"the step count of epoch {self.epoch + 1}")
        if steps == 0:
            self.log(f"buffer holds {len(self.buffer)} < {cfg.min_buffer_positions} positions: no training yet")
            row["train_steps"] = 0
            return
        probe = self._tensors(self.buffer.sample_indices(min(512, len(self.buffer)), self.rng), augment=False)
        old_log_p = self._log_policy(probe[0])
        self.model.train()
        sums = {"loss": 0.0, "value": 0.0, "policy": 0.0, "l2": 0.0, "entropy": 0.0}
        t0 = time.perf_counter()
        epoch = self.epoch + 1
        with self.dist.collectives(f"training epoch {epoch}"):
            for step in progress(range(steps), desc="training", unit="step", disable=not self.progress, leave=False):
                self.dist.step_hook(epoch, step, self.buffer)
                indices = self.dist.sample(self.buffer, cfg.batch_size, self.rng, epoch, step)
                planes, policy, value, policy_w, value_w = self._tensors(indices)
                with torch.autocast(self.device.device.type, dtype=self.amp_dtype or torch.float32,
                                    enabled=self.amp_dtype is not None):
                    parts = alphazero_loss(self.model, planes, policy, value, cfg.weight_decay,
                                           policy_w, value_w)
                self.optimizer.zero_grad(set_to_none=True)
                self.scaler.scale(parts["loss"]).backward()
                self.scaler.step(self.optimizer)
                self.scaler.update()
                for k in sums:
                    sums[k] += parts[k].detach().item()
        elapsed = time.perf_counter() - t0
        self.model.eval()
        row.update(
            train_steps=steps, train_seconds=elapsed, samples_per_second=steps * cfg.batch_size / elapsed,
            loss=sums["loss"] / steps, value_loss=sums["value"] / steps, policy_loss=sums["policy"] / steps,
            l2=sums["l2"] / steps, policy_entropy=sums["entropy"] / steps,
            kl=policy_kl(old_log_p, self._log_policy(probe[0])),
        )

    def _tensors(self, indices: np.ndarray, augment: bool = True):
        batch = make_batch(self.buffer, indices, self.rng if augment else None, self.game,
                           self.cfg.value_q_weight, self.cfg.vcf_plane_budget)
        dev = self.device.device
        return tuple(torch.from_numpy(a).to(dev) for a in batch)

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
            optimizer=self.optimizer.state_dict(),
            scheduler=self.scheduler.state_dict(),
            scaler=self.scaler.state_dict(),
            rng=rng_state(),
            selfplay_rng=self.rng.bit_generator.state,
            best_elo=self.best_elo,
            lopsided_epochs=self.lopsided_epochs,
            opening_target=self.opening_target,
            wall_seconds=self.clock.seconds() if self.clock is not None else self.spent_seconds,
            world_size=self.dist.world_size,
        )

    def _watch_colours(self, row: dict) -> None:
        """Warn when one colour keeps winning the games from balanced openings: the first sign
        of the colour collapse, which these openings exist to prevent."""
        cfg = self.cfg
        games = row["opening_games"]
        top = max(row["opening_black_wins"], row["opening_white_wins"])
        if games >= 8 and top > cfg.collapse_share * games:
            self.lopsided_epochs += 1
        else:
            self.lopsided_epochs = 0
        if self.lopsided_epochs >= cfg.collapse_epochs:
            colour = "black" if row["opening_black_wins"] >= row["opening_white_wins"] else "white"
            self.log(
                f"warning: {colour} won {top} of {games} games from balanced openings "
                f"({top / games:.0%}), above {cfg.collapse_share:.0%} for {self.lopsided_epochs} "
                "epochs in a row. The value head is probably learning 'this colour wins' rather "
                "than the position (a colour collapse): the losing side's search stops finding "
                "moves. Try --opening-balance-gain 0.25 if it is 0, more --simulations, "
                "--search gumbel, a larger --value-q-weight, "
                "--decided-weight 0.1, or more --selfplay-games per epoch "
                "(docs/troubleshooting.md, 'One colour wins every self-play game')."
            )


def _intact_checkpoint_hint(ckpt_dir: Path) -> str:
    """Where to resume from when latest.pt is damaged: the newest epoch file that loads."""
    for candidate in sorted(ckpt_dir.glob("epoch_*.pt"), reverse=True):
        try:
            load_checkpoint(candidate)
        except CheckpointError:
            continue
        return (f"the newest whole checkpoint is {candidate}: resume from it with\n"
                f"  cp {candidate} {ckpt_dir / 'latest.pt'}\nthen run again with --resume")
    return "no whole epoch checkpoint is left in that folder: start a new run"


def _restore_scaler(scaler, saved) -> None:
    """Load the fp16 loss scale of a resumed run. A run saved without fp16 (on a CPU or a bf16
    GPU) saved an empty state, which an fp16 scaler refuses: a run begun on one device and
    resumed on a T4 starts a new scale instead."""
    if saved:
        scaler.load_state_dict(saved)


def _amp_dtype(device: DeviceChoice):
    if device.kind != "cuda":
        return None
    return cuda_autocast_dtype(device.device)


def colour_counts(records: list) -> dict:
    """Black wins, white wins and draws, separately for games from a random opening and games
    from the empty board: only the former measure balance (freestyle from the empty board is
    a proven black win)."""
    out = {}
    for prefix, keep in (("opening_", lambda r: r.opening > 0), ("empty_", lambda r: r.opening == 0)):
        results = [r.result for r in records if keep(r)]
        out[prefix + "games"] = len(results)
        out[prefix + "black_wins"] = results.count(BLACK)
        out[prefix + "white_wins"] = results.count(WHITE)
        out[prefix + "draws"] = results.count(DRAW)
    return out


def _shares(records: list) -> dict:
    out = {}
    counts = colour_counts(records)
    for prefix, label in (("opening_", "open B/W/D"), ("empty_", "empty B/W/D")):
        n = counts[prefix + "games"]
        if n:
            out[label] = "/".join(str(counts[prefix + k]) for k in ("black_wins", "white_wins", "draws"))
    return out


def export_model(checkpoint: str | Path, out: str | Path) -> Path:
    """Inference weights (for play.py, evaluate.py and the engine) from a training checkpoint."""
    # Only the network's part of the state: a checkpoint cut down to it exports too.
    state = load_checkpoint(checkpoint)
    model = PolicyValueNet(ModelConfig.from_dict(state["model_config"]))
    model.load_state_dict(state["model"])
    return save_model(out, model)


__all__ = ["Trainer", "export_model"]
