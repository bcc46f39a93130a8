"""What an NVFlare filter promises, read from its own parameters and from the accounting it records, each reading
written down as (parameter → claim → why).

* ``SVTPrivacy(fraction, epsilon, noise_var, gamma, tau, ..., epsilon_threshold, epsilon_query,
  epsilon_release)``: its docstring gives ``epsilon`` as the budget of the threshold/query (selection) phase,
  split ε₁ : ε₂ = 1 : (2c)^{2/3} unless given, and the release phase the budget ``epsilon_release``, or, when
  that is omitted, c·``noise_var`` with c = ⌈fraction·d⌉ the entries it uploads out of d; every call records
  ``epsilon_total`` = ε₁ + ε₂ + ε_release with δ = 0 in the result's metadata (``svt_privacy_budget``,
  "pure_dp_sum"), and notes that scalar entries pass through outside that guarantee. Claim: (ε_total, 0)
  on the filtered arrays (channel ``update``); the scalar entries and the metadata are not covered.
* ``PercentilePrivacy(percentile, gamma)`` (Shokri & Shmatikov, CCS 2015: share only the largest updates,
  truncated at γ) and ``ExcludeVars(exclude_vars)`` (drop named variables): no privacy budget, no noise, no
  accounting — no DP claim (ε = ∞, nothing covered); every channel that differs between two updates is an
  unprotected channel.
* Any other filter: the claim the user states (``claim=PrivacyClaim(...)``, or ``AUDIT_CLAIM`` in the module
  that defines it), else none.
"""

from __future__ import annotations

import math

from pgc.contracts import PrivacyClaim
from pgc.errors import UserError

UPDATE = "update"


def svt_budget(svt, entries: int) -> dict:
    """The SVT filter's per-call budget for an update of ``entries`` entries (arrays and scalars), from its
    parameters by its docstring's rules (c = min(⌈fraction·d⌉, d))."""
    uploaded = int(min(math.ceil(entries * svt.fraction), entries))
    ratio = (2.0 * uploaded) ** (2.0 / 3.0)
    if not hasattr(svt, "epsilon_threshold"):
        return _svt_budget_27(svt, uploaded, ratio)
    threshold, query = svt.epsilon_threshold, svt.epsilon_query
    if threshold is None and query is None:
        threshold = svt.epsilon / (1.0 + ratio)
        query = svt.epsilon - threshold
    elif threshold is None:
        threshold = svt.epsilon - query
    elif query is None:
        query = svt.epsilon - threshold
    release = svt.epsilon_release if svt.epsilon_release is not None else uploaded * svt.noise_var
    return {
        "n_upload": uploaded,
        "epsilon_threshold": float(threshold),
        "epsilon_query": float(query),
        "epsilon_release": float(release),
        "epsilon_total": float(threshold + query + release),
    }


def _svt_budget_27(svt, uploaded: int, ratio: float) -> dict:
    """NVIDIA FLARE 2.7's SVTPrivacy(fraction, epsilon, noise_var, gamma, tau): threshold noise Laplace(2γ/ε)
    (ε₁ = ``epsilon``), query noise Laplace(4γc/ε₂) with ε₂ = ε·(2c)^{2/3} (``eps_2``), release noise
    Laplace(2γ/noise_var) on each of the c uploaded entries (ε_release = c·noise_var)."""
    if not all(hasattr(svt, name) for name in ("epsilon", "noise_var", "eps_2")):
        raise UserError(
            f"SVTPrivacy of NVIDIA FLARE {_nvflare_version()} has parameters this adapter cannot read; "
            "state its claim instead: pgc audit nvflare ... --claim EPSILON[,DELTA] (or AUDIT_CLAIM = "
            "PrivacyClaim(eps, delta, ('update',)) in a module that wraps the filter)"
        )
    threshold = float(svt.epsilon)
    query = threshold * ratio
    release = uploaded * float(svt.noise_var)
    return {
        "n_upload": uploaded,
        "epsilon_threshold": threshold,
        "epsilon_query": query,
        "epsilon_release": release,
        "epsilon_total": threshold + query + release,
    }


def _nvflare_version() -> str:
    try:
        import nvflare

        return str(getattr(nvflare, "__version__", "unknown"))
    except ImportError:
        return "unknown"


def svt_claim(svt, entries: int, recorded: dict | None) -> tuple[PrivacyClaim, list[dict]]:
    """SVTPrivacy's claim on an update of ``entries`` entries, and its readings; ``recorded``: the per-call budget
    the filter wrote into a result's metadata (checked against the parameters' reading)."""
    budget = svt_budget(svt, entries)
    release_27 = not hasattr(svt, "epsilon_threshold")  # NVIDIA FLARE 2.7's parameters (_svt_budget_27)
    selection_why = (
        "2.7's SVTPrivacy: ε₁ = epsilon for the threshold and ε₂ = epsilon·(2c)^{2/3} for the queries (its eps_2), "
        "so the selection spends epsilon·(1 + (2c)^{2/3}), not epsilon"
        if release_27
        else "the selection budget, split 1 : (2c)^{2/3} (the docstring's standard SVT allocation) unless given"
    )
    readings = [
        {
            "parameter": f"fraction={svt.fraction:g} on d={entries} entries",
            "claim": f"c = {budget['n_upload']} uploaded",
            "why": "c = ⌈fraction·d⌉, d counting every entry, the scalars too (process_dxo)",
        },
        {
            "parameter": f"epsilon={svt.epsilon:g}"
            + (
                ""
                if getattr(svt, "epsilon_threshold", None) is None and getattr(svt, "epsilon_query", None) is None
                else f", epsilon_threshold={svt.epsilon_threshold}, epsilon_query={svt.epsilon_query}"
            ),
            "claim": f"ε₁ = {budget['epsilon_threshold']:.4g}, ε₂ = {budget['epsilon_query']:.4g}",
            "why": selection_why,
        },
        {
            "parameter": (
                f"epsilon_release={svt.epsilon_release:g}"
                if getattr(svt, "epsilon_release", None) is not None
                else f"noise_var={svt.noise_var:g} (epsilon_release omitted)"
            ),
            "claim": f"ε_release = {budget['epsilon_release']:.4g}",
            "why": "the release budget; omitted, it is c·noise_var (the docstring: 'a total release budget of "
            "n_upload * noise_var'), i.e. Laplace(2γc/ε_release) on each uploaded entry",
        },
        {
            "parameter": "the accounting (2.7 records none)"
            if release_27
            else "the recorded accounting (svt_privacy_budget)",
            "claim": f"ε = ε₁ + ε₂ + ε_release = {budget['epsilon_total']:.4g}, δ = 0 per call, on the arrays",
            "why": "'pure_dp_sum' per call; 'scalar passthrough is not noise-protected by the SVT accountant'"
            + (f"; recorded epsilon_total = {recorded['epsilon_total']:.4g}" if recorded else ""),
        },
    ]
    if recorded is not None and not math.isclose(
        recorded.get("epsilon_total", math.nan), budget["epsilon_total"], rel_tol=1e-9
    ):
        raise UserError(
            f"SVTPrivacy recorded epsilon_total {recorded.get('epsilon_total')} but its parameters give "
            f"{budget['epsilon_total']}"
        )
    return PrivacyClaim(budget["epsilon_total"], 0.0, (UPDATE,)), readings


def no_claim(filter_name: str, parameters: str) -> tuple[PrivacyClaim, list[dict]]:
    """A filter with no privacy budget and no accounting: no DP claim."""
    return PrivacyClaim(math.inf, 0.0, ()), [
        {
            "parameter": parameters,
            "claim": "no DP claim (ε = ∞, no channel covered)",
            "why": f"{filter_name} takes no privacy budget, adds no noise and records no accounting",
        }
    ]


def filter_claim(flt, entries: int, recorded: dict | None, given: PrivacyClaim | None = None):
    """(claim, readings) of a filter instance (module docstring)."""
    from nvflare.app_common.filters import ExcludeVars, PercentilePrivacy, SVTPrivacy

    if given is not None:
        return PrivacyClaim.of(given), [
            {
                "parameter": "the claim given with the filter",
                "claim": f"ε = {given.epsilon:g}, δ = {given.delta:g} on {', '.join(given.covers)}",
                "why": "stated by the user (--claim, AUDIT_CLAIM or claim=...)",
            }
        ]
    if isinstance(flt, SVTPrivacy):
        return svt_claim(flt, entries, recorded)
    if isinstance(flt, PercentilePrivacy):
        return no_claim("PercentilePrivacy", f"percentile={flt.percentile}, gamma={flt.gamma:g}")
    if isinstance(flt, ExcludeVars):
        return no_claim("ExcludeVars", f"exclude_vars={getattr(flt, 'exclude_vars', None)!r}")
    return no_claim(type(flt).__name__, "its parameters")


def clipping_bound(flt) -> float:
    """The bound a filter clips entries to (γ of SVTPrivacy and PercentilePrivacy), else 1."""
    gamma = getattr(flt, "gamma", None)
    return float(gamma) if isinstance(gamma, (int, float)) and gamma > 0 else 1.0
