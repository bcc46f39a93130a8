"""The auditor's own benchmarks that write their own JSON: one kind per bench (``bench-gaussian``, ...), each a typed
result with the keys the bench has always written (``bench`` names it). Files of the older kind ``bench`` load as the
kind their ``bench`` names (:func:`pgc.schemas.bench_kinds.legacy_bench_kind`)."""

from __future__ import annotations

from dataclasses import dataclass

from .audit_rows import Verdict
from .base import Record, Result

# --- bench-gaussian: pgc bench gaussian --------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class OracleBound(Record):
    """The best threshold test on exact one-dimensional scores: its ε_LB, threshold and error rates."""

    epsilon_lower_bound: float
    threshold: float
    fpr: float
    fnr: float
    fp_share: float


@dataclass(frozen=True, kw_only=True)
class GaussianBenchRow(Record):
    """One ε: the audits' bounds over seeds beside the oracle at the threshold test's α and at the whole α."""

    epsilon: float
    delta: float
    oracle: OracleBound
    oracle_whole_alpha: OracleBound
    audit_bounds: list[float]
    audit_mean: float
    ratio_mean_to_oracle: float
    ratio_mean_to_oracle_whole_alpha: float
    ratios: list[float]
    accountant_epsilon: float
    wall_s_per_audit: float


@dataclass(frozen=True, kw_only=True)
class ShrunkNoise(Record):
    """A Gaussian whose noise is too small for its claim (ε, δ): its true ε, the audit's bound and verdict."""

    claim: list[float]
    true_epsilon: float
    epsilon_lower_bound: float
    verdict: Verdict


@dataclass(frozen=True, kw_only=True)
class GaussianBench(Result):
    """pgc bench gaussian: how close the audit comes to the oracle per ε, and the shrunk-noise mechanism caught."""

    KIND = "bench-gaussian"
    bench: str = "gaussian"
    samples: int
    confidence: float
    threshold_test_confidence: float
    goal: float
    dim: int
    seeds: int
    rows: list[GaussianBenchRow]
    shrunk: ShrunkNoise
    wall_time_s: float
    command: str


# --- bench-adversarial, bench-adversarial-false-alarms: pgc bench adversarial [--false-alarms] ---------


@dataclass(frozen=True, kw_only=True)
class AdversarialBench(Result):
    """The adversarial audit's wall time (its search included) beside the honest audit's, and both bounds."""

    KIND = "bench-adversarial"
    bench: str = "adversarial"
    pair: list[float]
    mechanism: str
    samples: int
    adversarial_wall_s: float
    search_wall_s: float
    honest_wall_s: float
    ratio: float
    epsilon_lower_bound: float
    honest_epsilon_lower_bound: float
    command: str


@dataclass(frozen=True, kw_only=True)
class AdversarialFalseAlarm(Record):
    """One audit of a correct mechanism through a θ crafted for ``crafted_for`` (``tuned``: for this very pair)."""

    mechanism: str
    claimed_epsilon: float
    psi: float
    psi_prime: float
    crafted_for: list[float]
    tuned: bool
    seed: int
    epsilon_lower_bound: float
    ratio: float
    exceeds_claim: bool


@dataclass(frozen=True, kw_only=True)
class AdversarialFalseAlarms(Result):
    """The adversarial audit on correct mechanisms: how many bounds exceed their claim."""

    KIND = "bench-adversarial-false-alarms"
    bench: str = "adversarial-false-alarms"
    rows: list[AdversarialFalseAlarm]
    audits: int
    exceeding_claim: int
    max_ratio: float
    samples: int
    confidence: float
    wall_time_s: float


# --- bench-systems: pgc bench systems ----------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SystemFalseAlarms(Record):
    """A correct subject (a system or a mechanism) audited over seeds: its bounds and the alarms raised; a system's
    covered rows and its unprotected rows that leak."""

    subject: str
    claim: float
    bounds: list[float] | None = None
    alarms: int
    max_ratio: float
    samples: int | None = None
    covered_rows: int | None = None
    unprotected_rows_leaking: int | None = None


@dataclass(frozen=True, kw_only=True)
class BrokenSystem(Record):
    """A broken system: the channel that should be flagged, the channels flagged, and whether they match."""

    system: str
    expected_channel: str
    flagged: list[str]
    right: bool
    verdict: Verdict


@dataclass(frozen=True, kw_only=True)
class ContractCost(Record):
    """The System contract's cost beside a direct reference audit on the same releases: CPU and wall seconds per
    repeat, their median ratios, and each channel's bound (equal in both)."""

    samples: int
    contract_cpu_s: list[float]
    reference_cpu_s: list[float]
    contract_wall_s: list[float]
    reference_wall_s: list[float]
    median_cpu_ratio: float
    median_ratio: float
    equal_bounds: bool
    bounds: dict[str, float]  # channel -> ε_LB


@dataclass(frozen=True, kw_only=True)
class SystemsBench(Result):
    """pgc bench systems: false alarms on correct systems, the broken ones caught, the contract's cost."""

    KIND = "bench-systems"
    bench: str = "systems"
    seeds: int
    samples: int
    confidence: float
    false_alarms: list[SystemFalseAlarms]
    total_false_alarms: int
    broken: list[BrokenSystem]
    contract: ContractCost
    wall_time_s: float
    command: str


# --- bench-laplace-small-epsilon: scripts/laplace_small_epsilon.py -------------------------------------


@dataclass(frozen=True, kw_only=True)
class SmallEpsilonCell(Record):
    """One seed's audit of the Laplace mechanism at a small ε."""

    seed: int
    epsilon_lower_bound: float
    statistic: str
    threshold: float
    false_positives: int
    false_negatives: int
    verdict: Verdict
    wall_s: float


@dataclass(frozen=True, kw_only=True)
class LaplaceSmallEpsilon(Result):
    """The Laplace mechanism at a small claimed ε over seeds: the bounds' median and minimum against the goal."""

    KIND = "bench-laplace-small-epsilon"
    bench: str = "laplace-small-epsilon"
    command: str
    claimed_epsilon: float
    total_per_side: int
    samples_per_side: int
    cells: list[SmallEpsilonCell]
    median: float
    minimum: float
    goal: float
    at_least_goal: int


# --- bench-audit-time-estimates: scripts/calibrate_planning.py -----------------------------------------


@dataclass(frozen=True, kw_only=True)
class TimeEstimate(Record):
    """One audit command: its estimated and measured seconds, and whether the estimate is within the tolerance."""

    audit: str
    command: str
    estimated_s: float
    wall_s: float
    estimate_over_wall: float
    within: bool


@dataclass(frozen=True, kw_only=True)
class Machine(Record):
    """The machine a timing ran on."""

    python: str
    cpus: int
    loadavg_1min_at_end: float


@dataclass(frozen=True, kw_only=True)
class AuditTimeEstimates(Result):
    """The planner's time estimates against measured wall times."""

    KIND = "bench-audit-time-estimates"
    bench: str = "audit-time-estimates"
    command: str
    tolerance: float
    rows: list[TimeEstimate]
    all_within: bool
    wall_s: float
    machine: Machine


AUDIT_BENCHES: tuple[type[Result], ...] = (
    GaussianBench,
    AdversarialBench,
    AdversarialFalseAlarms,
    SystemsBench,
    LaplaceSmallEpsilon,
    AuditTimeEstimates,
)
