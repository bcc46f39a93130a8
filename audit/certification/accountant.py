"""The accountant: the ε(δ) that a release's actual noise delivers, beside the claim and the audit.

A claim says (ε, δ); the noise a system adds may deliver less (a conservative calibration) or more (a
wrong one). For noise described as a ``dp_accounting.DpEvent`` (a Gaussian with noise multiplier
z = σ/Δ₂, a Laplace, compositions of them: k submissions, the nodes of a tree) the privacy loss
distribution (PLD) accountant of Google's ``dp-accounting`` gives ε at a δ, tight up to its
discretization. For one Gaussian the closed form of Balle & Wang 2018 (Thm. 8, :mod:`pgc.mechanisms.calibration`)
gives the same number; the tests hold the two to 1e-3.

A pure ε claim (δ = 0) is read at δ = 0, where both of dp-accounting's accountants answer ∞ by construction (the
PLD accountant moves its truncated tail mass to an infinite loss; the RDP accountant's conversion needs δ > 0).
:func:`pure_epsilon` gives the ε at δ = 0 of an event made of Laplaces, by the rule dp-accounting itself applies to
``LaplaceDpEvent`` (ε = 1/noise_multiplier, Dwork & Roth 2014, Thm. 3.6) and basic composition, which is exact at
δ = 0 (the privacy losses reach their maxima together); a Gaussian part makes it ∞ (no finite ε holds at δ = 0).

The Gaussian-DP estimate :func:`gdp_mu_estimate` (Dong, Roth & Su 2019; used for auditing by Nasr et al.
2023) turns a test's certified error rates into the μ of a μ-GDP trade-off curve through them. It assumes
the mechanism's trade-off curve IS Gaussian, so it is an estimate to show beside a Gaussian claim's
μ = Δ₂/σ, never evidence for a verdict.
"""

from __future__ import annotations

import functools
import math

from scipy.stats import norm

from pgc.errors import UserError

PLD_DISCRETIZATION = 1e-4  # the PLD accountant's value discretization interval (pessimistic rounding)


def _accountant():
    from dp_accounting.pld import pld_privacy_accountant

    return pld_privacy_accountant.PLDAccountant(value_discretization_interval=PLD_DISCRETIZATION)


def gaussian_composition_mu(event) -> float | None:
    """μ of an event made only of Gaussians (one, self-composed, or composed): √Σ 1/z²; None otherwise."""
    import dp_accounting

    if isinstance(event, dp_accounting.GaussianDpEvent):
        return math.inf if event.noise_multiplier == 0 else 1.0 / event.noise_multiplier
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        inner = gaussian_composition_mu(event.event)
        return None if inner is None else math.sqrt(event.count) * inner
    if isinstance(event, dp_accounting.ComposedDpEvent):
        parts = [gaussian_composition_mu(e) for e in event.events]
        return None if any(p is None for p in parts) else math.sqrt(sum(p * p for p in parts))
    return None


def pure_epsilon(event) -> float | None:
    """ε at δ = 0 of an event made only of Laplaces, Gaussians, no-ops and non-private releases (one, self-composed,
    or composed): Σ 1/z over its Laplaces, ∞ when it holds a Gaussian of finite multiplier or a non-private release;
    None for any other event (see the module docstring)."""
    import dp_accounting

    if isinstance(event, dp_accounting.LaplaceDpEvent):
        return math.inf if event.noise_multiplier == 0 else 1.0 / event.noise_multiplier
    if isinstance(event, (dp_accounting.NoOpDpEvent, dp_accounting.NonPrivateDpEvent)):
        return 0.0 if isinstance(event, dp_accounting.NoOpDpEvent) else math.inf
    if isinstance(event, dp_accounting.GaussianDpEvent):
        return 0.0 if event.noise_multiplier == math.inf else math.inf
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        inner = pure_epsilon(event.event)
        return None if inner is None else (0.0 if event.count == 0 else event.count * inner)
    if isinstance(event, dp_accounting.ComposedDpEvent):
        parts = [pure_epsilon(e) for e in event.events]
        return None if any(p is None for p in parts) else float(sum(parts))
    return None


def accountant_epsilon(event, delta: float) -> float | None:
    """ε at ``delta`` of the noise described by ``event`` (a dp_accounting DpEvent): at δ = 0 its pure ε
    (:func:`pure_epsilon`; None where the event is not one it reads); for Gaussians alone the exact μ-GDP curve
    (Dong, Roth & Su 2019, Cor. 2.13; Balle & Wang 2018, Thm. 8); else the PLD accountant."""
    if not (0.0 <= delta < 1.0):
        raise UserError(f"the accountant needs delta in [0, 1), got {delta!r}")
    if delta == 0.0:
        return pure_epsilon(event)
    mu = gaussian_composition_mu(event)
    if mu is not None:
        from audit.certification.curves import gdp_epsilon

        return gdp_epsilon(delta, mu)
    try:
        hash(event)
    except TypeError:  # a ComposedDpEvent holding a list of events: accounted without the cache
        return _pld_epsilon.__wrapped__(event, float(delta))
    return _pld_epsilon(event, float(delta))


@functools.lru_cache(maxsize=64)
def _pld_epsilon(event, delta: float) -> float:
    """The PLD accountant's ε at δ (DpEvents are frozen and hashable: a composed or subsampled event is
    accounted once per process, not once per channel)."""
    acc = _accountant()
    acc.compose(event)
    return float(acc.get_epsilon(delta))


def accountant_delta(event, epsilon: float) -> float:
    """δ at ``epsilon`` of the noise described by ``event``, PLD accountant."""
    acc = _accountant()
    acc.compose(event)
    return float(acc.get_delta(epsilon))


def gdp_mu_estimate(fpr: float, fnr: float) -> float:
    """μ of the Gaussian trade-off curve through (FPR, FNR): Φ⁻¹(1 − FPR) − Φ⁻¹(FNR), at least 0 (an
    ESTIMATE that assumes a Gaussian trade-off curve; ∞ when a rate is 0)."""
    if not (0.0 <= fpr <= 1.0 and 0.0 <= fnr <= 1.0):
        raise UserError(f"rates must lie in [0, 1], got {fpr!r}, {fnr!r}")
    if fpr == 0.0 or fnr == 0.0:
        return math.inf
    return max(0.0, float(norm.isf(fpr) - norm.ppf(fnr)))


def gdp_mu_of_gaussian(noise_multiplier: float) -> float:
    """The μ of one Gaussian release with σ = noise_multiplier·Δ₂: μ = 1/noise_multiplier."""
    if not (math.isfinite(noise_multiplier) and noise_multiplier > 0):
        raise UserError(f"noise_multiplier must be a positive finite number, got {noise_multiplier!r}")
    return 1.0 / noise_multiplier
