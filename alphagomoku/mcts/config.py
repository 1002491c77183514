"""SearchConfig: the constants of one search, validated where they are made."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

ROOT_RULES = ("puct", "gumbel")
INTERIOR_RULES = ("puct", "gumbel")


def _check_int(name: str, value, lowest: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < lowest:
        raise ValueError(f"{name} must be an integer of at least {lowest}, got {value!r}")


def _check_float(name: str, value, low: float, high: float = math.inf,
                 low_open: bool = False) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value < low or (low_open and value == low) or value > high:
        lo = "(" if low_open else "["
        hi = "]" if math.isfinite(high) else ")"
        raise ValueError(f"{name} must be in {lo}{low}, {high}{hi}, got {value!r}")


@dataclass(frozen=True)
class SearchConfig:
    """PUCT search constants; defaults follow AlphaZero (Silver et al., 2018) where it has one.

    * ``c_puct``: c_init of AlphaZero's exploration rate c(s) = log((1 + N + c_base) / c_base)
      + c_init, or the constant rate when ``c_base`` is 0.
    * ``fpu_reduction``: first-play urgency. A move not yet tried is valued at its parent's mean
      value minus ``fpu_reduction * sqrt(m)``, ``m`` being the prior mass of the moves already
      tried there (as Leela Zero and KataGo do). The penalty grows as the likely moves get
      tried: a node first looks at its best few candidates, and with flat priors it spreads
      widely instead of following whichever move it happened to try first.
    * ``root_fpu_reduction``: the same at the root; None means ``fpu_reduction``.
    * ``dirichlet_alpha``: total concentration of the root noise; each tree uses
      dirichlet_alpha / (legal moves), so the noise spreads alike on every board size.
    * ``dirichlet_eps``: weight of the noise in the root priors; 0 for play, 0.25 in self-play.
    * ``leaves_per_tree``: leaves one gather may take from each tree; virtual loss (each visit
      in flight counts as ``virtual_loss`` lost for the side choosing it) keeps them apart.
    * ``root_rule``: ``"puct"`` (the root chooses like every node) or ``"gumbel"`` (Gumbel
      AlphaZero, Danihelka et al. 2022: ``gumbel_m`` root moves sampled by Gumbel-top-m, the
      simulations spent by sequential halving; see :mod:`alphagomoku.mcts.gumbel`). Gumbel
      replaces Dirichlet noise, so ``dirichlet_eps`` must be 0 with it.
    * ``gumbel_c_visit``, ``gumbel_c_scale``: sigma(q) = (c_visit + max visits) * c_scale * q
      on q rescaled to [0, 1]; mctx's defaults (50, 0.1).
    * ``interior_rule``: how nodes below the root choose: ``"puct"`` (as MiniZero does under a
      Gumbel root) or ``"gumbel"`` (the paper's deterministic rule, section 5: the move with
      the largest pi'(a) - N(a) / (1 + sum N), pi' the improved policy of that node). Needs
      ``root_rule="gumbel"``.
    * ``vcf_leaf_budget``: solver nodes of a VCF search (:mod:`alphagomoku.game.vcf`) at every
      new node; a proved VCF solves the node as a win. 0 turns it off.
    * ``vcf_root_budget``: the same at an unevaluated root, whose first VCF move is then the
      only one searched; None means 10 times ``vcf_leaf_budget``.
    * ``vct_leaf_budget``: solver nodes of a VCT search (:mod:`alphagomoku.game.vct`, threes
      as threats as well as fours) at every new node below the root, each VCF call in it given
      at most ``vcf_leaf_budget`` (100 when that is 0); a proved win solves the node, so a move
      after which the opponent wins by threats is seen as lost. 0 turns it off.
    * ``vct_leaf_depth``: the free threats that search may chain.
    * ``vct_leaf_plies``: only nodes at most this many plies below the root get it (1: the
      root's moves, each checked for the opponent's win); 0 means every new node.
    * ``vcf_plane_budget``: the leaves' input planes carry the two VCF planes, proved within
      that many solver nodes, for a network trained with them; it must be the network's
      ``ModelConfig.vcf_plane_budget`` (:meth:`Forest.run` checks), 0 for every other network.
    * ``threat_planes``: the leaves' input planes carry the THREAT_PLANES threat planes after
      the VCF ones, for a network trained with them (``ModelConfig.threat_planes``;
      :meth:`Forest.run` checks).
    * ``rule_planes``: the leaves' input planes end with the RULE_PLANES rule planes, for a
      network that reads the rule (``ModelConfig.rule_planes``; :meth:`Forest.run` checks).
    """

    num_simulations: int = 800
    c_puct: float = 1.25
    c_base: float = 19652.0
    fpu_reduction: float = 0.25
    root_fpu_reduction: float | None = None
    dirichlet_alpha: float = 10.0
    dirichlet_eps: float = 0.0
    leaves_per_tree: int = 1
    virtual_loss: float = 1.0
    root_rule: str = "puct"
    gumbel_m: int = 16
    gumbel_c_visit: float = 50.0
    gumbel_c_scale: float = 0.1
    interior_rule: str = "puct"
    vcf_leaf_budget: int = 0
    vcf_root_budget: int | None = None
    vcf_plane_budget: int = 0
    vct_leaf_budget: int = 0
    vct_leaf_depth: int = 1
    vct_leaf_plies: int = 0
    rule_planes: bool = False
    threat_planes: bool = False

    def __post_init__(self):
        _check_int("num_simulations", self.num_simulations, 1)
        _check_float("c_puct", self.c_puct, 0.0, low_open=True)
        _check_float("c_base", self.c_base, 0.0)
        _check_float("fpu_reduction", self.fpu_reduction, 0.0, 2.0)
        if self.root_fpu_reduction is not None:
            _check_float("root_fpu_reduction", self.root_fpu_reduction, 0.0, 2.0)
        _check_float("dirichlet_alpha", self.dirichlet_alpha, 0.0, low_open=True)
        _check_float("dirichlet_eps", self.dirichlet_eps, 0.0, 1.0)
        _check_int("leaves_per_tree", self.leaves_per_tree, 1)
        _check_float("virtual_loss", self.virtual_loss, 0.0, 10.0)
        if self.root_rule not in ROOT_RULES:
            raise ValueError(f"root_rule must be one of {', '.join(ROOT_RULES)}, "
                             f"got {self.root_rule!r}")
        _check_int("gumbel_m", self.gumbel_m, 1)
        _check_float("gumbel_c_visit", self.gumbel_c_visit, 0.0)
        _check_float("gumbel_c_scale", self.gumbel_c_scale, 0.0, low_open=True)
        if self.root_rule == "gumbel" and self.dirichlet_eps > 0:
            # Gumbel noise is the root's exploration; Dirichlet noise on top of it was one of
            # the reasons a public Gumbel implementation learned nothing (LightZero#493).
            raise ValueError("root_rule 'gumbel' explores with Gumbel noise: set dirichlet_eps "
                             f"to 0 (got {self.dirichlet_eps})")
        if self.interior_rule not in INTERIOR_RULES:
            raise ValueError(f"interior_rule must be one of {', '.join(INTERIOR_RULES)}, "
                             f"got {self.interior_rule!r}")
        if self.interior_rule == "gumbel" and self.root_rule != "gumbel":
            raise ValueError("interior_rule 'gumbel' needs root_rule 'gumbel' (its sigma(q) and "
                             "improved policy are the Gumbel root's)")
        _check_int("vcf_leaf_budget", self.vcf_leaf_budget, 0)
        if self.vcf_root_budget is not None:
            _check_int("vcf_root_budget", self.vcf_root_budget, 0)
        _check_int("vcf_plane_budget", self.vcf_plane_budget, 0)
        _check_int("vct_leaf_budget", self.vct_leaf_budget, 0)
        _check_int("vct_leaf_depth", self.vct_leaf_depth, 1)
        _check_int("vct_leaf_plies", self.vct_leaf_plies, 0)
        for name in ("rule_planes", "threat_planes"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")

    @property
    def root_fpu(self) -> float:
        """The first-play reduction the root uses."""
        return self.fpu_reduction if self.root_fpu_reduction is None else self.root_fpu_reduction

    @property
    def vcf_root(self) -> int:
        """The VCF budget the root uses."""
        if self.vcf_root_budget is None:
            return 10 * self.vcf_leaf_budget
        return self.vcf_root_budget

    def replace(self, **changes) -> "SearchConfig":
        return dataclasses.replace(self, **changes)
