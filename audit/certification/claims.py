"""What an audit holds a release to: the claimant's promise, and where that promise contradicts itself.

A claim is what the claimant states — its (ε, δ), the channels it covers and, optionally, a privacy curve it
states with them (``gdp_mu``, a ``privacy_profile``). The auditor never derives a claim from the object under
audit: the curve a mechanism's curve test checks is the ``gdp_mu`` the mechanism states
(:func:`mechanism_claim`), not one computed from the noise its code adds.

A claim can contradict itself before any sample is drawn (:func:`contradiction`): a stated curve, or the
accountant's ε of the noise the claimant declares (``dp_event()``, a mechanism's ``noise_scale``), may imply
more than the stated (ε, δ). Such a claim is violated in words, whatever the samples say: "μ = 0.752 means
ε = 3.16 at δ = 1e-5" is a property of the promise itself.

Readings (each a choice, written down):

* a stated μ-GDP curve implies ε(δ) = :func:`audit.certification.curves.gdp_epsilon` (Dong, Roth & Su 2022, Cor. 2.13)
at
  the claimed δ; with δ = 0 it contradicts any finite ε (a Gaussian curve is (ε, δ(ε))-DP with δ(ε) > 0 at
  every ε);
* a stated privacy profile is the claimant's δ(ε) curve: it contradicts (ε, δ) when a profile point at an
  ε_j ≥ ε already needs δ_j > δ (δ(ε) decreases in ε, so the profile's δ at ε is at least δ_j);
* the accountant's ε (dp-accounting's PLD, or the Gaussian closed form) at the claimed δ above the claimed ε
  contradicts it.

Each comparison allows :data:`CLAIM_TOLERANCE` (relative): an accountant's discretisation and a root finder's
precision must not turn an exactly calibrated claim into a contradiction.
"""

from __future__ import annotations

import math
from typing import Any

from pgc.contracts import PrivacyClaim

CLAIM_TOLERANCE = 1e-3  # relative slack of a contradiction (PLD discretisation 1e-4, brentq ~1e-12)
MECHANISM_CHANNEL = "output"


def _exceeds(implied: float, claimed: float) -> bool:
    return implied > claimed * (1.0 + CLAIM_TOLERANCE) + 1e-12


def curve_contradiction(claim: PrivacyClaim) -> str | None:
    """The words of a claim whose stated curve implies more than its (ε, δ); None when it does not."""
    eps, delta = claim.epsilon, claim.delta
    if not math.isfinite(eps):
        return None
    if claim.gdp_mu is not None:
        if delta <= 0:
            return (
                f"the claim contradicts its own curve: μ = {claim.gdp_mu:.3g} is not ε-DP for any finite ε "
                f"(a Gaussian curve has δ(ε) > 0), but the claim is pure ε = {eps:g}"
            )
        from audit.certification.curves import gdp_epsilon

        implied = gdp_epsilon(delta, claim.gdp_mu)
        if _exceeds(implied, eps):
            return (
                f"the claim contradicts its own curve: μ = {claim.gdp_mu:.3g} means ε = {implied:.3g} at "
                f"δ = {delta:g}, not {eps:g}"
            )
    if claim.privacy_profile is not None:
        beyond = [(e, d) for e, d in claim.privacy_profile if e >= eps and d > delta * (1.0 + CLAIM_TOLERANCE) + 1e-15]
        if beyond:
            e, d = min(beyond)
            return (
                f"the claim contradicts its own privacy profile: at ε = {e:.3g} ≥ {eps:g} the profile needs "
                f"δ = {d:.3g} > the claimed δ = {delta:g}"
            )
    return None


def accountant_contradiction(claim: PrivacyClaim, accountant_epsilon: float | None) -> str | None:
    """The words of a claim that the accountant's ε of its declared noise exceeds; None when it does not."""
    if accountant_epsilon is None or not math.isfinite(claim.epsilon):
        return None
    if _exceeds(accountant_epsilon, claim.epsilon):
        return (
            f"the claim contradicts its own accounting: the noise it declares gives ε = {accountant_epsilon:.3g} "
            f"at δ = {claim.delta:g} (accountant), more than the claimed {claim.epsilon:g}"
        )
    return None


def contradiction(claim: PrivacyClaim, accountant_epsilon: float | None = None) -> str | None:
    """Why ``claim`` contradicts itself (its stated curve first, then its accounting); None when it does not."""
    return curve_contradiction(claim) or accountant_contradiction(claim, accountant_epsilon)


def mechanism_claim(mechanism: Any, delta: float | None = None) -> PrivacyClaim:
    """The claim of a mechanism: its ``epsilon``, the δ given (None: its own ``delta``, 0 for a pure ε
    mechanism), covering its whole output, with the curve it states (``gdp_mu``, ``privacy_profile``) when
    the claim has δ > 0 (a curve stated beside a pure ε claim is checked for contradiction all the same)."""
    from pgc.mechanisms import claimed_delta

    delta = claimed_delta(mechanism) if delta is None else float(delta)
    return PrivacyClaim(
        float(mechanism.epsilon),
        delta,
        (MECHANISM_CHANNEL,),
        getattr(mechanism, "gdp_mu", None),
        getattr(mechanism, "privacy_profile", None),
    )


def claim_record(claim: PrivacyClaim) -> dict:
    """The claim as a result file holds it (with its stated curve, which the report draws)."""
    record: dict = {"epsilon": float(claim.epsilon), "delta": float(claim.delta), "covers": list(claim.covers)}
    if claim.gdp_mu is not None:
        record["gdp_mu"] = float(claim.gdp_mu)
    if claim.privacy_profile is not None:
        record["privacy_profile"] = [list(point) for point in claim.privacy_profile]
    return record
