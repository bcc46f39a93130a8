"""SVT6 at one pair: what the best event of the exact likelihood ratio and of the count of leaning answers certify,
fixed in advance, at N releases per side: the expected counts of each event {statistic ≥ τ} and {statistic ≤ τ},
bounded as ``pgc bench catalogue-oracle`` bounds them (:func:`pgc.benchmarks.catalogue_oracle.bound_table`: exact
Clopper–Pearson, α = 0.05, its α splits). Every one of the 2¹⁰ ⊤/⊥ patterns' probabilities under each input comes
from ``pgc.catalogue.likelihood.svt_booleans``. Run from the repository root:

    .venv/bin/python results/catalogue/strongest-vote/exact_events.py [ALGORITHM] [PAIR] [N]
"""

import itertools
import sys

import numpy as np

from pgc.benchmarks.catalogue_oracle import bound_table
from pgc.catalogue import catalogue_system
from pgc.catalogue.likelihood import log_likelihood
from pgc.catalogue.registry import BY_NAME


def best_event(statistic: np.ndarray, p_first: np.ndarray, p_second: np.ndarray, n: int) -> tuple[float, str]:
    """The largest certified ε over the events {side · statistic ≥ side · τ} and the event that gives it."""
    best = (0.0, "none")
    for side, relation in ((1.0, "≥"), (-1.0, "≤")):
        values = side * statistic
        taus = np.unique(values)
        above = values[None, :] >= taus[:, None]  # (events, patterns)
        table = bound_table(above @ p_first, above @ p_second, n, 0.05)
        event = int(np.argmax(table.max(axis=0)))
        if table[:, event].max() > best[0]:
            rates = f"rates {above[event] @ p_first:.4f} and {above[event] @ p_second:.4f}"
            best = (float(table[:, event].max()), f"[statistic {relation} {side * taus[event]:.4g}], {rates}")
    return best


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else "SVT6"
    pair = sys.argv[2] if len(sys.argv) > 2 else "X shape"
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 52_915
    algorithm = BY_NAME[name]
    likelihood = log_likelihood(name, algorithm.parameters)
    first, second = (np.asarray(x, np.float64) for x in catalogue_system(name).canaries()[pair])
    patterns = np.array(list(itertools.product((0.0, 1.0), repeat=algorithm.width)))
    # the likelihood integrates the threshold noise on a grid: its masses sum to 1 within 1e-5, normalized here
    p_first, p_second = (np.exp(likelihood(x, patterns)) for x in (first, second))
    p_first, p_second = p_first / p_first.sum(), p_second / p_second.sum()
    count = (patterns * np.sign(first - second)).sum(axis=1)
    print(f"{name} at {pair!r}, {n:,} per side: {first} vs {second}")
    for label, statistic in (
        ("exact log-likelihood ratio", np.log(p_first) - np.log(p_second)),
        ("count of leaning answers", count),
    ):
        eps, event = best_event(statistic, p_first, p_second, n)
        print(f"{label}: ε_LB {eps:.3f} on {event}")


if __name__ == "__main__":
    main()
