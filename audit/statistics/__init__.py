"""Test statistics, each fitted on the training split of both hypotheses (never on certification data).

Every statistic maps an output batch ``(n, k)`` to a score ``(n,)``: higher means "looks like the
positive hypothesis". The tester then thresholds it. Statistics that do not apply to the data
(``fit`` returns ``None``) are skipped, e.g. a histogram on continuous outputs.

* :class:`SparseProjection` — ⟨y, w⟩ with w the mean difference on the informative columns
  (|z| > 4 on the training split). For a Laplace canary along one coordinate this is that
  coordinate, i.e. the exact likelihood-ratio statistic. For PRS with canary G·e_j it is y_j,
  whose likelihood ratio is exactly e^{(ε/d̂)·y_j/(√3C)} (independent of M's unknown rows).
* :class:`LaplaceLogLikelihood` — Σ_j |y_j − m'_j| − |y_j − m_j| (Laplace log-likelihood ratio up
  to the scale) with m, m' the per-column medians (the Laplace location MLE): optimal for
  Laplace noise on a dense canary difference (e.g. an L2-clipped mechanism).
* :class:`SignVote` — Σ_j sign(w_j)·sign(y_j − midpoint_j): robust to heavy tails; over the strongest columns (as
  many as :func:`vote_width` says), a count of the answers that lean towards the positive side (many boolean
  answers, each nudged a little); over every column, for a system to offer.
* :class:`HistogramLikelihoodRatio` — for discrete outputs (PRS, scores, arrival ranks): the
  empirical log-likelihood ratio of the joint value of the top-k informative columns.
* :class:`SupportMembership` — was this exact output (a whole row, or the top column's value) seen
  under the positive / negative hypothesis in training? Catches finite-support noise (coarse
  floating-point noise, Mironov 2012) and noise reused across submissions, where the training
  outputs play the colluding agents whose inputs are known.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from audit.certification.bounds import exp_or_inf
from audit.statistics.fitted_scores import (
    CellLikelihoodRatio,
    ChannelSumScore,
    LaplaceRatioScore,
    MembershipScore,
    cell_hashes,
    column_index,
)
from audit.statistics.memo import column_medians, once_per_split
from audit.statistics.prs import MAX_LATTICE_CELLS as MAX_LATTICE_CELLS
from audit.statistics.prs import PRSLexicographicLikelihoodRatio as PRSLexicographicLikelihoodRatio
from audit.statistics.scores import LinearScore, VoteScore
from pgc.errors import UserError

Z_INFORMATIVE = 4.0  # |z| above which a column counts as informative


@dataclass(frozen=True)
class ColumnSummary:
    """Per-column training summaries shared by the statistics."""

    diff: np.ndarray  # mean(pos) − mean(neg)
    z: np.ndarray  # diff / its standard error
    order: np.ndarray  # columns by decreasing |z|
    informative: np.ndarray  # columns with |z| > Z_INFORMATIVE (at least the top one)

    def columns(self, dense: bool) -> np.ndarray:
        """The informative columns, or every column (dense: many weak signals add up)."""
        return self.order if dense else self.informative

    @classmethod
    def of(cls, pos: np.ndarray, neg: np.ndarray) -> ColumnSummary:
        """The summary of one training split (computed once for every statistic that reads it)."""
        return _column_summary(pos, neg)

    @classmethod
    def computed(cls, pos: np.ndarray, neg: np.ndarray) -> ColumnSummary:
        diff = pos.mean(axis=0) - neg.mean(axis=0)
        se = np.sqrt(pos.var(axis=0) / len(pos) + neg.var(axis=0) / len(neg))
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(se > 0, diff / np.where(se > 0, se, 1.0), np.where(diff != 0, np.inf * np.sign(diff), 0.0))
        order = np.argsort(-np.abs(z), kind="stable")
        informative = order[np.abs(z[order]) > Z_INFORMATIVE]
        if informative.size == 0:
            informative = order[:1]
        return cls(diff, z, order, informative)


_column_summary = once_per_split(ColumnSummary.computed)


class SparseProjection:
    """⟨y, w⟩ on the informative columns (``dense=True``: on all columns)."""

    shape = "location"

    def __init__(self, dense: bool = False):
        self.dense = dense
        self.name = "projection-dense" if dense else "projection"

    def orientation_only(self, width: int) -> bool:
        """Of a one-number release the projection is ±y: its fit learns nothing but a sign, so its threshold may
        be chosen on the whole training split (:func:`audit.certification.tester.fit_candidate`)."""
        return width == 1

    def fit(self, pos: np.ndarray, neg: np.ndarray):
        summary = ColumnSummary.of(pos, neg)
        cols = summary.columns(self.dense)
        # dense: the summary's difference of means of every column (no copy of the releases in |z| order)
        w = summary.diff[cols] if self.dense else pos[:, cols].mean(axis=0) - neg[:, cols].mean(axis=0)
        return LinearScore(cols, w, pos.shape[1])


class LaplaceLogLikelihood:
    """``scaled=True``: each column's term divided by its Laplace scale (the mean absolute deviation
    from the median, both sides pooled): the Laplace log-likelihood ratio itself when the columns
    have different noise scales (a privatized score beside a gradient)."""

    shape = "location"

    def __init__(self, dense: bool = False, scaled: bool = False):
        self.dense, self.scaled = dense, scaled
        self.name = ("laplace-llr-dense" if dense else "laplace-llr") + ("-scaled" if scaled else "")

    def fit(self, pos: np.ndarray, neg: np.ndarray):
        cols = ColumnSummary.of(pos, neg).columns(self.dense)
        if cols.size < 2:
            return None  # one column: a monotone function of the projection
        if self.dense:  # every column, in the order of |z|: the medians of all columns, then that order
            m_pos, m_neg = column_medians(pos)[cols], column_medians(neg)[cols]
        else:
            m_pos, m_neg = column_medians(pos[:, cols]), column_medians(neg[:, cols])
        scale = np.ones(cols.size)
        if self.scaled:
            pooled = np.concatenate([pos[:, cols], neg[:, cols]])
            mad = np.abs(pooled - column_medians(pooled)).mean(axis=0)
            scale = np.where(mad > 0, mad, 1.0)
        return LaplaceRatioScore(cols, m_pos, m_neg, scale, self.dense)


def strongest_prefix(abs_z: np.ndarray) -> int:
    """How many of the columns, taken by decreasing |z| (``abs_z``, sorted), a vote should count: the m that
    maximizes Σ_{j≤m} |z|_(j) / √m, the z-score of the sum of m independent columns' standardized differences. A
    column joins while its |z| adds more than the √m in the denominator takes away: a dozen answers nudged alike
    join together, and beside one strong column (an LDP report's own item) noise columns never do. A non-finite
    |z| (a column that separates the sides exactly) counts alone."""
    z = np.where(np.isnan(abs_z), 0.0, np.asarray(abs_z, np.float64))
    if z.size == 0:
        return 0
    return int(np.argmax(np.cumsum(z) / np.sqrt(np.arange(1, z.size + 1)))) + 1


def vote_width(abs_z: np.ndarray) -> int:
    """How many of the columns, taken by decreasing |z| (``abs_z``, sorted), the vote of the strongest counts: every
    one where :func:`strongest_prefix` already takes at least two and at least half of them — the leak is spread
    over the answers, and the prefix's cut among the weaker ones is mostly the noise of their |z| on the fit half
    (SVT6's ten answers: results/catalogue/vote-width/) — else the prefix. A non-finite |z| keeps its prefix."""
    m = strongest_prefix(abs_z)
    spread = m >= 2 and 2 * m >= abs_z.size and bool(np.all(np.isfinite(abs_z)))
    return int(abs_z.size) if spread else m


TWO_VALUED_SCREEN = 64  # rows per side that screen out a column of three values or more before the full check


def two_valued(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """Which columns take at most two values over both sides' releases (a boolean answer, a bit of a report). The
    first :data:`TWO_VALUED_SCREEN` rows of each side rule out most continuous columns; only the rest are read in
    full (a continuous release of a thousand columns costs a few milliseconds, not a pass over every entry)."""
    head = np.concatenate([pos[:TWO_VALUED_SCREEN], neg[:TWO_VALUED_SCREEN]])
    candidates = np.flatnonzero(np.all((head == head.min(axis=0)) | (head == head.max(axis=0)), axis=0))
    result = np.zeros(pos.shape[1], dtype=bool)
    if candidates.size == 0:
        return result
    whole = candidates.size == pos.shape[1]
    sides = (pos, neg) if whole else (pos[:, candidates], neg[:, candidates])
    low = np.minimum(*(side.min(axis=0) for side in sides))
    high = np.maximum(*(side.max(axis=0) for side in sides))
    result[candidates] = np.logical_and(*(((side == low) | (side == high)).all(axis=0) for side in sides))
    return result


class SignVote:
    """Σ_j sign(w_j)·sign(y_j − midpoint_j) over a set of columns, each with the sign of its mean difference: a count
    of the columns that lean towards the positive side, robust to heavy tails. ``columns``:

    * ``"informative"`` — the columns with |z| > :data:`Z_INFORMATIVE`;
    * ``"strongest"`` — the strongest two-valued columns by |z|, as many as :func:`vote_width` says: the test
      of a release of many boolean answers each nudged a little by the secret (SVT's ⊤/⊥ vector), where no column
      alone is informative and a Laplace log-likelihood's per-column medians of 0/1 answers drop the columns whose
      medians agree. Of continuous columns the Laplace log-likelihood is the test (a vote of 2m + 1 values ranked by
      its best in-sample event would displace it by the winner's curse);
    * ``"every"`` — every column whose means differ, for a system to offer (:class:`pgc.contracts.OffersStatistics`),
      not a default: where most columns' signs are noise (an LDP report of a hundred items) it can look best on the
      selection half while one exact event certifies more (two cells of the LDP bench,
      results/catalogue/dense-sign-vote/)."""

    shape = "location"
    NAMES = {"informative": "sign-vote", "strongest": "sign-vote-strongest", "every": "sign-vote-dense"}

    def __init__(self, columns: str = "informative"):
        if columns not in self.NAMES:
            raise UserError(f"SignVote columns must be one of {', '.join(self.NAMES)}, not {columns!r}")
        self.columns = columns
        self.name = self.NAMES[columns]

    def fit(self, pos: np.ndarray, neg: np.ndarray):
        summary = ColumnSummary.of(pos, neg)
        if self.columns == "informative":
            cols = summary.informative
        else:
            cols = summary.order[summary.diff[summary.order] != 0]
            if self.columns == "strongest":
                cols = cols[two_valued(pos, neg)[cols]]
                cols = cols[: vote_width(np.abs(summary.z[cols]))]
        if cols.size < 2:
            return None
        mid = 0.5 * (column_medians(pos[:, cols]) + column_medians(neg[:, cols]))
        sign = np.sign(summary.diff[cols])
        return VoteScore(cols, mid, sign)


class HistogramLikelihoodRatio:
    """Empirical log-likelihood ratio of the joint value of the top-``columns`` informative columns."""

    shape = "location"

    def __init__(self, columns: int = 1, max_cells_fraction: float = 0.05, fixed: slice | None = None):
        self.columns = columns
        self.fixed = fixed  # explicit columns instead of the top-z ones
        self.name = f"histogram-lr-{columns}" if fixed is None else "histogram-lr-fixed"
        self.max_cells_fraction = max_cells_fraction

    def fit(self, pos: np.ndarray, neg: np.ndarray):
        if self.fixed is not None:
            cols = np.arange(pos.shape[1])[self.fixed]
        else:
            summary = ColumnSummary.of(pos, neg)
            if summary.order.size < self.columns:
                return None
            cols = summary.order[: self.columns]
        h_pos, h_neg = cell_hashes(pos, cols), cell_hashes(neg, cols)
        keys, inverse = np.unique(np.concatenate([h_pos, h_neg]), return_inverse=True)
        if keys.size > max(50, self.max_cells_fraction * (len(pos) + len(neg))):
            return None  # continuous-looking data: no useful histogram
        c_pos = np.bincount(inverse[: len(pos)], minlength=keys.size) / len(pos)
        c_neg = np.bincount(inverse[len(pos) :], minlength=keys.size) / len(neg)
        smooth = 0.5 / max(len(pos), len(neg))
        llr = np.log(c_pos + smooth) - np.log(c_neg + smooth)
        return CellLikelihoodRatio(cols, keys, llr)


class SupportMembership:
    """+1 if the output was seen under the positive hypothesis in training, −1 if under the negative."""

    shape = "structure"

    def __init__(self, scope: str = "row"):
        if scope not in ("row", "column"):
            raise UserError("scope must be 'row' or 'column'")
        self.scope = scope
        self.name = f"support-{scope}"

    def fit(self, pos: np.ndarray, neg: np.ndarray):
        cols = None if self.scope == "row" else ColumnSummary.of(pos, neg).order[:1]
        set_pos, set_neg = np.unique(cell_hashes(pos, cols)), np.unique(cell_hashes(neg, cols))
        if set_pos.size > 0.999 * len(pos) and set_neg.size > 0.999 * len(neg):
            return None  # (almost) no repeats: continuous, fresh noise
        return MembershipScore(cols, set_pos, set_neg)


def location_statistics() -> list:
    """The statistics that read where releases lie, column by column."""
    return [
        SparseProjection(),
        SparseProjection(dense=True),
        LaplaceLogLikelihood(),
        LaplaceLogLikelihood(dense=True),
        SignVote(),
        SignVote("strongest"),
        HistogramLikelihoodRatio(1),
        HistogramLikelihoodRatio(2),
        HistogramLikelihoodRatio(3),
        SupportMembership("row"),
        SupportMembership("column"),
    ]


def default_statistics(learned: bool = True) -> list:
    """Every shape a leak takes: location (this module), scale, dependence and structure
    (:mod:`audit.statistics.shapes`)
    and, with ``learned``, a classifier on raw and derived features (:mod:`audit.statistics.learned`). The selection
    tries
    them in this order; a later one replaces an earlier one only when it projects more by its margin."""
    from audit.statistics.learned import LearnedClassifier
    from audit.statistics.shapes import shape_statistics

    return location_statistics() + shape_statistics() + ([LearnedClassifier()] if learned else [])


def search_statistics() -> list:
    """The statistics a search's objective fits for every candidate (a broadcast, a pair of secrets): every shape
    but the learned one, whose fit would cost each of the search's hundreds of candidates a classifier. The
    search only ranks; the audit of what it finds selects among :func:`default_statistics`."""
    return default_statistics(learned=False)


POINT_MASS_MIN_REPEATS = 2  # a cell counts as a point mass once it recurs this often in the fit half


SCALE_ROWS = 4096  # rows (evenly strided) that estimate the per-column spread


def column_scales(values: np.ndarray) -> np.ndarray:
    """A robust spread per column: the median absolute deviation, else the standard deviation, else 1
    (from at most SCALE_ROWS evenly strided rows: only the cell width depends on it)."""
    values = values[:: max(1, -(-len(values) // SCALE_ROWS))]
    if np.isnan(values).any():  # absent entries: the spread of the present ones (1 where none is)
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            med = np.nanmedian(values, axis=0)
            mad, std = np.nanmedian(np.abs(values - med), axis=0), np.nanstd(values, axis=0)
        return np.where(mad > 0, mad, np.where(std > 0, std, 1.0))
    med = column_medians(values)
    mad = column_medians(np.abs(values - med))
    std = values.std(axis=0)
    return np.where(mad > 0, mad, np.where(std > 0, std, 1.0))


class ExactRelease:
    """Point masses: outputs equal (``eta = 0``) or within ``eta``·spread of a value that RECURS.

    Noise with a density never repeats an output row (nor, over many coordinates, lands in a cell of
    width η·spread around a given point: P ≈ η per coordinate for Laplace, η^k jointly), so a row
    (``scope="row"``) or informative-column value (``scope="column"``) that recurs under one
    hypothesis is a point mass: a release without noise (or with negligible noise), reused noise,
    or a finite lattice. Cells are the outputs quantised to η·s_j per column (s_j: a robust spread
    from the fit data, :func:`column_scales`) and hashed (:func:`~audit.statistics.fitted_scores.cell_hashes`);
    η = 0 hashes the exact values. Scores: +1 for cells that recur under the positive hypothesis and are more than
    e^ε times as frequent there as under the negative one, −1 for the mirror set, 0 otherwise.

    The event {score = +1} (or {score = −1}) is what the δ test certifies: for an ε-DP mechanism
    P[E | x] ≤ e^ε·P[E | x'] for every event, so hits under x beyond e^ε times those under x'
    witness δ > 0 (:func:`audit.certification.bounds.delta_lower_bound`). Vectorised: one quantisation, one hash
    and one sorted membership test per batch.
    """

    shape = "structure"

    def __init__(self, scope: str = "row", eta: float = 0.0, epsilon: float = 0.0):
        if scope not in ("row", "column"):
            raise UserError("scope must be 'row' or 'column'")
        if not (math.isfinite(eta) and eta >= 0):
            raise UserError(f"eta must be a finite number >= 0, got {eta!r}")
        self.scope, self.eta, self.epsilon = scope, float(eta), float(epsilon)
        self.name = f"exact-release-{scope}" + (f"-eta{eta:g}" if eta > 0 else "")

    def fit(self, pos: np.ndarray, neg: np.ndarray):
        cols = None
        if self.scope == "column":  # the top column, from at most 16 SCALE_ROWS rows per side (it is only a choice)
            step = max(1, -(-max(len(pos), len(neg)) // (16 * SCALE_ROWS)))
            cols = ColumnSummary.of(pos[::step], neg[::step]).order[:1]
        index = column_index(cols)
        width = None if self.eta == 0 else self.eta * column_scales(np.concatenate([pos[:, index], neg[:, index]]))
        k_pos, c_pos = np.unique(cell_hashes(pos, cols, width), return_counts=True)
        k_neg, c_neg = np.unique(cell_hashes(neg, cols, width), return_counts=True)
        ratio = exp_or_inf(self.epsilon)

        def point_masses(keys, counts, other_keys, other_counts):
            idx = np.clip(np.searchsorted(other_keys, keys), 0, max(other_keys.size - 1, 0))
            other = (
                np.where(other_keys[idx] == keys, other_counts[idx], 0) if other_keys.size else np.zeros_like(counts)
            )
            scaled = np.multiply(ratio, other, out=np.zeros(other.shape), where=other > 0)  # never inf·0
            return keys[(counts >= POINT_MASS_MIN_REPEATS) & (counts > scaled)]

        set_pos, set_neg = point_masses(k_pos, c_pos, k_neg, c_neg), point_masses(k_neg, c_neg, k_pos, c_pos)
        score = MembershipScore(cols, set_pos, set_neg, width)
        score.point_masses = (int(score.set_pos.size), int(score.set_neg.size))
        return score


# cell widths relative to each column's spread: over a whole row η = 10⁻⁶ is far below anything noise
# with a density hits twice (≈ η^k for k coordinates); in one column, cells of 10⁻⁶·spread already
# collide hundreds of times in 10⁵ Laplace draws (≈ n²·η/4 pairs), so the column stays near-exact
DELTA_ETAS = {"row": (0.0, 1e-6), "column": (0.0, 1e-9)}


def exact_release_statistics(epsilon: float) -> list:
    """The δ test's candidate events: whole rows and the top column, exact and at each η."""
    return [ExactRelease(scope, eta, epsilon) for scope in ("row", "column") for eta in DELTA_ETAS[scope]]


def _pava_llr(c_pos: np.ndarray, c_neg: np.ndarray, n_pos: int, n_neg: int) -> np.ndarray:
    """Non-decreasing log-likelihood ratios per bin (pool-adjacent-violators on the pooled counts)."""

    def llr(cp: float, cn: float) -> float:
        return math.log((cp + 0.5) / n_pos) - math.log((cn + 0.5) / n_neg)

    blocks: list[list[float]] = []  # [count pos, count neg, bins]
    for cp, cn in zip(c_pos, c_neg, strict=False):
        blocks.append([float(cp), float(cn), 1])
        while len(blocks) > 1 and llr(*blocks[-2][:2]) >= llr(*blocks[-1][:2]):
            last = blocks.pop()
            blocks[-1] = [blocks[-1][0] + last[0], blocks[-1][1] + last[1], blocks[-1][2] + last[2]]
    return np.concatenate([np.full(int(b[2]), llr(b[0], b[1])) for b in blocks])


class ChannelSumLikelihoodRatio:
    """Σ over column groups (channels) of each group's calibrated log-likelihood ratio.

    For a joint output made of channels on very different scales (a privatized score in units of
    episode steps beside a gradient in units of C) a statistic on all columns at once is dominated by
    the widest column. Here every group gets its own statistic: the best of ``candidates`` (fitted on
    the first half of the fit data, chosen on the second half by the bound it would project), whose
    scores are then calibrated into a non-decreasing empirical log-likelihood ratio (``bins``
    quantile bins, pool-adjacent-violators) on that second half. The sum of the calibrated ratios is
    the Neyman–Pearson statistic when the channels' noises are independent given the environment (the
    score mechanism and the gradient mechanism draw independent noise), so a threshold on it can reach
    ε_gradient + ε_score where each channel alone reaches its own share. Like every statistic it only
    reads outputs: the certified bound holds whatever the channels' dependence.
    """

    shape = "location"

    def __init__(self, groups, bins: int = 32, candidates=None):
        self.groups = tuple(groups)
        self.bins = int(bins)
        self.candidates = candidates
        self.name = "channel-sum-llr"

    def _candidates(self):
        if self.candidates is not None:
            return self.candidates
        return [SparseProjection(), LaplaceLogLikelihood(), HistogramLikelihoodRatio(1), HistogramLikelihoodRatio(2)]

    def fit(self, pos: np.ndarray, neg: np.ndarray):
        from audit.statistics.selection import choose_threshold, select_statistic

        hp, hn = len(pos) // 2, len(neg) // 2
        parts = []
        for group in self.groups:
            fit_p, fit_n, cal_p, cal_n = pos[:hp, group], neg[:hn, group], pos[hp:, group], neg[hn:, group]
            if fit_p.shape[1] == 0 or np.all(np.concatenate([fit_p, fit_n]) == fit_p[0]):
                continue  # a constant channel carries nothing
            n_cal = len(cal_p)
            best = select_statistic(
                self._candidates(),
                fit_p,
                fit_n,
                cal_p,
                cal_n,
                lambda s_p, s_n, held_out, n=n_cal: choose_threshold(s_p, s_n, n, 0.05, 0.0, False, held_out),
            )
            if best is None:
                continue
            _, scorer, s_p, s_n, _ = best
            pooled = np.concatenate([s_p, s_n])
            values = np.unique(pooled)
            if values.size <= self.bins:
                edges = values[1:]  # one bin per value
            else:
                edges = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, self.bins + 1)[1:-1]))
            k = edges.size + 1
            c_p = np.bincount(np.searchsorted(edges, s_p, side="right"), minlength=k)
            c_n = np.bincount(np.searchsorted(edges, s_n, side="right"), minlength=k)
            parts.append((group, scorer, edges, _pava_llr(c_p, c_n, len(s_p), len(s_n))))
        if not parts:
            return None
        return ChannelSumScore(*(list(part) for part in zip(*parts, strict=True)))
