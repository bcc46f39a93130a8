"""The noise a mechanism declares, as a ``dp_accounting.DpEvent`` (for an accountant), and the μ of the
Gaussian-DP trade-off curve it states (Dong, Roth & Su 2022, Thm. 2.7: one Gaussian release with σ = z·Δ₂ is
(1/z)-GDP; k of them compose to √k/z)."""

from __future__ import annotations

import math

from pgc.errors import UserError


def gaussian_event(noise_multiplier: float, count: int = 1):
    """The DpEvent of ``count`` Gaussian releases, each with σ = noise_multiplier·Δ₂."""
    import dp_accounting

    if not (math.isfinite(noise_multiplier) and noise_multiplier > 0):
        raise UserError(f"noise_multiplier must be a positive finite number, got {noise_multiplier!r}")
    if not (isinstance(count, int) and count >= 1):
        raise UserError(f"count must be a positive integer, got {count!r}")
    event = dp_accounting.GaussianDpEvent(noise_multiplier)
    return event if count == 1 else dp_accounting.SelfComposedDpEvent(event, count)


def gaussian_noise_multiplier(mechanism) -> float | None:
    """z = σ/Δ₂ of a mechanism with Gaussian noise (``noise_scale`` σ, L2 clip C/2, so Δ₂ = C) and an
    (ε, δ) claim with δ > 0; None for any other mechanism."""
    if not (getattr(mechanism, "delta", 0.0) or 0.0) > 0:
        return None
    sigma, clip = getattr(mechanism, "noise_scale", None), getattr(mechanism, "clip", None)
    if sigma is None or clip is None:
        return None
    return float(sigma) / float(clip)


def mechanism_event(mechanism):
    """The DpEvent of the noise one submission of a mechanism declares (its ``noise_scale`` σ and clip C: a
    Gaussian with z = σ/C); None for any other mechanism (pure-ε mechanisms need no accountant beside their
    claim). The accountant's ε is shown beside the claim and, when it exceeds the claim, contradicts it."""
    z = gaussian_noise_multiplier(mechanism)
    return None if z is None else gaussian_event(z)


def mechanism_gdp_mu(mechanism, count: int = 1) -> float | None:
    """The μ-GDP curve a mechanism STATES for ``count`` of its submissions (√count·μ): its ``gdp_mu``
    attribute, None when it states none. A claim is what the claimant promises: the curve is never derived
    from the noise the implementation adds (that is :func:`mechanism_event`, the accountant's input)."""
    stated = getattr(mechanism, "gdp_mu", None)
    return None if stated is None else float(stated) * math.sqrt(count)


PROFILE_POINTS = 129  # ε grid of a privacy profile
PROFILE_SMALLEST_DELTA = 1e-12  # the grid runs from ε = 0 to the ε at this δ


def pld_accountant(event):
    """dp-accounting's privacy-loss-distribution accountant with ``event`` composed (add-or-remove-one)."""
    from dp_accounting.pld import pld_privacy_accountant

    accountant = pld_privacy_accountant.PLDAccountant()
    accountant.compose(event)
    return accountant


def privacy_profile(event, points: int = PROFILE_POINTS) -> tuple[tuple[float, float], ...]:
    """The δ(ε) curve of ``event``'s privacy-loss distribution on an even ε grid from 0 to the ε at δ = 1e-12:
    ((ε_i, δ_i), ...). The accountant's δ are upper bounds (pessimistic discretisation), so the release is
    (ε_i, δ_i)-DP at every point: a claim made of them is never stronger than the accountant's."""
    return profile_of(pld_accountant(event), points)


def pld_claim(event, delta: float, points: int = PROFILE_POINTS) -> tuple[float, tuple[tuple[float, float], ...]]:
    """(ε at ``delta``, privacy profile) of ``event`` from one privacy-loss distribution (composing a
    subsampled event is the costly step: it is done once for both)."""
    accountant = pld_accountant(event)
    return float(accountant.get_epsilon(delta)), profile_of(accountant, points)


def profile_of(accountant, points: int = PROFILE_POINTS) -> tuple[tuple[float, float], ...]:
    """:func:`privacy_profile` of a PLD accountant that already holds its composed event."""
    if not (isinstance(points, int) and points >= 2):
        raise UserError(f"points must be an integer >= 2, got {points!r}")
    top = float(accountant.get_epsilon(PROFILE_SMALLEST_DELTA))
    grid = [top * i / (points - 1) for i in range(points)]
    return tuple((e, min(1.0, max(0.0, float(accountant.get_delta(e))))) for e in grid)


def poisson_gaussian_event(sampling_rate: float, noise_multiplier: float, steps: int = 1):
    """The DpEvent of ``steps`` Gaussian releases (multiplier z), each including a record with probability q
    (Poisson subsampling, as DP-SGD's accountants assume)."""
    import dp_accounting

    if not (0.0 < sampling_rate <= 1.0):
        raise UserError(f"sampling_rate must lie in (0, 1], got {sampling_rate!r}")
    if not (isinstance(steps, int) and steps >= 1):
        raise UserError(f"steps must be a positive integer, got {steps!r}")
    event = dp_accounting.PoissonSampledDpEvent(sampling_rate, gaussian_event(noise_multiplier))
    return event if steps == 1 else dp_accounting.SelfComposedDpEvent(event, steps)
