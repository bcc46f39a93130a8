"""The power study's evidence (``python -m audit.power.study``, scripts/profile_study.py; results/power/): one
typed part per study. A file holds either ``studies`` (the curve bound beside the threshold bound, per claim) or one
``study``, whose shape names which study it is (each study's parts have required keys no other study has)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .audit_rows import Verdict
from .base import Record, Result

_NULL = {"keep_none": True}  # a null the study writes: the row states no such value


# --- curve-vs-threshold ----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class CurveRun(Record):
    """One seed's audit: the curve ε and μ bound, the threshold ε_LB of the same row, its verdict and power."""

    curve_epsilon: float
    mu_lower_bound: float
    threshold_epsilon_lower_bound: float
    verdict: Verdict
    detectable_epsilon: float


@dataclass(frozen=True, kw_only=True)
class AlphaSplit(Record):
    """How α is shared between the threshold test and the curve test."""

    threshold: float
    curve: float


@dataclass(frozen=True, kw_only=True)
class CurveFractions(Record):
    """Each bound over the claimed ε, median and minimum over the seeds: the curve test's, the threshold test's,
    and the oracle's (one-dimensional scores)."""

    curve_fraction_median: float
    curve_fraction_min: float
    threshold_fraction_median: float
    threshold_fraction_min: float
    oracle_curve_fraction_median: float
    oracle_curve_fraction_min: float


@dataclass(frozen=True, kw_only=True)
class CurveVsThreshold(Record):
    """One claim (ε, δ) of an exact Gaussian (μ) audited at ``n_per_side`` over ``seeds`` seeds; the fractions are
    written flat beside it."""

    epsilon: float
    delta: float
    mu: float
    n_per_side: int
    alpha: float
    alpha_split: AlphaSplit
    seeds: int
    path: str
    fractions: CurveFractions = field(metadata={"flat": True})
    verdicts: list[Verdict]
    runs: list[CurveRun]


# --- miscalibrated ---------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class MiscalibratedRow(Record):
    """The miscalibrated mechanism's audit row under one claim (the curve's values null without a curve)."""

    verdict: Verdict
    epsilon_lower_bound: float
    max_certifiable_epsilon: float
    claimed_mu: float | None = field(default=None, metadata=_NULL)
    mu_lower_bound: float | None = field(default=None, metadata=_NULL)
    curve_epsilon: float | None = field(default=None, metadata=_NULL)
    detectable_epsilon: float | None = field(default=None, metadata=_NULL)
    samples_to_decide: int | None = field(default=None, metadata=_NULL)
    false_positives: int
    false_negatives: int


@dataclass(frozen=True, kw_only=True)
class MiscalibratedStudy(Record):
    """Noise sized for the wrong sensitivity (σ), claiming μ while the truth is ``true_mu``: the row per claim."""

    sigma: float
    claimed_mu: float
    true_mu: float
    n_per_side: int
    rows: dict[str, MiscalibratedRow]  # the claim's label -> its row


# --- false-alarms ----------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class FalseAlarmRow(Record):
    """One correctly calibrated Gaussian mechanism's audit."""

    mechanism: str
    sigma: float
    claimed_epsilon: float
    claimed_delta: float
    claimed_mu: float | None = None
    verdict: Verdict
    epsilon_lower_bound: float
    mu_lower_bound: float | None = None
    curve_epsilon: float | None = None
    detectable_epsilon: float | None = None
    seed: int = 0  # which of the study's seeds for this mechanism (0: the one a one-seed study used)


@dataclass(frozen=True, kw_only=True)
class FalseAlarmStudy(Record):
    """Correctly calibrated Gaussians, each audited on ``seeds`` seeds: how many of the ``mechanisms`` × ``seeds``
    audits are flagged (diffprivlib's version, None when it is not installed and its rows are left out)."""

    n_per_side: int
    alpha: float
    mechanisms: int
    seeds: int = 1
    flagged: int
    diffprivlib: str | None = field(default=None, metadata=_NULL)
    rows: list[FalseAlarmRow]


# --- detectability ---------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class DetectabilityCase(Record):
    """One mechanism: the runs whose test stated a finite power (``stated_power``), the ε it stated, and how many
    of the releases leaking that much were flagged."""

    mechanism: str
    claimed_epsilon: float
    delta: float
    curve: bool
    runs: int
    stated_power: int
    detectable_epsilon_median: float
    detectable_epsilon_range: list[float]
    flagged: int
    rate: float


@dataclass(frozen=True, kw_only=True)
class DetectabilityStudy(Record):
    """The stated power against its promise, per mechanism."""

    n_per_side: int
    alpha: float
    power_promised: float
    goal_rate: float
    power: str
    cases: list[DetectabilityCase]


@dataclass(frozen=True, kw_only=True)
class PointMassStudy(Record):
    """The δ test's stated point mass planted in a Laplace mechanism: the share of ``runs`` flagged."""

    n_per_side: int
    dim: int
    alpha: float
    detectable_delta: float
    runs: int
    flagged: int
    rate: float
    power_promised: float


# --- sequential-null -------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SequentialNullStudy(Record):
    """The stopping rule on true claims: the share flagged and a one-sided binomial test of "rate ≤ α"."""

    runs: int
    claim: list[float]  # (ε, δ)
    n_first: int
    budget_per_side: int
    alpha: float
    alpha_spending: str
    flagged: int
    rate: float
    consistent: int
    undecided: int
    binomial_test_rate_above_alpha_p: float
    path: str


# --- privacy-profiles (scripts/profile_study.py) ---------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ProfileRun(Record):
    """One seed's audit of a DP-SGD release against its claim (the profile's point null when none is violated)."""

    seed: int
    wall_time_s: float
    verdict: Verdict
    claimed_epsilon: float
    epsilon_lower_bound: float
    statistic: str | None = None
    profile_delta: float | None = field(default=None, metadata=_NULL)
    profile_claimed_epsilon: float | None = field(default=None, metadata=_NULL)
    profile_epsilon_lower_bound: float | None = field(default=None, metadata=_NULL)
    detectable_epsilon: float | None = None
    p_value: float | None = None


@dataclass(frozen=True, kw_only=True)
class ProfileCase(Record):
    """One sampling × claim × DP-SGD setting, audited on several seeds."""

    sampling: str
    claim_states_profile: bool
    sampling_rate: float
    noise_multiplier: float
    steps: int
    runs: list[ProfileRun]
    flagged: int
    audits: int


@dataclass(frozen=True, kw_only=True)
class ProfileSummary(Record):
    """ "k of n" flagged per group of cases."""

    poisson_flagged: str
    shuffle_profile_flagged: str
    shuffle_epsilon_delta_only_flagged: str
    always_flagged: str


@dataclass(frozen=True, kw_only=True)
class ProfileStudy(Record):
    """Claims with a privacy profile: DP-SGD sampled as accounted, shuffled, and always the same batch."""

    samples_per_side: int
    seeds: int
    confidence: float
    cases: list[ProfileCase]
    summary: ProfileSummary


PowerEvidence = (
    MiscalibratedStudy | FalseAlarmStudy | DetectabilityStudy | PointMassStudy | SequentialNullStudy | ProfileStudy
)


@dataclass(frozen=True, kw_only=True)
class PowerStudy(Result):
    """Evidence of the curve audit and of the stated power (audit.power.study): ``studies`` (the curve bound
    beside the threshold bound on the same releases, per claim) or one ``study`` (miscalibrated, false
    alarms, detectability, point-mass detectability, the sequential null simulation, privacy profiles)."""

    KIND = "power-study"
    studies: list[CurveVsThreshold] | None = None
    study: PowerEvidence | None = None
    wall_time_s: float | None = None
    command: str | None = None
