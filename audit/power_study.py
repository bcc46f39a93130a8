"""Evidence: curve ε vs threshold ε lower bound on releases of an exact Gaussian mechanism.

The releases of a Gaussian mechanism (sensitivity Δ, noise σ) on two neighbouring
inputs are N(0, σ²) vs N(Δ, σ²) along the difference direction; with Δ/σ = μ they
are drawn here as N(0, 1) vs N(μ, 1) with numpy, one SeedSequence child per seed.
Writes results/power/gaussian_curve_vs_threshold.json.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import schemas

from audit.bounds import epsilon_lower_bound
from audit.curves import curve_epsilon, gdp_mu_for, mu_lower_bound, select_curve_threshold

ALPHA = 0.05


def select_epsilon_threshold(pos, neg, n_cert: int, delta: float) -> float:
    """Threshold maximizing the projected threshold-audit ε lower bound on the training split."""
    pos, neg = np.sort(pos), np.sort(neg)
    candidates = np.unique(np.quantile(np.concatenate([pos, neg]), np.linspace(0.0, 1.0, 401)))
    fpr = 1.0 - np.searchsorted(neg, candidates, side="left") / neg.size
    fnr = np.searchsorted(pos, candidates, side="left") / pos.size
    scores = [epsilon_lower_bound(int(round(a * n_cert)), n_cert, int(round(b * n_cert)), n_cert,
                                  ALPHA, delta) for a, b in zip(fpr, fnr)]
    return float(candidates[int(np.argmax(scores))])


def one_seed(mu: float, delta: float, n: int, rng: np.random.Generator) -> dict:
    neg, pos = rng.normal(0.0, 1.0, (2, n)), rng.normal(mu, 1.0, (2, n))
    t_curve = select_curve_threshold(pos[0], neg[0], n, ALPHA)
    mu_lb = mu_lower_bound(int((neg[1] >= t_curve).sum()), int((pos[1] < t_curve).sum()), n, n, ALPHA)
    t_eps = select_epsilon_threshold(pos[0], neg[0], n, delta)
    eps_lb = epsilon_lower_bound(int((neg[1] >= t_eps).sum()), n, int((pos[1] < t_eps).sum()), n,
                                 ALPHA, delta)
    return {"mu_lower_bound": mu_lb, "curve_epsilon": curve_epsilon(mu_lb, delta),
            "threshold_epsilon_lb": float(eps_lb)}


def gaussian_study(epsilon: float, delta: float, n: int, seeds: int, root: int) -> dict:
    mu = gdp_mu_for(epsilon, delta)
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(root).spawn(seeds)]
    runs = [one_seed(mu, delta, n, rng) for rng in rngs]
    curve = np.array([r["curve_epsilon"] for r in runs]) / epsilon
    return {"epsilon": epsilon, "delta": delta, "mu": mu, "n_per_side": n, "alpha": ALPHA,
            "seeds": seeds, "curve_fraction_median": float(np.median(curve)),
            "curve_fraction_min": float(curve.min()),
            "threshold_fraction_median": float(np.median(
                [r["threshold_epsilon_lb"] for r in runs]) / epsilon),
            "runs": runs}


def main(out_dir: str = "results/power") -> None:
    studies = [gaussian_study(2.0, 1e-5, 100_000, 20, 20), gaussian_study(1.0, 1e-5, 100_000, 20, 10)]
    path = Path(out_dir) / "gaussian_curve_vs_threshold.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    result = schemas.dump("power-study", {"studies": studies, "command": "python -m audit.power_study " + out_dir})
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")  # written whole, then renamed into place
    with os.fdopen(fd, "w") as handle:
        handle.write(json.dumps(result, indent=1) + "\n")
    os.replace(tmp, path)
    for s in studies:
        print(s["epsilon"], s["curve_fraction_median"], s["curve_fraction_min"], s["threshold_fraction_median"])


if __name__ == "__main__":
    main(*sys.argv[1:])
