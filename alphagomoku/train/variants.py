"""Training on several board sizes and rules at once: the variants of a run and their buffers.

``--board-sizes 15:3,20:1 --rules freestyle,renju`` trains one network on every pair of a size
and a rule, each pair's share of the self-play tasks in proportion to the product of its
weights (a size or rule with no weight weighs 1). Each task plays one variant, so its games,
its search and its network batches share one board. Each variant keeps its own replay buffer
(a buffer stores boards of one size), and each gradient batch is drawn from one of them, chosen
in proportion to the positions it holds, so that every stored position is as likely to be
trained on as in a run with one buffer and the batch's planes share one shape.

``--variant-mix 15/freestyle:3,20/freestyle,15/standard,15/renju:2`` names the pairs instead,
for a run whose sizes and rules do not all go together (Gomocup plays freestyle on 15x15 and
20x20, standard and renju on 15x15 only).

A run with one size and one rule has one variant, whose buffer is ``replay.npz`` as always; the
others' files are named by their variant (``replay-20x20-renju.npz``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from alphagomoku.game.config import GameConfig
from alphagomoku.train.background_save import BackgroundSave
from alphagomoku.train.buffer import ReplayBuffer, write_buffer_file


@dataclass(frozen=True)
class Variant:
    game: GameConfig
    weight: float

    @property
    def name(self) -> str:
        return f"{self.game.width}x{self.game.height}-{self.game.rule}"


def parse_weighted(text: str, what: str) -> list[tuple[str, float]]:
    """``"15:3,20"`` -> ``[("15", 3.0), ("20", 1.0)]``; ValueError naming ``what`` on a bad
    item, a repeated one or a weight that is not positive."""
    out: list[tuple[str, float]] = []
    for item in text.split(","):
        name, _, weight = item.strip().partition(":")
        name = name.strip()
        if not name:
            raise ValueError(f"{what}: an empty item in {text!r}")
        try:
            w = float(weight) if weight.strip() else 1.0
        except ValueError:
            raise ValueError(f"{what}: the weight of {name!r} must be a number, got {weight!r}") from None
        if not (w > 0 and np.isfinite(w)):
            raise ValueError(f"{what}: the weight of {name!r} must be positive, got {weight!r}")
        if name in [n for n, _ in out]:
            raise ValueError(f"{what}: {name!r} is listed twice")
        out.append((name, w))
    return out


def run_variants(board_size: int, rule: str, n_in_row: int, board_sizes: str = "",
                 rules: str = "", mix: str = "") -> list[Variant]:
    """The variants of a run, the main one (``board_size``, ``rule``) first: the arena, the
    progress plot and the first buffer use it. Either ``board_sizes`` and ``rules`` ("" for the
    main one alone), whose every pair is a variant, or ``mix``, the pairs themselves; both must
    include the main size and rule."""
    if mix:
        if board_sizes or rules:
            raise ValueError("--variant-mix names each size and rule itself: leave out "
                             "--board-sizes and --rules")
        pairs = [(_mix_item(name), w) for name, w in parse_weighted(mix, "--variant-mix")]
        if (board_size, rule) not in [p for p, _ in pairs]:
            raise ValueError(f"--variant-mix {mix!r} must include {board_size}/{rule} "
                             "(--board-size/--rule), the run's main variant")
    else:
        sizes = parse_weighted(board_sizes, "--board-sizes") if board_sizes else [(str(board_size), 1.0)]
        named_rules = parse_weighted(rules, "--rules") if rules else [(rule, 1.0)]
        try:
            sizes_int = [(int(s), w) for s, w in sizes]
        except ValueError:
            raise ValueError(f"--board-sizes: sizes must be whole numbers, got {board_sizes!r}") from None
        if board_size not in [s for s, _ in sizes_int]:
            raise ValueError(f"--board-sizes {board_sizes!r} must include --board-size ({board_size}), "
                             "the run's main board")
        if rule not in [r for r, _ in named_rules]:
            raise ValueError(f"--rules {rules!r} must include --rule ({rule}), the run's main rule")
        pairs = [((s, r), ws * wr) for s, ws in sizes_int for r, wr in named_rules]
    # Sorted stably: the main size first, and within a size the main rule first.
    pairs.sort(key=lambda p: (p[0][0] != board_size, p[0][1] != rule))
    out = [Variant(GameConfig(width=s, n_in_row=n_in_row, rule=r), w) for (s, r), w in pairs]
    total = sum(v.weight for v in out)
    return [Variant(v.game, v.weight / total) for v in out]


def _mix_item(name: str) -> tuple[int, str]:
    size, slash, rule = name.partition("/")
    try:
        if not slash or not rule.strip():
            raise ValueError
        return int(size), rule.strip()
    except ValueError:
        raise ValueError(f"--variant-mix: each item is SIZE/RULE[:WEIGHT], got {name!r}") from None


def assign_variants(variants: list[Variant], tasks: int, rng: np.random.Generator) -> list[Variant]:
    """A variant for each of ``tasks`` tasks: each variant gets its share of them rounded down,
    and the tasks left over go to variants by systematic sampling of what rounding took from
    them (one uniform draw, then every whole step of the running sum), so each variant's
    expected count is its exact share and none gets two of the left-over tasks. The order is
    shuffled."""
    shares = np.array([v.weight * tasks for v in variants])
    counts = np.floor(shares).astype(int)
    left = tasks - int(counts.sum())
    if left:
        edges = np.cumsum(shares - counts)
        points = rng.random() + np.arange(left)
        # min: the running sum may fall a rounding error short of ``left``.
        picked = np.minimum(np.searchsorted(edges, points, side="right"), len(variants) - 1)
        counts += np.bincount(picked, minlength=len(variants))
    out = [v for v, n in zip(variants, counts) for _ in range(n)]
    return [out[i] for i in rng.permutation(len(out))]


class VariantBuffers:
    """One replay buffer per variant; ``capacity`` positions shared among them by weight."""

    def __init__(self, variants: list[Variant], capacity: int, floor: int = 1):
        self.variants = variants
        self.buffers = {v.name: ReplayBuffer(v.game, max(floor, int(capacity * v.weight)))
                        for v in variants}

    @property
    def main(self) -> ReplayBuffer:
        return self.buffers[self.variants[0].name]

    def of(self, game: GameConfig) -> ReplayBuffer:
        name = f"{game.width}x{game.height}-{game.rule}"
        if name not in self.buffers:
            raise ValueError(f"a game on {name} is not one of this run's variants "
                             f"({', '.join(self.buffers)})")
        return self.buffers[name]

    def __len__(self) -> int:
        return sum(len(b) for b in self.buffers.values())

    def pick(self, rng: np.random.Generator, least: int = 1) -> tuple[Variant, ReplayBuffer]:
        """The variant a gradient batch comes from: in proportion to the positions held, among
        the buffers holding at least ``least``."""
        ready = [(v, self.buffers[v.name]) for v in self.variants
                 if len(self.buffers[v.name]) >= least]
        if not ready:
            raise ValueError(f"no variant's buffer holds {least} positions yet")
        if len(ready) == 1:
            return ready[0]   # no draw: a run of one variant keeps its random stream as it was
        sizes = np.array([len(b) for _, b in ready], dtype=np.float64)
        return ready[int(rng.choice(len(ready), p=sizes / sizes.sum()))]

    def path(self, run_dir: Path, variant: Variant) -> Path:
        if variant is self.variants[0]:
            return run_dir / "replay.npz"
        return run_dir / f"replay-{variant.name}.npz"

    def save(self, run_dir: Path, epoch: int, background: BackgroundSave | None = None) -> None:
        """Each buffer to its file; with ``background``, copied here and written on its thread."""
        files = [(self.path(run_dir, v), self.buffers[v.name].snapshot(epoch)) for v in self.variants]

        def write() -> None:
            for path, arrays in files:
                write_buffer_file(path, arrays)

        if background is None:
            write()
        else:
            background.submit(f"the replay buffer of epoch {epoch}", write)

    def load(self, run_dir: Path) -> int:
        """Fill the buffers from ``run_dir`` (the main one must be there; a variant added since
        starts empty). Returns the epoch the main buffer was saved at."""
        epoch = 0
        for v in self.variants:
            path = self.path(run_dir, v)
            if v is not self.variants[0] and not path.exists():
                continue
            buf = self.buffers[v.name]
            loaded, saved = ReplayBuffer.load(path, v.game, buf.capacity)
            self.buffers[v.name] = loaded
            if v is self.variants[0]:
                epoch = saved
        return epoch
