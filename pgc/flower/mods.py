"""What a Flower client's mods promise, read from their own parameters.

Flower's ``LocalDpMod(clipping_norm, sensitivity, epsilon, delta)`` clips the update to L2 norm
``clipping_norm`` and adds N(0, σ²) to every parameter with the textbook calibration
σ = sensitivity·√(2 ln(1.25/δ))/ε (Dwork & Roth 2014, Thm. A.1; stated there for ε < 1). Its claim is
(ε, δ) per update over the channel ``update``, with the μ-GDP curve of the noise it adds at the
sensitivity it states: μ = sensitivity/σ. Whether ``sensitivity`` is the update's true sensitivity
(2·clipping_norm for two arbitrary clipped updates) is exactly what an audit checks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pgc.contracts import PrivacyClaim


def mods_of(app) -> list:
    """The mods a ClientApp wraps around its client (``ClientApp(client_fn, mods=[...])``)."""
    return list(getattr(app, "_mods", []) or [])


def local_dp_sigma(mod) -> float:
    """The noise std LocalDpMod adds (its own formula)."""
    return mod.sensitivity * math.sqrt(2.0 * math.log(1.25 / mod.delta)) / mod.epsilon


def _local_dp_mods(mods: Sequence) -> list:
    from flwr.client.mod import LocalDpMod

    return [m for m in mods if isinstance(m, LocalDpMod)]


def claim_from_mods(mods: Sequence) -> PrivacyClaim | None:
    """The claim of the client's LocalDpMod (None without one; several compose by adding ε and δ, their
    curves by μ = √Σμᵢ²)."""
    local = _local_dp_mods(mods)
    if not local:
        return None
    epsilon = sum(float(m.epsilon) for m in local)
    delta = sum(float(m.delta) for m in local)
    mus = [m.sensitivity / local_dp_sigma(m) for m in local if m.sensitivity > 0]
    mu = math.sqrt(sum(x * x for x in mus)) if mus else None
    return PrivacyClaim(epsilon, min(delta, 0.999), ("update",), gdp_mu=mu)


def mods_event(mods: Sequence):
    """The dp_accounting event of the noise the client's LocalDpMods add at their stated sensitivity."""
    import dp_accounting

    events = [
        dp_accounting.GaussianDpEvent(local_dp_sigma(m) / m.sensitivity)
        for m in _local_dp_mods(mods)
        if m.sensitivity > 0
    ]
    if not events:
        return None
    return events[0] if len(events) == 1 else dp_accounting.ComposedDpEvent(events)
