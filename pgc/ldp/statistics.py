"""Statistics an oracle's System offers the auditor (``audit_statistics``): tests on the protocol's own decoding.

A raw report often hides what it says: a local-hashing report (y, seed) says nothing about v until the seed's
hash function is applied to v; a subset is a set whatever order its array lists it in. Both statistics here
decode every report with the oracle's ``support(reports, candidates)`` (the aggregator's support sets) and
score it on the candidate values that separate the two training samples:

* :class:`SupportProjection` — Σ_u w_u·support_u over the informative candidates (|z| > 4 on the fitting
  half; at most ``MAX_COLUMNS``), w the mean difference: for a pair (v, v′) this is support_v − support_v′, the
  likelihood-ratio order of GRR, UE, LH, SS, HR, HM, CMS and PCS reports;
* :class:`SupportLikelihoodRatio` — the empirical log-likelihood ratio of the joint support values of the
  ``columns`` most informative candidates (discrete supports only).

Like every candidate statistic they are chosen on the training split and never see the certification
releases, so they cannot bias a certified bound; the auditor keeps them only when they project more.
"""

from __future__ import annotations

import numpy as np

Z_INFORMATIVE = 4.0
MAX_COLUMNS = 8
CHOOSING_ROWS = 20_000  # rows per side that choose the informative candidates (decoding every value is k× dearer)
MAX_CELLS = 64


def informative_candidates(oracle, pos: np.ndarray, neg: np.ndarray, limit: int = MAX_COLUMNS) -> np.ndarray:
    """The candidate values whose support differs most between the two samples (|z| > 4, at least one)."""
    candidates = np.arange(oracle.k)
    sp = oracle.support(pos[:CHOOSING_ROWS], candidates)
    sn = oracle.support(neg[:CHOOSING_ROWS], candidates)
    diff = sp.mean(axis=0) - sn.mean(axis=0)
    se = np.sqrt(sp.var(axis=0) / len(sp) + sn.var(axis=0) / len(sn))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, np.abs(diff) / np.where(se > 0, se, 1.0), np.where(diff != 0, np.inf, 0.0))
    order = np.argsort(-z, kind="stable")
    chosen = order[z[order] > Z_INFORMATIVE][:limit]
    return chosen if chosen.size else order[:1]


class SupportProjection:
    def __init__(self, oracle):
        self.oracle = oracle
        self.name = "support-projection"

    def fit(self, pos: np.ndarray, neg: np.ndarray):
        if len(pos) < 2 or len(neg) < 2:
            return None
        chosen = informative_candidates(self.oracle, pos, neg)
        weights = self.oracle.support(pos, chosen).mean(axis=0) - self.oracle.support(neg, chosen).mean(axis=0)
        if not np.any(weights):
            return None
        return lambda y: self.oracle.support(y, chosen) @ weights


class SupportLikelihoodRatio:
    def __init__(self, oracle, columns: int = 2):
        self.oracle, self.columns = oracle, int(columns)
        self.name = f"support-llr-{self.columns}"

    def fit(self, pos: np.ndarray, neg: np.ndarray):
        if len(pos) < 2 or len(neg) < 2:
            return None
        chosen = informative_candidates(self.oracle, pos, neg, self.columns)
        sp, sn = self.oracle.support(pos, chosen), self.oracle.support(neg, chosen)
        cells, inverse = np.unique(np.concatenate([sp, sn]), axis=0, return_inverse=True)
        if len(cells) > MAX_CELLS:
            return None  # a continuous support: the projection applies instead
        inverse = inverse.ravel()
        smooth = 0.5
        c_pos = np.bincount(inverse[: len(sp)], minlength=len(cells)) + smooth
        c_neg = np.bincount(inverse[len(sp) :], minlength=len(cells)) + smooth
        llr = np.log(c_pos / c_pos.sum()) - np.log(c_neg / c_neg.sum())

        def score(y: np.ndarray) -> np.ndarray:
            s = self.oracle.support(y, chosen)
            match = np.all(s[:, None, :] == cells[None, :, :], axis=2)
            return np.where(match.any(axis=1), llr[np.argmax(match, axis=1)], 0.0)

        return score


def support_statistics(oracle) -> list:
    return [SupportProjection(oracle), SupportLikelihoodRatio(oracle, 2)]
