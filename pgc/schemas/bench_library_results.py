"""Benchmarks of the adapters and libraries the auditor runs on (Opacus, Flower, library releases, the catalogue's
oracle): one kind per bench, each a typed result with the keys the bench has always written (``bench`` names it)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .audit_rows import AuditRow, Verdict
from .base import Record, Result

# --- bench-opacus: pgc bench opacus ------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class OpacusBench(Result):
    """The Opacus adapter's release rate against a plain training loop (``rates``: label -> releases per second)."""

    KIND = "bench-opacus"
    bench: str = "opacus"
    parameters: int
    releases: int
    workers: int
    rates: dict[str, float]
    start_s: float
    identical: bool
    ratio: float
    ratio_one_thread: float


# --- bench-flower: pgc bench flower ------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class FlowerOracle(Record):
    """The best tests on exact scores at the same n and α shares: threshold ε, μ, and the curve's ε."""

    threshold_epsilon: float
    mu: float
    curve_epsilon: float


@dataclass(frozen=True, kw_only=True)
class OverOracle(Record):
    """The audit's bounds over the oracle's: the threshold test's and the curve's."""

    threshold: float
    curve: float


@dataclass(frozen=True, kw_only=True)
class RatioSpread(Record):
    """Ratios over seeds: their mean, median, range and the share at least 0.9."""

    mean: float
    median: float
    min: float
    max: float
    share_at_least_09: float = field(metadata={"json": "share_at_least_0.9"})
    ratios: list[float]


@dataclass(frozen=True, kw_only=True)
class OverOracleOverSeeds(Record):
    """audit/oracle over seeds of the reference at ``samples`` per side."""

    seeds: int
    samples: int
    threshold: RatioSpread
    curve: RatioSpread


@dataclass(frozen=True, kw_only=True)
class SeedRow(Record):
    """One seed's audit of a correct release: its verdict and bounds."""

    seed: int
    verdict: Verdict
    epsilon_lower_bound: float
    mu_lower_bound: float | None = None


@dataclass(frozen=True, kw_only=True)
class FlowerFalseAlarms(Record):
    """Correct LocalDpMod audits through Flower over seeds at ``false_alarm_samples`` per side: how many flagged."""

    false_alarm_seeds: int
    false_alarm_samples: int
    flagged: int
    false_alarm_rows: list[SeedRow]


@dataclass(frozen=True, kw_only=True)
class FlowerBench(Result):
    """pgc bench flower: the Flower path's rows against a numpy reference's (``rows``, ``wall_s``: by path), the
    audit against the oracle, and the false alarms (written flat)."""

    KIND = "bench-flower"
    bench: str = "flower"
    epsilon: float
    delta: float
    samples: int
    sigma: float
    true_epsilon: float
    wall_s: dict[str, float]
    adapter_over_reference: float
    identical_rows: bool
    rows: dict[str, AuditRow]
    oracle: FlowerOracle
    audit_over_oracle: OverOracle
    audit_over_oracle_over_seeds: OverOracleOverSeeds
    false_alarms: FlowerFalseAlarms = field(metadata={"flat": True})
    command: str


# --- bench-versions: pgc bench versions --------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class CommandRun(Record):
    """One example command run against an installed release: its exit code (null: timed out), seconds, whether it
    printed a traceback; the verdict and claim it wrote and the libraries it imported (name -> version), or the
    last line it said."""

    command: str
    exit: int | None = field(default=None, metadata={"keep_none": True})
    seconds: float
    traceback: bool
    verdict: str | None = None
    claimed_epsilon: float | None = None
    imported: dict[str, str] | None = None


@dataclass(frozen=True, kw_only=True)
class VersionCell(Record):
    """One library release: installed or why not (``said``), and the command it ran (written flat)."""

    library: str
    release: str
    installed: bool
    run: CommandRun | None = field(default=None, metadata={"flat": True})
    said: str | None = None


@dataclass(frozen=True, kw_only=True)
class VersionsBench(Result):
    """pgc bench versions: the examples run against each release of each library."""

    KIND = "bench-versions"
    bench: str = "versions"
    cells: list[VersionCell]


# --- bench-catalogue-oracle: pgc bench catalogue-oracle ---------------------------------------------


@dataclass(frozen=True, kw_only=True)
class PairOracle(Record):
    """One pair of neighbouring inputs: the oracle's bound per total (draws per side, as a string), its standard
    error (the bounding half's sampling error; absent in files written before it was kept), the bound at Holm's
    first step, the largest privacy loss drawn, and the smallest n that flags (None: none up to the draws)."""

    bound: dict[str, float]
    bound_standard_error: dict[str, float] | None = None
    bound_holm_first: dict[str, float]
    largest_loss: float
    flags_from: int | None = field(default=None, metadata={"keep_none": True})


@dataclass(frozen=True, kw_only=True)
class AlgorithmOracle(Record):
    """One broken catalogue algorithm: per total its best pair and that pair's bounds (with their standard errors
    where kept), over every pair (by name)."""

    algorithm: str
    claimed_epsilon: float
    best_pair: dict[str, str]
    bound: dict[str, float]
    bound_standard_error: dict[str, float] | None = None
    bound_holm_first: dict[str, float]
    flags_from: int | None = field(default=None, metadata={"keep_none": True})
    pairs: dict[str, PairOracle]
    wall_s: float


@dataclass(frozen=True, kw_only=True)
class CatalogueOracle(Result):
    """pgc bench catalogue-oracle: the exact-loss oracle's bounds for the broken catalogue algorithms."""

    KIND = "bench-catalogue-oracle"
    bench: str = "catalogue-oracle"
    command: str
    confidence: float
    draws: int
    seed: int
    totals: list[int]
    algorithms: list[AlgorithmOracle]


LIBRARY_BENCHES: tuple[type[Result], ...] = (OpacusBench, FlowerBench, VersionsBench, CatalogueOracle)
