"""A learned statistic: a classifier fitted on the fit half of the training split, its score thresholded and
certified like any other statistic (DP-Sniper's idea, Bichsel et al., IEEE S&P 2021, §4: a classifier's
probability of the first input is the statistic the threshold test reads).

:class:`LearnedClassifier` fits scikit-learn's histogram gradient boosting (non-linear, reads absent entries as
they are) on features of the releases: the raw values of the columns whose means or spreads differ most on the
fit half (:data:`RAW_COLUMNS` in all), every column's presence where entries are absent (up to
:data:`PRESENCE_COLUMNS`) and the count of present entries, and the derived shapes of :mod:`audit.statistics.shapes` —
L1, squared L2 and L∞ norms, the sum, the squared deviation from the pooled mean and the squared standardized sum
(the sum of coordinate-pair products up to the squared norm). Its score is the classifier's log-odds, ties
broken by the features' mean-difference projection.

Cost: the fit reads at most :data:`FIT_ROWS` releases per side and stops early once held-out loss stops
falling; one OpenMP thread (several threads spin against each other on a busy two-core machine: 16 s instead of
0.3 s for a fit of 1.25·10⁴ releases per side): about 0.3 s to fit on 1.25·10⁴ releases per side of 112 numbers and
0.5 s to score 10⁵. Selection then ranks it against the other
statistics on the selection half it never saw (:func:`audit.statistics.selection.select_statistic`), so its flexibility
cannot buy a winner's curse: a classifier that overfits its fit half projects less on the selection half.
"""

from __future__ import annotations

import warnings

import numpy as np

from audit.statistics.fitted import FittedScore
from audit.statistics.scores import SAVED
from audit.statistics.shapes import FITTED_FORM_MARGIN, standardizer
from audit.statistics.trees import TreeEnsemble

RAW_COLUMNS = 48  # raw columns fed to the classifier: by |z| of the mean difference, then of the spread ratio
PRESENCE_COLUMNS = 32
FIT_ROWS = 20_000  # releases per side the classifier is fitted on, at most
MIN_FIT_ROWS = 4_000  # and at least (a training split of 8,000 per side): below, it only adds noise and cost
MAX_ITERATIONS = 100
# the trees' log-odds take a few hundred values; within each, the features' mean-difference projection breaks the tie
# (at most TIE_BREAK, far below the gap between two of the trees' values), so the score is continuous and the
# selection ranks it by its held-out projection, as any continuous statistic
# (audit.statistics.selection.choose_threshold)
TIE_BREAK = 1e-9
CLASSIFIER_SEED = 0  # the booster's own validation split and binning: fixed, so a fit is a function of its data


def z_of_spread(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """Per column, how far apart the two sides' log-variances lie, in standard errors (≈ √(2/n) each)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.log(np.nanvar(pos, axis=0) + 1e-300) - np.log(np.nanvar(neg, axis=0) + 1e-300)
    se = np.sqrt(2.0 / len(pos) + 2.0 / len(neg))
    return np.nan_to_num(np.abs(ratio) / se)


def z_of_means(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """Per column, how far apart the two sides' means lie, in standard errors."""
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.sqrt(np.nanvar(pos, axis=0) / len(pos) + np.nanvar(neg, axis=0) / len(neg))
        z = np.abs(np.nanmean(pos, axis=0) - np.nanmean(neg, axis=0)) / se
    return np.nan_to_num(z, nan=0.0, posinf=1e12)


class FeatureMap(FittedScore):
    """The classifier's features of a release (module docstring), fixed by the fit half (:meth:`fitted`): the raw
    columns ``raw``, the derived shapes about the pooled ``centre`` and ``spread``, and where entries are absent
    (``any_absent``) the presence of the columns ``presence`` and the count of present entries."""

    KIND = "learned-features"
    ARRAYS = {"raw": "i:r", "presence": "i:p", "centre": "f:c", "spread": "f:c"}

    def __init__(self, raw: np.ndarray, presence: np.ndarray, any_absent: bool, centre: np.ndarray, spread: np.ndarray):
        self.raw, self.presence, self.any_absent = raw, presence, bool(any_absent)
        self.centre, self.spread = centre, spread

    @classmethod
    def fitted(cls, pos: np.ndarray, neg: np.ndarray) -> FeatureMap:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns
            by_mean = np.argsort(-z_of_means(pos, neg), kind="stable")
            by_spread = np.argsort(-z_of_spread(pos, neg), kind="stable")
        half = RAW_COLUMNS // 2
        chosen = list(dict.fromkeys([*by_mean[:half], *by_spread[:half], *by_mean[half:RAW_COLUMNS]]))
        absent = np.isnan(pos).any(axis=0) | np.isnan(neg).any(axis=0)
        return cls(
            np.asarray(chosen[:RAW_COLUMNS], dtype=np.int64),
            np.flatnonzero(absent)[:PRESENCE_COLUMNS],
            bool(absent.any()),
            *standardizer(np.nan_to_num(pos), np.nan_to_num(neg)),
        )

    def parameters(self) -> dict:
        return {
            "raw": self.raw,
            "presence": self.presence,
            "any_absent": self.any_absent,
            "centre": self.centre,
            "spread": self.spread,
        }

    def __call__(self, y: np.ndarray) -> np.ndarray:
        filled = np.nan_to_num(y)
        z = (filled - self.centre) / self.spread
        derived = [
            np.abs(filled).sum(axis=1),
            np.einsum("ij,ij->i", filled, filled),
            np.abs(filled).max(axis=1),
            filled.sum(axis=1),
            np.einsum("ij,ij->i", z, z),
            z.sum(axis=1) ** 2,
        ]
        parts = [y[:, self.raw], np.stack(derived, axis=1)]
        if self.any_absent:
            present = ~np.isnan(y)
            parts += [present[:, self.presence].astype(np.float64), present.sum(axis=1, keepdims=True)]
        return np.concatenate(parts, axis=1)


class LearnedClassifier:
    """Gradient-boosted trees on :class:`FeatureMap`'s features; the score is the log-odds of the first
    hypothesis."""

    name = "learned-gbt"
    shape = "learned"
    selection_margin = FITTED_FORM_MARGIN  # replaces an earlier statistic only when it projects 10 % more

    def fit(self, pos: np.ndarray, neg: np.ndarray):
        from sklearn.ensemble import HistGradientBoostingClassifier
        from threadpoolctl import threadpool_limits

        pos, neg = pos[:FIT_ROWS], neg[:FIT_ROWS]
        if min(len(pos), len(neg)) < MIN_FIT_ROWS or pos.shape[1] < 2:
            return None  # too few to learn a boundary the simpler statistics would not find with less noise; one
            # number per release: its likelihood ratio is a function of that number, which the histogram, the
            # projection and the norms already threshold
        features = FeatureMap.fitted(pos, neg)
        x = np.concatenate([features(pos), features(neg)])
        labels = np.concatenate([np.ones(len(pos)), np.zeros(len(neg))])
        model = HistGradientBoostingClassifier(
            max_iter=MAX_ITERATIONS,
            learning_rate=0.1,
            max_leaf_nodes=15,
            early_stopping=True,
            validation_fraction=0.2,
            n_iter_no_change=10,
            random_state=CLASSIFIER_SEED,
        )
        with threadpool_limits(limits=1, user_api="openmp"):
            model.fit(x, labels)
        centre, spread = x.mean(axis=0), np.where(x.std(axis=0) > 0, x.std(axis=0), 1.0)
        direction = ((features(pos) - centre) / spread).mean(axis=0) - ((features(neg) - centre) / spread).mean(axis=0)
        direction /= max(float(np.linalg.norm(direction)), 1e-300)
        return LearnedScore(features, TreeEnsemble.of_model(model), centre, spread, direction, model)


class LearnedScore(FittedScore):
    """The classifier's log-odds of the first hypothesis on :class:`FeatureMap`'s ``features`` (``trees``), ties
    broken by the features' standardized (``centre``, ``spread``) projection on the mean difference ``direction``.
    Fitted, it scores through scikit-learn's own ``model`` (threaded code); rebuilt from a witness, through the
    trees' arrays: the same log-odds to the last bit."""

    KIND = "learned"
    ARRAYS = {"centre": "f:k", "spread": "f:k", "direction": "f:k"}

    def __init__(
        self,
        features: FeatureMap,
        trees: TreeEnsemble,
        centre: np.ndarray,
        spread: np.ndarray,
        direction: np.ndarray,
        model: object | None = None,
    ):
        self.features, self.trees, self.model = features, trees, model
        self.centre, self.spread, self.direction = centre, spread, direction

    def parameters(self) -> dict:
        return {
            "features": self.features,
            "trees": self.trees,
            "centre": self.centre,
            "spread": self.spread,
            "direction": self.direction,
        }

    def __call__(self, y: np.ndarray) -> np.ndarray:
        f = self.features(y)
        if self.model is None:
            log_odds = self.trees(f)
        else:
            from threadpoolctl import threadpool_limits

            with threadpool_limits(limits=1, user_api="openmp"):
                log_odds = np.asarray(self.model.decision_function(f), dtype=np.float64)  # type: ignore[attr-defined]
        tie = ((f - self.centre) / self.spread) @ self.direction
        return log_odds + TIE_BREAK * tie / (1.0 + np.abs(tie))

    def event(self, threshold: float) -> str:
        return (
            f"the learned classifier's log-odds of the first side (plus a tie-break under 10⁻⁹) ≥ {threshold:.6g} "
            f"({self.trees.roots.size} trees on "
            f"{self.features.raw.size} raw columns and the derived shapes; features, trees and tie-break {SAVED})"
        )
