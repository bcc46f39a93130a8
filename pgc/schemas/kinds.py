"""One schema per result kind: the fields a reader may rely on, typed. Keys not named here stay in
``extra`` (see :mod:`pgc.schemas.base`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pgc.contracts import PrivacyClaim

from .attack_kinds import (  # noqa: F401
    ActiveAttack,
    AttackAccuracy,
    AttackComparison,
    AttackHyper,
    AttackMechanism,
    AttackRegression,
    AttackResult,
    AttackRow,
    AttackSkipped,
    AttackSpread,
    AttackSweep,
    AttackTarget,
    AttackThreat,
    CraftedSearch,
    LaplaceLayout,
    OneAttack,
    SweepSetting,
)
from .audit_kinds import AUDIT_KINDS
from .audit_rows import AuditRow, ObserverOneRunRow, Verdict
from .bandit_kinds import BanditAttack, BanditBench, BanditRegret, LayoutGap
from .base import JsonObject, Record, Result
from .bench_kinds import BENCH_KINDS, AuditBenchmark, Bench, BenchNumbers, LdpBench, Pipeline
from .check_kinds import Reliability, ShapeGoals, TuneWorkers
from .opacus_kinds import OpacusOneRunResult
from .power_kinds import PowerStudy
from .provenance import Invocation
from .replicate_kinds import ReadingSearch, ReplicateRaw, ReplicateResult
from .report_kind import Report
from .system_parts import Accountant, ClaimReading, LibraryRun  # noqa: F401
from .thesis_kinds import ThesisMapRecovery, ThesisMembership
from .train_kinds import MechanismRecord, TrainRun, TrainTrial, TrialProtection  # noqa: F401
from .tune_kinds import (  # noqa: F401
    BestTrial,
    Objective,
    RungMetrics,
    TrialCounts,
    TrialOutcome,
    TrialSeeds,
    TuneConstraint,
    TuneEvaluation,
    TuneResult,
    TuneSetup,
    TuneSpace,
    TuneTrial,
)

# --- flower-one-run: pgc audit --flower-one-run MODE ------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class FlowerOneRunSetup(Record):
    """The simulated federated run: M canary clients beside the real ones, the rounds, and the privacy of the mode."""

    canaries: int
    real_clients: int
    rounds: int
    mode: str  # local-dp (LocalDpMod on every client) or central-dp (the server's clipping and noise)
    epsilon: float  # LocalDpMod's claim per update
    delta: float
    clipping_norm: float
    noise_multiplier: float  # central-dp: the server's z
    seed: int
    confidence: float
    records_per_client: int


@dataclass(frozen=True, kw_only=True)
class FlowerOneRunResult(Result):
    """Canary clients inside one Flower simulation: per observer (the server, a third party seeing the
    aggregate) what it is promised and the one-run bounds certified from what it saw."""

    KIND = "flower-one-run"
    FORMAT_VERSION = 3  # 2: rows' coverage as the booleans covered / partly_covered
    OLDER_VERSIONS = (2,)
    setup: FlowerOneRunSetup
    rows: list[ObserverOneRunRow]  # one judged row per observer (scope: the observer; note: what it was promised)
    simulation_s: float
    dimension: int
    invocation: Invocation | None = field(default=None, metadata={"flat": True})


# --- system-audit: pgc audit --system MODULE:FACTORY -----------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SequentialStage(Record):
    samples_per_side: int
    alpha: float
    verdict: Verdict
    decision: str


@dataclass(frozen=True, kw_only=True)
class SequentialDecision(Record):
    """``--samples auto``: the budget per side, the α the stages share, and each stage's verdict."""

    budget: int
    alpha: float
    decision: str
    decisive: bool
    stages: list[SequentialStage]


@dataclass(frozen=True, kw_only=True)
class RecertifiedRow(Record):
    """One channel's recorded test counted again on fresh releases (``pgc audit recertify``)."""

    channel: str
    statistic: str | None
    threshold: float | None
    recorded_epsilon_lower_bound: float
    fresh_epsilon_lower_bound: float
    recorded_verdict: str
    fresh_verdict: str


@dataclass(frozen=True, kw_only=True)
class Recertification(Record):
    result: str  # the recorded result file
    certification_seed: int
    rows: list[RecertifiedRow]


@dataclass(frozen=True, kw_only=True)
class AuditedSystem(Record):
    """What a System audit audited: the System, the two secrets told apart, and how they were chosen."""

    system: str
    secret: str
    secret_prime: str
    broadcast: Literal["honest", "crafted", "searched", "given"]
    pair: str | None = None  # the named pair (or "searched ..." / "chosen among N")
    relation: str | None = None  # what makes the two secrets neighbours
    report_section: str | None = None  # the report section the system asks for (None: the system audits)


@dataclass(frozen=True, kw_only=True)
class SearchedPair(Record):
    """The worst pair the auditor's search found in the System's secret space, and its search score."""

    secret: Any  # a secret as the System takes it (JSON-ready)
    secret_prime: Any
    # the search's score of the pair on its search stream: the projected ε (plus the tie-breaking separation) of a
    # secret-space search, the held-out log-likelihood gain (nats per release) of a named-pair race
    search_objective: float
    evaluations: int
    relation: str


@dataclass(frozen=True, kw_only=True)
class TrainingSplitUsed(Record):
    """The training split a System audit drew per side to choose its tests, and the fraction of its samples per side
    that set it (the one given, else the automatic rule's for the claim); a named pair's race releases and a
    sequential audit's earlier stages join the selection beside it. A flat part: its keys sit at the top of the
    result."""

    train_per_side: int
    train_fraction: float | None = None


@dataclass(frozen=True, kw_only=True)
class SystemAuditResult(Result):
    KIND = "system-audit"
    FORMAT_VERSION = 3  # 2: rows' coverage as the booleans covered / partly_covered
    OLDER_VERSIONS = (2,)
    audited: AuditedSystem = field(metadata={"flat": True})
    claim: PrivacyClaim
    confidence: float
    samples_per_side: int
    seed: int
    rows: list[AuditRow]
    verdict: Verdict
    training: TrainingSplitUsed | None = field(default=None, metadata={"flat": True})
    accountant: Accountant | None = None
    searched_pair: SearchedPair | None = None  # --pair search: the worst pair found
    sequential: SequentialDecision | None = None  # --samples auto: the stages and the decision
    # seconds per part: draw_training, select, draw_certification, certify, judge
    timings: dict[str, float] | None = None
    recertification: Recertification | None = None  # pgc audit recertify: the recorded tests on fresh releases
    library: LibraryRun | None = None  # a third-party library's protocol or filter
    invocation: Invocation | None = field(default=None, metadata={"flat": True})

    def row(self, channel: str) -> AuditRow:
        """The row of ``channel`` (KeyError when the audit has none)."""
        for r in self.rows:
            if r.channel == channel:
                return r
        raise KeyError(channel)


# --- mitigations-utility: scripts/mitigations_utility.py -------------------------------------------


def _flat_part() -> Any:
    return field(default=None, metadata={"flat": True})


@dataclass(frozen=True, kw_only=True)
class AggregatorSuccess(Record):
    """Success as the aggregator's own stop saw it (privatized scores): the trials that succeeded with their 95 %
    interval, the median first-success time and each trial's (inf: never). None where the variant does not stop at
    success."""

    successes: int | None = None
    success_ci: list[float] | None = None
    median_fst: float | None = None
    fsts: list[float] | None = None


@dataclass(frozen=True, kw_only=True)
class TrueSuccess(Record):
    """Success by the true scores: the trials that succeeded with their 95 % interval, the median first-success
    time with its 95 % interval, and each trial's (inf: never)."""

    true_successes: int | None = None
    true_success_ci: list[float] | None = None
    median_true_fst: float | None = None
    median_true_fst_ci: list[float] | None = None
    true_fsts: list[float] | None = None


@dataclass(frozen=True, kw_only=True)
class MitigationRow(Record):
    """One cell of the utility study: a mechanism, ε and mitigation variant over its trials."""

    mechanism: str
    epsilon: float
    variant: str
    trials: int
    protect: list[str] | None = None  # the variant's mitigations
    stop_at_success: bool | None = None  # the aggregator stops at its first success
    gradient_epsilon: float | None = None
    score_epsilon: float | None = None
    aggregator: AggregatorSuccess | None = _flat_part()
    true: TrueSuccess | None = _flat_part()
    median_ticks_at_success: float | None = None
    median_submissions: float | None = None
    median_updates: float | None = None


@dataclass(frozen=True, kw_only=True)
class MitigationsUtility(Result):
    KIND = "mitigations-utility"
    rows: list[MitigationRow]
    reading: str | None = None
    spec: JsonObject | None = None
    command: str | None = None
    mechanisms: list[str] | None = None
    buffer_size: dict[str, int] | None = None  # per mechanism: the paper's buffer |B|
    wall_time_s: float | None = None
    agent_steps: int | None = None


_RESULT_TYPES: tuple[type[Result], ...] = (
    TrainRun,
    *AUDIT_KINDS,
    PowerStudy,
    FlowerOneRunResult,
    OpacusOneRunResult,
    SystemAuditResult,
    AttackResult,
    ReplicateResult,
    ReplicateRaw,
    ReadingSearch,
    TuneResult,
    MitigationsUtility,
    BanditRegret,
    BanditAttack,
    BanditBench,
    LayoutGap,
    Bench,
    *BENCH_KINDS,
    AuditBenchmark,
    BenchNumbers,
    Reliability,
    TuneWorkers,
    ShapeGoals,
    Pipeline,
    Report,
    ThesisMembership,
    ThesisMapRecovery,
    LdpBench,
)
SCHEMAS: dict[str, type[Result]] = {cls.KIND: cls for cls in _RESULT_TYPES}
