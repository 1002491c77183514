"""The configuration of a training run: one frozen dataclass, validated, saved with the run.

Every field has a command-line flag in ``scripts/train.py`` (``--field-name``); a JSON file given
with ``--config`` may set any of them, and unknown keys are rejected rather than ignored.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from alphagomoku.game.config import GameConfig
from alphagomoku.game.constants import MAX_SIZE, MIN_SIZE, RULE_NAMES
from alphagomoku.nn.config import ARCHS as MODEL_ARCHS  # imports no torch
from alphagomoku.nn.config import ModelConfig
from alphagomoku.nn.inference_backend import (  # imports no torch
    AMP_MODES, INFERENCE_BACKENDS, ONNX_PRECISIONS)
from alphagomoku.train.variants import Variant, run_variants

MODEL_PRESETS = ("tiny", "compact", "small", "medium", "large")
SEARCHES = ("puct", "gumbel")
# Settings that define what is being learned: a resumed run must keep them.
_FIXED_ON_RESUME = ("board_size", "n_in_row", "rule", "model_preset", "model_blocks",
                    "model_channels", "model_arch", "model_global_pooling", "model_batch_norm",
                    "model_threat_planes", "vcf_plane_budget")


class ConfigError(ValueError):
    """A configuration value that cannot work; the message names the field and the fix."""


@dataclass(frozen=True)
class TrainConfig:
    # -- the game ---------------------------------------------------------------------------------
    board_size: int = 15
    n_in_row: int = 5
    rule: str = "freestyle"
    board_sizes: str = ""             # several boards in one run: "15:3,20:1" (size:weight; "" = --board-size alone)
    rules: str = ""                   # several rules in one run: "freestyle,renju:2" ("" = --rule alone)
    variant_mix: str = ""             # instead of both: the pairs, "15/freestyle:3,20/freestyle,15/renju"
    # -- the network ------------------------------------------------------------------------------
    model_preset: str = "tiny"
    model_blocks: int = 0             # residual blocks instead of the preset's (0 = the preset's)
    model_channels: int = 0           # channels instead of the preset's (0 = the preset's)
    model_arch: str = "az"            # az (AlphaGo Zero heads, one board size) | kata (any board, reads the rule)
    model_global_pooling: int = 1     # kata: 1 pooled branches in the tower and policy head, 0 none
    model_batch_norm: int = 1         # 1 batch norm after each convolution, 0 none (ModelConfig.batch_norm)
    model_threat_planes: int = 0      # 1 the six threat input planes (ModelConfig.threat_planes), 0 none
    device: str = "auto"
    inference_backend: str = "auto"   # CPU workers: auto (ONNX Runtime if installed) | torch | onnx
    inference_amp: str = "auto"       # GPU workers' mixed precision: auto (on CUDA) | on | off
    onnx_precision: str = "fp32"      # CPU workers on ONNX Runtime: fp32 | int8 (calibrated convolutions)
    train_amp: str = "auto"           # the trainer's: auto (on CUDA) | on (bf16 on a CPU) | off
    vcf_plane_budget: int = 100       # VCF input planes proved within this many solver nodes (0: none)
    # -- self-play --------------------------------------------------------------------------------
    parallel_workers: int = 2
    selfplay_games: int = 32          # games per epoch, over all workers
    games_per_task: int = 16          # games one task plays with one set of weights
    games_at_once: int = 0            # of those, played at once (one network batch a step; 0: all)
    cuda_graphs: str = "auto"         # GPU workers: auto (CUDA graphs at fixed batch sizes) | off (eager)
    selfplay_groups: int = 0          # batches in flight per worker, its games split in groups (0: auto, 2 on CUDA, 1 elsewhere)
    simulations: int = 32             # MCTS simulations per move (root visits)
    simulations_start: int = 0        # progressive simulation: this many at the start, growing to simulations (0: constant)
    search: str = "gumbel"            # root search: gumbel (Gumbel AlphaZero) | puct (visit targets)
    gumbel_m: int = 16                # gumbel: root moves sampled (Gumbel-top-m)
    gumbel_c_visit: float = 50.0      # gumbel: sigma(q) = (c_visit + max visits) * c_scale * q
    gumbel_c_scale: float = 0.1
    gumbel_interior: str = "puct"     # gumbel: below the root, puct | gumbel (the paper's deterministic rule)
    c_puct: float = 1.25
    dirichlet_alpha: float = 10.0     # scaled: alpha = dirichlet_alpha / legal moves
    dirichlet_eps: float = 0.25       # puct only: Gumbel noise is gumbel's exploration
    temperature_moves: int = 8        # puct: moves played in proportion to visits; then the most visited
    full_search_share: float = 1.0    # playout cap randomisation: moves given the full search and a policy target
    fast_simulations: int = 16        # the other moves' search (value target only)
    vcf_leaf_budget: int = 0          # VCF solver nodes at each new search node (0: off)
    vcf_end_budget: int = 0           # end a self-play game once the mover has a VCF proved within this (0: off)
    eval_cache: int = 16384           # network answers a self-play task keeps for positions met again (0: off)
    opening_share: float = 0.9        # games started from a balanced random opening
    opening_min_stones: int = 1
    opening_max_stones: int = 8
    opening_max_value: float = 0.6    # keep openings the network values within +-this of even for the mover
    opening_balance_gain: float = 0.25  # move "even" each epoch against the colour winning more from openings (0: off)
    resign_threshold: float = 0.0     # resign when root and best-child value < -threshold; 0 = never
    resign_playthrough: float = 0.1   # share of games never resigned, to measure false resignations
    worker_timeout: float = 0.0       # seconds without worker progress = a hang; 0 = 180 s
    max_worker_failures: int = 3      # pool rebuilds per epoch before the run stops
    # -- training ---------------------------------------------------------------------------------
    epochs: int = 8
    batch_size: int = 256
    lr: float = 2e-3
    lr_schedule: str = "cosine"       # cosine | constant
    lr_drop_share: float = 0.0        # over this last share of the run (of the time budget, else of --epochs) ...
    lr_drop_factor: float = 0.1       # ... the learning rate is multiplied by this (share 0: no drop)
    ema_decay: float = 0.0            # what plays is this exponential average of the weights, per step (0: the weights)
    weight_decay: float = 1e-4        # L2 on the weights
    steps_per_epoch: int = 0          # gradient steps per epoch; 0 = from sample_reuse
    sample_reuse: float = 4.0         # when steps_per_epoch is 0: each new position seen this often
    value_q_weight: float = 0.5       # value target (1 - w) * result + w * search value of the move played
    aux_reply_weight: float = 0.0     # kata: loss weight of the opponent's reply as a policy target (0: off)
    soft_policy_weight: float = 0.0   # kata: loss weight of the search policy at --soft-policy-temperature (0: off)
    soft_policy_temperature: float = 4.0
    short_value_weight: float = 0.0   # kata: loss weight of the short-term value target (0: off)
    future_weight: float = 0.0        # kata: loss weight of each point's stone 8 plies on, with a head for it (0: off, no head)
    policy_surprise: float = 0.0      # weight samples by the search's disagreement with the network (0: off, 1: fully)
    decided_weight: float = 1.0       # weight of positions already decided (1 = no down-weighting)
    decided_threshold: float = 0.9    # decided: |root value| above this ...
    decided_plies: int = 3            # ... for this many searched plies in a row
    buffer_positions: int = 50_000    # replay window, in positions
    min_buffer_positions: int = 256   # no gradient step before the buffer holds this many
    batch_threads: int = -1           # threads building the next gradient batches (-1: auto, 4 on a GPU, 0 on a CPU)
    # -- the run ----------------------------------------------------------------------------------
    run_dir: str = "runs/default"
    seed: int = 0
    init_weights: str = ""            # a model file whose weights the run starts from ('' = random)
    teacher: str = ""                 # a model file whose play is part of the targets, fading ('' = none)
    teacher_share: float = 0.5        # the teacher's share of each target at the start ...
    teacher_fade: float = 0.5         # ... falling to none once this share of the run is done
    keep_checkpoints: int = 3
    eval_every: int = 0               # epochs between arena matches; 0 = never
    eval_games: int = 20              # games per match (even: each opening with both colours)
    eval_simulations: int = 64        # network player's simulations per move in matches
    baseline_playouts: int = 200      # pure-MCTS baseline strength in those matches
    gating_threshold: float = 0.0     # promote a model only at this score vs the best; 0 = always
    final_eval_games: int = 0         # after the last epoch: final vs untrained and vs baseline
    collapse_share: float = 0.85      # warn when one colour wins more than this share of opening games ...
    collapse_epochs: int = 3          # ... this many epochs in a row
    time_budget_minutes: float = 0.0  # stop after the epoch that spends this much wall time; 0 = off
    snapshot_minutes: float = 0.0     # keep the weights of the first epoch past every such mark; 0 = off
    # -- scale-out (docs/scaling.md) ----------------------------------------------------------------
    selfplay_backend: str = "pool"    # pool (spawned processes) | ray (actors, local or a cluster)
    ray_address: str = ""             # "" starts a local Ray; "auto" or HOST:PORT joins a cluster
    ray_actor_cpus: float = 1.0       # CPUs Ray reserves per self-play actor
    ray_actor_gpus: float = 0.0       # GPUs per actor (0.5: two actors share one GPU)
    ray_max_lag: int = 0              # results played with weights older than this many versions are dropped
    dist_backend: str = "auto"        # under torchrun: auto (nccl on CUDA, else gloo) | nccl | gloo
    dist_timeout: float = 600.0       # seconds a gradient all-reduce may wait for the other ranks
    dist_control_timeout: float = 7200.0  # seconds ranks may wait for rank 0 (self-play, saves)
    lr_scaling: str = "sqrt"          # under torchrun, lr x sqrt(ranks) | linear (x ranks) | none

    def __post_init__(self):
        self.validate()

    # -- validation ---------------------------------------------------------------------------------
    def validate(self) -> None:
        def need(cond: bool, field: str, msg: str) -> None:
            if not cond:
                raise ConfigError(f"--{field.replace('_', '-')}: {msg}")

        for f in fields(self):
            v = getattr(self, f.name)
            if f.type in ("int", int):
                need(isinstance(v, int) and not isinstance(v, bool), f.name, f"must be an integer, got {v!r}")
            elif f.type in ("float", float):
                need(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v),
                     f.name, f"must be a finite number, got {v!r}")
            elif f.type in ("str", str):
                need(isinstance(v, str), f.name, f"must be a string, got {v!r}")
        need(MIN_SIZE <= self.board_size <= MAX_SIZE, "board_size",
             f"must be from {MIN_SIZE} to {MAX_SIZE}, got {self.board_size}")
        need(self.rule in RULE_NAMES, "rule", f"must be one of {', '.join(RULE_NAMES)}, got {self.rule!r}")
        need(3 <= self.n_in_row <= self.board_size, "n_in_row",
             f"must be from 3 to the board size ({self.board_size}), got {self.n_in_row}")
        need(self.rule != "renju" or self.n_in_row == 5, "n_in_row", "renju is played with five in a row")
        need(self.model_preset in MODEL_PRESETS, "model_preset",
             f"must be one of {', '.join(MODEL_PRESETS)}, got {self.model_preset!r}")
        need(self.model_blocks >= 0, "model_blocks",
             f"must be 0 (the preset's) or a number of blocks, got {self.model_blocks}")
        need(self.model_channels >= 0, "model_channels",
             f"must be 0 (the preset's) or a number of channels, got {self.model_channels}")
        need(self.model_arch in MODEL_ARCHS, "model_arch",
             f"must be one of {', '.join(MODEL_ARCHS)}, got {self.model_arch!r}")
        need(self.model_global_pooling in (0, 1), "model_global_pooling",
             f"must be 1 (on) or 0 (off), got {self.model_global_pooling}")
        need(self.model_global_pooling == 1 or self.model_arch == "kata", "model_global_pooling",
             "only a kata network has global pooling to turn off: add --model-arch kata")
        need(self.model_batch_norm in (0, 1), "model_batch_norm",
             f"must be 1 (on) or 0 (off), got {self.model_batch_norm}")
        need(self.model_threat_planes in (0, 1), "model_threat_planes",
             f"must be 1 (on) or 0 (off), got {self.model_threat_planes}")
        flags = "--variant-mix" if self.variant_mix else "--board-sizes/--rules"
        try:
            mix = self.variants
        except ValueError as e:
            raise ConfigError(str(e) if str(e).startswith("--") else f"{flags}: {e}") from None
        sizes_field, rules_field = (("variant_mix",) * 2 if self.variant_mix
                                    else ("board_sizes", "rules"))
        for v in mix:
            need(MIN_SIZE <= v.game.width <= MAX_SIZE and self.n_in_row <= v.game.width,
                 sizes_field, f"every size must be from {max(MIN_SIZE, self.n_in_row)} to "
                 f"{MAX_SIZE}, got {v.game.width}")
            need(v.game.rule != "renju" or self.n_in_row == 5, rules_field,
                 "renju is played with five in a row")
        sizes = {v.game.width for v in mix}
        rules = {v.game.rule for v in mix}
        need(len(sizes) == 1 or self.model_arch == "kata", sizes_field,
             "several board sizes need a network that plays every size: add --model-arch kata")
        need(len(rules) == 1 or self.model_arch == "kata", rules_field,
             "several rules need a network that reads the rule: add --model-arch kata")
        for name in ("aux_reply_weight", "soft_policy_weight", "short_value_weight", "future_weight"):
            need(getattr(self, name) >= 0, name, "must be 0 (off) or more")
            need(getattr(self, name) == 0 or self.model_arch == "kata", name,
                 "this target needs a network with the heads for it: add --model-arch kata")
        need(self.soft_policy_temperature >= 1, "soft_policy_temperature",
             f"must be 1 or more (1: the policy itself), got {self.soft_policy_temperature}")
        need(0 <= self.lr_drop_share < 1, "lr_drop_share",
             f"must be from 0 (no drop) to below 1, got {self.lr_drop_share}")
        need(0 < self.lr_drop_factor <= 1, "lr_drop_factor",
             f"must be within (0, 1], got {self.lr_drop_factor}")
        need(0 <= self.ema_decay < 1, "ema_decay",
             f"must be from 0 (off) to below 1, got {self.ema_decay}")
        need(0 <= self.teacher_share <= 1, "teacher_share",
             f"must be from 0 to 1, got {self.teacher_share}")
        need(0 < self.teacher_fade <= 1, "teacher_fade",
             f"must be within (0, 1] (a share of the run), got {self.teacher_fade}")
        need(0 <= self.policy_surprise <= 1, "policy_surprise",
             f"must be from 0 (off) to 1, got {self.policy_surprise}")
        need(self.parallel_workers >= 0, "parallel_workers", "must be 0 (play in the main process) or more")
        need(self.parallel_workers <= 256, "parallel_workers", "more than 256 workers is surely a typo")
        need(self.selfplay_games >= 1, "selfplay_games", "must be at least 1")
        need(self.games_per_task >= 1, "games_per_task", "must be at least 1")
        need(0 <= self.selfplay_groups, "selfplay_groups", "must be 0 (auto) or more")
        need(self.batch_threads >= -1, "batch_threads",
             f"must be -1 (auto), 0 (built in the training loop) or more, got {self.batch_threads}")
        need(self.cuda_graphs in ("auto", "off"), "cuda_graphs", "must be auto or off")
        need(0 <= self.games_at_once <= self.games_per_task, "games_at_once",
             f"must be from 1 to games_per_task ({self.games_per_task}), or 0 for all of them, "
             f"got {self.games_at_once}")
        need(self.simulations >= 2, "simulations", "must be at least 2")
        need(self.simulations_start == 0 or 2 <= self.simulations_start <= self.simulations,
             "simulations_start",
             f"must be 0 (constant simulations) or from 2 to --simulations ({self.simulations}), "
             f"got {self.simulations_start}")
        need(self.search in SEARCHES, "search", f"must be one of {', '.join(SEARCHES)}, got {self.search!r}")
        need(self.gumbel_m >= 1, "gumbel_m", "must be at least 1")
        need(self.gumbel_c_visit >= 0, "gumbel_c_visit", "must be 0 or more")
        need(self.gumbel_c_scale > 0, "gumbel_c_scale", "must be positive")
        need(self.gumbel_interior in ("puct", "gumbel"), "gumbel_interior",
             f"must be puct or gumbel, got {self.gumbel_interior!r}")
        need(self.gumbel_interior == "puct" or self.search == "gumbel", "gumbel_interior",
             "the Gumbel rule below the root needs --search gumbel")
        need(0 < self.full_search_share <= 1, "full_search_share",
             "must be within (0, 1]; 1 turns playout cap randomisation off")
        fewest = self.simulations_start or self.simulations
        need(self.full_search_share == 1 or 2 <= self.fast_simulations <= fewest,
             "fast_simulations",
             f"must be from 2 to the fewest simulations a move ({fewest}), "
             f"got {self.fast_simulations}")
        need(self.vcf_leaf_budget >= 0, "vcf_leaf_budget", "must be 0 (off) or more")
        need(self.vcf_plane_budget >= 0, "vcf_plane_budget", "must be 0 (no VCF planes) or more")
        need(self.vcf_end_budget >= 0, "vcf_end_budget", "must be 0 (off) or more")
        need(self.eval_cache >= 0, "eval_cache", "must be 0 (off) or more")
        need(0 <= self.opening_share <= 1, "opening_share", "must be within [0, 1]")
        need(0 <= self.opening_min_stones <= self.opening_max_stones, "opening_min_stones",
             f"must be from 0 to --opening-max-stones ({self.opening_max_stones})")
        need(self.opening_max_stones < self.board_size * self.board_size // 2, "opening_max_stones",
             "must leave most of the board empty")
        need(0 < self.opening_max_value <= 1, "opening_max_value", "must be within (0, 1]")
        need(0 <= self.opening_balance_gain <= 1, "opening_balance_gain",
             "must be within [0, 1]; 0 keeps the network's own 0 as even")
        need(0 <= self.value_q_weight <= 1, "value_q_weight", "must be within [0, 1]")
        need(0 < self.decided_weight <= 1, "decided_weight", "must be within (0, 1]; 1 turns it off")
        need(0 < self.decided_threshold < 1, "decided_threshold", "must be within (0, 1)")
        need(self.decided_plies >= 1, "decided_plies", "must be at least 1")
        need(0.5 < self.collapse_share <= 1, "collapse_share", "must be within (0.5, 1]")
        need(self.collapse_epochs >= 1, "collapse_epochs", "must be at least 1")
        need(self.c_puct > 0, "c_puct", "must be positive")
        need(self.dirichlet_alpha > 0, "dirichlet_alpha", "must be positive")
        need(0 <= self.dirichlet_eps <= 1, "dirichlet_eps", "must be within [0, 1]")
        need(self.temperature_moves >= 0, "temperature_moves", "must be 0 or more")
        need(0 <= self.resign_threshold < 1, "resign_threshold", "must be within [0, 1); 0 turns resignation off")
        need(0 <= self.resign_playthrough <= 1, "resign_playthrough", "must be within [0, 1]")
        need(self.worker_timeout >= 0, "worker_timeout", "must be 0 (automatic) or a number of seconds")
        need(self.max_worker_failures >= 0, "max_worker_failures", "must be 0 or more")
        need(self.epochs >= 1, "epochs", "must be at least 1")
        need(self.batch_size >= 2, "batch_size", "must be at least 2")
        need(0 < self.lr < 10, "lr", f"must be within (0, 10), got {self.lr}")
        need(self.lr_schedule in ("cosine", "constant"), "lr_schedule", "must be cosine or constant")
        need(self.weight_decay >= 0, "weight_decay", "must be 0 or more")
        need(self.steps_per_epoch >= 0, "steps_per_epoch", "must be 0 (use sample_reuse) or more")
        need(self.sample_reuse > 0, "sample_reuse", "must be positive")
        need(self.buffer_positions >= self.batch_size, "buffer_positions",
             f"must hold at least one batch ({self.batch_size} positions)")
        need(1 <= self.min_buffer_positions <= self.buffer_positions, "min_buffer_positions",
             "must be from 1 to buffer_positions")
        need(bool(self.run_dir), "run_dir", "must not be empty")
        need(self.seed >= 0, "seed", "must be 0 or more")
        need(self.keep_checkpoints >= 1, "keep_checkpoints", "must be at least 1")
        need(self.eval_every >= 0, "eval_every", "must be 0 (never) or more")
        need(self.eval_games >= 2 and self.eval_games % 2 == 0, "eval_games",
             "must be even and at least 2 (each opening is played with both colours)")
        need(0 <= self.gating_threshold <= 1, "gating_threshold", "must be within [0, 1]; 0 turns gating off")
        need(self.gating_threshold == 0 or self.eval_every > 0, "gating_threshold",
             "gating needs matches: set --eval-every too")
        need(self.final_eval_games >= 0 and self.final_eval_games % 2 == 0, "final_eval_games",
             "must be 0 (none) or an even number of games")
        need(self.time_budget_minutes >= 0, "time_budget_minutes", "must be 0 (no budget) or more")
        need(self.snapshot_minutes >= 0, "snapshot_minutes", "must be 0 (no snapshots) or more")
        need(self.eval_simulations >= 2, "eval_simulations", "must be at least 2")
        need(self.baseline_playouts >= 1, "baseline_playouts", "must be at least 1")
        need(self.inference_backend in INFERENCE_BACKENDS, "inference_backend",
             f"must be one of {', '.join(INFERENCE_BACKENDS)}, got {self.inference_backend!r}")
        need(self.onnx_precision in ONNX_PRECISIONS, "onnx_precision",
             f"must be one of {', '.join(ONNX_PRECISIONS)}, got {self.onnx_precision!r}")
        for key in ("inference_amp", "train_amp"):
            need(getattr(self, key) in AMP_MODES, key,
                 f"must be one of {', '.join(AMP_MODES)}, got {getattr(self, key)!r}")
        need(self.selfplay_backend in ("pool", "ray"), "selfplay_backend", "must be pool or ray")
        need(self.ray_actor_cpus > 0, "ray_actor_cpus", "must be positive")
        need(self.ray_actor_gpus >= 0, "ray_actor_gpus", "must be 0 or more")
        need(self.ray_max_lag >= 0, "ray_max_lag", "must be 0 or more")
        need(self.dist_backend in ("auto", "nccl", "gloo"), "dist_backend", "must be auto, nccl or gloo")
        need(self.dist_timeout > 0, "dist_timeout", "must be a positive number of seconds")
        need(self.dist_control_timeout >= self.dist_timeout, "dist_control_timeout",
             "must be at least --dist-timeout (it covers rank 0's self-play and saves)")
        need(self.lr_scaling in ("sqrt", "linear", "none"), "lr_scaling", "must be sqrt, linear or none")
        dev = self.device
        need(dev in ("auto", "cpu", "cuda", "mps") or (dev.startswith("cuda:") and dev[5:].isdigit()),
             "device", f"must be auto, cpu, cuda, cuda:N or mps, got {dev!r}")

    # -- derived ------------------------------------------------------------------------------------
    @property
    def game(self) -> GameConfig:
        return GameConfig(width=self.board_size, n_in_row=self.n_in_row, rule=self.rule)

    @property
    def model(self) -> ModelConfig:
        """The network this run trains."""
        config = ModelConfig.preset(self.model_preset, self.board_size,
                                    vcf_plane_budget=self.vcf_plane_budget, arch=self.model_arch,
                                    global_pooling=bool(self.model_global_pooling),
                                    future_head=self.future_weight > 0,
                                    batch_norm=bool(self.model_batch_norm),
                                    threat_planes=bool(self.model_threat_planes))
        return replace(config, blocks=self.model_blocks or config.blocks,
                       channels=self.model_channels or config.channels)

    @property
    def variants(self) -> list[Variant]:
        """The board sizes and rules this run trains on, the main one (``game``) first."""
        return run_variants(self.board_size, self.rule, self.n_in_row, self.board_sizes, self.rules,
                            self.variant_mix)

    @property
    def run_path(self) -> Path:
        return Path(self.run_dir)

    def task_timeout(self, backend: str = "pool") -> float:
        """Seconds with no heartbeat and no result from any self-play worker before the pool
        counts a worker as hung. Workers beat once per search step, so this only has to cover
        the slowest single step (first model load, CUDA start-up), not a whole task. Ray actors
        send no heartbeat: there it is a deadline for a whole task (0: 30 minutes)."""
        if self.worker_timeout > 0:
            return self.worker_timeout
        return 1800.0 if backend == "ray" else 180.0

    # -- (de)serialisation ------------------------------------------------------------------------
    def resume_refusal(self, saved: dict) -> str | None:
        """Why this run cannot resume a checkpoint trained with the settings ``saved``, or None.
        The settings that define what is learned must stay; the future head may not appear or
        go (its weight may change)."""
        for key in _FIXED_ON_RESUME:
            if key in saved and saved[key] != getattr(self, key):
                return (f"--resume: the checkpoint was trained with {key}={saved[key]!r}, this run "
                        f"asks for {getattr(self, key)!r}; drop the flag or start a new --run-dir")
        before = float(saved.get("future_weight", 0.0))
        if (before > 0) != (self.future_weight > 0):
            head = lambda w: "a future head" if w > 0 else "no future head"  # noqa: E731
            return (f"--resume: the checkpoint was trained with future_weight={before!r} "
                    f"({head(before)}), this run asks for {self.future_weight!r} "
                    f"({head(self.future_weight)}); keep the head on or off as it was, or start a "
                    f"new --run-dir")
        return None

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "TrainConfig":
        from alphagomoku.nn.simulated import refuse_in_training

        try:
            refuse_in_training(data)
        except ValueError as e:
            raise ConfigError(str(e)) from None
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"unknown setting(s): {', '.join(unknown)}")
        return cls(**data)

    @classmethod
    def from_file(cls, path: str | Path, **overrides) -> "TrainConfig":
        path = Path(path)
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            raise ConfigError(f"config file {path} does not exist") from None
        except json.JSONDecodeError as e:
            raise ConfigError(f"config file {path} is not valid JSON: {e}") from None
        if not isinstance(data, dict):
            raise ConfigError(f"config file {path} must hold a JSON object of settings")
        data.update(overrides)
        return cls.from_dict(data)

    def save(self, path: str | Path) -> None:
        from alphagomoku.atomic import atomic_write_text

        atomic_write_text(Path(path), json.dumps(self.to_dict(), indent=2) + "\n")

    def replace(self, **changes) -> "TrainConfig":
        return TrainConfig.from_dict({**self.to_dict(), **changes})
