"""A continuous statistic's threshold rule (audit.statistics.selection.choose_threshold) on four one-number cases,
outside the engine: the training split's scores go to ``choose_threshold`` (two-sided rates, α = 0.05, δ = 0), the
chosen test is counted on fresh releases and certified (exact Clopper–Pearson). Cases, positive side first, the
statistic oriented so that the leak's event is [s ≥ t]:

* ``max-laplace``: −max of 1 + Lap(20)⁵ vs −max of 2 + Lap(20)⁵ (ReportNoisyMax3 at "all above": ratio e^0.25 on
  every event below the median, about 3 % of releases);
* ``max-exponential``: −max of Exp(20)⁵ vs −max of 1 + Exp(20)⁵ (ReportNoisyMax4 at "all below": a deep tail);
* ``laplace``: Lap(1, 10) vs Lap(0, 10) (ε = 0.1 on a wide plateau);
* ``gaussian``: N(0.1, 1) vs N(0, 1).

35,277 training and 52,915 certification releases per side (the catalogue bench's sizes at 10⁵ in total), one
seed per audit. Whatever tree is first on PYTHONPATH is measured. Usage:

    PYTHONPATH=TREE python results/catalogue/threshold-rules/rules_study.py --seeds 40
"""

from __future__ import annotations

import argparse

import numpy as np

from audit.certification.bounds import epsilon_lower_bound
from audit.statistics.selection import choose_threshold
from pgc.options import positive_int

TRAIN, CERT, ALPHA = 35_277, 52_915, 0.05


def draw(case: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """n scores per side of ``case`` (positive side first)."""
    if case == "max-laplace":
        return -np.max(1 + rng.laplace(0, 20, (n, 5)), axis=1), -np.max(2 + rng.laplace(0, 20, (n, 5)), axis=1)
    if case == "max-exponential":
        return -np.max(rng.exponential(20, (n, 5)), axis=1), -np.max(1 + rng.exponential(20, (n, 5)), axis=1)
    if case == "laplace":
        return rng.laplace(1, 10, n), rng.laplace(0, 10, n)
    return rng.normal(0.1, 1, n), rng.normal(0, 1, n)


def certified(case: str, seed: int) -> float:
    rng = np.random.default_rng(seed)
    s_pos, s_neg = draw(case, TRAIN, rng)
    threshold, share, _ = choose_threshold(s_pos, s_neg, CERT, ALPHA, 0.0, True)
    c_pos, c_neg = draw(case, CERT, rng)
    fp, fn = np.count_nonzero(c_neg >= threshold), np.count_nonzero(c_pos < threshold)
    return float(epsilon_lower_bound(fp, CERT, fn, CERT, ALPHA, 0.0, share))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=positive_int, default=40, help="seeds 0 .. SEEDS − 1 (default 40)")
    args = parser.parse_args()
    print("| case | median ε_LB | mean ε_LB | above 0.1 |")
    print("|---|---|---|---|")
    for case in ("max-laplace", "max-exponential", "laplace", "gaussian"):
        bounds = np.array([certified(case, seed) for seed in range(args.seeds)])
        print(f"| {case} | {np.median(bounds):.3f} | {bounds.mean():.4f} | {(bounds > 0.1).sum()} of {bounds.size} |")


if __name__ == "__main__":
    main()
