"""The active attacker: the aggregator sends a crafted model, then classifies ψ from the submissions.

A passive attacker reads whatever model the training produced; in LDP the aggregator chooses θ, so
the strongest attacker the threat model allows first crafts θ and then runs the likelihood / learned /
side-channel attackers on fresh submissions made at it. Through the gradient of a Laplace mechanism
at finite ε, θ comes from the layout family (:mod:`attacks.a3c.layout`): it maximises the mechanism's
exact Bayes accuracy over all of Ψ, so each candidate's clipped gradient lands where the Laplace
test wants it. Otherwise (score channel, ε = ∞, other mechanisms) θ is the audit's crafted model
(:mod:`pgc.a3c.crafted`) for the extreme pair (min Ψ, max Ψ). Either search runs on the search
stream of the seed; the attack itself uses fresh targets.

The rows are compared with chance 1/|Ψ| and with the ε-LDP ceiling e^{kε}/(e^{kε}+|Ψ|−1), which is
attained by randomized response. :func:`laplace_layout_accuracy` gives what the Laplace mechanism
itself can reach at best on the layouts named there (its output is continuous, its privacy loss
ε·‖Δ‖₁/C spreads over coordinates), so a user can tell "the attacker is weak" from "this mechanism
cannot reach the ceiling".
"""

from __future__ import annotations

import math

import numpy as np

from attacks.a3c.layout import LayoutResult, LayoutSettings, search_layout
from pgc.a3c.crafted import SearchResult, SearchSettings, search_crafted_model
from pgc.errors import UserError

LAYOUTS = {
    # clipped-gradient layouts on the L1 sphere of radius C/2, in units of C/2
    "opposite": [(1.0,), (-1.0,)],  # two classes, one coordinate: the canary
    "diamond": [(1.0, 0.0), (-1.0, 0.0), (0.0, 1.0)],  # three classes, pairwise L1 distance C
    "disjoint": [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)],
}


def craft_for_candidates(
    candidates,
    channels,
    *,
    seed: int | np.random.SeedSequence = 0,
    settings: SearchSettings | None = None,
    hyper=None,
    laplace_epsilon: float | None = None,
    clip: float = 0.01,
    layout_settings: LayoutSettings | None = None,
    progress=None,
) -> SearchResult | LayoutResult:
    """The crafted θ of the active attack (module docstring).

    ``laplace_epsilon`` (the ε of a Laplace mechanism, finite) with the gradient channel selects the
    layout search over all of Ψ at clip ``clip``; without it θ is crafted for the extreme pair through
    the gradient if the attacker may read it, else the score."""
    cands = sorted(float(c) for c in candidates)
    if len(cands) < 2 or len(set(cands)) != len(cands):
        raise UserError("an active attack needs at least two distinct candidates")
    if "gradient" in channels and laplace_epsilon is not None and math.isfinite(laplace_epsilon):
        return search_layout(
            cands, laplace_epsilon, clip, settings=layout_settings, seed=seed, hyper=hyper, progress=progress
        )
    objective = "gradient" if "gradient" in channels else "score"
    return search_crafted_model(cands[0], cands[-1], objective=objective, settings=settings, seed=seed, hyper=hyper)


def laplace_layout_accuracy(layout: str, epsilon: float, *, samples: int = 400_000, seed: int = 0) -> float:
    """Bayes accuracy (uniform prior, exact Laplace likelihood, ties split at random) of the Laplace
    mechanism when the classes' clipped gradients sit at the points of ``layout``.

    A Monte Carlo number (``samples`` per class; standard error below 0.001 at the default)."""
    if layout not in LAYOUTS:
        raise UserError(f"unknown layout {layout!r}; known: {', '.join(LAYOUTS)}")
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise UserError("epsilon must be a positive finite number")
    points = np.asarray(LAYOUTS[layout]) * epsilon / 2.0  # in units of the noise scale C/ε
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))
    correct = 0
    for c in range(len(points)):
        y = rng.laplace(size=(samples, points.shape[1])) + points[c]
        loglik = -np.abs(y[:, None, :] - points[None]).sum(axis=2)
        best = loglik.max(axis=1, keepdims=True)
        ties = loglik == best
        pick = (rng.random(loglik.shape) * ties).argmax(axis=1)  # uniform among the tied maxima
        correct += int(np.count_nonzero(pick == c))
    return correct / (samples * len(points))
