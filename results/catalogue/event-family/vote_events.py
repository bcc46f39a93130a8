"""SVT6 at its best pair ("X shape"), outside the engine: a vote of every ⊤/⊥ answer, each with the sign of its mean
difference on the fit half of a training split; every threshold of the vote ranked on the other half by the plug-in
projection of its certified ε at the certification size (the best of the α splits 0.5, 0.8, 0.9); the K best
distinct thresholds certified on fresh releases, each at α/K (Bonferroni), the largest bound kept. Prints, per K, the
median ε_LB over the seeds and how many exceed the claim 0.1. Run from the repository root:

    .venv/bin/python results/catalogue/event-family/vote_events.py [SEEDS] [TRAIN] [CERT]
"""

import sys

import numpy as np

from audit.certification.bounds import epsilon_lower_bound
from pgc.catalogue import CHANNEL, catalogue_system

SHARES = (0.5, 0.8, 0.9)
FAMILY_SIZES = (1, 2, 3, 4)
ALPHA = 0.05


def certified(fp: float, fn: float, n: int, alpha: float, share: float) -> float:
    return float(epsilon_lower_bound(fp, n, fn, n, alpha, 0.0, share))


def one_seed(system, first, second, seed: int, n_train: int, n_cert: int) -> dict[int, float]:
    rng = np.random.default_rng(seed)
    train_a, train_b = (system.release(x, n_train, rng)[CHANNEL] for x in (first, second))
    cert_a, cert_b = (system.release(x, n_cert, rng)[CHANNEL] for x in (first, second))
    half = n_train // 2
    signs = np.sign(train_a[:half].mean(axis=0) - train_b[:half].mean(axis=0))
    sel_a, sel_b, fresh_a, fresh_b = (y @ signs for y in (train_a[half:], train_b[half:], cert_a, cert_b))
    ranked = []
    for t in np.unique(np.concatenate([sel_a, sel_b])):
        fp, fn = np.mean(sel_b >= t) * n_cert, np.mean(sel_a < t) * n_cert
        ranked.append(max((certified(fp, fn, n_cert, ALPHA, s), float(t), s) for s in SHARES))
    ranked.sort(reverse=True)
    out = {}
    for k in FAMILY_SIZES:
        out[k] = max(
            certified(np.sum(fresh_b >= t), np.sum(fresh_a < t), n_cert, ALPHA / k, share) for _, t, share in ranked[:k]
        )
    return out


def main() -> None:
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    n_train = int(sys.argv[2]) if len(sys.argv) > 2 else 21_000
    n_cert = int(sys.argv[3]) if len(sys.argv) > 3 else 52_915
    system = catalogue_system("SVT6")
    first, second = system.canaries()["X shape"]
    runs = [one_seed(system, first, second, seed, n_train, n_cert) for seed in range(seeds)]
    print(f"SVT6 at 'X shape': {seeds} seeds, {n_train:,} training and {n_cert:,} certified releases per side")
    print("| events certified (each at α/K) | median ε_LB | seeds above the claim 0.1 |\n|---|---|---|")
    for k in FAMILY_SIZES:
        values = np.array([r[k] for r in runs])
        print(f"| {k} | {np.median(values):.3f} | {int(np.sum(values > 0.1))} of {seeds} |")


if __name__ == "__main__":
    main()
