"""Benchmarks, manifests and reports: the result kinds that record how pgc itself ran."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal, TypeVar, cast

from .audit_rows import Verdict
from .base import JsonObject, Record, Result
from .bench_library_results import LIBRARY_BENCHES
from .bench_results import AUDIT_BENCHES
from .bench_study_results import STUDY_BENCHES, AuditTightness, FalseAlarmRate, FloatExactAudit

_B = TypeVar("_B", bound="Bench")

# --- benchmarks, manifests and reports -------------------------------------------------------------


BENCH_KINDS: tuple[type[Result], ...] = (*AUDIT_BENCHES, *LIBRARY_BENCHES, *STUDY_BENCHES)
_OLDER_BENCH: dict[str, type[Result]] = {}  # a bench's name -> its kind, written back as the older kind "bench"


def legacy_bench_kind(data: dict[str, Any]) -> type[Result] | None:
    """The typed result a file of the older kind ``bench`` is read as: the kind its ``bench`` names (its class, with
    the kind "bench" it was written as, so it reads and writes back unchanged); None for a bench no kind names."""
    name = data.get("bench")
    if not _OLDER_BENCH:
        for cls in BENCH_KINDS:
            bench = next(f.default for f in fields(cls) if f.name == "bench")
            _OLDER_BENCH[str(bench)] = type(cls.__name__, (cls,), {"KIND": "bench", "__doc__": cls.__doc__})
    return _OLDER_BENCH.get(name) if isinstance(name, str) else None


@dataclass(frozen=True, kw_only=True)
class Bench(Result):
    """The older kind ``bench`` of every benchmark that wrote its own JSON: a file loads as the typed result of the
    kind its ``bench`` names (:func:`legacy_bench_kind`); a bench no kind names keeps its keys in ``extra``."""

    KIND = "bench"
    bench: str

    @classmethod
    def from_dict(cls: type[_B], data: dict[str, Any], where: str = "") -> _B:
        typed = legacy_bench_kind(data) if cls is Bench and isinstance(data, dict) else None
        if typed is not None:
            return cast(_B, typed.from_dict(data, where))
        return super().from_dict(data, where)


@dataclass(frozen=True, kw_only=True)
class AuditBenchmark(Result):
    """pgc bench audit: the auditor's tightness per ε (Laplace, PRS black box beside the naive canary, PRS white box),
    the float-exact audits and the false-alarm rates, each part present where it ran."""

    KIND = "audit-benchmark"
    confidence: float
    samples: int
    seed: int
    laplace: list[AuditTightness] | None = None
    prs_black_box: list[AuditTightness] | None = None
    prs_white_box: list[AuditTightness] | None = None
    float_exact: list[FloatExactAudit] | None = None
    false_alarms: list[FalseAlarmRate] | None = None


@dataclass(frozen=True, kw_only=True)
class LdpCellOracle(Record):
    """The frequency oracle of one cell of pgc bench ldp: library, protocol, its version (None for the reference),
    the domain size k, the claimed ε, and the oracle's own parameters (its configuration, which differs by
    protocol)."""

    library: str
    protocol: str
    version: str | None = None
    k: int
    epsilon: float
    parameters: JsonObject | None = None  # configuration: the oracle's parameters, by protocol


@dataclass(frozen=True, kw_only=True)
class LdpBenchCell(Record):
    """One (library, protocol, k, ε) of pgc bench ldp: our certified bound, LDP-Auditor's on the same releases, the
    exact ε of the release for the audited pair. A benchmark's summary of one audit, not an audit row: its
    ``verdict`` and ``p_value`` are those of the audit's one row (:func:`audit.verdicts.decide`), copied. The oracle
    (``library``, ``protocol``, ``version``, ``k``, ``epsilon``, ``parameters``) is written flat beside it."""

    oracle: LdpCellOracle = field(metadata={"flat": True})
    samples_per_side: int
    epsilon_lower_bound: float
    reference_epsilon_lower_bound: float
    exact_epsilon: float
    claimed_epsilon: float
    max_certifiable_epsilon: float | None = None
    statistic: str | None = None
    verdict: Verdict
    p_value: float | None = None
    guess_counts: list[int] | None = None  # LDP-Auditor's counts: hits and reports of v, then of v'
    wall_s: float

    @property
    def key(self) -> tuple[str, str, int, float, int]:
        """The cell's identity in a bench: (library, protocol, k, ε, samples per side)."""
        o = self.oracle
        return (o.library, o.protocol, o.k, o.epsilon, self.samples_per_side)

    @property
    def label(self) -> str:
        """The cell as a bench summary names it: ``library:PROTOCOL k=K ε=E``."""
        return f"{self.oracle.library}:{self.oracle.protocol} k={self.oracle.k} ε={self.oracle.epsilon:g}"


@dataclass(frozen=True, kw_only=True)
class LdpBenchSettings(Record):
    """pgc bench ldp's settings: certification releases per side, confidence, seed, and the timing audits' n."""

    samples: int
    confidence: float
    seed: int
    timing_samples: int | None = None


@dataclass(frozen=True, kw_only=True)
class LdpBoundGoals(Record):
    """How our bounds compare: with LDP-Auditor's on the same releases, and with 0.9·ε where the exact ε allows
    it (the cells below each goal by label)."""

    cells: int
    ours_at_least_reference: int
    ours_below_reference: list[str]
    tightness_applies: int
    tight: int
    not_tight: list[str]
    tightness_not_applicable: list[str]


@dataclass(frozen=True, kw_only=True)
class LdpFlagGoals(Record):
    """Which cells the audit flags: the correct protocols' false alarms and the broken protocols found, per cell and
    after Holm's correction over every cell at ``alpha``."""

    correct_cells: int
    correct_flagged: list[str]
    correct_flagged_after_holm_over_all_cells: list[str]
    broken_flagged_after_holm_over_all_cells: int
    alpha: float
    broken_cells: int
    broken_flagged: int
    broken_not_flagged: list[str]


@dataclass(frozen=True, kw_only=True)
class LdpBenchSummary(Record):
    """How many cells of pgc bench ldp meet each goal, and which do not; the bounds' and the flags' goals are written
    flat beside the timing goal (the longest timing audit, the ones over 60 s)."""

    bounds: LdpBoundGoals = field(metadata={"flat": True})
    flags: LdpFlagGoals = field(metadata={"flat": True})
    timing_max_s: float | None = None
    timing_over_60s: list[str] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class LdpBench(Result):
    """pgc bench ldp: the frequency oracles of the reference and the libraries, per protocol × ε × k."""

    KIND = "ldp-bench"
    bench: str = "ldp"
    settings: LdpBenchSettings
    command: str | None = None
    cells: list[LdpBenchCell]
    timing: list[LdpBenchCell] = field(default_factory=list)
    complete: bool
    merged: list[str] | None = None  # the earlier results whose finished cells this run kept (--merge)
    summary: LdpBenchSummary | None = None


@dataclass(frozen=True, kw_only=True)
class BenchHost(Record):
    """The machine a benchmark ran on: its cores, the 1-minute load average when it finished, and (where the
    benchmark records them) the processor architecture and the Python version."""

    cpu_count: int | None = field(default=None, metadata={"keep_none": True})  # null: the OS did not say
    loadavg_1min: float
    machine: str | None = None
    python: str | None = None


@dataclass(frozen=True, kw_only=True)
class TrainLoopSpeed(Record):
    """The compiled trainer's run of pgc bench train: agent-steps, wall time, agent-steps/s (in all and per
    process) and the mean episode length in steps."""

    vectorised_agent_steps: int
    vectorised_wall_s: float
    vectorised_steps_per_s: float
    vectorised_steps_per_s_per_process: float
    vectorised_mean_episode: float


@dataclass(frozen=True, kw_only=True)
class TrainReferenceSpeeds(Record):
    """pgc bench train's one-agent references, timed in the same run: the naive textbook A3C worker (its agent-steps,
    agent-steps/s and mean episode; ``ratio``: the compiled trainer's agent-steps/s over it) and the tuned torch loop
    (``ratio_vs_tuned_torch`` likewise)."""

    naive_agent_steps: int
    naive_steps_per_s: float
    naive_mean_episode: float
    ratio: float
    tuned_torch_steps_per_s: float
    tuned_torch_mean_episode: float
    ratio_vs_tuned_torch: float


@dataclass(frozen=True, kw_only=True)
class TrainBenchNumbers(Record):
    """pgc bench train: the batch it trained (mechanism, ε, K trials of W workers on P processes, submissions per
    trial), then written flat beside them the compiled loop's speed, the references' and the host."""

    benchmark: Literal["train"] = "train"
    mechanism: str
    epsilon: float
    trials: int
    workers_per_trial: int
    processes: int
    submissions_per_trial: int
    compiled: TrainLoopSpeed = field(metadata={"flat": True})
    references: TrainReferenceSpeeds = field(metadata={"flat": True})
    host: BenchHost = field(metadata={"flat": True})


@dataclass(frozen=True, kw_only=True)
class ReplicateSliceTimings(Record):
    """pgc bench replicate's two runs of the grid slice: P processes and one, their wall times and agent-steps/s
    over the same agent-steps, ``ratio`` (one process's wall time over P's) and whether both gave identical
    results."""

    parallel_wall_s: float
    serial_wall_s: float
    agent_steps: int
    parallel_steps_per_s: float
    serial_steps_per_s: float
    ratio: float
    identical_results: bool


@dataclass(frozen=True, kw_only=True)
class GridProjection(Record):
    """The full replication grid's time projected from the P-process run's submissions/s: its submissions if no
    trial stops early, and the seconds they take at that rate."""

    parallel_submissions_per_s: float
    full_grid_upper_bound_submissions: int
    full_grid_projection_s_if_no_trial_succeeds: float


@dataclass(frozen=True, kw_only=True)
class ReplicateBenchNumbers(Record):
    """pgc bench replicate: the slice it ran (reading, trials in all and per setting, cap, P processes), then written
    flat beside them the two runs' timings, the full grid's projection and the host."""

    benchmark: Literal["replicate"] = "replicate"
    reading: str
    trials: int
    trials_per_setting: int
    cap: int
    processes: int
    timings: ReplicateSliceTimings = field(metadata={"flat": True})
    projection: GridProjection = field(metadata={"flat": True})
    host: BenchHost = field(metadata={"flat": True})


@dataclass(frozen=True, kw_only=True)
class TaskOverhead(Record):
    """pgc bench scale's cost of one empty task: a plain call (µs), the local process engine's and Ray's, one at a
    time (latency) and all submitted together (amortised), in ms."""

    call_us: float
    local_process_latency_ms: float
    local_process_amortised_ms: float
    ray_latency_ms: float
    ray_amortised_ms: float


@dataclass(frozen=True, kw_only=True)
class ScaleIdentical(Record):
    """Whether each run of pgc bench scale's batch gave results bit-identical to the one-process run."""

    local_2_processes: bool
    ray: bool
    ray_one_trial_per_task: bool


@dataclass(frozen=True, kw_only=True)
class ScaleBatch(Record):
    """pgc bench scale's replication-sized batch: its size, the wall time of each run (one local process, two, Ray
    with chunked tasks and with one trial per task), the throughput ratios against two local processes, the 1→2
    process speed-up with Amdahl's serial fraction, and whether each run matched the one-process run."""

    trials: int
    trials_per_setting: int
    cap: int
    agent_steps: int
    local_1_process_s: float
    local_2_processes_s: float
    ray_2_cpus_s: float
    ray_one_trial_per_task_s: float
    trial_mean_ms: float
    ray_vs_local_2_processes_throughput: float
    ray_one_trial_per_task_vs_local: float
    speedup_1_to_2_processes: float
    serial_fraction_amdahl: float
    identical: ScaleIdentical


@dataclass(frozen=True, kw_only=True)
class StorageCost(Record):
    """The storage cost of one tuning trial (ask, attributes, tell; no training): ms per trial, trials/s for one
    writer, and the trials timed."""

    ms_per_trial: float
    trials_per_s: float
    trials: int


@dataclass(frozen=True, kw_only=True)
class ScaleStorage(Record):
    """The per-trial storage cost on SQLite and on PostgreSQL (None with ``--no-postgres``)."""

    sqlite: StorageCost
    postgresql: StorageCost | None = None


@dataclass(frozen=True, kw_only=True)
class ScaleBenchNumbers(Record):
    """pgc bench scale: the command and host, Ray's start-up, the per-task overhead, Ray's first batch (the
    compiled kernel loaded in each worker), the batch's timings, the storage cost per tuning trial, and the load
    average at start and end."""

    benchmark: Literal["scale"] = "scale"
    command: str
    cpu_count: int | None = field(default=None, metadata={"keep_none": True})  # null: the OS did not say
    python: str
    ray_start_s: float
    loadavg_1min_at_start: float
    overhead: TaskOverhead
    ray_first_batch_s: float
    batch: ScaleBatch
    storage_per_trial: ScaleStorage
    loadavg_1min_at_end: float


@dataclass(frozen=True, kw_only=True)
class BenchNumbers(Result):
    """pgc bench train|replicate|scale --json: the numbers of one benchmark, the record its ``benchmark`` names
    (older files carry no kind field)."""

    KIND = "bench-numbers"
    numbers: TrainBenchNumbers | ReplicateBenchNumbers | ScaleBenchNumbers


@dataclass(frozen=True, kw_only=True)
class PipelineStep(Record):
    """One step of pgc pipeline: the command it ran with its exit code and wall time, or why it was skipped; the
    training step names its reading and the first and last trial's configuration (``configs``)."""

    step: str
    wall_s: float
    command: str | None = None
    exit_code: int | None = None
    skipped: str | None = None  # the step did not run: why
    reading: str | None = None
    configs: list[JsonObject] | None = None  # trial configurations


@dataclass(frozen=True, kw_only=True)
class Pipeline(Result):
    """pgc pipeline's manifest: the steps it ran, the results the report read (``inputs``, relative to the
    manifest's folder or absolute) and the steps' default settings (``defaults``: step -> its configuration)."""

    KIND = "pipeline"
    format: str
    inputs: list[str]
    steps: list[PipelineStep] = field(default_factory=list)
    seed: int | None = None
    quick: bool | None = None
    protect: list[str] | None = None
    command: str | None = None
    defaults: JsonObject | None = None  # configuration
    wall_s: float | None = None
