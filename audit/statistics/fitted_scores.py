"""The fitted scores of the likelihood-ratio statistics: Laplace log-likelihood ratios, empirical ratios of exact
cells, support membership, the covariance directions' Gaussian ratio, the encoding of absent entries and the sum of
calibrated channel ratios. Each is a :class:`~audit.statistics.fitted.FittedScore`, so a row's witness saves what it
was fitted to and rebuilds the same score bit for bit, and each states its certified event [score ≥ t] in words
(``event``), with what the words leave out in the witness."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from audit.statistics.fitted import FittedScore
from audit.statistics.hashing import row_hash
from audit.statistics.memo import by_row_blocks
from audit.statistics.scores import SAVED, GaussianRatioScore


def columns_named(cols: Any) -> str:
    """``cols`` in words: every column, one, or how many."""
    if cols is None:
        return "every column"
    return f"column {int(cols[0])}" if len(cols) == 1 else f"{len(cols)} columns"


def counted(n: int, thing: str) -> str:
    """``n`` things in words: "1 cell", "3 cells"."""
    return f"{n} {thing}" if n == 1 else f"{n} {thing}s"


def column_index(cols: Any) -> Any:
    """Columns as an index: None (every column) as ``slice(None)``."""
    return slice(None) if cols is None else cols


def cell_hashes(y: np.ndarray, cols: Any, width: np.ndarray | None = None) -> np.ndarray:
    """Each release's cell: the exact values of the columns ``cols`` (None: every column), or with a ``width`` per
    column those values rounded to cells of that width, hashed by :func:`~audit.statistics.hashing.row_hash`."""
    v = y[:, column_index(cols)]
    return row_hash(v if width is None else np.round(v / width))


class LaplaceRatioScore(FittedScore):
    """Σ_j (|y_j − m⁻_j| − |y_j − m⁺_j|) / s_j over the columns ``cols``: each side's training medians and the
    columns' Laplace scales (1 unscaled). ``dense``: ``cols`` orders every column (by |z|), and the terms are
    computed in the columns' own order and summed in that one (one gather instead of two; the same numbers)."""

    KIND = "laplace-ratio"
    ARRAYS = {"cols": "i:m", "m_pos": "f:m", "m_neg": "f:m", "scale": "f:m"}

    @classmethod
    def check(cls, parameters: dict) -> str | None:
        cols = parameters["cols"]
        dense = parameters.get("dense") is True
        return (
            "a dense ratio's cols must order every column" if dense and cols.size and cols.max() >= cols.size else None
        )

    def __init__(self, cols: np.ndarray, m_pos: np.ndarray, m_neg: np.ndarray, scale: np.ndarray, dense: bool):
        self.cols, self.m_pos, self.m_neg, self.scale, self.dense = cols, m_pos, m_neg, scale, bool(dense)
        if not self.dense:
            self._score = by_row_blocks(
                lambda y: ((np.abs(y[:, cols] - m_neg) - np.abs(y[:, cols] - m_pos)) / scale).sum(axis=1)
            )
            return
        natural = np.empty((3, cols.size))
        natural[:, cols] = m_neg, m_pos, scale
        self._score = by_row_blocks(
            lambda y: ((np.abs(y - natural[0]) - np.abs(y - natural[1])) / natural[2])[:, cols].sum(axis=1)
        )

    def parameters(self) -> dict:
        return {"cols": self.cols, "m_pos": self.m_pos, "m_neg": self.m_neg, "scale": self.scale, "dense": self.dense}

    def __call__(self, y: np.ndarray) -> np.ndarray:
        return self._score(y)

    def event(self, threshold: float) -> str:
        return (
            f"Σ_j (|y[j] − m⁻_j| − |y[j] − m⁺_j|)/s_j ≥ {threshold:.6g} over {columns_named(self.cols)} (m⁺, m⁻: the "
            f"two sides' training medians, s: the Laplace scales, {SAVED})"
        )


class CellLikelihoodRatio(FittedScore):
    """The empirical log-likelihood ratio ``llr`` of a release's cell — the exact values of the columns ``cols``
    (None: every column), or with ``absence`` the pattern of its absent entries — looked up by its
    :func:`~audit.statistics.hashing.row_hash` among the training cells ``keys`` (sorted); an unseen cell scores 0."""

    KIND = "cell-ratio"
    ARRAYS = {"cols": "?i:c", "keys": "u:k", "llr": "f:k"}

    @classmethod
    def check(cls, parameters: dict) -> str | None:
        return "no cells" if parameters["keys"].size == 0 else None

    def __init__(self, cols: np.ndarray | None, keys: np.ndarray, llr: np.ndarray, absence: bool = False):
        self.cols, self.keys, self.llr, self.absence = cols, keys, llr, bool(absence)

    def parameters(self) -> dict:
        return {"cols": self.cols, "keys": self.keys, "llr": self.llr, "absence": self.absence}

    def __call__(self, y: np.ndarray) -> np.ndarray:
        h = row_hash(np.isnan(y)) if self.absence else cell_hashes(y, self.cols)
        idx = np.clip(np.searchsorted(self.keys, h), 0, self.keys.size - 1)
        return np.where(self.keys[idx] == h, self.llr[idx], 0.0)

    def event(self, threshold: float) -> str:
        cell = "pattern of absent entries" if self.absence else f"exact values on {columns_named(self.cols)}"
        chosen = int(np.count_nonzero(self.llr >= threshold))
        unseen = ", or a cell unseen in training" if threshold <= 0 else ""
        return (
            f"the release's cell (its {cell}) is one of the {chosen} of {counted(self.keys.size, 'training cell')} "
            f"whose log-likelihood ratio is ≥ {threshold:.6g}{unseen} (the cells' hashes and ratios {SAVED})"
        )


class MembershipScore(FittedScore):
    """+1 where a release's cell (:func:`cell_hashes` of the columns ``cols`` at ``width``) is among ``set_pos``, −1
    where among ``set_neg`` (both, 0)."""

    KIND = "membership"
    ARRAYS = {"cols": "?i:c", "set_pos": "u:p", "set_neg": "u:q", "width": "?f:w"}
    point_masses: tuple[int, int] = (0, 0)  # the cells of each set, where the δ test's statistic counts them

    def __init__(
        self, cols: np.ndarray | None, set_pos: np.ndarray, set_neg: np.ndarray, width: np.ndarray | None = None
    ):
        self.cols, self.set_pos, self.set_neg, self.width = cols, set_pos, set_neg, width

    def parameters(self) -> dict:
        return {"cols": self.cols, "set_pos": self.set_pos, "set_neg": self.set_neg, "width": self.width}

    def __call__(self, y: np.ndarray) -> np.ndarray:
        h = cell_hashes(y, self.cols, self.width)
        return np.isin(h, self.set_pos).astype(np.float64) - np.isin(h, self.set_neg)

    def event(self, threshold: float) -> str:
        cell = f"the release's cell (its {'rounded' if self.width is not None else 'exact'} values on "
        cell += f"{columns_named(self.cols)})"
        first = f"the first side's {counted(self.set_pos.size, 'saved cell')}"
        second = f"the second side's {counted(self.set_neg.size, 'saved cell')}"
        if threshold > 1 or (threshold > 0 and self.set_pos.size == 0):
            return "never (no release scores that high)"
        if threshold <= -1 or (threshold <= 0 and self.set_neg.size == 0):
            return "always (every release scores that high)"
        if threshold > 0:
            return f"{cell} is one of {first} and none of {second} (the cells {SAVED})"
        return f"{cell} is none of {second}, or one of {first} too (the cells {SAVED})"


class CovarianceProjection(FittedScore):
    """A release's coordinates on the fitted directions ``basis`` (columns) of its standardized form
    ((y − centre)/spread); ``wide``: computed as y·W − shift with W = basis/spread, without standardizing the
    release."""

    KIND = "covariance-projection"
    ARRAYS = {"centre": "f:k", "spread": "f:k", "basis": "f:k,d"}

    def __init__(self, centre: np.ndarray, spread: np.ndarray, basis: np.ndarray, wide: bool):
        self.centre, self.spread, self.basis, self.wide = centre, spread, basis, bool(wide)
        self.weights = basis / spread[:, None]  # p = ((y − centre)/spread) @ basis = y @ weights − shift
        self.shift = centre @ self.weights

    def parameters(self) -> dict:
        return {"centre": self.centre, "spread": self.spread, "basis": self.basis, "wide": self.wide}

    def __call__(self, y: np.ndarray) -> np.ndarray:
        return y @ self.weights - self.shift if self.wide else ((y - self.centre) / self.spread) @ self.basis


class CovarianceScore(FittedScore):
    """The Gaussian log-likelihood ratio (each side's mean and variance per direction) of a release's coordinates
    on the covariance difference's leading directions (``projection``)."""

    KIND = "covariance-ratio"
    ARRAYS = {"m_pos": "f:n", "v_pos": "f:n", "m_neg": "f:n", "v_neg": "f:n"}

    def __init__(
        self,
        projection: CovarianceProjection,
        m_pos: np.ndarray,
        v_pos: np.ndarray,
        m_neg: np.ndarray,
        v_neg: np.ndarray,
    ):
        self.projection = projection
        self.ratio = GaussianRatioScore(m_pos, v_pos, m_neg, v_neg)

    def parameters(self) -> dict:
        return {"projection": self.projection, **self.ratio.parameters()}

    def __call__(self, y: np.ndarray) -> np.ndarray:
        return self.ratio(self.projection(y))

    def event(self, threshold: float) -> str:
        return (
            f"the Gaussian log-likelihood ratio of the release's coordinates on {self.ratio.m_pos.size} leading "
            f"directions of the two sides' covariance difference ≥ {threshold:.6g} (the standardizer, the "
            f"directions and each side's mean and variance along them {SAVED})"
        )


class AbsentAwareScore(FittedScore):
    """A value statistic's score (``inner``) of releases with absent entries as it was fitted to read them: each NaN
    replaced by its column's training median of present values (``fill``), and a presence indicator (1 present,
    0 absent) appended for each of ``columns``, the columns with an absent entry in training."""

    KIND = "absent-aware"
    ARRAYS = {"fill": "f:k", "columns": "i:c"}

    def __init__(self, fill: np.ndarray, columns: np.ndarray, inner: Any):
        self.fill, self.columns, self.inner = fill, columns, inner
        self.encode = self.encoding(fill, columns)

    @staticmethod
    def fitted(pos: np.ndarray, neg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(fill, columns) of the pooled training releases (0 fills a column with no present value)."""
        pooled = np.concatenate([pos, neg])
        columns = np.flatnonzero(np.isnan(pooled).any(axis=0))
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column has no median
            fill = np.nanmedian(pooled, axis=0)
        return np.where(np.isfinite(fill), fill, 0.0), columns

    @staticmethod
    def encoding(fill: np.ndarray, columns: np.ndarray):
        """The releases as the inner statistic reads them (class docstring)."""

        def encode(y: np.ndarray) -> np.ndarray:
            absent = np.isnan(y)
            filled = np.where(absent, fill, y)
            if columns.size == 0:
                return filled
            return np.concatenate([filled, (~absent[:, columns]).astype(np.float64)], axis=1)

        return encode

    def parameters(self) -> dict:
        return {"fill": self.fill, "columns": self.columns, "inner": self.inner}

    def __call__(self, y: np.ndarray) -> np.ndarray:
        return self.inner(self.encode(y))

    def event(self, threshold: float) -> str:
        inner = getattr(self.inner, "event", None)
        words = str(inner(threshold)) if callable(inner) else f"the score ≥ {threshold:.6g}"
        width = self.fill.size
        appended = (
            f"; y[{width}] onward: 1 where the entry of column {', '.join(str(int(c)) for c in self.columns[:5])}"
            f"{', …' if self.columns.size > 5 else ''} is present, 0 where absent"
            if self.columns.size
            else ""
        )
        return f"{words}, on the release with each absent entry filled by its column's training median{appended}"


def _saved_group(group: Any) -> Any:
    """A channel's columns as a witness holds them: a slice as ["slice", start, stop, step], else the indices."""
    if isinstance(group, slice):
        return ["slice", *(None if v is None else int(v) for v in (group.start, group.stop, group.step))]
    return np.asarray(group, np.int64)


def _group(saved: Any) -> Any:
    if isinstance(saved, list) and saved[:1] == ["slice"]:
        return slice(*saved[1:])
    return saved


class ChannelSumScore(FittedScore):
    """Σ over column groups of each group's calibrated log-likelihood ratio: the group's fitted score (``scorers``),
    binned at ``edges`` and read off its non-decreasing ratios ``llrs`` (one per bin)."""

    KIND = "channel-sum"

    @classmethod
    def check(cls, parameters: dict) -> str | None:
        groups, scorers, edges, llrs = (parameters.get(k) for k in ("groups", "scorers", "edges", "llrs"))
        if not all(isinstance(v, list) for v in (groups, scorers, edges, llrs)):
            return "groups, scorers, edges and llrs must be lists"
        if not len(groups) == len(scorers) == len(edges) == len(llrs):
            return "one group, scorer, edges and ratios per channel"
        for group in groups:
            is_slice = isinstance(group, list) and len(group) == 4 and group[0] == "slice"
            bounds = group[1:] if is_slice else []
            if is_slice and not all(v is None or (type(v) is int and v >= 0) for v in bounds):
                return "a slice's bounds must be non-negative integers or None"
            if not is_slice and not (isinstance(group, np.ndarray) and group.ndim == 1 and group.dtype.kind in "iu"):
                return "a group must be a slice or column indices"
        for e, llr in zip(edges, llrs, strict=True):
            if not (isinstance(e, np.ndarray) and isinstance(llr, np.ndarray) and e.ndim == llr.ndim == 1):
                return "edges and ratios must be vectors"
            if llr.size != e.size + 1 or e.dtype.kind != "f" or llr.dtype.kind != "f":
                return "a channel's ratios must number one more than its edges"
        return None

    def __init__(self, groups: Sequence[Any], scorers: Sequence[Any], edges: Sequence[Any], llrs: Sequence[Any]):
        self.groups = [_group(g) for g in groups]
        self.scorers, self.edges, self.llrs = list(scorers), list(edges), list(llrs)

    def parameters(self) -> dict:
        return {
            "groups": [_saved_group(g) for g in self.groups],
            "scorers": self.scorers,
            "edges": self.edges,
            "llrs": self.llrs,
        }

    def __call__(self, y: np.ndarray) -> np.ndarray:
        total = np.zeros(len(y))
        for group, scorer, edges, llr in zip(self.groups, self.scorers, self.edges, self.llrs, strict=True):
            total += llr[np.searchsorted(edges, np.asarray(scorer(y[:, group]), np.float64), side="right")]
        return total

    def event(self, threshold: float) -> str:
        return (
            f"Σ over {counted(len(self.groups), 'channel')} of each channel's calibrated log-likelihood ratio (its "
            f"fitted score, binned) ≥ {threshold:.6g} (each channel's columns, score, bins and ratios {SAVED})"
        )
