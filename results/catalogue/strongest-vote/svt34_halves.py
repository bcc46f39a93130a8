"""SVT34Parallel at one pair: where its leak lies. Draws releases under both inputs, scores each with the exact
log-likelihood ratio of the whole release, of its SVT3 half and of its SVT4 half (``pgc.catalogue.likelihood``; the
halves run independently, so each half's ratio is that half's privacy loss), and prints what the best threshold
event of each certifies at N per side, as ``pgc bench catalogue-oracle`` computes it
(:func:`pgc.benchmarks.catalogue_oracle.split_oracle_bound`: the event chosen on one half of the draws, its expected
counts read on the other, exact Clopper–Pearson at α = 0.05). Run from the repository root:

    .venv/bin/python results/catalogue/strongest-vote/svt34_halves.py [PAIR] [DRAWS] [N]
"""

import sys

import numpy as np

from pgc.benchmarks.catalogue_oracle import event_probabilities, split_oracle_bound
from pgc.catalogue import CHANNEL, catalogue_system
from pgc.catalogue.likelihood import svt_booleans, svt_values
from pgc.catalogue.registry import BY_NAME

HALVES = {"whole release": (0, 1), "SVT3 half": (0,), "SVT4 half": (1,)}


def half_logs(a: np.ndarray, out: np.ndarray, eps: float, c: int, t: float) -> tuple[np.ndarray, np.ndarray]:
    """The log-likelihoods of SVT3's half and SVT4's half of each release under input ``a``."""
    three = svt_values(a, out[:, :10], c, t, 2.0 / eps, c / (eps / 2.0))
    four = svt_booleans(a, out[:, 10:], t, 4.0 / eps, 1.0 / (eps - eps / 4.0))
    return three, four


def losses(system, first: np.ndarray, second: np.ndarray, draws: int, rng: np.random.Generator) -> dict:
    """Per entry of :data:`HALVES`: the privacy loss of ``draws`` releases under each input."""
    p = BY_NAME["SVT34Parallel"].parameters
    per_input = []
    for x in (first, second):
        out = system.release(tuple(x), draws, rng)[CHANNEL]
        under_first, under_second = (half_logs(y, out, p["eps"], p["c"], p["t"]) for y in (first, second))
        per_input.append([under_first[k] - under_second[k] for k in (0, 1)])
    return {label: tuple(sum(parts[k] for k in pick) for parts in per_input) for label, pick in HALVES.items()}


def main() -> None:
    pair = sys.argv[1] if len(sys.argv) > 1 else "half half"
    draws = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 52_915
    system = catalogue_system("SVT34Parallel")
    first, second = (np.asarray(x, np.float64) for x in system.canaries()[pair])
    rng = np.random.default_rng(1)
    chosen, fresh = (losses(system, first, second, draws // 2, rng) for _ in range(2))
    print(f"SVT34Parallel at {pair!r}: {draws:,} draws per input (half choose, half bound), {n:,} per side")
    for label in HALVES:
        taus, *chosen_p = event_probabilities(*chosen[label])
        _, *fresh_p = event_probabilities(*fresh[label], taus=taus)
        print(f"{label}: ε_LB {split_oracle_bound(chosen_p, fresh_p, n, 0.05):.3f}")


if __name__ == "__main__":
    main()
