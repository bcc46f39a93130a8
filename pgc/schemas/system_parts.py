"""The parts of a system audit's result that the report repeats: the accountant's ε for the audited event, and the
third-party library's protocol or filter as it was audited (with how its claim was read)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .base import JsonObject, Record


@dataclass(frozen=True, kw_only=True)
class Accountant(Record):
    epsilon: float
    delta: float
    description: str


@dataclass(frozen=True, kw_only=True)
class ClaimReading(Record):
    """One parameter of a library's code and the claim it was read as, with why."""

    parameter: str
    claim: str
    why: str


@dataclass(frozen=True, kw_only=True)
class LibraryRun(Record):
    """A third-party library's protocol or filter as it was audited: the library, its version and parameters, and
    how its claim was read."""

    library: str
    version: str | None = field(default=None, metadata={"keep_none": True})  # null: the library states none
    protocol: str
    parameters: JsonObject  # the protocol's or filter's own parameters, as the library takes them
    claimed_epsilon: float
    claim_reading: str
    pair: list[int] | None = None  # an LDP oracle's two inputs
    exact_epsilon: float | None = None  # the release's exact ε for that pair
    batching: str | None = None
    seeding: str | None = None
    readings: list[ClaimReading] | None = None  # a filter's parameters, each read as its part of the claim
    covers: list[str] | None = None
    channels: list[str] | None = None
    path: str | None = None  # the filter's code path a release takes
