"""SVT34Parallel at "half half": how many releases a fitted statistic of its answers needs. An additive logistic model
(scikit-learn ``LogisticRegression``, C = 1) of every column's value and presence (⊥ and the stop are absent entries,
NaN), fitted on FIT releases per side; its best threshold event chosen on 250,000 fresh releases per side and
bounded on another 250,000, as ``pgc bench catalogue-oracle`` bounds an exact likelihood ratio's events
(``split_oracle_bound``, 52,915 per side, α = 0.05). The exact likelihood ratio certifies 0.130 at this size
(``../strongest-vote/svt34-halves.txt``). Run from the repository root:

    .venv/bin/python results/catalogue/event-family/svt34_additive.py [FIT ...]
"""

import sys

import numpy as np
from sklearn.linear_model import LogisticRegression

from pgc.benchmarks.catalogue_oracle import event_probabilities, split_oracle_bound
from pgc.catalogue import CHANNEL, catalogue_system

DRAWS = 250_000
N_CERT = 52_915


def encoded(y: np.ndarray) -> np.ndarray:
    """Each column's value (0 where absent) and its presence."""
    return np.hstack([np.nan_to_num(y, nan=0.0), (~np.isnan(y)).astype(np.float64)])


def bound_at(fit: int, seed: int = 5) -> float:
    system = catalogue_system("SVT34Parallel")
    first, second = (np.asarray(x, np.float64) for x in system.canaries()["half half"])
    rng = np.random.default_rng(seed)

    def draw(x: np.ndarray, n: int) -> np.ndarray:
        return system.release(tuple(x), n, rng)[CHANNEL]

    features = np.vstack([encoded(draw(first, fit)), encoded(draw(second, fit))])
    used = features.std(axis=0) > 0
    model = LogisticRegression(C=1.0, max_iter=2000).fit(features[:, used], np.r_[np.ones(fit), np.zeros(fit)])

    def scores(x: np.ndarray) -> np.ndarray:
        return model.decision_function(encoded(draw(x, DRAWS))[:, used])

    chosen, fresh = ((scores(first), scores(second)) for _ in range(2))
    taus, *chosen_p = event_probabilities(*chosen)
    _, *fresh_p = event_probabilities(*fresh, taus=taus)
    return split_oracle_bound(chosen_p, fresh_p, N_CERT, 0.05)


def main() -> None:
    fits = [int(a) for a in sys.argv[1:]] or [10_000, 20_000, 50_000, 200_000]
    print("| fit releases per side | ε_LB of the best event at 52,915 per side |\n|---|---|")
    for fit in fits:
        print(f"| {fit:,} | {bound_at(fit):.3f} |", flush=True)


if __name__ == "__main__":
    main()
