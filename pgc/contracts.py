"""Every contract of pgc-audit in one module: what an audited system, a mechanism, a test statistic, an
attacker and a report section promise, and the optional capabilities a system may add, each a type.

It depends on nothing but the standard library, so every system package, the auditor, the attackers, the
result schemas and the reports can import it without importing each other.

Claims and systems:

* :class:`PrivacyClaim` — what a system promises: ``epsilon`` per release (``math.inf``: no claim),
  ``delta`` (0.0 for pure ε-DP), ``covers`` (the channels the promise covers; any other channel is
  unprotected) and, optionally, a privacy curve: ``gdp_mu`` (the μ of a μ-GDP trade-off curve the noise
  delivers) or ``privacy_profile`` (points (ε_i, δ_i) of the δ(ε) curve of a composed or subsampled
  mechanism, as an accountant's privacy-loss distribution states it: the release is (ε_i, δ_i)-DP for
  every i). A claim of the user's own type (any object with ``epsilon``, ``delta`` and ``covers``) is read
  with :meth:`PrivacyClaim.of`.
* :class:`System` — ``name``, ``claim``, ``channels`` and ``release(secret, n, rng, *, broadcast=None)``:
  n independent releases of ONE participant holding ``secret`` (opaque to the auditor), as a mapping
  channel → (n, k) float array, NaN where an entry is absent (⊥, an optional field not sent), or a sequence of
  n rows of different lengths (variable-length outputs; padded with NaN by the auditor). ``broadcast`` is what
  the aggregator sends (a model θ, synced statistics); None is the honest default. Randomness comes only from
  ``rng``.

Optional capabilities of a system (each a runtime-checkable Protocol: ``isinstance(system, HasCanaries)``;
:func:`capabilities` lists those a system has):

* :class:`HasCanaries` — ``canaries()`` → ``{name: (secret, secret_prime)}``: named neighbouring pairs;
* :class:`ClaimsPerChannel` — ``claim_for(channel)`` → a :class:`PrivacyClaim` for a channel whose claim
  differs from ``claim`` (k submissions of one participant: k·ε by composition);
* :class:`DeclaresNoise` — ``dp_event()`` → a ``dp_accounting.DpEvent``: the noise one release actually adds,
  for the accountant; :class:`DeclaresNoisePerChannel` — ``dp_event_for(channel)`` where a channel composes
  more;
* :class:`DescribesSecrets` — ``describe_secret(secret)`` → a short text for reports;
* :class:`OffersStatistics` — ``audit_statistics(channel)`` → extra candidate :class:`Statistic` objects for
  one channel's releases that know their format, offered to the auditor's selection beside its own; they are
  chosen on the training split like any other, so they cannot bias a certified bound;
* :class:`HasBroadcastSpace` — ``broadcast_space`` → ``(lower, upper)`` arrays: the box a black-box search of
  an adversarial broadcast explores; :class:`CraftsBroadcasts` — ``crafted_broadcasts(secret, secret_prime,
  rng)`` → a list of broadcasts: the system's own crafted family;
* :class:`HasSecretSpace` — ``secret_space`` → ``dim``, ``relation`` and ``pair(x)``: a neighbouring pair for
  any x in [0, 1]^dim, for the auditor's worst-pair search (``audit_system(..., search_pair=True)``);
* :class:`HasJointLayout` — ``joint_layout``: the channels side by side in the joint channel ``all``;
* :class:`NamesRelation` — ``relation``: what makes two secrets neighbours, in words;
  :class:`NamesReportSection` — ``report_section``: the report section that renders the system's audits.

The other contracts:

* :class:`Mechanism` — randomizes a batch of gradients; ``epsilon`` (and ``delta``, absent: 0) is its claim;
  optional: :class:`ReleasesInternals` (a white-box report), :class:`ProjectsDimension` (d̂ of d).
* :class:`Sampler`, :class:`Scorer`, :class:`Statistic`, :class:`Tester` — the auditor's: a sampler draws n
  outputs under one hypothesis; a statistic is fitted on the training split of both hypotheses and returns
  a scorer (higher = "looks like the first"); a tester keeps the certified bound (``lower_bound``) apart
  from the decision (``rejects``).
* :class:`Attacker` — what it applies to, which channels it reads, and per-submission
  :class:`AttackScores` learned from a shadow bank only.
* :class:`ReportSection` — a report plug-in: its name, the result kinds it reads, how it extracts and
  renders them.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pgc.errors import UserError

ALL = "all"  # the joint channel: every channel side by side


@dataclass(frozen=True)
class PrivacyClaim:
    """(ε, δ) per release over the channels in ``covers``; ``gdp_mu``: the μ-GDP curve, if the system states
    one; ``privacy_profile``: ((ε_i, δ_i), ...), the δ(ε) curve of a privacy-loss distribution, if it states
    one (at most one of the two curves)."""

    epsilon: float
    delta: float = 0.0
    covers: tuple[str, ...] = ()
    gdp_mu: float | None = None
    privacy_profile: tuple[tuple[float, float], ...] | None = None

    def __post_init__(self) -> None:
        eps, delta, covers, mu = self.epsilon, self.delta, self.covers, self.gdp_mu
        if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or math.isnan(eps) or eps <= 0:
            raise UserError(f"a claim's epsilon must be a positive number or inf, got {eps!r}")
        if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not (0.0 <= delta < 1.0):
            raise UserError(f"a claim's delta must lie in [0, 1), got {delta!r}")
        if isinstance(covers, str) or not all(isinstance(c, str) and c for c in (covers or ())):
            raise UserError(f"a claim's covers must be a tuple of channel names, got {covers!r}")
        if mu is not None and (isinstance(mu, bool) or not isinstance(mu, numbers.Real) or not (0.0 < mu < math.inf)):
            raise UserError(f"a claim's gdp_mu must be a positive finite number or None, got {mu!r}")
        object.__setattr__(self, "epsilon", float(eps))
        object.__setattr__(self, "delta", float(delta))
        object.__setattr__(self, "covers", tuple(covers or ()))
        object.__setattr__(self, "gdp_mu", None if mu is None else float(mu))
        object.__setattr__(self, "privacy_profile", _checked_profile(self.privacy_profile))
        if mu is not None and self.privacy_profile is not None:
            raise UserError("a claim states either gdp_mu or privacy_profile, not both")

    @classmethod
    def of(cls, claim: Any) -> PrivacyClaim:
        """``claim`` itself when it is a PrivacyClaim, else one built from its ``epsilon``, ``delta``,
        ``covers`` (and ``gdp_mu`` if it has one), validated; a clear ValueError when they are missing."""
        if isinstance(claim, cls):
            return claim
        missing = [k for k in ("epsilon", "delta", "covers") if not hasattr(claim, k)]
        if missing:
            raise UserError(
                f"a claim needs epsilon, delta and covers; {type(claim).__name__} lacks {', '.join(missing)}"
            )
        return cls(
            claim.epsilon,
            claim.delta,
            claim.covers,
            getattr(claim, "gdp_mu", None),
            getattr(claim, "privacy_profile", None),
        )

    def covering(self, channel: str, base_channels: tuple[str, ...] = ()) -> bool:
        """Whether the claim covers ``channel`` (``all`` is covered when every base channel is)."""
        if channel == ALL and base_channels:
            return all(c in self.covers for c in base_channels)
        return channel in self.covers


def _checked_profile(profile: Any) -> tuple[tuple[float, float], ...] | None:
    """A privacy profile as a tuple of (ε, δ) float pairs, ε ≥ 0 finite and δ in [0, 1]; None stays None."""
    if profile is None:
        return None
    try:
        points = tuple((float(e), float(d)) for e, d in profile)
    except (TypeError, ValueError):
        raise UserError(f"a claim's privacy_profile must be (epsilon, delta) pairs, got {profile!r}") from None
    if not points or not all(math.isfinite(e) and e >= 0.0 and 0.0 <= d <= 1.0 for e, d in points):
        raise UserError("a claim's privacy_profile needs at least one (epsilon >= 0, 0 <= delta <= 1) pair")
    return points


@runtime_checkable
class System(Protocol):
    name: str
    claim: PrivacyClaim
    channels: tuple[str, ...]

    def release(self, secret: Any, n: int, rng: Any, *, broadcast: Any = None) -> Mapping[str, Any]:
        """n independent releases of one participant holding ``secret``: channel → (n, k) floats."""
        ...


# --- the optional capabilities of a System ------------------------------------------------------------


@runtime_checkable
class HasCanaries(Protocol):
    def canaries(self) -> Mapping[str, tuple[Any, Any]]:
        """Named neighbouring pairs: name → (secret, secret_prime)."""
        ...


@runtime_checkable
class ClaimsPerChannel(Protocol):
    def claim_for(self, channel: str) -> Any:
        """The claim of ``channel`` where it differs from the system's ``claim``."""
        ...


@runtime_checkable
class DeclaresNoise(Protocol):
    def dp_event(self) -> Any:
        """The ``dp_accounting.DpEvent`` of the noise one release adds."""
        ...


@runtime_checkable
class DeclaresNoisePerChannel(Protocol):
    def dp_event_for(self, channel: str) -> Any:
        """The ``dp_accounting.DpEvent`` of one channel (None: the system's ``dp_event``)."""
        ...


@runtime_checkable
class DescribesSecrets(Protocol):
    def describe_secret(self, secret: Any) -> str:
        """A short text for a secret, for reports."""
        ...


@runtime_checkable
class OffersStatistics(Protocol):
    def audit_statistics(self, channel: str) -> list[Statistic]:
        """Candidate :class:`Statistic` objects for one channel's releases, tried after the audit's own.

        A statistic with a ``preferred_margin`` attribute (a fraction) encodes what the auditor knows exactly (a
        white-box canary's direction): it is tried first, and another statistic replaces it only by projecting
        more than ``1 + preferred_margin`` times its bound on the selection half."""
        ...


@runtime_checkable
class HasBroadcastSpace(Protocol):
    broadcast_space: Any  # (lower, upper) arrays, or None when the system takes no broadcast


@runtime_checkable
class CraftsBroadcasts(Protocol):
    def crafted_broadcasts(self, secret: Any, secret_prime: Any, rng: Any) -> list[Any]:
        """The system's own crafted broadcasts for a pair."""
        ...


@runtime_checkable
class HasSecretSpace(Protocol):
    secret_space: Any  # dim, relation, pair(x) for x in [0, 1]^dim


@runtime_checkable
class HasJointLayout(Protocol):
    joint_layout: Any  # the channels side by side in the joint channel "all"


@runtime_checkable
class NamesRelation(Protocol):
    relation: str


@runtime_checkable
class NamesReportSection(Protocol):
    report_section: str


CAPABILITIES = (
    HasCanaries,
    ClaimsPerChannel,
    DeclaresNoise,
    DeclaresNoisePerChannel,
    DescribesSecrets,
    OffersStatistics,
    HasBroadcastSpace,
    CraftsBroadcasts,
    HasSecretSpace,
    HasJointLayout,
    NamesRelation,
    NamesReportSection,
)


def capabilities(system: Any) -> list[str]:
    """The names of the optional capabilities ``system`` has."""
    return [cap.__name__ for cap in CAPABILITIES if isinstance(system, cap)]


# --- mechanisms -----------------------------------------------------------------------------------------


@runtime_checkable
class Mechanism(Protocol):
    """Randomizes a batch of gradients; ``epsilon`` is the claimed ε of one submission. A mechanism with
    an (ε, δ) claim also carries ``delta`` (absent: δ = 0, pure ε-DP)."""

    epsilon: float

    def __call__(self, gradients: Any, rng: Any) -> Any: ...


@runtime_checkable
class ReleasesInternals(Protocol):
    """A mechanism whose ``release(gradients, rng)`` also reports its internals (PRS: ũ and M), for white-box
    audits."""

    def release(self, gradients: Any, rng: Any) -> Any: ...


@runtime_checkable
class ProjectsDimension(Protocol):
    """A mechanism that randomizes a d̂-dimensional projection of a d-dimensional gradient (PRS)."""

    def reduced_dim_for(self, dim: int) -> int: ...


# --- the auditor's ----------------------------------------------------------------------------------------


@runtime_checkable
class Sampler(Protocol):
    def __call__(self, n: int, rng: Any) -> Any: ...


@runtime_checkable
class Scorer(Protocol):
    def __call__(self, outputs: Any) -> Any: ...


@runtime_checkable
class Statistic(Protocol):
    """A test statistic: fitted on half the training split, ranked on the other half, certified on fresh releases.

    Optional attributes the selection reads (:func:`audit.statistics.selection.select_statistic`): ``shape`` (the
    leak shape it reads, one of :data:`audit.statistics.shapes.SHAPES`; ``"location"`` when absent);
    ``selection_margin`` (a fraction: it replaces an earlier statistic only by projecting that much more — a
    flexible, fitted statistic must win clearly); ``event_margin`` (the same, only against a kept test of a few exact
    events); ``held_out_ranking`` (True: ranked by its held-out projection even
    when it takes few values — a sum of many coordinates, whose values are no events known in advance);
    ``preferred_margin`` (see :class:`OffersStatistics`)."""

    name: str

    def fit(self, train_pos: Any, train_neg: Any) -> Scorer | None:
        """Learn from the training split; ``None`` when the statistic does not apply to this data."""
        ...


@runtime_checkable
class Tester(Protocol):
    def lower_bound(self) -> object:
        """The certified lower bound (an :class:`audit.certification.tester.EpsilonBound`)."""
        ...

    def rejects(self, claimed_epsilon: float) -> bool:
        """True iff the claim is refuted (lower bound > claim) at the tester's confidence."""
        ...


# --- the attackers' -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AttackScores:
    """What an attacker makes of a view: per-submission log-likelihoods over the candidates (or grid) for a
    classifier, or point predictions for a regressor; ``kde_bandwidth`` where the attacker chose one."""

    loglik: Any = None  # (n, P) array
    regression: Any = None  # (n,) array
    kde_bandwidth: float | None = None


@runtime_checkable
class Attacker(Protocol):
    name: str

    def applies_to(self, threat: Any) -> bool:
        """Whether the threat model gives this attacker what it reads (channels, mechanism)."""
        ...

    def channels_used(self, threat: Any) -> list[str]:
        """The channels this attacker reads under ``threat``."""
        ...

    def scores(self, threat: Any, view: Any, contexts: Any, shadow: Any, rng: Any) -> AttackScores:
        """Per-submission scores of ``view``, learned from the ``shadow`` bank with randomness from ``rng``."""
        ...


# --- the reports' -----------------------------------------------------------------------------------------


@runtime_checkable
class ReportSection(Protocol):
    """A report plug-in (``reports.section.Section`` meets it): the result kinds it reads, what it extracts
    from each result, what it computes once all are read, and how it renders."""

    name: str
    kinds: tuple[str, ...]
    render: Callable[..., None]
    extract: Callable[..., None] | None
    finish: Callable[..., None] | None
