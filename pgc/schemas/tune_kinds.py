"""The schema of a tuning study (kind ``tune``: ``pgc tune``'s tune.json): the study's settings, every trial with its
outcome and seeds, the Pareto front and the constrained mode's best trial.

Pure Python: imports nothing from the project beyond :mod:`pgc.schemas.base`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .base import JsonObject, Record, Result


@dataclass(frozen=True, kw_only=True)
class TrialOutcome(Record):
    """The utility of a trial's runs at ``horizon`` submissions: the share that succeeded, the median FST (∞: a
    failure), the median final average score, and each run's FST."""

    success_ratio: float | None = None
    median_fst: float | None = None
    final_mu: float | None = None
    horizon: int | None = None
    fsts: list[float] | None = None


@dataclass(frozen=True, kw_only=True)
class RungMetrics(Record):
    """A trial's runs at an intermediate rung: their outcome, the rung's wall time, and the rung it was pruned at."""

    outcome: TrialOutcome = field(metadata={"flat": True})
    rung_wall_s: float | None = None
    pruned_at: int | None = None


@dataclass(frozen=True, kw_only=True)
class TrialSeeds(Record):
    """Where a trial's randomness came from: its training seeds, the trial they were drawn for (a retry keeps the
    failed trial's), its sampler seed, and the failed trial it retries."""

    seeds: list[int] | None = None
    seed_origin_trial: int | None = None
    sampler_seed: int | None = None
    retry_of: int | None = None


@dataclass(frozen=True, kw_only=True)
class TuneTrial(Record):
    number: int
    state: str
    params: JsonObject = field(default_factory=dict)  # optuna's parameters of the trial, as the sampler drew them
    values: list[float] | None = None
    utility: float | None = None
    privacy: float | None = None
    claimed_epsilon: float | None = None
    outcome: TrialOutcome | None = field(default=None, metadata={"flat": True})
    seeding: TrialSeeds | None = field(default=None, metadata={"flat": True})
    pruned_at: int | None = None
    intermediate: dict[str, RungMetrics] | None = None  # per rung (its submissions)
    duration_s: float | None = None


@dataclass(frozen=True, kw_only=True)
class TrialCounts(Record):
    """How many trials end in each optuna state (a state no trial is in is left out)."""

    complete: int | None = field(default=None, metadata={"json": "COMPLETE"})
    pruned: int | None = field(default=None, metadata={"json": "PRUNED"})
    fail: int | None = field(default=None, metadata={"json": "FAIL"})
    running: int | None = field(default=None, metadata={"json": "RUNNING"})
    waiting: int | None = field(default=None, metadata={"json": "WAITING"})


@dataclass(frozen=True, kw_only=True)
class TuneEvaluation(Record):
    """How one trial is scored (pgc.tuning.Evaluation): its runs, rungs and pruning, the environments, the A3C
    preset, and what utility and privacy are."""

    runs_per_trial: int | None = None
    submissions: int | None = None
    rungs: list[float] | None = None
    prune_below_mu: float | None = None
    workers: int | None = None
    gravities: list[float] | None = None
    environments: str | None = None
    hyper: str | None = None
    utility: str | None = None
    privacy: str | None = None
    audit_samples: int | None = None
    audit_confidence: float | None = None
    hyper_values: JsonObject | None = None  # the A3C preset's hyperparameters (configuration)


@dataclass(frozen=True, kw_only=True)
class TuneSpace(Record):
    """The searched ranges (pgc.tuning.SearchSpace): each a [low, high] pair."""

    mechanisms: list[str]
    epsilon: list[float]
    clip: list[float]
    buffer_size: list[int]
    reduced_dim: list[int]
    learning_rate: list[float]


@dataclass(frozen=True, kw_only=True)
class Objective(Record):
    name: str
    direction: str


@dataclass(frozen=True, kw_only=True)
class TuneConstraint(Record):
    metric: str
    min: float | None = None


@dataclass(frozen=True, kw_only=True)
class BestTrial(Record):
    """The constrained mode's answer: the feasible trial with the smallest privacy value."""

    number: int
    params: JsonObject  # optuna's parameters of the trial
    privacy: float | None = None
    utility: float | None = None
    success_ratio: float | None = None
    median_fst: float | None = None


@dataclass(frozen=True, kw_only=True)
class TuneSetup(Record):
    """How the study searches (a flat part: its keys sit at the top of the result)."""

    mode: str
    sampler: str | None = None
    seed: int | None = None
    sampler_seeds: dict[str, int] | None = None  # per trial number
    utility: str | None = None
    privacy: str | None = None
    objectives: list[Objective] | None = None
    constraint: TuneConstraint | None = None
    space: TuneSpace | None = None
    evaluation: TuneEvaluation | None = None


@dataclass(frozen=True, kw_only=True)
class TuneResult(Result):
    KIND = "tune"
    format: str
    study: str
    storage: str | None = None
    setup: TuneSetup = field(metadata={"flat": True})
    counts: TrialCounts
    trials: list[TuneTrial]
    pareto_front: list[int]
    best_constrained: BestTrial | None = None
