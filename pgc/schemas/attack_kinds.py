"""The schema of a dynamics-inference attack (kind ``attack``: ``pgc attack``): per attacker, budget and linked
submissions the accuracy against chance and the ε-LDP ceiling (or the regression errors), the threat model, and the
settings of a sweep or the crafted model of an active attack.

Pure Python: imports nothing from the project beyond :mod:`pgc.schemas.base`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .base import Record, Result


@dataclass(frozen=True, kw_only=True)
class AttackAccuracy(Record):
    """A classification row's numbers (a flat part): the accuracy and its interval, chance, the prior's best guess,
    the advantage over it, the ε-LDP ceiling and whether it applies, and the attacker's own estimate."""

    correct: int | None = None
    accuracy: float
    ci: list[float] | None = None
    confidence: float | None = None
    chance: float | None = None
    below_chance: bool | None = None
    prior_best_guess: float | None = None
    advantage: float | None = None
    normalized_advantage: float | None = None
    ceiling: float | None = None
    ceiling_applies: bool | None = None
    self_assessed_accuracy: float | None = None


@dataclass(frozen=True, kw_only=True)
class AttackRegression(Record):
    """A regression row's errors (a flat part) beside those of the prior's guess, and the skill over it."""

    mae: float
    rmse: float
    prior_mae: float | None = None
    prior_rmse: float | None = None
    mae_skill: float | None = None
    rmse_skill: float | None = None


@dataclass(frozen=True, kw_only=True)
class AttackRow(Record):
    attacker: str
    channels: list[str]
    budget: int | None = None
    k: int | None = None
    epsilon: float | None = None
    n_targets: int | None = None
    classification: AttackAccuracy | None = field(default=None, metadata={"flat": True})
    regression: AttackRegression | None = field(default=None, metadata={"flat": True})
    verdict: str | None = None
    model: str | None = None  # a sweep's model
    threat_channels: list[str] | None = None  # a sweep's channel set


@dataclass(frozen=True, kw_only=True)
class AttackMechanism(Record):
    name: str
    epsilon: float | None = None
    clip: float | None = None
    reduced_dim: int | None = None


@dataclass(frozen=True, kw_only=True)
class AttackHyper(Record):
    """The A3C settings the attacker simulates its shadow episodes with."""

    gamma: float | None = None
    lam: float | None = None
    beta: float | None = None
    cap: int | None = None
    bootstrap_truncated: bool | None = None
    action_selection: str | None = None


@dataclass(frozen=True, kw_only=True)
class AttackThreat(Record):
    """What the attacker sees and knows: the mechanism, the channels, the candidates (or ψ range) and its budget."""

    adversary: str | None = None
    mechanism: AttackMechanism
    channels: list[str]
    protected_only: bool | None = None
    candidates: list[float] | None = None
    psi_range: list[float] | None = None
    prior: str | None = None
    budget_per_psi: int | None = None
    knows_theta: bool | None = None
    hyper: AttackHyper | None = None


@dataclass(frozen=True, kw_only=True)
class AttackSkipped(Record):
    attacker: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class AttackComparison(Record):
    """Per (k, budget): the best attacker, its distance to the ceiling, and learned − likelihood when both ran."""

    k: int
    budget: int
    best_attacker: str
    best_accuracy: float
    best_ci: list[float] | None = None
    ceiling: float | None = None
    ceiling_minus_best: float | None = None
    learned_minus_likelihood: float | None = None


@dataclass(frozen=True, kw_only=True)
class AttackSpread(Record):
    """What one attack ran over (a flat part): the attackers skipped, the KDE bandwidth, the distinct θ, the
    submissions and targets, and the grid of ψ the posterior is computed on."""

    skipped: list[AttackSkipped] | None = None
    kde_bandwidth: float | None = None
    contexts: int | None = None
    n_submissions: int | None = None
    n_targets: int | None = None
    grid: list[float] | None = None


@dataclass(frozen=True, kw_only=True)
class AttackTarget(Record):
    """What was attacked: fresh submissions at a model (and the agents' exploration), or a run folder's trial."""

    model: str | None = None
    alpha: float | None = None
    run: str | None = None
    trial: int | None = None


@dataclass(frozen=True, kw_only=True)
class CraftedSearch(Record):
    """How the active attacker's θ was found: the objective and its value, the search's cost and vector, and for a
    layout search the clipped gradients' means and spreads per ψ."""

    objective: str
    value: float | None = None
    axes: int | None = None
    epsilon: float | None = None
    evaluations: int | None = None
    wall_time_s: float | None = None
    vector: list[float] | None = None
    means: list[list[float]] | None = None
    spreads: list[list[float]] | None = None
    history: list[float] | None = None


@dataclass(frozen=True, kw_only=True)
class LaplaceLayout(Record):
    layout: str
    accuracy: float


@dataclass(frozen=True, kw_only=True)
class ActiveAttack(Record):
    """The θ crafted for the candidates, its file beside the result, and what Laplace reaches at best on it."""

    crafted_for: list[float]
    theta_file: str
    search: CraftedSearch
    layout_bayes_accuracy: float | None = None
    laplace_best_layout: LaplaceLayout | None = None


@dataclass(frozen=True, kw_only=True)
class OneAttack(Record):
    """An attack of one target (a flat part): the target, the threat model, the budgets, what it ran over, the
    attackers compared, and the crafted model of an active attack."""

    target: AttackTarget | None = None
    threat_model: AttackThreat | None = None
    budgets: list[int] | None = None
    spread: AttackSpread | None = field(default=None, metadata={"flat": True})
    comparison: list[AttackComparison] | None = None
    active: ActiveAttack | None = None


@dataclass(frozen=True, kw_only=True)
class SweepSetting(Record):
    """One (model, ε, channel set) of a sweep: its threat model, wall time, rows and what it ran over."""

    model: str
    epsilon: float
    threat: AttackThreat
    wall_s: float | None = None
    rows: list[AttackRow]
    spread: AttackSpread | None = field(default=None, metadata={"flat": True})


@dataclass(frozen=True, kw_only=True)
class AttackSweep(Record):
    """Accuracy against ε for each model (a flat part): the mechanism, the ε values, the budget and targets, the
    models, the plot beside the result, and each setting."""

    mechanism: str | None = None
    clip: float | None = None
    epsilons: list[float] | None = None
    budget: int | None = None
    targets: int | None = None
    models: list[str] | None = None
    plot: str | None = None
    settings: list[SweepSetting] | None = None


@dataclass(frozen=True, kw_only=True)
class AttackResult(Result):
    KIND = "attack"
    mode: str
    command: str | None = None
    seed: int | None = None
    candidates: list[float] | None = None  # a sweep's candidate set
    ks: list[int] | None = None
    one: OneAttack | None = field(default=None, metadata={"flat": True})
    sweep: AttackSweep | None = field(default=None, metadata={"flat": True})
    rows: list[AttackRow]
    violations: list[AttackRow] | None = None  # gradient-only rows beyond the ε-LDP ceiling's interval
    wall_s: float | None = None

    @property
    def candidate_count(self) -> int | None:
        """|Ψ|: the candidates of a sweep, else those of the threat model."""
        cands = self.candidates
        if cands is None and self.one is not None and self.one.threat_model is not None:
            cands = self.one.threat_model.candidates
        return len(cands) if cands is not None else None
