"""Benchmarks, manifests and reports: the result kinds that record how pgc itself ran."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .audit_rows import Verdict
from .base import JsonObject, Record, Result

# --- benchmarks, manifests and reports -------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Bench(Result):
    """pgc bench audit-adversarial and the adversarial false-alarm study."""

    KIND = "bench"
    bench: str


@dataclass(frozen=True, kw_only=True)
class AuditBenchmark(Result):
    """pgc bench audit: the auditor's speed, float-exactness and false-alarm checks."""

    KIND = "audit-benchmark"
    confidence: float
    samples: int
    seed: int


@dataclass(frozen=True, kw_only=True)
class LdpBenchCell(Record):
    """One (library, protocol, k, ε) of pgc bench ldp: our certified bound, LDP-Auditor's on the same releases, the
    exact ε of the release for the audited pair. A benchmark's summary of one audit, not an audit row: its
    ``verdict`` and ``p_value`` are those of the audit's one row (:func:`audit.verdicts.decide`), copied."""

    library: str
    protocol: str
    k: int
    epsilon: float
    samples_per_side: int
    epsilon_lower_bound: float
    reference_epsilon_lower_bound: float
    exact_epsilon: float
    claimed_epsilon: float
    verdict: Verdict
    wall_s: float
    version: str | None = None
    statistic: str | None = None
    max_certifiable_epsilon: float | None = None
    p_value: float | None = None


@dataclass(frozen=True, kw_only=True)
class LdpBench(Result):
    """pgc bench ldp: the frequency oracles of the reference and the libraries, per protocol × ε × k."""

    KIND = "ldp-bench"
    settings: JsonObject
    cells: list[LdpBenchCell]
    complete: bool
    timing: list[LdpBenchCell] = field(default_factory=list)
    summary: JsonObject | None = None
    command: str | None = None
    merged: list[str] | None = None  # the earlier results whose finished cells this run kept (--merge)


@dataclass(frozen=True, kw_only=True)
class BenchNumbers(Result):
    """pgc bench TARGET --save: named numbers of one benchmark (files without a kind field)."""

    KIND = "bench-numbers"
    numbers: JsonObject


@dataclass(frozen=True, kw_only=True)
class Reliability(Result):
    """scripts/reliability.py: the kill-and-restart study (a file without a kind field)."""

    KIND = "reliability"
    cases_tried: int
    failures: list[Any]
    all_zero: bool


@dataclass(frozen=True, kw_only=True)
class TuneWorkers(Result):
    """The multi-worker tuning check on PostgreSQL (a file without a kind field)."""

    KIND = "tune-workers"
    workers: int
    trials_requested: int
    ok: bool


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


@dataclass(frozen=True, kw_only=True)
class Report(Result):
    KIND = "report"
    format: str
    verdict: str
    inputs: list[JsonObject]
