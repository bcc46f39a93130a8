"""How far apart the releases of two inputs lie, measured on releases a classifier never saw: the named-pair race's
ranking (:func:`audit.engine.pair_search.choose_named_pair`).

:func:`held_out_log_likelihood_gain` fits a logistic regression (scikit-learn, L2) that tells the two sides apart on
one half of the releases (alternate rows of each side) and scores it on the other half, both ways: the mean held-out
log-likelihood of the true side above a coin's, log 2p per release (0: the classifier learned nothing; at most
log 2). It is the variational form of the Jensen–Shannon divergence, a lower bound of it where the classifier is
calibrated, and it pools every release rather than the few in a tail. Its features (:class:`SeparabilityFeatures`):
each column's value, its square after standardizing (a spread that differs) and, where entries are absent, each
column's presence and the count of present entries; a release of more than :data:`RACE_COLUMNS` columns keeps the
columns whose means or spreads differ most on the fitting half, and adds the squared L2 norm and the sum of all of
them.

At the few hundred to few thousand releases per pair a race can spend, a threshold test's projected ε
(:func:`audit.engine.pair_search.releases_objective`) reads a tail event from a handful of counts and ranks pairs
little better than chance where the leak is small; the held-out gain ranks them by what every release shows
(results/catalogue/race-ranking/).

Where a pair has drawn at least :data:`TAIL_RANKING_RELEASES` per side, :func:`separation` also reads the tail the
certificate will read: on each fold's held-out scores of the same classifier, alternate releases choose a tail event
(:data:`TAIL_SHARES` of them, either tail, favouring either side) by the ε it projects at the certification size, and
the other releases project that one event from their own counts (:func:`_held_out_tail`). The whole divergence and
the certifiable tail can disagree: SVT4's "one above rest below" pairs lie further apart in the whole than its "X
shape" and "half half" pairs, whose tails certify more (results/catalogue/million/race-tail/). Below that size the
tail's counts are a handful, and ranking by them chooses worse pairs than the gain (results/catalogue/million/
race-tail/README.md).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy.special import expit

from audit.statistics.learned import z_of_means, z_of_spread
from audit.statistics.selection import EVEN_SHARE, projected_epsilon
from audit.statistics.shapes import standardizer

RACE_COLUMNS = 64  # columns of a release the classifier reads one by one; a wider release is summarized beyond them
RACE_REGULARIZATION = 1.0  # the logistic regression's inverse L2 strength, on standardized features
PROBABILITY_FLOOR = 1e-6  # a held-out probability is clipped to [floor, 1 − floor]: one confident error costs ≤ 14 nats
# a pair's race releases per side from which its held-out tail projection ranks it (module docstring): at 10⁵ per side
# in total a race of DP-Sniper's 16 pairs (10 inputs, drawn per input) gives its survivor at most about 15,000, so
# only larger audits read the tail; read from 10,000 (at the race's floor n/25, the last pairs reaching 10,000–20,000),
# the tail chose worse pairs for ReportNoisyMax3, ReportNoisyMax4 and SVT6 than the gain did
# (results/catalogue/shared-inputs/)
TAIL_RANKING_RELEASES = 25_000
# the tail events a held-out half chooses among: the score's upper and lower tails holding these shares of the releases
TAIL_SHARES = (0.5, 0.3, 0.2, 0.1, 0.05, 0.03, 0.02, 0.01)
TAIL_PESSIMISM = 0.5  # the held-out rates' level: their median, as audit.statistics.selection ranks a tie of rules
TAIL_FLOOR = -1.0  # a projection that certifies nothing counts at most this far below 0 in the mean over halves


class SeparabilityFeatures:
    """The race classifier's features of a release, fixed by the fitting half (module docstring)."""

    def __init__(self, pos: np.ndarray, neg: np.ndarray):
        width = pos.shape[1]
        if width <= RACE_COLUMNS:
            self.columns = np.arange(width)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # all-absent columns
                strength = np.maximum(z_of_means(pos, neg), z_of_spread(pos, neg))
            self.columns = np.sort(np.argsort(-strength, kind="stable")[:RACE_COLUMNS])
        self.summarize = width > RACE_COLUMNS
        absent = np.isnan(pos).any(axis=0) | np.isnan(neg).any(axis=0)
        self.presence = np.flatnonzero(absent[self.columns])
        self.any_absent = bool(absent.any())
        self.centre, self.spread = standardizer(
            np.nan_to_num(pos[:, self.columns]), np.nan_to_num(neg[:, self.columns])
        )

    def __call__(self, y: np.ndarray) -> np.ndarray:
        picked = y[:, self.columns]
        filled = np.nan_to_num(picked)
        parts = [filled, ((filled - self.centre) / self.spread) ** 2]
        if self.any_absent:
            present = ~np.isnan(y)
            parts += [present[:, self.columns][:, self.presence].astype(np.float64), present.sum(axis=1)[:, None]]
        if self.summarize:
            everything = np.nan_to_num(y)
            parts += [np.einsum("ij,ij->i", everything, everything)[:, None], everything.sum(axis=1)[:, None]]
        return np.concatenate(parts, axis=1)


def _fold_scores(
    train_pos: np.ndarray, train_neg: np.ndarray, test_pos: np.ndarray, test_neg: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The log-odds of the first side, fitted on ``train_*`` and scored on ``test_pos``, ``test_neg``."""
    from sklearn.linear_model import LogisticRegression

    features = SeparabilityFeatures(train_pos, train_neg)
    f_pos, f_neg = features(train_pos), features(train_neg)
    centre, spread = standardizer(f_pos, f_neg)
    x_train = np.concatenate([f_pos, f_neg])
    labels = np.concatenate([np.ones(len(train_pos)), np.zeros(len(train_neg))])
    model = LogisticRegression(C=RACE_REGULARIZATION, max_iter=500)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an unconverged fit still ranks
        model.fit((x_train - centre) / spread, labels)
    s_pos = model.decision_function((features(test_pos) - centre) / spread)
    s_neg = model.decision_function((features(test_neg) - centre) / spread)
    return s_pos, s_neg


def _gain_of_scores(s_pos: np.ndarray, s_neg: np.ndarray) -> float:
    """The mean log-likelihood of the true side above a coin's, log 2p, of held-out log-odds."""
    p = np.clip(np.concatenate([expit(s_pos), 1.0 - expit(s_neg)]), PROBABILITY_FLOOR, 1.0 - PROBABILITY_FLOOR)
    return float(np.mean(np.log(2.0 * p)))


def _tail_counts(s_pos: np.ndarray, s_neg: np.ndarray, cuts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How many releases of each side lie in each tail event, flattened: row 0 of ``cuts`` the events s ≥ cut,
    row 1 the events −s ≥ cut."""
    signs = np.array([1.0, -1.0])[:, None, None]
    k_pos = np.count_nonzero(signs * s_pos[None, None, :] >= cuts[:, :, None], axis=2).ravel()
    k_neg = np.count_nonzero(signs * s_neg[None, None, :] >= cuts[:, :, None], axis=2).ravel()
    return k_pos, k_neg


def _tail_projections(s_pos: np.ndarray, s_neg: np.ndarray, cuts: np.ndarray, n_cert: int, alpha: float) -> np.ndarray:
    """Per tail event of ``cuts`` (:func:`_tail_counts`), the ε its median rates on these scores project at
    ``n_cert`` releases per side, read as favouring the first side (row 0) and as favouring the second (row 1)."""
    k_pos, k_neg = _tail_counts(s_pos, s_neg, cuts)
    n_pos, n_neg = s_pos.size, s_neg.size
    rows = [
        projected_epsilon(fp, n_fp, n_in - k_in, n_in, n_cert, alpha, 0.0, EVEN_SHARE, True, TAIL_PESSIMISM)
        for fp, n_fp, k_in, n_in in ((k_neg, n_neg, k_pos, n_pos), (k_pos, n_pos, k_neg, n_neg))
    ]
    projections: np.ndarray = np.nan_to_num(np.stack(rows), nan=-np.inf)
    return projections


def _held_out_tail(s_pos: np.ndarray, s_neg: np.ndarray, n_cert: int, alpha: float) -> float:
    """Two-fold over alternate rows of held-out scores: one half chooses the tail event (:data:`TAIL_SHARES` of its
    releases, either tail) and the side it favours that project most, the other half's counts project that one
    event; the mean of the two, each floored at :data:`TAIL_FLOOR`."""
    shares = np.asarray(TAIL_SHARES)
    values = []
    for a, b in ((0, 1), (1, 0)):
        chooser = np.concatenate([s_pos[a::2], s_neg[a::2]])
        cuts = np.stack([np.quantile(sign * chooser, 1.0 - shares) for sign in (1.0, -1.0)])
        chosen = _tail_projections(s_pos[a::2], s_neg[a::2], cuts, n_cert, alpha)
        side, event = np.unravel_index(int(np.argmax(chosen)), chosen.shape)
        held = _tail_projections(s_pos[b::2], s_neg[b::2], cuts, n_cert, alpha)[side, event]
        values.append(max(TAIL_FLOOR, float(held)))
    return float(np.mean(values))


def _scaled(pos: np.ndarray, neg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows as float matrices, each column divided by its largest magnitude: the standardized features are the same,
    and the squares of a release of 1e200 stay finite."""
    pos = np.asarray(pos, dtype=np.float64).reshape(len(pos), -1)
    neg = np.asarray(neg, dtype=np.float64).reshape(len(neg), -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-absent columns
        largest = np.nanmax(np.abs(np.concatenate([pos, neg])), axis=0)
    largest = np.where(np.isfinite(largest) & (largest > 0), largest, 1.0)
    return pos / largest, neg / largest


def _held_out_folds(pos: np.ndarray, neg: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each fold's held-out log-odds: fitted on alternate rows of each side, scored on the others, both ways."""
    pos, neg = _scaled(pos, neg)
    return [_fold_scores(pos[a::2], neg[a::2], pos[1 - a :: 2], neg[1 - a :: 2]) for a in (0, 1)]


def held_out_log_likelihood_gain(pos: np.ndarray, neg: np.ndarray) -> float:
    """The two-fold held-out log-likelihood gain (nats per release) of a logistic regression telling ``pos`` from
    ``neg`` (rows: releases; module docstring); 0 where a side has fewer than four releases."""
    return separation(pos, neg, n_cert=None, alpha=None)[1]


def separation(pos: np.ndarray, neg: np.ndarray, n_cert: int | None, alpha: float | None) -> tuple[float, float]:
    """(held-out tail projection, held-out log-likelihood gain) of a classifier telling ``pos`` from ``neg`` (rows:
    releases; module docstring), from one two-fold fit. The tail projection is the mean over both folds of
    :func:`_held_out_tail` on the fold's held-out scores: the ε a test of their tail would certify at ``n_cert``
    releases per side at level ``alpha``; 0 below :data:`TAIL_RANKING_RELEASES` per side or without ``n_cert``. Both
    are 0 where a side has fewer than four releases."""
    if min(len(pos), len(neg)) < 4:
        return 0.0, 0.0
    folds = _held_out_folds(pos, neg)
    gain = float(np.mean([_gain_of_scores(*scores) for scores in folds]))
    tail = 0.0
    if n_cert is not None and alpha is not None and min(len(pos), len(neg)) >= TAIL_RANKING_RELEASES:
        tail = float(np.mean([_held_out_tail(*scores, n_cert, alpha) for scores in folds]))
    return (tail if math.isfinite(tail) else 0.0), (gain if math.isfinite(gain) else 0.0)
