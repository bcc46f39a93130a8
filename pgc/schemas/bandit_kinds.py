"""The federated linear bandits' result kinds: bandit-regret, bandit-attack, bandit-bench, layout-gap."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pgc.contracts import PrivacyClaim

from .base import JsonObject, Record, Result, SchemaError

# --- bandit-regret, bandit-attack, bandit-bench: pgc bandit, pgc bench bandit ---------------------


def _pair(value: list[float] | None, where: str) -> None:
    if value is not None and len(value) != 2:
        raise SchemaError(f"{where} has {len(value)} values, expected two (lower, upper)")


@dataclass(frozen=True, kw_only=True)
class RegretAtHorizon(Record):
    """The group regret at the horizon T: its mean over runs and its interval."""

    mean: float
    interval: list[float]

    def __post_init__(self) -> None:
        _pair(self.interval, "group_regret_at_T.interval")


@dataclass(frozen=True, kw_only=True)
class BanditCurve(Record):
    """One algorithm at one setting: the time-averaged group regret at the times ``t`` with its band
    (``lower``, ``upper``)."""

    algorithm: str
    label: str
    n_silos: int
    t: list[float]
    time_averaged_group_regret: list[float]
    lower: list[float]
    upper: list[float]
    epsilon: float | None = None  # None: the non-private algorithm
    delta: float | None = None
    batch: int | None = None
    sigma: float | None = None
    threshold: float | None = None
    mean_syncs: float | None = None
    group_regret_at_T: RegretAtHorizon | None = None
    regulariser: float | None = field(default=None, metadata={"json": "lambda"})  # λ (a Python keyword)

    def __post_init__(self) -> None:
        n = len(self.t)
        for name in ("time_averaged_group_regret", "lower", "upper"):
            if len(getattr(self, name)) != n:
                raise SchemaError(f"curve {self.label!r}: {name} has {len(getattr(self, name))} values, t has {n}")


@dataclass(frozen=True, kw_only=True)
class PrivacyCostPoint(Record):
    """The privacy cost at M silos: private minus non-private group regret at T, mean and interval."""

    n_silos: int
    privacy_cost_mean: float
    interval: list[float]
    private_regret_at_T: float | None = None
    nonprivate_regret_at_T: float | None = None

    def __post_init__(self) -> None:
        _pair(self.interval, "privacy_cost.interval")


@dataclass(frozen=True, kw_only=True)
class ExponentFit(Record):
    """The fitted exponent of the privacy cost in M (cost ∝ M^exponent) with its interval, and the
    exponents the theories predict (``theory``: name -> exponent); without an exponent, ``reason`` says why
    none was fitted."""

    exponent: float | None = None
    interval: list[float] | None = None
    reason: str | None = None
    intercept: float | None = None
    level: float | None = None
    resamples: int | None = None
    dropped_resamples: int | None = None
    method: str | None = None
    theory: dict[str, float] | None = None
    epsilon: float | None = None

    def __post_init__(self) -> None:
        _pair(self.interval, "fit.interval")


@dataclass(frozen=True, kw_only=True)
class BanditRegret(Result):
    KIND = "bandit-regret"
    settings: JsonObject
    curves: list[BanditCurve]
    label: str | None = None
    privacy_cost: list[PrivacyCostPoint] = field(default_factory=list)
    fit: ExponentFit | None = None
    plot: str | None = None  # a PNG beside the file; when absent a reader may look for the file's stem + .png
    elapsed_seconds: float | None = None
    cpu_count: int | None = None


@dataclass(frozen=True, kw_only=True)
class BanditAttackTarget(Record):
    """What one attack row attacked: the system, the canary pair, the released channel (``all``: every channel,
    the attacker testing on ``test_channel``) and whether the system's claim covers it."""

    system: str
    pair: str
    channel: str
    test_channel: str | None = None
    covered_by_claim: bool | None = None


@dataclass(frozen=True, kw_only=True)
class BanditAttackAccuracy(Record):
    """The attacker's test accuracy: ``correct`` of ``n_test`` guesses, its interval at ``level``, and the
    simulated releases per world it was fitted on."""

    accuracy: float
    interval: list[float]
    n_test: int
    level: float | None = None
    correct: int | None = None
    n_train_per_world: int | None = None

    def __post_init__(self) -> None:
        _pair(self.interval, "interval")


@dataclass(frozen=True, kw_only=True)
class BanditAccuracyReference(Record):
    """What the accuracy is read against: chance and the (ε, δ)-DP ceiling (e^ε + δ)/(1 + e^ε) of the claim,
    and whether the interval's lower end lies above each."""

    chance: float
    ceiling: float
    claim: PrivacyClaim
    above_ceiling: bool | None = None
    above_chance: bool | None = None


def _flat() -> Any:
    return field(metadata={"flat": True})


@dataclass(frozen=True, kw_only=True)
class BanditAttackRow(Record):
    """One attack on one system, pair and released channel: the attacker's test accuracy with its
    interval, beside chance and the (ε, δ)-DP ceiling of the system's claim. The three parts sit flat in JSON;
    a part's key reads as the row's attribute (``row.accuracy`` is ``row.measured.accuracy``)."""

    target: BanditAttackTarget = _flat()
    measured: BanditAttackAccuracy = _flat()
    reference: BanditAccuracyReference = _flat()


@dataclass(frozen=True, kw_only=True)
class BanditAttack(Result):
    KIND = "bandit-attack"
    rows: list[BanditAttackRow]
    settings: JsonObject | None = None


@dataclass(frozen=True, kw_only=True)
class BayesAccuracy(Record):
    """Laplace Bayes accuracies of one submission at ε: of the candidates' measured distributions, of their means
    only, of the best layout of that many points, and of the best map from episode lengths to that layout (the
    last two for two or three candidates)."""

    measured: float
    means_only: float
    best_layout: float | None = None
    length_map: float | None = None


@dataclass(frozen=True, kw_only=True)
class LayoutGap(Result):
    """python -m attacks.a3c.layout: a crafted θ's Laplace Bayes accuracy on a candidate set (measured, means
    only, the best layout and the best map from episode length to it), with each candidate's mean and spread on
    the layout ``coordinates`` of θ (units of C/2) and their share of the clipped L1 norm."""

    KIND = "layout-gap"
    candidates: list[float]
    epsilon: float
    episodes: int
    bayes_accuracy: BayesAccuracy
    theta_dim: int | None = None
    coordinates: list[int] | None = None
    means: list[list[float]] | None = None
    spreads: list[list[float]] | None = None
    layout_share_of_l1: list[float] | None = None
    command: str | None = None


@dataclass(frozen=True, kw_only=True)
class BanditBench(Result):
    """pgc bench bandit: the batched federated LinUCB against the reference loop."""

    KIND = "bandit-bench"
    settings: JsonObject
    reference_seconds_per_round: float
    batched_one_run_seconds: float
    speedup_one_run: float
    reference_agrees_fraction_of_silo_rounds: float
    reference_seconds_measured: float | None = None
    reference_seconds_extrapolated_to_T: float | None = None
    batched_many_runs_seconds: float | None = None
    speedup_per_run_batched: float | None = None
