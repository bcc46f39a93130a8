"""The schema of a run folder's ``summary.json`` (kind ``train``: ``pgc train``, the pipeline's train step): the
run's trials, each with its configuration, its outcome, what it protected and the mechanism it ran.

Pure Python: imports nothing from the project beyond :mod:`pgc.schemas.base`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .base import JsonObject, Record, Result, SchemaError


@dataclass(frozen=True, kw_only=True)
class TrialProtection(Record):
    """What a protected trial protected and the claim it made per agent (a flat part: its keys sit beside the
    trial's); the metrics on the true scores when the aggregator saw privatized ones."""

    protect: list[str] | None = None
    claimed_epsilon_total: float | None = None
    gradient_epsilon: float | None = None
    score_epsilon: float | None = None
    claim_covers: list[str] | None = None
    metrics_from: str | None = None
    note: str | None = None
    fst_true_scores: float | None = None
    final_mu_true_scores: float | None = None


@dataclass(frozen=True, kw_only=True)
class MechanismRecord(Record):
    """The per-submission mechanism a trial ran: its registry name (None: unregistered), class, parameters, the
    factory arguments and rounds that rebuild it, and the fingerprint the rebuilt one is checked against."""

    name: str | None = field(default=None, metadata={"keep_none": True})  # null: an unregistered mechanism
    cls: str | None = field(default=None, metadata={"json": "class"})
    params: JsonObject | None = None  # the mechanism's own parameters, as it takes them
    factory_args: JsonObject | None = None  # the registry factory's arguments
    rounds: int | None = None
    fingerprint: str


@dataclass(frozen=True, kw_only=True)
class TrainTrial(Record):
    dir: str
    config: JsonObject  # the trial's TrainConfig, as its to_dict writes it
    seed: int | None = None
    fst: float | None = None
    final_mu: float | None = None
    best_mu: float | None = None
    submissions: int | None = None
    updates: int | None = None
    agent_steps: int | None = None
    nonfinite_gradients: int | None = None
    protection: TrialProtection | None = field(default=None, metadata={"flat": True})
    transcript: bool | None = None
    mechanism: MechanismRecord | None = None


@dataclass(frozen=True, kw_only=True)
class TrainRun(Result):
    KIND = "train"
    format: str
    wall_time_s: float | None = None
    agent_steps: int | None = None
    versions: dict[str, str] | None = None  # each library's version
    trials: list[TrainTrial]
    note: str | None = None
    reading: JsonObject | None = None  # the replication reading the run's settings follow (its configuration)

    def __post_init__(self) -> None:
        if not self.trials:
            raise SchemaError("a train run summary needs at least one trial")
