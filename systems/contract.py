"""The contract between an audited system and everything that reads it (auditor, attacks, reports).

It depends on nothing but the standard library, so every system package, the auditor and the
result schemas can import it without importing each other.

* :class:`PrivacyClaim` — what a system promises: ``epsilon`` per release (``math.inf``: no claim),
  ``delta`` (0.0 for pure ε-DP), ``covers`` (the channels the promise covers; any other channel is
  unprotected) and, optionally, a privacy curve: ``gdp_mu`` (the μ of a μ-GDP trade-off curve the noise
  delivers) or ``privacy_profile`` (points (ε_i, δ_i) of the δ(ε) curve of a composed or subsampled
  mechanism, as an accountant's privacy-loss distribution states it: the release is (ε_i, δ_i)-DP for
  every i).
* :class:`System` — ``name``, ``claim``, ``channels`` and ``release(secret, n, rng, *, broadcast=None)``:
  n independent releases of ONE participant holding ``secret`` (opaque to the auditor), as a mapping
  channel → (n, k) float array. ``broadcast`` is what the aggregator sends (a model θ, synced
  statistics); None is the honest default. Randomness comes only from ``rng``.

Optional members of a system, used when present:

* ``broadcast_space`` → ``(lower, upper)`` arrays: the box a black-box search of an adversarial
  broadcast explores;
* ``crafted_broadcasts(secret, secret_prime, rng)`` → a list of broadcasts: the system's own crafted
  family;
* ``canaries()`` → ``{name: (secret, secret_prime)}``: named neighbouring pairs;
* ``claim_for(channel)`` → a :class:`PrivacyClaim` for a channel whose claim differs from ``claim``
  (k submissions of one participant: k·ε by composition);
* ``dp_event()`` → a ``dp_accounting.DpEvent``: the noise one release actually adds, for the
  accountant; ``dp_event_for(channel)`` where a channel composes more;
* ``describe_secret(secret)`` → a short text for reports;
* ``audit_statistics(channel)`` → extra candidate tests of one channel's releases that know their format
  (objects with ``name`` and ``fit(pos, neg)`` → a scorer of (n, k) releases, or None), offered to the
  auditor's selection beside its own; they are chosen on the training split like any other, so they cannot
  bias a certified bound;
* ``secret_space`` → ``dim``, ``relation`` and ``pair(x)``: a neighbouring pair for any x in [0, 1]^dim, for
  the auditor's worst-pair search (``audit_system(..., search_pair=True)``);
* ``relation`` → what makes two secrets neighbours, in words; ``report_section`` → the report section that
  renders the system's audits.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Mapping, Protocol, runtime_checkable

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
            raise ValueError(f"a claim's epsilon must be a positive number or inf, got {eps!r}")
        if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not (0.0 <= delta < 1.0):
            raise ValueError(f"a claim's delta must lie in [0, 1), got {delta!r}")
        if isinstance(covers, str) or not all(isinstance(c, str) and c for c in (covers or ())):
            raise ValueError(f"a claim's covers must be a tuple of channel names, got {covers!r}")
        if mu is not None and (isinstance(mu, bool) or not isinstance(mu, numbers.Real)
                               or not (0.0 < mu < math.inf)):
            raise ValueError(f"a claim's gdp_mu must be a positive finite number or None, got {mu!r}")
        object.__setattr__(self, "epsilon", float(eps))
        object.__setattr__(self, "delta", float(delta))
        object.__setattr__(self, "covers", tuple(covers or ()))
        object.__setattr__(self, "gdp_mu", None if mu is None else float(mu))
        object.__setattr__(self, "privacy_profile", _checked_profile(self.privacy_profile))
        if mu is not None and self.privacy_profile is not None:
            raise ValueError("a claim states either gdp_mu or privacy_profile, not both")

    @classmethod
    def of(cls, claim: Any) -> "PrivacyClaim":
        """``claim`` itself when it is a PrivacyClaim, else one built from its ``epsilon``, ``delta``,
        ``covers`` (and ``gdp_mu`` if it has one), validated; a clear ValueError when they are missing."""
        if isinstance(claim, cls):
            return claim
        missing = [k for k in ("epsilon", "delta", "covers") if not hasattr(claim, k)]
        if missing:
            raise ValueError(f"a claim needs epsilon, delta and covers; {type(claim).__name__} lacks "
                             f"{', '.join(missing)}")
        return cls(claim.epsilon, claim.delta, claim.covers, getattr(claim, "gdp_mu", None),
                   getattr(claim, "privacy_profile", None))

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
        raise ValueError(f"a claim's privacy_profile must be (epsilon, delta) pairs, got {profile!r}") from None
    if not points or not all(math.isfinite(e) and e >= 0.0 and 0.0 <= d <= 1.0 for e, d in points):
        raise ValueError("a claim's privacy_profile needs at least one (epsilon >= 0, 0 <= delta <= 1) pair")
    return points


@runtime_checkable
class System(Protocol):
    name: str
    claim: PrivacyClaim
    channels: tuple[str, ...]

    def release(self, secret: Any, n: int, rng: Any, *, broadcast: Any = None) -> Mapping[str, Any]:
        """n independent releases of one participant holding ``secret``: channel → (n, k) floats."""
        ...
