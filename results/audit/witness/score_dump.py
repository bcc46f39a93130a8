"""Fits every default statistic (and the δ test's, the channel sum, the scaled Laplace ratio, the dense vote, the L∞
norm and the squared deviation) on seven shapes of release — location and scale, dependence, wide (300 columns),
boolean answers, absent entries, one number, a lattice — from fixed seeds, and saves each fitted score of fresh
releases to OUT (.npz): what ``scores_unchanged.py`` compares between two trees of the code. Usage:
``python score_dump.py OUT`` with the tree to read first on PYTHONPATH."""

import sys

import numpy as np

from audit.statistics import ChannelSumLikelihoodRatio, ExactRelease, LaplaceLogLikelihood, SignVote, default_statistics
from audit.statistics.shapes import NormStatistic, SquaredDeviation, for_absent_entries


def releases(kind: str, rng: np.random.Generator, n: int = 6_000) -> tuple[np.ndarray, np.ndarray]:
    """Two sides' releases of one shape."""
    if kind == "scale":
        return rng.normal(size=(n, 12)), 1.1 * rng.normal(size=(n, 12)) + np.r_[0.2, np.zeros(11)]
    if kind == "dependence":
        return rng.normal(size=(n, 10)), 0.8 * rng.normal(size=(n, 10)) + 0.6 * rng.normal(size=(n, 1))
    if kind == "wide":
        return rng.normal(size=(n, 300)), rng.normal(size=(n, 300)) + np.r_[np.full(5, 0.1), np.zeros(295)]
    if kind == "boolean":
        return (rng.random((n, 10)) < 0.5).astype(float), (rng.random((n, 10)) < 0.55).astype(float)
    if kind == "absent":
        p, q = rng.normal(size=(n, 8)), rng.normal(size=(n, 8)) + 0.1
        p[rng.random(p.shape) < 0.1], q[rng.random(q.shape) < 0.2] = np.nan, np.nan
        return p, q
    if kind == "one number":
        return rng.laplace(size=(n, 1)), rng.laplace(size=(n, 1)) + 0.3
    return rng.integers(0, 4, size=(n, 3)).astype(float), rng.integers(0, 5, size=(n, 3)).astype(float)


KINDS = ("scale", "dependence", "wide", "boolean", "absent", "one number", "lattice")
EXTRA = [
    ExactRelease("row", 0.0, 1.0),
    ExactRelease("column", 1e-9, 1.0),
    ExactRelease("row", 1e-6, 1.0),
    ChannelSumLikelihoodRatio((slice(0, 1), slice(1, 2), slice(2, None))),
    LaplaceLogLikelihood(scaled=True),
    SignVote("every"),
    NormStatistic(np.inf),
    SquaredDeviation(),
]


def main() -> int:
    import audit

    out = {}
    rng = np.random.default_rng(20261207)
    for kind in KINDS:
        pos, neg = releases(kind, rng)
        fresh = np.concatenate(releases(kind, rng))
        for i, statistic in enumerate(for_absent_entries(default_statistics() + EXTRA, pos, neg)):
            scorer = statistic.fit(pos, neg)
            key = f"{kind}|{i}|{statistic.name}"
            out[key] = np.zeros(0) if scorer is None else np.asarray(scorer(fresh), np.float64)
            out[key + "|fitted"] = np.array(scorer is not None)
    np.savez(sys.argv[1], **out)
    print(f"{audit.__file__}: {sum(1 for k in out if k.endswith('|fitted') and out[k])} fits")
    return 0


if __name__ == "__main__":
    sys.exit(main())
