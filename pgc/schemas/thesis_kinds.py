"""Result kinds of the attacks on the thesis' systems (``pgc thesis``)."""

from __future__ import annotations

from dataclasses import dataclass

from .base import JsonObject, Record, Result, SchemaError


def _interval(v: object, name: str) -> None:
    if not (isinstance(v, list) and len(v) == 2):
        raise SchemaError(f"{name} must be a [low, high] pair, got {v!r}")


@dataclass(frozen=True, kw_only=True)
class MembershipRow(Record):
    """One attacker against one defence setting: accuracy on a balanced member / non-member set."""

    defence: str
    attacker: str
    accuracy: float
    ci: list[float]
    n: int
    chance: float
    epsilon: float | None = None

    def __post_init__(self) -> None:
        _interval(self.ci, "ci")


@dataclass(frozen=True, kw_only=True)
class TargetModel(Record):
    """The attacked model: its accuracy on its members (training set) and on non-members, and their counts."""

    train_accuracy: float
    test_accuracy: float
    members: int
    non_members: int


@dataclass(frozen=True, kw_only=True)
class ThesisMembership(Result):
    """pgc thesis membership: ML-Leaks (and an adaptive and a label-only attacker) against ch. 6's defence, beside
    Table 6.2's ML-Leaks accuracies in % (``table_6_2_ml_leaks``: the ε, or "none", -> accuracy)."""

    KIND = "thesis-membership"
    settings: JsonObject  # the study's configuration
    models: TargetModel
    rows: list[MembershipRow]
    table_6_2_ml_leaks: dict[str, float] | None = None
    wall_time_s: float | None = None
    command: str | None = None


@dataclass(frozen=True, kw_only=True)
class MeanInterval(Record):
    mean: float
    ci: list[float]

    def __post_init__(self) -> None:
        _interval(self.ci, "ci")


@dataclass(frozen=True, kw_only=True)
class MapRecoveryRow(Record):
    """One defence setting (or the chance row): GRR and NRR over maps, and the trained agents' utility."""

    defence: str
    grr: MeanInterval
    nrr: MeanInterval
    reward: MeanInterval | None = None
    steps: MeanInterval | None = None
    success: MeanInterval | None = None
    thesis_grr_nrr: list[float] | None = None
    thesis_table_5_3: list[float] | None = None


@dataclass(frozen=True, kw_only=True)
class ThesisMapRecovery(Result):
    """pgc thesis map-recovery: Pan et al.'s genetic map recovery against ch. 5's DP-DRL."""

    KIND = "thesis-map-recovery"
    shape: list[int]
    maps: int
    rows: list[MapRecoveryRow]
    training: JsonObject | None = None  # the agents' training configuration
    genetic: JsonObject | None = None  # the genetic search's configuration
    seed: int | None = None
    wall_time_s: float | None = None
    command: str | None = None
