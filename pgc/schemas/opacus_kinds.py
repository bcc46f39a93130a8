"""The result kinds of the Opacus adapter's own audits (``pgc audit opacus-one-run``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .audit_rows import OneRunRow
from .base import Record, Result
from .provenance import Invocation


@dataclass(frozen=True, kw_only=True)
class OpacusTraining(Record):
    """The DP-SGD configuration of the training that held the canaries, as Opacus ran it."""

    records: int
    parameters: int
    steps: int
    sample_rate: float
    noise_multiplier: float
    max_grad_norm: float
    accountant: str
    poisson_sampling: bool
    loss_reduction: str


@dataclass(frozen=True, kw_only=True)
class OpacusOneRunResult(Result):
    """Gradient canaries in one real Opacus training: per observer (every step, the final model) the claim and
    the one-run bounds certified from what it saw."""

    KIND = "opacus-one-run"
    client: str  # the factory, MODULE:FACTORY
    canaries: int
    seed: int
    confidence: float
    training: OpacusTraining
    rows: list[OneRunRow]  # one judged row per observer (scope: the observer)
    training_s: float
    invocation: Invocation | None = field(default=None, metadata={"flat": True})
