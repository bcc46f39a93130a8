"""SVT6 at one pair: what the best event of the exact likelihood ratio and of the count of leaning answers certify,
fixed in advance, at N releases per side (expected counts, exact Clopper–Pearson, α = 0.05). Every one of the 2¹⁰
⊤/⊥ patterns' probabilities under each input comes from ``pgc.catalogue.likelihood.svt_booleans``. Run from the
repository root:

    .venv/bin/python results/catalogue/strongest-vote/exact_events.py [ALGORITHM] [PAIR] [N]
"""

import itertools
import sys

import numpy as np

from audit.certification.bounds import epsilon_lower_bound
from pgc.catalogue import catalogue_system
from pgc.catalogue.likelihood import log_likelihood
from pgc.catalogue.registry import BY_NAME


def best_event(statistic: np.ndarray, p_first: np.ndarray, p_second: np.ndarray, n: int) -> tuple:
    """(certified ε, threshold, side, rate under the first input, rate under the second) of the best event
    {side · statistic ≥ side · threshold}, either input in the role of the positive one."""
    best: tuple = (0.0, None, None, None, None)
    for threshold in np.unique(statistic):
        for side in (1, -1):
            event = side * statistic >= side * threshold
            first, second = float(p_first[event].sum()), float(p_second[event].sum())
            for x, y in ((first, second), (second, first)):
                eps = epsilon_lower_bound(round(n * min(y, 1.0)), n, round(n * max(1.0 - x, 0.0)), n, 0.05)
                if eps > best[0]:
                    best = (float(eps), float(threshold), side, first, second)
    return best


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else "SVT6"
    pair = sys.argv[2] if len(sys.argv) > 2 else "X shape"
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 52_915
    algorithm = BY_NAME[name]
    likelihood = log_likelihood(name, algorithm.parameters)
    first, second = (np.asarray(x, np.float64) for x in catalogue_system(name).canaries()[pair])
    patterns = np.array(list(itertools.product((0.0, 1.0), repeat=algorithm.width)))
    p_first, p_second = np.exp(likelihood(first, patterns)), np.exp(likelihood(second, patterns))
    count = (patterns * np.sign(first - second)).sum(axis=1)
    print(f"{name} at {pair!r}, {n:,} per side: {first} vs {second}")
    for label, statistic in (
        ("exact log-likelihood ratio", np.log(p_first) - np.log(p_second)),
        ("count of leaning answers", count),
    ):
        eps, threshold, side, x, y = best_event(statistic, p_first, p_second, n)
        relation = "≥" if side == 1 else "≤"
        print(f"{label}: ε_LB {eps:.3f} on [statistic {relation} {threshold:.4g}], rates {x:.4f} and {y:.4f}")


if __name__ == "__main__":
    main()
