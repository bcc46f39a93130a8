"""The result kinds of ``pgc audit``'s mechanism and PGC-A3C subcommands: one frozen type per subcommand, each
holding every judged row of the audit in ``channels`` (the flat list a report reads) beside what only that
subcommand records.

=====================  =========================  =================================================================
kind                   written by                 its own parts
=====================  =========================  =================================================================
``mechanism-audit``    ``pgc audit mechanism``    the mechanism's canary audit (:class:`CanaryAudit`)
``self-test``          ``pgc audit self-test``    each case's outcome, the honesty cases
``run-audit``          ``pgc audit run``          the run (:class:`AuditedRunMechanism`), its canary audit, one
                                                  :class:`EnvironmentAudit` per pair
``one-run-audit``      ``pgc audit one-run``      the run, its canaries (:class:`CanarySetup`), the models simulated
``adversarial-audit``  ``pgc audit adversarial-   the crafted-model search's budget, one :class:`AdversarialAudit`
                       model``                    per pair; the run and its mitigations when ``--run`` gave one
``adversarial-curve``  ``pgc audit adversarial-   the curve's points, the crafted and the honest audits per point
                       curve``
=====================  =========================  =================================================================

Files of the older kind ``audit`` (one kind for every subcommand, told apart by ``mode``) load as the kind their
``mode`` names (:func:`legacy_audit_kind`). The keys they wrote that these kinds hold elsewhere are dropped on reading
(:data:`RETIRED_KEYS`): ``mode`` is the kind; the top-level and per-pair ``model`` of an adversarial audit is each
row's; a canary audit's ``bound`` copied its row's certificate (with rate bounds that follow from its counts); a δ
test's ``claimed_epsilon`` / ``claimed_delta`` are its row's claim; a self-test case's bounds, verdict and reason
are its audit's row; a curve point's ``verdict``, ``p_value`` and ``verdict_reason`` were judged apart from the
point's row, without its counts, and the row in ``channels`` holds the verdict; an honest environment audit's rows
named their ``model``, which the curve's rows in ``channels`` hold (``honest``). Their ``run_config`` is the audited
run's configuration (:attr:`AuditedRun.config`).

Stability policy: as :mod:`pgc.schemas.audit_rows` states it for rows.

Pure Python: imports nothing from the project beyond :mod:`pgc.schemas`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from .audit_rows import (
    AdversarialModelRow,
    AdversarialRow,
    AuditRow,
    EnvironmentRow,
    MechanismRow,
    OneRunRow,
    RunRow,
    SelfTestRow,
)
from .base import JsonObject, Record, Result
from .provenance import Invocation


def _flat(required: bool = False) -> Any:
    return field(metadata={"flat": True}) if required else field(default=None, metadata={"flat": True})


# per record type: the keys of the older kind ``audit`` that it holds elsewhere (the module docstring says where)
RETIRED_KEYS: dict[str, frozenset[str]] = {
    "RowsAudit": frozenset({"mode"}),
    "adversarial": frozenset({"model"}),  # CraftedPairAudit, AdversarialAudit, AdversarialModelAudit, AdversarialCurve
    "CanaryAudit": frozenset({"bound"}),
    "DeltaTest": frozenset({"claimed_epsilon", "claimed_delta"}),
    "SelfTestOutcome": frozenset({"epsilon_lower_bound", "delta_lower_bound", "verdict", "reason"}),
    "CurvePoint": frozenset({"verdict", "p_value", "verdict_reason"}),
    "EnvironmentRow": frozenset({"model"}),  # an environment audit's row (EnvironmentAudit.migrate)
}


def without_retired(data: dict[str, Any], holder: str) -> dict[str, Any]:
    """``data`` without the keys :data:`RETIRED_KEYS` lists for ``holder``."""
    retired = RETIRED_KEYS[holder]
    return data if retired.isdisjoint(data) else {k: v for k, v in data.items() if k not in retired}


# --- parts ------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SelectionCandidate(Record):
    """One statistic the canary audit's selection ranked, and the ε its training split projected."""

    hypothesis: str
    statistic: str
    projected_epsilon: float
    train_samples: int


@dataclass(frozen=True, kw_only=True)
class DeltaTest(Record):
    """The δ test of a canary audit: one point-mass event chosen on a training split, counted on fresh outputs
    (the claim it is held to is the row's). ``certified`` False: no point mass was seen, nothing drawn."""

    hypothesis: str
    statistic: str
    direction: str  # "positive": the event's hits are counted under x, "negative": under x'
    certified: bool
    samples_per_side: int
    hits: int
    false_hits: int
    fp_share: float
    confidence: float  # the δ test's own share of the row's confidence
    delta_lower_bound: float
    epsilon_lower_bound: float
    smallest_detectable_delta: float
    projected_delta: float
    train_samples: int
    point_masses: int

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        return without_retired(data, "DeltaTest")


@dataclass(frozen=True, kw_only=True)
class CanaryAudit(Record):
    """A mechanism's canary audit: its judged row and what its selection and δ test saw."""

    mechanism: str
    mode: Literal["black-box", "white-box"]
    row: MechanismRow
    wall_time_s: float
    cpu_time_s: float  # process CPU time (the machine may be shared)
    delta_time_s: float = 0.0  # CPU seconds of the δ test (inside cpu_time_s)
    delta_test: DeltaTest | None = None  # None: white-box, or an infinite claim
    candidates: list[SelectionCandidate] = field(default_factory=list)

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        return without_retired(data, "CanaryAudit")


@dataclass(frozen=True, kw_only=True)
class AuditedRun(Record):
    """The training run an audit read: its folder and the trial (a one-run audit audits the run's own mechanism)."""

    run: str
    trial: int
    # the trial's configuration as its run recorded it (TrainConfig.to_dict()): what was audited, after the run's
    # folder is gone
    config: JsonObject | None = field(default=None, metadata={"json": "run_config"})


@dataclass(frozen=True, kw_only=True)
class AuditedRunMechanism(AuditedRun):
    """The training run a run or adversarial audit read, and where the mechanism it audited came from: the run's
    own, or one the command line gave in its place."""

    mechanism_source: Literal["run", "override"] | None = None  # None: a file written before it was recorded


@dataclass(frozen=True, kw_only=True)
class Protection(Record):
    """A protected PGC-A3C configuration's claim: its mitigations, and every channel held to ε_gradient + ε_score."""

    protect: list[str] = field(default_factory=list)
    claimed_epsilon_total: float | None = None
    gradient_epsilon: float | None = None
    score_epsilon: float | None = None
    claim_covers: list[str] | None = None  # the channels the claim covers (a run's own record)
    metrics_from: str | None = None  # where the run's metrics came from: privatized or true scores


@dataclass(frozen=True, kw_only=True)
class ProtectedClaim(Record):
    """The same claim as it sits beside one pair's audit (the total is that audit's ``claimed_epsilon``)."""

    protect: list[str]
    gradient_epsilon: float | None = None
    score_epsilon: float | None = None
    claim: str | None = None  # how the total is formed, in words


@dataclass(frozen=True, kw_only=True)
class EnvironmentAudit(Record):
    """One ψ pair's environment audit of a model: its rows and the mean episode scores under each ψ."""

    psi: float
    psi_prime: float
    mechanism: str
    claimed_epsilon: float
    confidence: float
    channels: list[EnvironmentRow]
    score_means: list[float]
    wall_time_s: float
    protection: ProtectedClaim | None = _flat()

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        rows = data.get("channels")
        if not isinstance(rows, list):
            return data
        return {**data, "channels": [without_retired(r, "EnvironmentRow") if isinstance(r, dict) else r for r in rows]}


@dataclass(frozen=True, kw_only=True)
class CraftedSearch(Record):
    """How one objective's crafted θ was found (CMA-ES on validation episodes of the search stream)."""

    objective: str
    value: float
    evaluations: int
    wall_time_s: float
    vector: list[float]  # (k, w, log10 τ)
    history: list[float]  # the best value per generation


@dataclass(frozen=True, kw_only=True)
class AdversarialSearch(Record):
    """The crafted-model searches of one pair, summed over their objectives."""

    objective: str | None = None  # the objectives, comma-separated
    evaluations: int | None = None
    wall_time_s: float | None = None
    per_objective: dict[str, CraftedSearch] | None = None


@dataclass(frozen=True, kw_only=True)
class PairTrial(Record):
    """One trial of the worst-pair search: the pair tried and its search objective."""

    psi: float
    psi_prime: float
    value: float
    evaluations: int


@dataclass(frozen=True, kw_only=True)
class WorstPairSearch(Record):
    """The optuna search for the pair in a range that the crafted model separates best."""

    range: list[float]
    psi: float
    psi_prime: float
    value: float
    trials: list[PairTrial]
    wall_time_s: float


@dataclass(frozen=True, kw_only=True)
class CraftedPairAudit(Record):
    """One pair audited at the models the aggregator crafted for it (one per searched channel): a point of the
    adversarial curve."""

    psi: float
    psi_prime: float
    mechanism: str
    channels: list[AdversarialRow]
    claimed_epsilon: float | None = None
    confidence: float | None = None
    noise_free_epsilon_lower_bound: float | None = None  # the gradient at ε = ∞ (the raw gradient), crafted θ
    search: AdversarialSearch | None = None
    score_means: dict[str, list[float]] | None = None  # per crafted θ: the mean score under ψ and ψ'
    wall_time_s: float | None = None
    protection: ProtectedClaim | None = _flat()

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        return without_retired(data, "adversarial")


@dataclass(frozen=True, kw_only=True)
class AdversarialAudit(CraftedPairAudit):
    """An adversarial audit's pair: also the crafted models saved beside the result, and the search that found the
    pair where a range was given."""

    channels: list[AdversarialModelRow]  # type: ignore[assignment]  # its rows name their crafted model's file
    theta_files: dict[str, str] | None = None  # search objective -> the crafted θ's checkpoint beside the result
    theta_file: str | None = None  # the gradient's (the headline model)
    worst_pair_search: WorstPairSearch | None = None  # a range was given: the pair found in it


@dataclass(frozen=True, kw_only=True)
class CraftedSearchSettings(Record):
    """The crafted-model search's budget (:class:`pgc.a3c.crafted.SearchSettings`)."""

    screen_controllers: int
    screen_episodes: int
    generations: int
    population: int
    episodes: int
    restarts: int
    detector_screen: int
    exploration: float


@dataclass(frozen=True, kw_only=True)
class CurvePoint(Record):
    """One point of the adversarial curve: ε_LB / ε at neighbour distance Δψ for one model and channel."""

    delta_psi: float
    epsilon_lower_bound: float
    epsilon: float | None = None
    ratio: float | None = None
    model: str = "honest"
    channel: str = "all"
    psi: float | None = None
    psi_prime: float | None = None
    samples_per_side: int | None = None  # the point's row (its verdict and p-value) is in the result's channels

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        return without_retired(data, "CurvePoint")


@dataclass(frozen=True, kw_only=True)
class CanarySetup(Record):
    """The canary agents of a run trained with ``pgc train --canaries``."""

    canaries: int
    canary_pair: list[float]
    canary_model: Literal["live", "crafted"]
    canary_update: str
    canary_start: int


@dataclass(frozen=True, kw_only=True)
class SelfTestOutcome(Record):
    """One self-test case: the mechanism's true ε beside its claim, and whether the audit judged it right."""

    name: str
    mode: str
    correct_mechanism: bool
    claimed_epsilon: float
    true_epsilon: float
    passed: bool
    audit: CanaryAudit

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        return without_retired(data, "SelfTestOutcome")


@dataclass(frozen=True, kw_only=True)
class HonestyOutcome(Record):
    """One honesty case: the verdict it must give, what the audit showed, and whether they agree (the rows are in
    the result's ``channels``, scope "honesty: CASE")."""

    case: str
    expected: str
    passed: bool
    shown: str


# --- the kinds ---------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class RowsAudit(Result):
    """What every kind here holds: every judged row (``channels``), at one confidence, δ and seed, and how the
    result was made (``invocation``: the command line, its wall time and provenance)."""

    SCOPE: ClassVar[str] = ""  # the subject of a row that names none
    channels: list[AuditRow]
    confidence: float
    delta: float = 0.0
    seed: int
    invocation: Invocation | None = _flat()

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        return without_retired(data, "RowsAudit")


@dataclass(frozen=True, kw_only=True)
class MechanismAudit(RowsAudit):
    KIND = "mechanism-audit"
    SCOPE = "mechanism"
    channels: list[MechanismRow]  # type: ignore[assignment]  # a mechanism audit's row has no observer's parts
    mechanism_audit: CanaryAudit

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        return _single(super().migrate(data), "mechanism_audits", "mechanism_audit")


@dataclass(frozen=True, kw_only=True)
class SelfTest(RowsAudit):
    KIND = "self-test"
    SCOPE = "self-test"
    channels: list[SelfTestRow]  # type: ignore[assignment]  # a self-test's rows hold its cases
    self_test: list[SelfTestOutcome]
    honesty: list[HonestyOutcome] = field(default_factory=list)

    def misjudged(self) -> list[str]:
        """The cases the audit judged wrongly (a self-test miss: a finding)."""
        return [c.name for c in self.self_test if not c.passed] + [h.case for h in self.honesty if not h.passed]

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        """The older kind's ``honesty`` entries carried their rows (now only in ``channels``)."""
        data = super().migrate(data)
        if "honesty" not in data:
            return data
        return {**data, "honesty": [{k: v for k, v in h.items() if k != "rows"} for h in data["honesty"]]}


@dataclass(frozen=True, kw_only=True)
class RunAudit(RowsAudit):
    KIND = "run-audit"
    SCOPE = "run"
    channels: list[RunRow]  # type: ignore[assignment]  # a PGC-A3C run's rows: its environment and canary
    audited_run: AuditedRunMechanism = _flat(required=True)
    model: Literal["final", "initial"]
    mechanism_audit: CanaryAudit
    environment_audits: list[EnvironmentAudit]

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        return _single(super().migrate(data), "mechanism_audits", "mechanism_audit")


@dataclass(frozen=True, kw_only=True)
class OneRunAudit(RowsAudit):
    KIND = "one-run-audit"
    SCOPE = "one-run"
    channels: list[OneRunRow]  # type: ignore[assignment]  # a one-run audit's rows hold its counts
    audited_run: AuditedRun = _flat(required=True)
    canary_setup: CanarySetup
    canary_submissions: int
    simulated_models: int
    protection: Protection | None = None  # the run's mitigations (None: unprotected)


@dataclass(frozen=True, kw_only=True)
class AdversarialModelAudit(RowsAudit):
    KIND = "adversarial-audit"
    SCOPE = "adversarial"
    channels: list[AdversarialModelRow]  # type: ignore[assignment]  # its rows name their model and θ file
    search_settings: CraftedSearchSettings
    adversarial_audits: list[AdversarialAudit]
    audited_run: AuditedRunMechanism | None = _flat()  # --run DIR: the run whose mechanism and settings were audited
    protection: Protection | None = None  # that run's mitigations

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        return without_retired(super().migrate(data), "adversarial")


@dataclass(frozen=True, kw_only=True)
class AdversarialCurve(RowsAudit):
    KIND = "adversarial-curve"
    SCOPE = "adversarial"
    channels: list[AdversarialRow]  # type: ignore[assignment]  # an adversarial audit's rows name their model
    honest_model: str  # the honest θ the curve compares with, as ``--honest-model`` named it
    curve: list[CurvePoint]
    adversarial_audits: list[CraftedPairAudit]  # the curve saves no crafted θ and searches no pair
    honest_audits: list[EnvironmentAudit]

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        return without_retired(super().migrate(data), "adversarial")


AUDIT_KINDS: tuple[type[RowsAudit], ...] = (
    MechanismAudit,
    SelfTest,
    RunAudit,
    OneRunAudit,
    AdversarialModelAudit,
    AdversarialCurve,
)


def legacy_audit_kind(data: dict[str, Any]) -> type[RowsAudit]:
    """The kind a file of the older kind ``audit`` is read as, by the ``mode`` it recorded."""
    mode = data.get("mode")
    if mode == "adversarial":
        return AdversarialCurve if "curve" in data else AdversarialModelAudit
    kinds: dict[Any, type[RowsAudit]] = {
        "mechanism": MechanismAudit,
        "self-test": SelfTest,
        "run": RunAudit,
        "one-run": OneRunAudit,
    }
    if mode not in kinds:
        from .base import SchemaError

        raise SchemaError(f"an 'audit' result of mode {mode!r}: no such mode (mechanism, run, one-run, ...)")
    return kinds[mode]


def _single(data: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """The older kind's one-item list ``old`` as the record ``new``."""
    if old not in data or new in data:
        return data
    items = data[old]
    out = {k: v for k, v in data.items() if k != old}
    if isinstance(items, list) and len(items) == 1:
        out[new] = items[0]
    return out
