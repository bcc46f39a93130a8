"""The results of the robustness checks: scripts/reliability_run.py (hostile input, kills and restarts,
concurrent writers, the walk through a user's own code) and scripts/tune_workers.py (several tuning workers on
one PostgreSQL study, one of them killed) — both files carry no kind field and are loaded with ``kind=`` — and
scripts/shape_goals.py (the command line's start-up, its widest subcommand and the test run's time).

Pure Python: imports nothing from the project beyond :mod:`pgc.schemas`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .base import JsonObject, Record, Result


def _flat() -> Any:
    return field(default=None, metadata={"flat": True})


@dataclass(frozen=True, kw_only=True)
class ReliabilityFailure(Record):
    """One failure of scripts/reliability_run.py: a generated case (its ``family``) or a user-code walk case (its
    ``case``) with the command line, the problems found and the end of its stderr; or a kill's or concurrent
    writers' failure as one line (``detail``)."""

    family: str | None = None
    case: str | None = None
    argv: list[str] | None = None
    problems: list[str] | None = None
    stderr: str | None = None
    detail: str | None = None


@dataclass(frozen=True, kw_only=True)
class GeneratedCases(Record):
    """The generated hostile inputs: how many ran, per family, and the exit codes they ended in."""

    cases_tried: int
    cases_by_family: dict[str, int] = field(default_factory=dict)
    case_exit_codes: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Kills(Record):
    """The commands killed mid-run and restarted: how many, per command, and the state each restart found."""

    kills: int | None = None
    kills_by_command: dict[str, int] | None = None
    state_after_kill: dict[str, int] | None = None


@dataclass(frozen=True, kw_only=True)
class ConcurrentTuneStudy(Record):
    """Several tuning workers on one study: the trials asked for and the states they ended in."""

    asked_trials: int
    complete: int
    pruned: int
    running: int
    fail: int
    surplus: int
    distinct_parameter_sets: int
    note: str | None = None


@dataclass(frozen=True, kw_only=True)
class ConcurrentWriters(Record):
    """Concurrent writers of one output folder, and of one tuning study."""

    concurrent_writer_groups: int | None = None
    concurrent_writers: int | None = None
    concurrent_tune_study: ConcurrentTuneStudy | None = None


@dataclass(frozen=True, kw_only=True)
class UserCodeWalk(Record):
    """The walk through a user's own system files: cases per family, their exit codes, and the outcome counts
    (tracebacks, blames of pgc-audit for the user's code, wrong outcomes, hangs: all must be 0)."""

    cases: int
    cases_by_family: dict[str, int] = field(default_factory=dict)
    exit_codes: dict[str, int] = field(default_factory=dict)
    outcomes: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class CheckMachine(Record):
    python: str
    cpus: int | None = None


@dataclass(frozen=True, kw_only=True)
class Reliability(Result):
    """scripts/reliability_run.py: every outcome count (all must be 0), the failures behind any that is not, and
    what ran (a file without a kind field)."""

    KIND = "reliability"
    command: str | None = None
    seed: int | None = None
    cases: GeneratedCases = field(metadata={"flat": True})
    kills: Kills | None = _flat()
    writers: ConcurrentWriters | None = _flat()
    user_code_walk: UserCodeWalk | None = None
    outcomes: dict[str, int] = field(default_factory=dict)
    all_zero: bool
    failures: list[ReliabilityFailure]
    wall_s: dict[str, float] = field(default_factory=dict)  # per part of the study
    machine: CheckMachine | None = None


@dataclass(frozen=True, kw_only=True)
class KilledWorker(Record):
    """The tuning worker killed mid-trial: its trial, process, when, and the trial's parameters."""

    trial: int
    pid: int
    after_s: float
    params: JsonObject = field(default_factory=dict)  # the trial's optuna parameters, as optuna gave them


@dataclass(frozen=True, kw_only=True)
class RetriedTrial(Record):
    """A trial that took over a killed trial's parameters: its state, and whether parameters and seeds match."""

    number: int
    state: str
    same_params: bool
    seeds_from_killed_trial: bool


@dataclass(frozen=True, kw_only=True)
class TuneWorkers(Result):
    """scripts/tune_workers.py: several tuning workers on one PostgreSQL study, one killed mid-trial; every asked
    trial finished once (no duplicates, none stuck), the killed one retried with its parameters (a file without a
    kind field)."""

    KIND = "tune-workers"
    workers: int
    trials_requested: int
    ok: bool
    finished: int | None = None
    duplicates: int | None = None
    stuck: int | None = None
    failed: list[int] | None = None  # trial numbers that ended FAIL (the killed one among them)
    surplus: list[int] | None = None  # trial numbers asked beyond the requested count
    killed: KilledWorker | None = None
    retries_of_killed: list[RetriedTrial] | None = None
    returncode: int | None = None
    wall_s: float | None = None
    command: str | None = None  # the workers' command line
    script: str | None = None  # the command that made this file
    stderr: str | None = None  # the end of the workers' stderr


@dataclass(frozen=True, kw_only=True)
class ShapeGoals(Result):
    """scripts/shape_goals.py: the measured goals of the command line's shape — a subcommand's help time (warm, the
    median of several runs), the most options one ``pgc audit`` subcommand takes, and the default test run's time as
    a fresh clone's CI log reports it."""

    KIND = "shape-goals"
    help_command: str
    help_seconds: list[float]  # each warm run, in order
    help_median_s: float
    widest_subcommand: str  # the ``pgc audit`` subcommand with the most options
    widest_subcommand_options: int
    test_log: str | None = None  # the CI log the test time was read from
    tests_passed: int | None = None
    test_seconds: float | None = None  # pytest's own wall time of the default run (set-up, lint and types aside)
    goals_met: bool  # help ≤ 1 s, ≤ 25 options, and (when a log was given) tests ≤ 480 s with no failure
    script: str | None = None  # the command that made this file
