"""Benchmarks that set the auditor beside a peer or an oracle (the DP-testing catalogue, DP-Sniper's own code, planted
leaks of every shape), the one-run audit's cost and the planner's sequential estimates, and the rows of
``pgc bench audit``: one kind per bench, each a typed result with the keys the bench has always written (``bench``
names it). Files of the older kind ``bench`` load as the kind their ``bench`` names
(:func:`pgc.schemas.bench_kinds.legacy_bench_kind`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .audit_rows import RowClaim, Verdict
from .base import Record, Result

_NULL = {"keep_none": True}  # a None the bench writes as null: no bound, no flag, not reached

# --- bench-catalogue: pgc bench catalogue -------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class CatalogueSettings(Record):
    """pgc bench catalogue's settings: releases per side per tool, confidence, seeds, our training split's rule."""

    total: int
    confidence: float
    seeds: list[int]
    train_split: str


@dataclass(frozen=True, kw_only=True)
class PairChoiceSplit(Record):
    """Our releases per side within the total: the certification size, the search (per pair and in all, at least
    ``search_samples`` per pair), the training split with its fraction and rule."""

    samples: int
    search_samples: int
    search_per_pair: int
    search: int
    train: int
    train_fraction: float
    rule: str


@dataclass(frozen=True, kw_only=True)
class CellAudit(Record):
    """One of our audits in a catalogue cell: its bound, verdict, statistic and p-value (null bound and p-value: not
    audited, ``status`` says why), the releases it certified on and its wall time."""

    status: str
    epsilon_lower_bound: float | None = field(default=None, metadata=_NULL)
    verdict: Verdict | None = None
    statistic: str | None = None
    p_value: float | None = field(default=None, metadata=_NULL)
    samples_per_side: int | None = None
    wall_s: float


@dataclass(frozen=True, kw_only=True)
class OursPairChoice(CellAudit):
    """Our audit choosing among the pairs on its search stream, then certifying the chosen one: its split, the pair
    chosen with the search's scores."""

    pairs: int
    split: PairChoiceSplit
    releases_per_side: int
    pair: str | None = None
    pair_scores: str | None = None


@dataclass(frozen=True, kw_only=True)
class FirstPairAudit(CellAudit):
    """Our audit of DP-Sniper's first pair alone on the whole total."""

    train_per_side: int | None = None


@dataclass(frozen=True, kw_only=True)
class DpsniperStages(Record):
    """DP-Sniper's stage sizes per side, scaled to the total: training, search, check and final outputs."""

    n_train: int
    n: int
    n_check: int
    n_final: int


@dataclass(frozen=True, kw_only=True)
class DpsniperSearch(Record):
    """DP-Sniper's DD-Search over the pairs: its bound, its ε estimate, the pair, the releases per side it drew,
    its stages and its wall time."""

    epsilon_lower_bound: float
    epsilon: float
    pair: str
    releases_per_side: float
    stages: DpsniperStages
    wall_s: float


@dataclass(frozen=True, kw_only=True)
class CatalogueCell(Record):
    """One (algorithm, seed): the algorithm's claim and pairs, ours choosing the pair, ours on the first pair,
    DP-Sniper."""

    algorithm: str
    seed: int
    broken: bool
    claimed_epsilon: float
    pairs: int
    first_pair: str
    ours: OursPairChoice
    ours_first_pair: FirstPairAudit
    dpsniper: DpsniperSearch


@dataclass(frozen=True, kw_only=True)
class CatalogueAlgorithm(Record):
    """One algorithm over its seeds: each tool's median bound and whether it flags (null: no bound), our Holm
    rejections per seed, our statistics, statuses and chosen pairs, and each tool's wall time in all."""

    algorithm: str
    broken: bool
    claimed_epsilon: float
    seeds: list[int]
    ours_median: float | None = field(default=None, metadata=_NULL)
    ours_first_pair_median: float | None = field(default=None, metadata=_NULL)
    dpsniper_median: float | None = field(default=None, metadata=_NULL)
    ours_flags: bool | None = field(default=None, metadata=_NULL)
    dpsniper_flags: bool | None = field(default=None, metadata=_NULL)
    ours_holm_rejected: list[bool | None]
    ours_statistics: list[str]
    ours_status: list[str]
    ours_pairs: list[str | None]
    ours_wall_s: float
    dpsniper_wall_s: float


@dataclass(frozen=True, kw_only=True)
class ToolCounts(Record):
    """A count for each tool: ours and DP-Sniper's."""

    ours: int
    dpsniper: int


@dataclass(frozen=True, kw_only=True)
class HolmCounts(Record):
    """One seed's algorithms our audit flags after Holm's step-down over the catalogue: broken and correct ones."""

    broken_flagged: int
    false_alarms: int


@dataclass(frozen=True, kw_only=True)
class CatalogueSummary(Record):
    """The catalogue per algorithm, the broken and correct algorithms each tool flags by the median, our flags
    after Holm per seed (seed -> counts at ``alpha``), and the algorithms our audit could not audit."""

    algorithms: list[CatalogueAlgorithm]
    broken: int
    correct: int
    alpha: float
    broken_flagged: ToolCounts
    false_alarms: ToolCounts
    ours_holm_per_seed: dict[str, HolmCounts]
    ours_not_audited: list[str]


@dataclass(frozen=True, kw_only=True)
class CatalogueBench(Result):
    """pgc bench catalogue: DP-Sniper's catalogue audited by ours beside DP-Sniper, at the same releases per side
    (``complete``: every cell finished; the summary is written once a cell is)."""

    KIND = "bench-catalogue"
    bench: str = "catalogue"
    settings: CatalogueSettings
    command: str
    cells: list[CatalogueCell]
    complete: bool
    summary: CatalogueSummary | None = None


# --- bench-dpsniper-check: results/catalogue/dpsniper-check/check.py ----------------------------------


@dataclass(frozen=True, kw_only=True)
class DpsniperCheckSettings(Record):
    """The check's stage sizes, confidence, seed, output chunk, and the torch and numpy versions it ran on."""

    n_train: int
    n: int
    n_check: int
    n_final: int
    confidence: float
    seed: int
    chunk: int
    torch: str
    numpy: str


@dataclass(frozen=True, kw_only=True)
class DdSearchWitness(Record):
    """DD-Search's witness: the pair, ε and its lower bound on the final outputs, the attack's probabilities (ours
    only), threshold and tie probability, and per pair the check-stage ε."""

    pair: str
    epsilon: float
    epsilon_lower_bound: float
    p1: float | None = None
    p2: float | None = None
    threshold: float
    tie_probability: float
    per_pair: dict[str, float]


@dataclass(frozen=True, kw_only=True)
class DpsniperCheckRow(Record):
    """One catalogue algorithm: DP-Sniper's code and ours on the same outputs, their seconds, and whether our bound
    lies within 10 % of theirs (null: theirs is not above 0)."""

    algorithm: str
    broken: bool
    claimed_epsilon: float
    dpsniper: DdSearchWitness
    ours: DdSearchWitness
    dpsniper_s: float
    ours_s: float
    within_10_percent: bool | None = field(default=None, metadata=_NULL)


@dataclass(frozen=True, kw_only=True)
class DpsniperCheck(Result):
    """DP-Sniper's own code beside audit.peers.dp_sniper on the same outputs, per catalogue algorithm."""

    KIND = "bench-dpsniper-check"
    bench: str = "dpsniper-check"
    settings: DpsniperCheckSettings
    rows: list[DpsniperCheckRow]


# --- bench-shapes: pgc bench shapes -----------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ShapesSettings(Record):
    """pgc bench shapes' settings: releases per side in all, audits per case, confidence, seed."""

    samples: int
    repeats: int
    confidence: float
    seed: int


@dataclass(frozen=True, kw_only=True)
class ShapeSplit(Record):
    """The releases per side an audit drew: in all, for its training split, for certification."""

    samples_per_side: int
    train_per_side: int
    certification_per_side: int


@dataclass(frozen=True, kw_only=True)
class ShapeOracle(Record):
    """The shape's oracle statistic on the audit's releases: its bound, orientation and threshold chosen on the
    training releases, its errors on the certification releases, and the ε it projected."""

    epsilon_lower_bound: float
    statistic: str
    orientation: float
    threshold: float
    false_positives: int
    false_negatives: int
    projected_epsilon: float


@dataclass(frozen=True, kw_only=True)
class ShapeCell(Record):
    """One audit of a planted leak: the case, its split and claim (written flat), our bound beside the oracle's,
    their ratio and whether it meets the goal."""

    repeat: int
    case: str
    shape: str
    leak: str
    split: ShapeSplit = field(metadata={"flat": True})
    claim: RowClaim = field(metadata={"flat": True})
    epsilon_lower_bound: float
    statistic: str
    verdict: Verdict
    max_certifiable_epsilon: float | None = None
    oracle: ShapeOracle
    ratio: float
    meets_goal: bool
    wall_s: float


@dataclass(frozen=True, kw_only=True)
class ShapeCaseSummary(Record):
    """One case over its repeats: the medians of ours, the oracle's and their ratio, the ratio's range, whether the
    median meets the goal, the runs that do, our verdicts and statistics."""

    repeats: int
    median_epsilon_lower_bound: float
    median_oracle_epsilon_lower_bound: float
    median_ratio: float
    min_ratio: float
    max_ratio: float
    meets_goal: bool
    runs_meeting_goal: int
    verdicts: list[Verdict]
    statistics: list[str]


@dataclass(frozen=True, kw_only=True)
class ShapesSummary(Record):
    """The goal (ours over the oracle's bound), each case's summary (by name), the cases that meet it and not."""

    goal: float
    cases: dict[str, ShapeCaseSummary]
    meets_goal: list[str]
    below_goal: list[str]


@dataclass(frozen=True, kw_only=True)
class ShapesBench(Result):
    """pgc bench shapes: a planted leak of every shape audited beside the shape's oracle statistic."""

    KIND = "bench-shapes"
    bench: str = "shapes"
    settings: ShapesSettings
    command: str
    cells: list[ShapeCell]
    summary: ShapesSummary


# --- bench-one-run: pgc bench one-run ---------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class OneRunCost(Record):
    """One training run carrying M canaries, audited: its bound, the canaries, the seconds of training and audit,
    the run's agent-steps, the canaries' and the auditor's simulated ones, the mean canary episode."""

    epsilon_lower_bound: float
    canaries: int
    train_seconds: float
    audit_seconds: float
    run_agent_steps: int
    canary_agent_steps: int
    auditor_simulated_agent_steps: int
    mean_canary_episode: float


@dataclass(frozen=True, kw_only=True)
class MultiSampleCost(Record):
    """The multi-sample audit at one size per side: its bound, seconds, releases and agent-steps."""

    samples_per_side: int
    epsilon_lower_bound: float
    seconds: float
    releases: int
    agent_steps: int


@dataclass(frozen=True, kw_only=True)
class OneRunBench(Result):
    """pgc bench one-run: one training run with canaries against the multi-sample audit per size, and the first
    size that reaches the one run's bound (null: none)."""

    KIND = "bench-one-run"
    bench: str = "one-run"
    one_run: OneRunCost
    multi_sample: list[MultiSampleCost]
    reached_at: MultiSampleCost | None = field(default=None, metadata=_NULL)
    command: str


# --- bench-sequential-estimates: scripts/sequential_estimates.py ------------------------------------


@dataclass(frozen=True, kw_only=True)
class SequentialEstimate(Record):
    """One registered system (its settings: keyword -> value) audited until decisive within a budget per side: the
    stages run and the decision, the estimate of every stage and of those run, the wall time, the probe's time,
    and the wall time over the estimate."""

    system: str
    settings: dict[str, bool | float | str]
    budget: int
    stages_run: list[int]
    decision: str
    estimate_all_stages_s: float
    estimate_stages_run_s: float
    wall_s: float
    probe_s: float
    wall_over_estimate: float


@dataclass(frozen=True, kw_only=True)
class SequentialEstimates(Result):
    """The sequential audit's time estimates against its wall times, and whether each is within the goal."""

    KIND = "bench-sequential-estimates"
    bench: str = "sequential-estimates"
    command: str
    rows: list[SequentialEstimate]
    goal: str
    met: bool


# --- the rows of pgc bench audit (kind audit-benchmark) --------------------------------------------


@dataclass(frozen=True, kw_only=True)
class AuditTightness(Record):
    """One ε of a tightness part: the bound and its ratio to ε, the target and whether it is met, seconds; PRS's
    reduced dimension, the naive canary's bound and ratio beside it (black box), the CPU seconds (Laplace), and the
    test that certified."""

    epsilon: float
    reduced_dim: int | None = None
    epsilon_lower_bound: float
    ratio: float
    naive_epsilon_lower_bound: float | None = None
    naive_ratio: float | None = None
    target: float | None = None
    met: bool
    seconds: float
    cpu_seconds: float | None = None
    test: str | None = None


@dataclass(frozen=True, kw_only=True)
class FloatExactAudit(Record):
    """The float-exact audit of the float64 Laplace at one ε: its bound, whether it violates the claim, the test,
    and its errors."""

    epsilon: float
    epsilon_lower_bound: float
    violation: bool
    test: str
    false_positives: int
    false_negatives: int


@dataclass(frozen=True, kw_only=True)
class FalseAlarmRate(Record):
    """A correct mechanism audited over seeds: the audits above its claim, their rate, the largest bound, seconds."""

    mechanism: str
    seeds: int
    violations: int
    rate: float
    max_epsilon_lower_bound: float
    seconds: float


STUDY_BENCHES: tuple[type[Result], ...] = (CatalogueBench, DpsniperCheck, ShapesBench, OneRunBench, SequentialEstimates)
