"""Fitted scores that state their certified event [score ≥ t] in words on the release itself (``event(t)``), so
that a violated row's witness reads as an event: a projection (:class:`LinearScore`), a vote (:class:`VoteScore`), an
oriented norm, sum of squares or count (:class:`OrientedScore` of a raw score: :class:`NormRaw`,
:class:`StandardizedSquares`, :class:`StandardizedSumSquared`, :class:`PresentEntries`), the Gaussian log-likelihood
ratio (:class:`GaussianRatioScore`: on one number an interval or two tails of y). Each computes its statistic's
fitted score and is a :class:`~audit.statistics.fitted.FittedScore`: the row's witness saves its parameters, and an
event too long to write out names them there."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from audit.statistics.fitted import FittedScore
from audit.statistics.memo import by_row_blocks

SAVED = "saved in the row's witness"


class LinearScore(FittedScore):
    """⟨y, w⟩ on the columns ``cols`` of a release of ``width`` numbers, and the certified event [⟨y, w⟩ ≥ t] in words:
    a threshold on the release itself where it is one column, the weighted sum where it is a few, its size where
    it is many (the weights, the two sides' difference of training means, are in the row's witness)."""

    KIND = "linear"
    ARRAYS = {"cols": "i:m", "w": "f:m"}
    WRITTEN_OUT = 4  # at most this many weighted columns are written out

    def __init__(self, cols: np.ndarray, w: np.ndarray, width: int):
        self.cols, self.w, self.width = cols, w, width

    def parameters(self) -> dict:
        return {"cols": self.cols, "w": self.w, "width": int(self.width)}

    def __call__(self, y: np.ndarray) -> np.ndarray:
        return y[:, self.cols] @ self.w

    def event(self, threshold: float) -> str:
        def name(column: int) -> str:
            return "y" if self.width == 1 else f"y[{column}]"

        if len(self.cols) == 1 and self.w[0] != 0:
            bound = threshold / float(self.w[0])
            return f"{name(int(self.cols[0]))} {'≥' if self.w[0] > 0 else '≤'} {bound:.6g}"
        if len(self.cols) <= self.WRITTEN_OUT:
            terms = "".join(
                f"{('−' if w < 0 else '') if i == 0 else (' − ' if w < 0 else ' + ')}{abs(w):.4g}·{name(int(c))}"
                for i, (c, w) in enumerate(zip(self.cols, self.w, strict=True))
            )
            return f"{terms} ≥ {threshold:.6g} (weights to 4 significant digits)"
        return (
            f"Σ_j w_j·y[j] ≥ {threshold:.6g} over {len(self.cols)} columns (w: the two sides' difference of training "
            f"means, {SAVED})"
        )


class VoteScore(FittedScore):
    """A fitted vote: each column of ``cols`` counts +1 on the first side of its midpoint ``mid`` (above it where
    ``sign`` is +1, below where −1), −1 on the other, 0 at it; and the event [votes ≥ t] in words."""

    KIND = "vote"
    ARRAYS = {"cols": "i:m", "mid": "f:m", "sign": "f:m"}
    WRITTEN_OUT = 10  # at most this many columns' conditions are written out

    def __init__(self, cols: np.ndarray, mid: np.ndarray, sign: np.ndarray):
        self.cols, self.mid, self.sign = cols, mid, sign
        self._score = by_row_blocks(lambda y: (np.sign(y[:, cols] - mid) * sign).sum(axis=1))

    def parameters(self) -> dict:
        return {"cols": self.cols, "mid": self.mid, "sign": self.sign}

    def __call__(self, y: np.ndarray) -> np.ndarray:
        return self._score(y)

    def event(self, threshold: float) -> str:
        if len(self.cols) > self.WRITTEN_OUT:
            return (
                f"a vote of {len(self.cols)} columns ≥ {threshold:.6g} (each +1 on one side of its midpoint, −1 on "
                f"the other; the midpoints, of the two sides' training medians, {SAVED})"
            )
        sides = ", ".join(
            f"y[{int(c)}] {'>' if s > 0 else '<'} {m:.6g}"
            for c, m, s in zip(self.cols, self.mid, self.sign, strict=True)
        )
        return (
            f"votes ≥ {threshold:.6g}, where each of {sides} counts +1 if it holds, −1 if its reverse does, 0 at "
            "equality"
        )


class OrientedScore(FittedScore):
    """A fitted score: a raw score times the sign the fit half gave it, and the certified event [score ≥ t] in the
    raw score's own words (``what``), so that a witness reads as an event on the release."""

    KIND = "oriented"

    def __init__(self, raw: Callable[[np.ndarray], np.ndarray], sign: float, what: str, note: str = ""):
        self.raw, self.sign, self.what, self.note = raw, float(sign), what, note

    def parameters(self) -> dict:
        return {"raw": self.raw, "sign": self.sign, "what": self.what, "note": self.note}

    def __call__(self, y: np.ndarray) -> np.ndarray:
        return self.sign * self.raw(y)

    def event(self, threshold: float) -> str:
        """[score ≥ ``threshold``] as an event on the raw score (and what the raw score needs said)."""
        text = f"{self.what} ≥ {threshold:.6g}" if self.sign > 0 else f"{self.what} ≤ {-threshold:.6g}"
        return f"{text} ({self.note})" if self.note else text


STANDARDIZED = f"m, s: the pooled column means and spreads of the training split, {SAVED}"


class NormRaw(FittedScore):
    """The ``order``-norm of each release (1 or ∞), or for order 2 its square (monotone in the norm, cheaper)."""

    KIND = "norm"

    def __init__(self, order: float):
        self.order = float(order)

    def parameters(self) -> dict:
        return {"order": self.order}

    def __call__(self, y: np.ndarray) -> np.ndarray:
        if self.order == 2:
            return np.einsum("ij,ij->i", y, y)
        return by_row_blocks(lambda block: np.linalg.norm(block, ord=self.order, axis=1))(y)


class StandardizedSquares(FittedScore):
    """Σ_j ((y_j − m_j)/s_j)² with the fitted column means m (``centre``) and spreads s (``spread``)."""

    KIND = "standardized-squares"
    ARRAYS = {"centre": "f:k", "spread": "f:k"}

    def __init__(self, centre: np.ndarray, spread: np.ndarray):
        self.centre, self.spread = centre, spread
        self._score = by_row_blocks(self._rows)

    def parameters(self) -> dict:
        return {"centre": self.centre, "spread": self.spread}

    def _rows(self, y: np.ndarray) -> np.ndarray:
        z = (y - self.centre) / self.spread
        return np.einsum("ij,ij->i", z, z)

    def __call__(self, y: np.ndarray) -> np.ndarray:
        return self._score(y)


class StandardizedSumSquared(StandardizedSquares):
    """(Σ_j (y_j − m_j)/s_j)² with the fitted column means m (``centre``) and spreads s (``spread``)."""

    KIND = "standardized-sum-squared"

    def _rows(self, y: np.ndarray) -> np.ndarray:
        return (((y - self.centre) / self.spread).sum(axis=1)) ** 2


class PresentEntries(FittedScore):
    """How many entries of each release are present (not NaN)."""

    KIND = "present-entries"

    def parameters(self) -> dict:
        return {}

    def __call__(self, y: np.ndarray) -> np.ndarray:
        return (~np.isnan(y)).sum(axis=1).astype(np.float64)


class GaussianRatioScore(FittedScore):
    """The fitted Gaussian log-likelihood ratio, and its event [score ≥ t] in words: on one number, the interval or
    the two tails of y it is (the ratio is quadratic in y); on more, the sum, whose fitted means and variances are
    in the row's witness."""

    KIND = "gaussian-ratio"
    ARRAYS = {"m_pos": "f:n", "v_pos": "f:n", "m_neg": "f:n", "v_neg": "f:n"}

    def __init__(self, m_pos: np.ndarray, v_pos: np.ndarray, m_neg: np.ndarray, v_neg: np.ndarray):
        self.m_pos, self.v_pos, self.m_neg, self.v_neg = m_pos, v_pos, m_neg, v_neg
        self.offset = -0.5 * float(np.sum(np.log(v_pos / v_neg)))
        self._score = by_row_blocks(self._rows)

    def parameters(self) -> dict:
        return {"m_pos": self.m_pos, "v_pos": self.v_pos, "m_neg": self.m_neg, "v_neg": self.v_neg}

    def _rows(self, y: np.ndarray) -> np.ndarray:
        terms = ((y - self.m_neg) ** 2 / self.v_neg) - ((y - self.m_pos) ** 2 / self.v_pos)
        return self.offset + 0.5 * terms.sum(axis=1)

    def __call__(self, y: np.ndarray) -> np.ndarray:
        return self._score(y)

    def event(self, threshold: float) -> str:
        if self.m_pos.size != 1:
            return (
                f"Σ_j [log N(y_j; m⁺_j, v⁺_j) − log N(y_j; m⁻_j, v⁻_j)] ≥ {threshold:.6g} (each side's training "
                f"means and variances, {SAVED})"
            )
        return quadratic_event(*gaussian_ratio_coefficients(self, threshold))


def gaussian_ratio_coefficients(score: GaussianRatioScore, threshold: float) -> tuple[float, float, float]:
    """(a, b, c) with [score(y) ≥ threshold] ⟺ a·y² + b·y + c ≥ 0 for a one-number release."""
    mp, vp, mn, vn = (float(x[0]) for x in (score.m_pos, score.v_pos, score.m_neg, score.v_neg))
    a = 0.5 * (1.0 / vn - 1.0 / vp)
    b = mp / vp - mn / vn
    c = 0.5 * (mn * mn / vn - mp * mp / vp) + score.offset - threshold
    return a, b, c


def quadratic_event(a: float, b: float, c: float) -> str:
    """[a·y² + b·y + c ≥ 0] in words: a half-line, two tails or an interval of y."""
    if a == 0.0:
        if b == 0.0:
            return "every release" if c >= 0 else "no release"
        return f"y {'≥' if b > 0 else '≤'} {-c / b:.6g}"
    disc = b * b - 4.0 * a * c
    if disc < 0:
        return "every release" if a > 0 else "no release"
    low, high = sorted(((-b - np.sqrt(disc)) / (2 * a), (-b + np.sqrt(disc)) / (2 * a)))
    return f"y ≤ {low:.6g} or y ≥ {high:.6g}" if a > 0 else f"{low:.6g} ≤ y ≤ {high:.6g}"
