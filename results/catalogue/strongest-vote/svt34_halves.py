"""SVT34Parallel at one pair: where its leak lies. Draws releases under both inputs, scores each with the exact
log-likelihood ratio of the whole release, of its SVT3 half and of its SVT4 half (``pgc.catalogue.likelihood``), and
prints what the best threshold event of each certifies at N per side (expected counts at the Monte Carlo rates,
exact Clopper–Pearson, α = 0.05; the event is chosen on the same draws, so slightly optimistic). Run from the
repository root:

    .venv/bin/python results/catalogue/strongest-vote/svt34_halves.py [PAIR] [DRAWS] [N]
"""

import sys

import numpy as np

from audit.certification.bounds import epsilon_lower_bound
from pgc.catalogue import CHANNEL, catalogue_system
from pgc.catalogue.likelihood import svt_booleans, svt_values
from pgc.catalogue.registry import BY_NAME


def halves(a: np.ndarray, out: np.ndarray, eps: float, c: int, t: float) -> tuple[np.ndarray, np.ndarray]:
    """The log-likelihoods of SVT3's half and SVT4's half of each release under input ``a``."""
    three = svt_values(a, out[:, :10], c, t, 2.0 / eps, c / (eps / 2.0))
    four = svt_booleans(a, out[:, 10:], t, 4.0 / eps, 1.0 / (eps - eps / 4.0))
    return three, four


def best_event(s_first: np.ndarray, s_second: np.ndarray, n: int) -> float:
    grid = np.unique(np.quantile(np.concatenate([s_first, s_second]), np.linspace(0.0, 1.0, 400)))
    best = 0.0
    for threshold in grid:
        for side in (1, -1):
            x = float(np.mean(side * s_first >= side * threshold))
            y = float(np.mean(side * s_second >= side * threshold))
            for u, v in ((x, y), (y, x)):
                best = max(best, float(epsilon_lower_bound(round(n * v), n, round(n * (1.0 - u)), n, 0.05)))
    return best


def main() -> None:
    pair = sys.argv[1] if len(sys.argv) > 1 else "half half"
    draws = int(sys.argv[2]) if len(sys.argv) > 2 else 200_000
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 52_915
    p = BY_NAME["SVT34Parallel"].parameters
    system = catalogue_system("SVT34Parallel")
    first, second = (np.asarray(x, np.float64) for x in system.canaries()[pair])
    rng = np.random.default_rng(1)
    released = [system.release(tuple(x), draws, rng)[CHANNEL] for x in (first, second)]
    # [release under input i][likelihood under input j] = (SVT3 half, SVT4 half)
    logs = [[halves(x, out, p["eps"], p["c"], p["t"]) for x in (first, second)] for out in released]
    print(f"SVT34Parallel at {pair!r}: {draws:,} draws per input, certified at {n:,} per side")
    for label, pick in (("whole release", (0, 1)), ("SVT3 half", (0,)), ("SVT4 half", (1,))):
        scores = [sum(logs[i][0][k] - logs[i][1][k] for k in pick) for i in (0, 1)]
        print(f"{label}: ε_LB {best_event(scores[0], scores[1], n):.3f}")


if __name__ == "__main__":
    main()
