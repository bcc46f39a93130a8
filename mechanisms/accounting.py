"""The noise a mechanism adds, as a ``dp_accounting.DpEvent`` (for an accountant) and as the μ of its
Gaussian-DP trade-off curve (Dong, Roth & Su 2022, Thm. 2.7: one Gaussian release with σ = z·Δ₂ is
(1/z)-GDP; k of them compose to √k/z)."""

from __future__ import annotations

import math


def gaussian_event(noise_multiplier: float, count: int = 1):
    """The DpEvent of ``count`` Gaussian releases, each with σ = noise_multiplier·Δ₂."""
    import dp_accounting

    if not (math.isfinite(noise_multiplier) and noise_multiplier > 0):
        raise ValueError(f"noise_multiplier must be a positive finite number, got {noise_multiplier!r}")
    if not (isinstance(count, int) and count >= 1):
        raise ValueError(f"count must be a positive integer, got {count!r}")
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
    """The DpEvent of one submission of a mechanism with Gaussian noise; None for any other mechanism
    (pure-ε mechanisms need no accountant beside their claim)."""
    z = gaussian_noise_multiplier(mechanism)
    return None if z is None else gaussian_event(z)


def mechanism_gdp_mu(mechanism, count: int = 1) -> float | None:
    """μ of ``count`` submissions of a mechanism with Gaussian noise: √count / z; None for any other."""
    explicit = getattr(mechanism, "gdp_mu", None)
    if explicit is not None:
        return float(explicit) * math.sqrt(count)
    z = gaussian_noise_multiplier(mechanism)
    return None if z is None else math.sqrt(count) / z
