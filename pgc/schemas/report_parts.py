"""The parts of ``pgc report``'s JSON summary (report.json): inputs, warnings, Holm's family, the summary table, the
bound, attack, system-audit and bandit-attack rows, utility and tuning. Every part writes each of its fields, an
unset one as null (:attr:`Record.WRITE_NULLS`), so the summary lists the same keys for every row."""

from __future__ import annotations

from dataclasses import dataclass, field

from .base import JsonObject, Record
from .system_parts import Accountant, LibraryRun
from .tune_kinds import BestTrial, TrialCounts


@dataclass(frozen=True, kw_only=True)
class ReportRecord(Record):
    """A part of the report's summary: every field written, an unset one as null."""

    WRITE_NULLS = True


@dataclass(frozen=True, kw_only=True)
class ReportInput(ReportRecord):
    """One result the report read: its kind, label, path as shown, and whether it is a committed reference."""

    kind: str
    label: str
    path: str | None = None
    reference: bool = False


@dataclass(frozen=True, kw_only=True)
class ReportWarning(ReportRecord):
    """A warning at the top of the report: its level (critical, warning, info), title and text."""

    level: str
    title: str
    text: str


@dataclass(frozen=True, kw_only=True)
class FamilyFinding(ReportRecord):
    """A row Holm's procedure over the report's rows keeps: its subject, channel, verdict and p-values."""

    subject: str
    channel: str
    verdict: str
    p_value: float | None = None
    adjusted_p_value: float | None = None
    model: str | None = None
    covered: bool | None = None


@dataclass(frozen=True, kw_only=True)
class ReportFamily(ReportRecord):
    """Holm's family over the report's judged rows: α, its size, the rows outside it, the findings it keeps."""

    alpha: float
    size: int
    excluded: int
    significant: list[FamilyFinding] = field(default_factory=list)
    method: str = "holm"
    verdict: str


@dataclass(frozen=True, kw_only=True)
class SummaryWorst(ReportRecord):
    """The largest certified bound of a summary row's group: the bound, its cap, and the row it comes from."""

    lower_bound: float | None = None
    cap: float | None = None
    worst_subject: str | None = None
    worst_channel: str | None = None
    worst_claimed: float | None = None


@dataclass(frozen=True, kw_only=True)
class ReportSummaryRow(ReportRecord):
    """One row of the summary table: an observer group × channel family, its claim, its worst bound (flat), how
    many rows it joins and its verdict."""

    group: str
    family: str
    channel_label: str | None = None  # absent in older reports
    claimed: float | None = None
    claims: list[float] = field(default_factory=list)
    accountant: float | None = None
    worst: SummaryWorst = field(metadata={"flat": True})
    rows: int
    verdict: str
    holm: str
    outside_claim: bool = False
    budget_limited: bool = False


@dataclass(frozen=True, kw_only=True)
class ReportFindings(ReportRecord):
    """What the report finds in one set of results (the run's own, or the references): warnings, Holm's family and
    the summary table."""

    warnings: list[ReportWarning] = field(default_factory=list)
    family: ReportFamily | None = None
    summary: list[ReportSummaryRow] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class ReportReferences(ReportRecord):
    """The committed reference results' verdict, Holm's family, warnings and summary table, apart from the run's
    own."""

    verdict: str
    family: ReportFamily | None = None
    warnings: list[ReportWarning] = field(default_factory=list)
    summary: list[ReportSummaryRow] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class BoundMeasure(ReportRecord):
    """What a bound row measured: the claim, the certified bound at its confidence, the cap, the budget, the test."""

    claimed: float | None = None
    lower_bound: float | None = None
    confidence: float | None = None
    cap: float | None = None
    samples: int | None = None
    delta: float | None = None
    k: int | None = None
    test: str = ""


@dataclass(frozen=True, kw_only=True)
class BoundContext(ReportRecord):
    """Where a bound row sits: its observer group, the accountant's ε, reference or own, coverage, the system, and
    the audit's reason and power for its verdict."""

    group: str = ""
    accountant: float | None = None
    reference: bool = False
    covered: bool | None = None
    system: str | None = None
    budget_limited: bool = False
    verdict_reason: str | None = None
    detectable_epsilon: float | None = None
    detectable_delta: float | None = None


@dataclass(frozen=True, kw_only=True)
class ReportBound(ReportRecord):
    """One audit row as the report lists it: source, subject and channel, what it measured and its context (both
    flat), the verdict, the notes beside it and what Holm's procedure kept of it."""

    source: str
    subject: str
    channel: str
    measure: BoundMeasure = field(metadata={"flat": True})
    verdict: str
    notes: list[str] = field(default_factory=list)
    p_value: float | None = None
    model: str = ""
    holm_significant: bool | None = None
    protect: list[str] = field(default_factory=list)
    context: BoundContext = field(metadata={"flat": True})


@dataclass(frozen=True, kw_only=True)
class AttackScore(ReportRecord):
    """An attack's accuracy with its interval, the chance level and the ε-LDP ceiling."""

    accuracy: float
    ci_low: float | None = None
    ci_high: float | None = None
    chance: float | None = None
    ceiling: float | None = None


@dataclass(frozen=True, kw_only=True)
class ReportAttack(ReportRecord):
    """One attack row as the report lists it: the attacker, its channels and setting, its score (flat), the
    verdict its result gave, and the report's reading (above the ceiling, side channel, attacker defect)."""

    source: str
    attacker: str
    channels: str
    epsilon: float | None = None
    k: int | None = None
    candidates: int | None = None
    score: AttackScore = field(metadata={"flat": True})
    setting: str = ""
    budget: int | None = None
    given_verdict: str = ""
    given_below_chance: bool | None = None
    reference: bool = False
    above_ceiling: bool = False
    uses_side_channel: bool = False
    attacker_defect: bool = False


@dataclass(frozen=True, kw_only=True)
class PaperNumbers(ReportRecord):
    """The paper's numbers for one setting (its Tables 1-3)."""

    fst_median: float | None = None
    success_ratio: float | None = None
    relative_auc: float | None = None


@dataclass(frozen=True, kw_only=True)
class ReportAdversarialAudit(ReportRecord):
    """One channel of one adversarial-aggregator audit as the report lists it: the pair, the claim and the bound at
    the crafted θ, the bound without noise, what θ was crafted for and its search."""

    psi: float
    psi_prime: float
    mechanism: str | None = None
    claimed_epsilon: float | None = None
    channel: str
    epsilon_lower_bound: float | None = None
    ratio: float | None = None
    verdict: str
    noise_free_epsilon_lower_bound: float | None = None
    objective: str
    evaluations: int | None = None
    wall_time_s: float | None = None
    theta_file: str


@dataclass(frozen=True, kw_only=True)
class ReportCurvePoint(ReportRecord):
    """One point of the adversarial curve the report draws: ε_LB / ε at neighbour distance Δψ."""

    delta_psi: float
    ratio: float
    epsilon: float | None = None
    epsilon_lower_bound: float
    model: str
    channel: str


@dataclass(frozen=True, kw_only=True)
class ReportAdversarial(ReportRecord):
    """The adversarial audits and curve points of one result."""

    source: str
    mode: str = "adversarial"
    audits: list[ReportAdversarialAudit] = field(default_factory=list)
    curve: list[ReportCurvePoint] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class ReportProtection(ReportRecord):
    """Which channels beside the gradient a protected run or audit covers (pgc.a3c.protect) and the total ε its
    claim covers (ε_gradient + ε_score per agent)."""

    source: str
    subject: str
    protect: list[str]
    total_epsilon: float | None = None
    gradient_epsilon: float | None = None
    score_epsilon: float | None = None


@dataclass(frozen=True, kw_only=True)
class ReportMitigationRow(ReportRecord):
    """One mechanism, ε and variant of the mitigations' utility study: the aggregator's and the true success and
    median FST (scripts/mitigations_utility.py)."""

    mechanism: str
    epsilon: float
    variant: str
    gradient_epsilon: float | None = None
    score_epsilon: float | None = None
    trials: int
    successes: int | None = None
    median_fst: float | None = None
    true_successes: int | None = None
    median_true_fst: float | None = None
    median_true_fst_ci: list[float] | None = None
    median_ticks_at_success: float | None = None


@dataclass(frozen=True, kw_only=True)
class ReportMitigationCosts(ReportRecord):
    """The utility cost of the channel mitigations, one result: its reading, episode cap, command and rows."""

    source: str
    reading: str | None = None
    cap: int | None = None
    command: str | None = None
    rows: list[ReportMitigationRow] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class ReportUtility(ReportRecord):
    """One utility row: a training setting's first-success time, success ratio and final μ, the paper's beside."""

    source: str
    setting: str
    mechanism: str
    epsilon: float
    trials: int
    horizon: int
    fst_median: float | None = None
    success_ratio: float | None = None
    relative_auc: float | None = None
    final_mu: float | None = None
    paper: PaperNumbers | None = None
    note: str = ""


@dataclass(frozen=True, kw_only=True)
class ReportTuning(ReportRecord):
    """One tuning study: its Pareto front (trial numbers), the constrained mode's best trial, the trial counts."""

    source: str
    pareto_front: list[int] = field(default_factory=list)
    best_constrained: BestTrial | None = None
    counts: TrialCounts


@dataclass(frozen=True, kw_only=True)
class SystemAuditSetting(ReportRecord):
    """What a system audit tested and the budget it spent: the claim (ε, δ, the channels it covers), the
    confidence, the samples per side and the seed."""

    claim_epsilon: float
    claim_delta: float
    covers: list[str] = field(default_factory=list)
    confidence: float
    samples_per_side: int
    seed: int


@dataclass(frozen=True, kw_only=True)
class MuCorner(ReportRecord):
    """A μ-GDP curve test's claimed μ and the μ it certifies."""

    claimed_mu: float | None = None
    mu_lower_bound: float


@dataclass(frozen=True, kw_only=True)
class ProfileCorner(ReportRecord):
    """A privacy-profile curve test: the claimed profile ((ε, δ) points), the δ tested and the ε certified there."""

    profile: list[list[float]]
    profile_delta: float
    profile_epsilon_lower_bound: float | None = None


@dataclass(frozen=True, kw_only=True)
class ReportCurveCorner(ReportRecord):
    """The certified corner (ᾱ, β̄) of one curve test of a system audit, with the claimed curve it is read against
    (one of the two flat parts: a μ-GDP curve or a privacy profile)."""

    label: str
    system: str
    fpr_upper: float
    fnr_upper: float
    verdict: str
    mu_curve: MuCorner | None = field(default=None, metadata={"flat": True})
    profile_curve: ProfileCorner | None = field(default=None, metadata={"flat": True})


@dataclass(frozen=True, kw_only=True)
class ReportSystemAudit(ReportRecord):
    """One system audit (pgc audit --system) as the report lists it: the system and the section it asks for, the
    secrets told apart, the claim and budget (flat), the verdict, the accountant's ε, the library run and the
    certified corners of its curve tests."""

    source: str
    system: str
    report_section: str | None = None
    pair: str | None = None
    secret: str
    secret_prime: str
    broadcast: str
    setting: SystemAuditSetting = field(metadata={"flat": True})
    verdict: str
    accountant: Accountant | None = None
    wall_time_s: float | None = None
    relation: str | None = None
    searched: bool = False
    library: LibraryRun | None = None
    curves: list[ReportCurveCorner] = field(default_factory=list)

    @classmethod
    def migrate(cls, data: JsonObject) -> JsonObject:
        """A library run without a version is written without the key (LibraryRun leaves an unset field out): read
        as null."""
        library = data.get("library")
        return {**data, "library": {"version": None, **library}} if isinstance(library, dict) else data


@dataclass(frozen=True, kw_only=True)
class BanditAttackScore(ReportRecord):
    """A bandit attacker's test accuracy with its interval at ``level`` over ``n_test`` guesses, beside chance and
    the (ε, δ)-DP ceiling of the claim."""

    accuracy: float
    interval: list[float]
    level: float | None = None
    n_test: int
    chance: float
    ceiling: float


@dataclass(frozen=True, kw_only=True)
class ReportBanditAttack(ReportRecord):
    """One federated-bandit attack row as the report lists it: the system, pair and channel attacked (and the
    channel the attacker tested on), whether the claim covers it, the score (flat), the claim, and whether the
    interval's lower end lies above the ceiling and above chance."""

    source: str
    reference: bool = False
    system: str
    pair: str
    channel: str
    test_channel: str
    covered: bool
    score: BanditAttackScore = field(metadata={"flat": True})
    claim_epsilon: float
    claim_delta: float
    above_ceiling: bool
    above_chance: bool


@dataclass(frozen=True, kw_only=True)
class ReportAudits(ReportRecord):
    """The audit rows the report lists: bounds, attacks, adversarial audits, system audits and bandit attacks."""

    bounds: list[ReportBound] = field(default_factory=list)
    attacks: list[ReportAttack] = field(default_factory=list)
    adversarial: list[ReportAdversarial] = field(default_factory=list)
    system_audits: list[ReportSystemAudit] = field(default_factory=list)
    bandit_attacks: list[ReportBanditAttack] = field(default_factory=list)
