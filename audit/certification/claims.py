"""What an audit holds a release to: the claimant's promise, and where the claimant's own accounting contradicts it.

A claim is what the claimant states — its (ε, δ), the channels it covers and, optionally, a privacy curve it
states with them (``gdp_mu``, a ``privacy_profile``). The auditor never derives a claim from the object under
audit: the curve a mechanism's curve test checks is the ``gdp_mu`` the mechanism states
(:func:`mechanism_claim`), not one computed from the noise its code adds.

Each stated promise is an upper bound on what the release reveals, so a stated curve never contradicts a stated
(ε, δ), even where the curve alone would allow more at δ: both hold at once for many mechanisms (randomized
response at ε = 1 is (1, 0)-DP and 1.232-GDP, though a μ-GDP curve alone allows no finite ε at δ = 0). Each is
tested by its own certified test (the threshold test for (ε, δ), the curve test for μ or the profile), and only
the samples decide.

What can contradict a claim before any sample is drawn is the claimant's own accounting
(:func:`accountant_contradiction`): the accountant's ε (dp-accounting's PLD, or the Gaussian closed form) of the
noise the claimant declares it adds (``dp_event()``, a mechanism's ``noise_scale``) at the claimed δ above the
claimed ε. The declared noise is a statement of what the release is, not a bound on it, and the accountant is
tight for it: such a claim is violated in words, whatever the samples say. The comparison allows
:data:`CLAIM_TOLERANCE` (relative): an accountant's discretisation must not turn an exactly calibrated claim into a
contradiction.
"""

from __future__ import annotations

import math
from typing import Any

from pgc.contracts import PrivacyClaim

CLAIM_TOLERANCE = 1e-3  # relative slack of a contradiction (PLD discretisation 1e-4)
MECHANISM_CHANNEL = "output"


def _exceeds(implied: float, claimed: float) -> bool:
    return implied > claimed * (1.0 + CLAIM_TOLERANCE) + 1e-12


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
    """Why ``claim`` is contradicted by the claimant's own accounting; None when it is not (a stated curve never
    contradicts it: module docstring)."""
    return accountant_contradiction(claim, accountant_epsilon)


def mechanism_claim(mechanism: Any, delta: float | None = None) -> PrivacyClaim:
    """The claim of a mechanism: its ``epsilon``, the δ given (None: its own ``delta``, 0 for a pure ε
    mechanism), covering its whole output, with the curve it states (``gdp_mu``, ``privacy_profile``), if any,
    whatever its δ."""
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
