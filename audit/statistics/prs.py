"""The exact likelihood ratio of PRS's report (Alg. 3) under the lexicographic canary, computed from the claimed
algorithm: a hypothesis-driven statistic of the black-box audit (:mod:`audit.engine.blackbox`)."""

from __future__ import annotations

import itertools
import math

import numpy as np

MAX_LATTICE_CELLS = 4_000_000  # the PRS likelihood-ratio table's size limit (d̂ ≤ 22 keeps four columns)


class PRSLexicographicLikelihoodRatio:
    """Exact likelihood ratio of (y_1..y_m) for PRS (Alg. 3) under the lexicographic canary ±G·lex.

    A hypothesis-driven statistic: it assumes the CLAIMED algorithm (Achlioptas rows, eq. 5; bit
    flip with ε/d̂, eq. 24) to compute its table, but like every statistic it only reads outputs, so
    the certified bound stays valid whatever the mechanism really does. Under the canary
    G·(1, 10⁻², 10⁻⁴, …) a row whose first m entries r are not all zero saturates with the sign of
    its first non-zero entry; its contribution to (y_1..y_m)/(√3C) is ±r, agreeing with probability
    p = e^{ε'}/(1+e^{ε'}); rows with r = 0 contribute nothing there, and the other coordinates are
    independent of the votes. So P(y | ±) is the d̂-fold convolution of one row's law, computed
    exactly on the lattice {−d̂..d̂}^m, with m the requested ``columns`` lowered until the lattice has at
    most :data:`MAX_LATTICE_CELLS` cells (a large d̂, as ε of several hundred gives, would need
    gigabytes and hours for four columns).
    """

    shape = "location"

    def __init__(self, clip: float, reduced_dim: int, epsilon: float, columns: int = 4):
        from scipy.signal import convolve
        from scipy.special import expit

        while columns > 1 and (2 * reduced_dim + 1) ** columns > MAX_LATTICE_CELLS:
            columns -= 1
        self.name = f"prs-lex-lr-{columns}"
        self.unit = math.sqrt(3.0) * clip
        self.reduced_dim = reduced_dim
        self.columns = columns
        p = float(expit(epsilon / reduced_dim))
        q = np.zeros((3,) * columns)
        for r in itertools.product((-1, 0, 1), repeat=columns):
            r = np.array(r)
            prob = float(np.prod(np.where(r != 0, 1.0 / 6.0, 2.0 / 3.0)))
            if not r.any():
                q[(1,) * columns] += prob
                continue
            agree = r * np.sign(r[np.flatnonzero(r)[0]])
            q[tuple(agree + 1)] += prob * p
            q[tuple(-agree + 1)] += prob * (1.0 - p)
        table = q
        for _ in range(reduced_dim - 1):
            table = convolve(table, q, method="direct")
        with np.errstate(divide="ignore", invalid="ignore"):  # 0/0 cells: nan, then 0 below
            self.llr = np.log(np.maximum(table, 0.0)) - np.log(np.maximum(np.flip(table), 0.0))
        self.llr = np.nan_to_num(self.llr, nan=0.0, posinf=1e3, neginf=-1e3)

    def fit(self, pos: np.ndarray, neg: np.ndarray):
        k = self.reduced_dim
        if pos.shape[1] < self.columns:
            return None
        v = pos[:, : self.columns] / self.unit
        if not np.allclose(v, np.round(v), atol=1e-6) or np.abs(v).max() > k + 1e-6:
            return None  # not PRS's lattice: the hypothesis does not apply

        def score(y: np.ndarray) -> np.ndarray:
            idx = np.clip(np.round(y[:, : self.columns] / self.unit).astype(np.int64) + k, 0, 2 * k)
            return self.llr[tuple(idx.T)]

        return score
