"""The schemas of ``pgc replicate``: the replication of the paper's §4 (kind ``replicate``: Tables 1–3 beside the
paper's, each setting against its zero-information control, Figures 2–3), the raw grid it is analysed from (kind
``replicate-raw``) and the search over the paper's unstated choices (kind ``reading-search``).

The JSON layout is the writers' own: the run's cost and the command's provenance are flat parts of the result, a
setting's cell, median FST and success ratio are flat parts of its row. Open by design: a reading's A3C
hyperparameters (``ReplicateReading.hyper``, the trainer's configuration) and the command's arguments
(``cli_args``), both configuration read by no one but a person.

Pure Python: imports nothing from the project beyond :mod:`pgc.schemas.base`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .base import JsonObject, Record, Result

# --- the grid and the reading it runs ------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class NonPrivateRun(Record):
    """One way the reading runs ε = ∞: the L1 clip C and the learning rate η."""

    name: str
    clip: float
    learning_rate: float


@dataclass(frozen=True, kw_only=True)
class ReplicateReading(Record):
    """A named reading of the paper's ambiguities: what it fixes and where it departs from the text."""

    name: str
    summary: str | None = None
    hyper: JsonObject | None = None  # the A3C hyperparameters (configuration, as the trainer takes them)
    nonprivate_variants: list[NonPrivateRun] | None = None
    departures: list[str] | None = None
    learning_rate: float | None = None
    optimizer: str | None = None
    exploration_clock: str | None = None


@dataclass(frozen=True, kw_only=True)
class ReplicateSpec(Record):
    """What the grid ran: the reading, trials per setting, the cap, the private ε, the controls and the curves."""

    reading: str
    trials: int
    cap: int
    epsilons: list[float]
    mechanisms: list[str]
    controls: str
    curve_trials: int
    curve_submissions: int
    workers: int
    seed: int
    processes: int | None = None
    nonprivate_variants: list[str] | None = None

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        """Earlier grids recorded ``max_lanes``, a runtime setting of the lane pool with no effect on results."""
        return {k: v for k, v in data.items() if k != "max_lanes"}


@dataclass(frozen=True, kw_only=True)
class TrialSummary(Record):
    """One trial of the grid: its seed, first success time (∞ when never), μ at the end and at best, its cost."""

    seed: int
    fst: float
    final_mu: float | None = None
    best_mu: float | None = None
    submissions: int | None = None
    updates: int | None = None
    agent_steps: int
    nonfinite_gradients: int | None = None


@dataclass(frozen=True, kw_only=True)
class LearningCurves(Record):
    """Figure 2's trials of one setting: μ at the sampled submission counts, per trial and their mean."""

    submissions: list[int]
    mu: list[list[float]]
    mean_mu: list[float]
    length: int


@dataclass(frozen=True, kw_only=True)
class MachineInfo(Record):
    """The machine the grid ran on: cores, load, platform."""

    cpu_count: int | None = None
    affinity: int | None = None
    loadavg: list[float] | None = None
    platform: str | None = None
    python: str | None = None
    numba_threads: str | None = None
    loadavg_at_start: list[float] | None = None


@dataclass(frozen=True, kw_only=True)
class GridCost(Record):
    """The grid's wall time and work, when it started and ended and on what machine (a flat part)."""

    wall_time_s: float | None = None
    agent_steps: int | None = None
    submissions: int | None = None
    agent_steps_per_s: float | None = None
    trials_total: int | None = None
    machine: MachineInfo | None = None
    started_utc: str | None = None
    finished_utc: str | None = None
    loadavg_at_start: list[float] | None = None  # the raw grid's; the result keeps it in ``machine``


# --- one setting's row of Tables 1–3 ---------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SettingCell(Record):
    """Which cell of the grid a row is (a flat part): its key, mechanism at ε, buffer size, variant, control flag."""

    key: str | None = None
    mechanism: str
    epsilon: float | None = None
    buffer_size: int | None = None
    variant: str | None = None
    control: bool | None = None


@dataclass(frozen=True, kw_only=True)
class MedianFst(Record):
    """Table 1's cell (a flat part): the median first success time, its order-statistic interval and coverage."""

    median_fst: float | None = None
    median_fst_ci: list[float] | None = None
    median_ci_coverage: float | None = None


@dataclass(frozen=True, kw_only=True)
class SuccessRatio(Record):
    """Table 2's cell (a flat part): the success ratio at the cap and its Clopper–Pearson interval."""

    success_ratio: float | None = None
    success_ratio_ci: list[float] | None = None


@dataclass(frozen=True, kw_only=True)
class AucEstimate(Record):
    """Table 3's cell against one non-private reference: the relative AUC and its bootstrap interval."""

    value: float | None = None
    ci: list[float] | None = None


@dataclass(frozen=True, kw_only=True)
class PaperCell(Record):
    """The paper's numbers for a setting (Tables 1–3)."""

    median_fst: float | None = None
    success_ratio: float | None = None
    relative_auc: float | None = None


@dataclass(frozen=True, kw_only=True)
class CellVerdicts(Record):
    """Each table's verdict on a setting: the paper's number against our interval."""

    median_fst: str | None = None
    success_ratio: str | None = None
    relative_auc: str | None = None


@dataclass(frozen=True, kw_only=True)
class ControlVerdict(Record):
    """A setting against its zero-information control, as copied onto its row."""

    control: str | None = None
    p_mwu_holm: float | None = None
    p_fisher_holm: float | None = None
    verdict: str | None = None


@dataclass(frozen=True, kw_only=True)
class ReplicateSetting(Record):
    """One setting of Tables 1–3: ours with intervals, the paper's beside them, the verdicts, the control."""

    cell: SettingCell = field(metadata={"flat": True})
    trials: int | None = None
    successes: int | None = None
    fst: MedianFst = field(metadata={"flat": True})
    ratio: SuccessRatio | None = field(default=None, metadata={"flat": True})
    fsts: list[float] | None = None
    agent_steps: int | None = None
    best_mu_median: float | None = None
    relative_auc: dict[str, AucEstimate] | None = None  # per non-private reference (its variant's name)
    success_curve: list[float] | None = None
    paper: PaperCell | None = None
    verdict: CellVerdicts | None = None
    vs_control: ControlVerdict | None = None


# --- the control comparisons and the paper's tables -------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ComparedCounts(Record):
    """A setting's and its control's successes, median FST and median best μ (a flat part)."""

    successes: int
    control_successes: int
    median_fst: float
    control_median_fst: float
    best_mu_median: float | None = None
    control_best_mu_median: float | None = None


@dataclass(frozen=True, kw_only=True)
class ComparedTests(Record):
    """The one-sided tests of a setting against its control, raw and Holm-adjusted (a flat part)."""

    p_mwu: float
    p_fisher: float
    p_best_mu: float | None = None
    p_mwu_holm: float | None = None
    p_fisher_holm: float | None = None


@dataclass(frozen=True, kw_only=True)
class ControlComparison(Record):
    """A setting against a zero-information control: the counts, the tests and the verdict."""

    setting: str
    control: str
    matched: bool
    counts: ComparedCounts = field(metadata={"flat": True})
    tests: ComparedTests = field(metadata={"flat": True})
    verdict: str | None = None


@dataclass(frozen=True, kw_only=True)
class PaperValue(Record):
    mechanism: str
    epsilon: float
    value: float


@dataclass(frozen=True, kw_only=True)
class PaperTables(Record):
    """The paper's Tables 1–3, one value per (mechanism, ε)."""

    fst_median: list[PaperValue]
    success_ratio: list[PaperValue]
    relative_auc: list[PaperValue]


# --- the result, its provenance, the raw grid --------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Confirmation(Record):
    """A confirmation run checked against its search record: the seeds of both, what the search tried."""

    role: str
    search_record: str
    search_seeds: list[int]
    confirmation_seeds: list[int]
    readings_tried_by_search: int
    search_proposals: int
    search_rank: dict[str, int]
    reading: str | None = None


@dataclass(frozen=True, kw_only=True)
class ReplicateOrigin(Record):
    """How the result came about (a flat part): the command's arguments, its role, a re-analysed raw grid."""

    reanalysed_from: str | None = None
    cli_args: JsonObject | None = None  # the command's arguments (configuration, as argparse read them)
    role: str | None = None  # "exploratory" or "confirmation"
    confirmation: Confirmation | None = None


@dataclass(frozen=True, kw_only=True)
class ReplicatePlot(Record):
    file: str
    caption: str | None = None


@dataclass(frozen=True, kw_only=True)
class ReplicateResult(Result):
    KIND = "replicate"
    format: str | None = None
    notes: list[str] | None = None
    reading: ReplicateReading | None = None
    spec: ReplicateSpec | None = None
    primary_reference: str | None = None
    level: float | None = None
    cost: GridCost | None = field(default=None, metadata={"flat": True})
    settings: list[ReplicateSetting] = field(default_factory=list)
    control_comparisons: list[ControlComparison] | None = None
    success_curve_x: list[int] | None = None
    figure2: dict[str, LearningCurves] | None = None  # per curve setting's key
    trials: dict[str, list[TrialSummary]] | None = None  # per setting's key
    paper: PaperTables | None = None
    origin: ReplicateOrigin | None = field(default=None, metadata={"flat": True})
    plots: list[ReplicatePlot] | None = None


@dataclass(frozen=True, kw_only=True)
class ReplicateRaw(Result):
    """The grid's raw outcome, re-analysable: per setting the trial summaries, Figure 2's curves, the cost."""

    KIND = "replicate-raw"
    format: str
    spec: ReplicateSpec
    trials: dict[str, list[TrialSummary]]
    curves: dict[str, LearningCurves] | None = None
    cost: GridCost | None = field(default=None, metadata={"flat": True})


# --- reading-search: pgc replicate --search ----------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SearchSpecRecord(Record):
    """What the search ran: readings proposed, trials per cell on the search seeds, the control gate's level."""

    readings: int
    trials: int
    cap: int
    seed: int
    gate_alpha: float
    processes: int | None = None
    workers: int
    search_seeds: list[int]


@dataclass(frozen=True, kw_only=True)
class ReadingFit(Record):
    """A reading's fit to the paper's Tables 1–3 (each part ≤ 0) and their sum."""

    success: float
    fst: float
    auc: float
    order: float
    total: float


@dataclass(frozen=True, kw_only=True)
class GateCell(Record):
    """A private cell at the smallest ε against its control, as the gate judged it."""

    setting: str
    successes: int
    control_successes: int
    p_mwu: float
    p_fisher: float
    beats_control: bool


@dataclass(frozen=True, kw_only=True)
class ControlGate(Record):
    passed: bool
    alpha: float
    cells: list[GateCell]


@dataclass(frozen=True, kw_only=True)
class SearchCell(Record):
    """One cell of a reading's search grid beside the paper's numbers."""

    key: str
    successes: int
    trials: int
    median_fst: float
    paper_success_ratio: float | None = None
    paper_median_fst: float | None = None


@dataclass(frozen=True, kw_only=True)
class SearchEntry(Record):
    """One reading the search tried: its fit, the control gate, the objective the sampler saw, its cells."""

    reading: str
    fit: ReadingFit
    control_gate: ControlGate
    rejected: bool
    objective: float
    cells: list[SearchCell]
    wall_time_s: float
    agent_steps: int
    first_trial: int | None = None


@dataclass(frozen=True, kw_only=True)
class ReadingSearch(Result):
    KIND = "reading-search"
    format: str
    spec: SearchSpecRecord | None = None
    knobs: dict[str, list[str]] | None = None
    literal: str | None = None
    proposals: int | None = None
    readings_tried: int | None = None
    rejected: int | None = None
    best: list[str]
    wall_time_s: float | None = None
    readings: list[SearchEntry]
    cli_args: JsonObject | None = None  # the command's arguments (configuration, as argparse read them)
    this_call_wall_time_s: float | None = None


REPLICATE_KINDS: tuple[type[Result], ...] = (ReplicateResult, ReplicateRaw, ReadingSearch)
