"""Training checkpoints: one dict with everything ``--resume`` needs, written atomically.

``checkpoints/epoch_000012.pt`` for each epoch (the last ``keep`` kept) and ``latest.pt``, a copy
of the newest. Each is written to a temporary file and renamed into place, so a crash or Ctrl-C
during a save leaves the previous files whole. Inference weights for workers and players are a
separate, smaller format (:mod:`alphagomoku.nn.io`).
"""

from __future__ import annotations

import pickle
import random
import shutil
import zipfile
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path

import numpy as np
import torch

from alphagomoku.nn import ModelConfig, PolicyValueNet
from alphagomoku.nn.grow import can_grow, grown_state
from alphagomoku.nn.io import (TRAINING_FORMAT, CheckpointError, model_from_state, read_model_file,
                               save_model, strip_prefixes)
from alphagomoku.atomic import atomic_path, atomic_torch_save
from alphagomoku.read_errors import read_error_reason

CHECKPOINT_FORMAT_VERSION = 1

__all__ = ["CheckpointError", "TrainingState", "load_checkpoint", "save_checkpoint", "rng_state",
           "restore_rng_state", "intact_checkpoint_hint", "export_model", "export_average"]


@dataclass
class TrainingState:
    """What a checkpoint holds: the trainer writes one each epoch and ``--resume`` reads it back.
    One list of fields for both, so a field saved is a field restored.

    The fields with defaults came after the first checkpoints; a checkpoint without them loads
    with the default."""

    epoch: int
    model_config: dict          # ModelConfig.to_dict()
    model: dict                 # the network's state_dict (prefixes stripped on load)
    optimizer: dict
    scheduler: dict
    rng: dict                   # rng_state(): python, numpy and torch
    selfplay_rng: dict          # the trainer's numpy Generator's bit_generator.state
    config: dict = field(default_factory=dict)  # TrainConfig.to_dict()
    scaler: dict | None = None  # the fp16 loss scale; empty without fp16
    best_elo: float = 0.0
    lopsided_epochs: int = 0
    opening_target: float = 0.0  # the main board and rule's, as in opening_targets
    opening_targets: dict = field(default_factory=dict)  # variant name -> even opening for black
    wall_seconds: float = 0.0   # wall time of every session of the run so far
    world_size: int = 1
    ema: dict | None = None     # the weight average's state_dict, when the run keeps one

    def to_dict(self) -> dict:
        # Not dataclasses.asdict: it would deep-copy every tensor of the model and optimizer.
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, state: dict, source: str = "checkpoint") -> "TrainingState":
        """The state in a checkpoint dict (as :func:`load_checkpoint` returns it); keys it does
        not know (``format``, ``format_version``) are left out."""
        names = {f.name for f in fields(cls)}
        missing = [f.name for f in fields(cls) if f.name not in state
                   and f.default is MISSING and f.default_factory is MISSING]
        if missing:
            raise CheckpointError(f"{source} lacks {', '.join(missing)}: "
                                  "not a trainer's checkpoint")
        out = cls(**{k: v for k, v in state.items() if k in names})
        out.epoch = int(out.epoch)
        out.best_elo = float(out.best_elo)
        out.lopsided_epochs = int(out.lopsided_epochs)
        out.opening_target = float(out.opening_target)
        out.opening_targets = {str(k): float(v) for k, v in out.opening_targets.items()}
        out.wall_seconds = float(out.wall_seconds)
        out.world_size = int(out.world_size)
        return out


def rng_state() -> dict:
    """Every global random state, as tensors and plain values (loadable with weights_only)."""
    name, keys, pos, has_gauss, gauss = np.random.get_state()
    return {
        "python": random.getstate(),
        "numpy": (name, torch.from_numpy(keys.astype(np.int64)), int(pos), int(has_gauss), float(gauss)),
        "torch": torch.get_rng_state(),
    }


def restore_rng_state(state: dict) -> None:
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    name, keys, pos, has_gauss, gauss = state["numpy"]
    np.random.set_state((name, keys.numpy().astype(np.uint32), pos, has_gauss, gauss))
    torch.set_rng_state(state["torch"])


def save_checkpoint(run_dir: Path, state: dict, keep: int) -> Path:
    """Write ``state`` as this epoch's checkpoint and as latest.pt; prune old ones."""
    ckpt_dir = Path(run_dir) / "checkpoints"
    path = ckpt_dir / f"epoch_{state['epoch']:06d}.pt"
    state = {"format": TRAINING_FORMAT, "format_version": CHECKPOINT_FORMAT_VERSION, **state}
    atomic_torch_save(state, path)
    # latest.pt: a copy, itself atomic, so it is never a half-written file.
    with atomic_path(ckpt_dir / "latest.pt") as tmp:
        shutil.copyfile(path, tmp)
    for old in sorted(ckpt_dir.glob("epoch_*.pt"))[:-keep]:
        old.unlink()
    return path


def load_checkpoint(path: str | Path) -> dict:
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"checkpoint {path} does not exist")
    try:
        # Only tensors and plain values inside, so the safe loader reads it: a checkpoint from
        # elsewhere cannot run code when loaded.
        state = torch.load(path, map_location="cpu", weights_only=True)
    except (RuntimeError, EOFError, pickle.UnpicklingError, zipfile.BadZipFile, OSError, ValueError) as e:
        raise CheckpointError(
            f"checkpoint {path} is corrupt or truncated ({read_error_reason(e)})"
        ) from None
    if not isinstance(state, dict) or state.get("format") != TRAINING_FORMAT or "model" not in state:
        raise CheckpointError(f"{path} is not an alphagomoku training checkpoint")
    if state["format_version"] != CHECKPOINT_FORMAT_VERSION:
        raise CheckpointError(
            f"checkpoint {path} has format {state['format_version']}; this version reads {CHECKPOINT_FORMAT_VERSION}"
        )
    state["model"] = strip_prefixes(state["model"])
    return state


def intact_checkpoint_hint(ckpt_dir: Path) -> str:
    """Where to resume from when latest.pt is damaged: the newest epoch file that loads."""
    for candidate in sorted(ckpt_dir.glob("epoch_*.pt"), reverse=True):
        try:
            load_checkpoint(candidate)
        except CheckpointError:
            continue
        return (f"the newest whole checkpoint is {candidate}: resume from it with\n"
                f"  cp {candidate} {ckpt_dir / 'latest.pt'}\nthen run again with --resume")
    return "no whole epoch checkpoint is left in that folder: start a new run"


def export_model(checkpoint: str | Path, out: str | Path) -> Path:
    """Inference weights (for play.py, evaluate.py and the engine) from a training checkpoint."""
    # Only the network's part of the state: a checkpoint cut down to it exports too.
    state = load_checkpoint(checkpoint)
    model = PolicyValueNet(ModelConfig.from_dict(state["model_config"]))
    model.load_state_dict(state.get("ema") or state["model"])
    return save_model(out, model)


# The train.py flag that sets each network field, for an --init-weights error to name.
_FLAG_OF_FIELD = {"blocks": "--model-blocks", "channels": "--model-channels",
                  "arch": "--model-arch", "batch_norm": "--model-batch-norm",
                  "threat_planes": "--model-threat-planes",
                  "global_pooling": "--model-global-pooling",
                  "vcf_plane_budget": "--vcf-plane-budget", "width": "--board-size"}


# Fields that follow from others: the input planes from the shape and the inputs, a square
# board's height from its width.
_DERIVED_FIELDS = {"num_planes", "height"}


def flags_to_match(saved: ModelConfig, config: ModelConfig) -> list[str] | None:
    """The train.py flags, with values (bools as 0/1), that make the run's network ``config``
    the ``saved`` one; None where a field they do not set differs too (a preset's value head)."""
    a, b = saved.to_dict(), config.to_dict()
    differ = {k for k in b if a.get(k) != b[k]} - _DERIVED_FIELDS
    if differ - _FLAG_OF_FIELD.keys() or saved.width != saved.height:
        return None
    return [f"{_FLAG_OF_FIELD[k]} {int(a[k]) if isinstance(a[k], bool) else a[k]}"
            for k in _FLAG_OF_FIELD if k in differ]


def config_difference(theirs: ModelConfig, mine: ModelConfig, mine_name: str = "the first") -> str:
    """The fields in which two network configs differ, as ``field=theirs (mine_name: mine)``."""
    a, b = theirs.to_dict(), mine.to_dict()
    return ", ".join(f"{k}={a.get(k)!r} ({mine_name}: {b[k]!r})" for k in b if a.get(k) != b[k])


def export_average(sources: list[str | Path], out: str | Path) -> Path:
    """Inference weights that are the uniform average of the networks in ``sources`` (model
    files or training checkpoints; a run's weights' average where it kept one). Runs that start
    from one network stay close to it, so their average is a network too (docs/benchmarks.md
    measures one against the network its runs started from). The networks must have one
    shape; a network that plays every board may have been trained on any of them."""
    if len(sources) < 2:
        raise ValueError(f"an average needs at least two networks, got {len(sources)}")
    first = None
    total: dict[str, torch.Tensor] = {}
    dtypes: dict[str, torch.dtype] = {}
    for path in sources:
        config, state = read_model_file(path)
        if first is None:
            first = config
            dtypes = {k: v.dtype for k, v in state.items()}
            # Summed in float64, so that the sum's rounding does not reach the float32 mean.
            total = {k: v.double() if v.is_floating_point() else v.clone() for k, v in state.items()}
            continue
        if config.any_board and first.any_board:
            config = config.with_board(first.width, first.height)
        if config != first or state.keys() != total.keys():
            differ = config_difference(config, first) or "other weights"
            raise CheckpointError(f"{path} holds another network than {sources[0]} ({differ}): "
                                  "only networks of one shape can be averaged")
        for k, v in state.items():
            if v.is_floating_point():
                total[k] += v.double()
    mean = {k: (v / len(sources)).to(dtypes[k]) if v.is_floating_point() else v
            for k, v in total.items()}
    model = model_from_state(first, mean, source=f"the average of {len(sources)} networks")
    return save_model(out, model)


def starting_weights(path: str | Path, config: ModelConfig) -> dict:
    """The weights in the model file or checkpoint ``path``, for a new run of the network
    ``config`` to start from (``--init-weights``). The shapes must agree, except the board of a
    network that plays every board (a 15x15 all-rules network may go on training on 20x20), and
    the depth and width of a network without batch norm, which may grow: the larger network
    starts by computing what the saved one did (``nn.grow``) and training goes on from there
    with more room."""
    try:
        saved, state = read_model_file(path)
    except CheckpointError as e:
        raise CheckpointError(f"--init-weights: {e}") from None
    if saved.any_board:
        saved = saved.with_board(config.width, config.height)
    if can_grow(saved, config):
        try:
            kept = model_from_state(saved, state, source=str(path)).state_dict()
        except CheckpointError as e:
            raise CheckpointError(f"--init-weights: {e}") from None
        return grown_state(saved, kept, config)
    if saved != config:
        differ = config_difference(saved, config, "this run")
        flags = flags_to_match(saved, config)
        hint = f"add {' '.join(flags)} to match it" if flags else \
            "choose the run's --model-preset, --model-arch and other network flags to match it"
        raise CheckpointError(f"--init-weights: {path} holds another network: {differ}; {hint}")
    # Loaded into a network of this shape once here, so weights that do not fit (a damaged
    # file whose config is right) fail with the same clear error as a player's would.
    try:
        return model_from_state(config, state, source=str(path)).state_dict()
    except CheckpointError as e:
        raise CheckpointError(f"--init-weights: {e}") from None
