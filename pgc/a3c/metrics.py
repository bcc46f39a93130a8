"""Learning metrics of §4: average score (eq. 25), first success time (eq. 26), success ratio (eq. 27)
and the relative area under the success-ratio curve (Table 3). Pure functions."""

from __future__ import annotations

import math

import numpy as np

from pgc.errors import UserError

from .env import TARGET_SCORE

WINDOW = 10  # paper §4: m = 10


def average_scores(scores: np.ndarray, window: int = WINDOW) -> np.ndarray:
    """Eq. 25: μ over windows of m consecutive scores; element i averages scores[i : i+m].

    The paper writes the window forward from n (ζ_n..ζ_{n+m-1}) and calls it "the average score at
    n-th submission over last m submissions". We index μ by the *last* submission of the window
    (trailing, causal — what the aggregator knows at that time): μ at 1-based submission n is
    ``average_scores(scores)[n - m]`` for n ≥ m. The forward reading's FST is ours minus (m − 1).
    """
    scores = np.asarray(scores, dtype=np.float64)
    if window < 1:
        raise UserError("window must be >= 1")
    if scores.size < window:
        return np.empty(0)
    csum = np.concatenate([[0.0], np.cumsum(scores)])
    return (csum[window:] - csum[:-window]) / window


def first_success_time(scores: np.ndarray, target: float = TARGET_SCORE, window: int = WINDOW) -> float:
    """Eq. 26: the first 1-based submission count n whose trailing μ_n ≥ Θ; ``inf`` if never."""
    mu = average_scores(scores, window)
    hit = np.flatnonzero(mu >= target)
    return float(hit[0] + window) if hit.size else math.inf


def success_ratio(fsts: np.ndarray, n: np.ndarray | float) -> np.ndarray:
    """Eq. 27: fraction of trials with FST_k ≤ n (vectorised over n)."""
    fsts = np.asarray(fsts, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    if fsts.size == 0:
        raise UserError("need at least one trial")
    return (fsts[None, :] <= n.reshape(-1, 1)).mean(axis=1).reshape(n.shape)


def success_ratio_auc(fsts: np.ndarray, horizon: int) -> float:
    """Area under the success-ratio step curve on submissions 1..horizon (in submission units)."""
    fsts = np.asarray(fsts, dtype=np.float64)
    if horizon < 1:
        raise UserError("horizon must be >= 1")
    # each trial contributes (horizon − FST_k + 1) submissions at which it counts as a success
    contrib = np.where(fsts <= horizon, horizon - np.minimum(fsts, horizon) + 1, 0.0)
    return float(contrib.sum() / fsts.size)


def relative_auc(fsts: np.ndarray, reference_fsts: np.ndarray, horizon: int) -> float:
    """Table 3: AUC of a setting's success-ratio curve over the non-private run's AUC."""
    ref = success_ratio_auc(reference_fsts, horizon)
    if ref == 0:
        return math.nan
    return success_ratio_auc(fsts, horizon) / ref
