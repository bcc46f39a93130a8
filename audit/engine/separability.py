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
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from audit.statistics.learned import z_of_means, z_of_spread
from audit.statistics.shapes import standardizer

RACE_COLUMNS = 64  # columns of a release the classifier reads one by one; a wider release is summarized beyond them
RACE_REGULARIZATION = 1.0  # the logistic regression's inverse L2 strength, on standardized features
PROBABILITY_FLOOR = 1e-6  # a held-out probability is clipped to [floor, 1 − floor]: one confident error costs ≤ 14 nats


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


def _fold_gain(train_pos: np.ndarray, train_neg: np.ndarray, test_pos: np.ndarray, test_neg: np.ndarray) -> float:
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
    p_pos = model.predict_proba((features(test_pos) - centre) / spread)[:, 1]
    p_neg = model.predict_proba((features(test_neg) - centre) / spread)[:, 0]
    p = np.clip(np.concatenate([p_pos, p_neg]), PROBABILITY_FLOOR, 1.0 - PROBABILITY_FLOOR)
    return float(np.mean(np.log(2.0 * p)))


def held_out_log_likelihood_gain(pos: np.ndarray, neg: np.ndarray) -> float:
    """The two-fold held-out log-likelihood gain (nats per release) of a logistic regression telling ``pos`` from
    ``neg`` (rows: releases; module docstring); 0 where a side has fewer than four releases."""
    pos = np.asarray(pos, dtype=np.float64).reshape(len(pos), -1)
    neg = np.asarray(neg, dtype=np.float64).reshape(len(neg), -1)
    if min(len(pos), len(neg)) < 4:
        return 0.0
    # each column divided by its largest magnitude: the standardized features are the same, and the squares of a
    # release of 1e200 stay finite
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-absent columns
        largest = np.nanmax(np.abs(np.concatenate([pos, neg])), axis=0)
    largest = np.where(np.isfinite(largest) & (largest > 0), largest, 1.0)
    pos, neg = pos / largest, neg / largest
    gains = [_fold_gain(pos[a::2], neg[a::2], pos[1 - a :: 2], neg[1 - a :: 2]) for a in (0, 1)]
    gain = float(np.mean(gains))
    return gain if math.isfinite(gain) else 0.0
