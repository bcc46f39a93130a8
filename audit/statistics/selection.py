"""Choosing a test on training data: the threshold scan and the statistic selection.

Pure selection machinery used by :mod:`audit.certification.tester` (which certifies the chosen test) and by
statistics that are themselves built from other statistics (:class:`audit.statistics.ChannelSumLikelihoodRatio`).
Everything here sees only training data; its projections use a fast Poisson bound, never the exact
Clopper–Pearson bound of the certification.

Three rules decide which test is certified (:func:`choose_threshold`):

* a statistic with more than a few atoms (a continuous one, or a fitted histogram of hundreds of cells) takes the
  threshold and α split of its largest projection (smoothed when continuous under two-sided rates), and is
  ranked against the other statistics by its held-out projection (:func:`held_out_projection`): the in-sample
  maximum over hundreds or thousands of thresholds is biased upward, and a deep tail would otherwise outrank an
  exact discrete test on the training split and lose to it on fresh samples;
* a statistic of a few atoms (at most :data:`FEW_ATOMS` values) takes, among its tests within one standard error
  of the best projection, the narrowest event at the α split nearest the even one, unless its counts leave it more
  than that standard error short of a wider event (:func:`_one_standard_error_choice`), and is ranked by
  that best projection — unless it declares
  ``held_out_ranking`` (a sum of many coordinates: its few values are no events known in advance), which is ranked
  held out as a continuous statistic is;
* :func:`select_statistic` keeps an earlier statistic unless a later one projects more by a margin: the selection's
  own, or the later statistic's ``selection_margin`` where that is larger (a fitted, flexible statistic), or its
  ``event_margin`` against a kept test of a few exact events.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, TypeAlias, TypeVar

import numpy as np
import numpy.typing as npt

from audit.certification import bounds
from audit.certification.bounds import FloatArray, FloatOrArray
from pgc.contracts import Scorer, Statistic

CountArray: TypeAlias = npt.NDArray[np.intp]
# a selection's projection: a tuple ending in the projected ε (:func:`choose_threshold`'s)
Projection = TypeVar("Projection", bound=tuple[float, ...])

FP_SHARES = (0.1, 0.25, 0.5, 0.75, 0.9)
MAX_THRESHOLDS = 3000
SELECTION_PESSIMISM = 0.05  # one-sided level of the training-rate upper bounds used to rank tests
# the same with two-sided rate bounds: they already keep a rare complement honest, so they can be milder
# (chosen on Gaussian canaries: 0.25 reaches the oracle test's bound on average, 0.05 stays ~10 % short)
SELECTION_PESSIMISM_TWO_SIDED = 0.25
# two-sided selection also averages the projected bound over this many neighbouring thresholds before
# taking its maximum: the projected curve of a deep-tail test is noisy, and its single highest point is
# mostly noise (winner's curse); the centre of the best plateau certifies higher on fresh samples.
# Only for a statistic with many distinct values: averaging a few atoms would blur a perfect test away.
SMOOTHING_WINDOW = 41


def _threshold_grid(values: FloatArray) -> FloatArray:
    u = np.unique(values)
    if u.size <= MAX_THRESHOLDS:
        return u
    m = u.size
    lin = np.linspace(0, m - 1, MAX_THRESHOLDS // 2)
    tail = np.unique(np.round(np.geomspace(1, m / 2, MAX_THRESHOLDS // 4)))
    idx = np.unique(np.concatenate([lin, tail - 1, m - tail]).astype(np.int64).clip(0, m - 1))
    grid: FloatArray = u[idx]
    return grid


# below this shape the Wilson–Hilferty start is too far for two Halley steps: scipy's own inverse there
SMALL_SHAPE = 8.0


# above this many shapes :func:`gamma_quantile` computes each distinct shape once: a threshold scan's counts repeat
# (about half of them in an audit), and the Halley steps cost ~20× a sort per shape
DISTINCT_SHAPES_FROM = 64


def gamma_quantile(a: npt.ArrayLike, p: float) -> FloatArray:
    """x with P(a, x) = p for each shape in ``a`` (:func:`computed_gamma_quantile`), computed once per distinct shape
    in a large array (the computation is elementwise: the same value as computed alone, bit for bit)."""
    a = np.asarray(a, dtype=np.float64)
    if a.size < DISTINCT_SHAPES_FROM:
        return computed_gamma_quantile(a, p)
    distinct, where = np.unique(a, return_inverse=True)
    out: FloatArray = computed_gamma_quantile(distinct, p)[where.reshape(a.shape)]
    return out


def computed_gamma_quantile(a: npt.ArrayLike, p: float) -> FloatArray:
    """x with P(a, x) = p (the regularized lower incomplete gamma) for each shape in ``a``: scipy's ``gammaincinv``
    to within a few units in the last place (relative error < 1e-13 against it for shapes ≥ 8 and p in
    [1e-6, 1 − 1e-6], tests/audit/test_selection.py) at about half its cost. Shapes ≥ :data:`SMALL_SHAPE` start
    from the Wilson–Hilferty approximation and take Halley steps on P (on Q = 1 − P above p = 0.5, where P's
    rounding would lose the tail): two steps, three where p is within 1e-3 of 0 or 1."""
    from scipy.special import gammainc, gammaincc, gammaincinv, gammaln, ndtri

    a = np.asarray(a, dtype=np.float64)
    x: FloatArray = np.empty_like(a)
    small = a < SMALL_SHAPE
    if small.any():
        x[small] = gammaincinv(a[small], p)
    big = ~small
    if not big.any():
        return x
    b = a[big]
    h = 1.0 / (9.0 * b)
    y = b * (1.0 - h + ndtri(p) * np.sqrt(h)) ** 3
    upper = p > 0.5
    target = 1.0 - p if upper else p
    for _ in range(2 if 1e-3 <= p <= 1.0 - 1e-3 else 3):
        density = np.exp((b - 1.0) * np.log(y) - y - gammaln(b))
        step = (target - gammaincc(b, y)) / density if upper else (gammainc(b, y) - target) / density
        y = y - step / (1.0 - 0.5 * step * ((b - 1.0) / y - 1.0))
    x[big] = y
    return x


def approximate_upper(k: npt.ArrayLike, n: float, alpha: float) -> FloatOrArray:
    """Fast Poisson upper bound on a rate, k/n (selection only; certification uses exact
    Clopper–Pearson, which this slightly exceeds for small rates): Γ⁻¹(k+1, 1−α)/n."""
    k = np.asarray(k, np.float64)
    quantile = gamma_quantile(k + 1.0, 1.0 - alpha)
    upper: FloatOrArray = np.minimum(1.0, quantile / n)
    return float(upper) if k.ndim == 0 else upper


def approximate_lower(k: npt.ArrayLike, n: float, alpha: float) -> FloatOrArray:
    """Fast Poisson lower bound on a rate (selection only): Γ⁻¹(k, α)/n, 0 at k = 0."""
    k = np.asarray(k, np.float64)
    lower: FloatOrArray = np.where(k > 0, gamma_quantile(np.maximum(k, 1e-300), alpha), 0.0) / n
    return float(lower) if k.ndim == 0 else lower


def rate_upper(k: npt.ArrayLike, n: float, alpha: float, two_sided: bool = False) -> FloatOrArray:
    """Upper bound on a rate k/n for selection: the Poisson bound of k (:func:`approximate_upper`);
    ``two_sided`` also takes 1 − the Poisson lower bound of the complement n − k, whichever is smaller.
    The Poisson bound of k alone exceeds 1 for rates near 1, so it hides every test whose rare event is
    the complement of a frequent one (a Gaussian's best test: FNR ≈ 0.998, FPR ≈ 0.0006)."""
    upper = approximate_upper(k, n, alpha)
    if not two_sided:
        return upper
    k = np.asarray(k, np.float64)
    return np.minimum(upper, 1.0 - approximate_lower(n - k, n, alpha))


def pessimistic_rates(
    fp: npt.ArrayLike, n_neg: float, fn: npt.ArrayLike, n_pos: float, two_sided: bool, pessimism: float | None = None
) -> tuple[FloatOrArray, FloatOrArray]:
    """(FPR, FNR) read at their pessimistic training bounds (:func:`rate_upper` at ``pessimism``, default
    :data:`SELECTION_PESSIMISM_TWO_SIDED` or :data:`SELECTION_PESSIMISM`): what a projection assumes of fresh
    releases."""
    if pessimism is None:
        pessimism = SELECTION_PESSIMISM_TWO_SIDED if two_sided else SELECTION_PESSIMISM
    return rate_upper(fp, n_neg, pessimism, two_sided), rate_upper(fn, n_pos, pessimism, two_sided)


def projected_epsilon(
    fp: npt.ArrayLike,
    n_neg: float,
    fn: npt.ArrayLike,
    n_pos: float,
    n_cert: int,
    alpha: float,
    delta: float,
    share: float,
    two_sided: bool = False,
    pessimism: float | None = None,
) -> FloatOrArray:
    """The bound n_cert fresh samples would give, assuming pessimistic (95% upper) training rates.

    Pessimism matters: the threshold scan looks at thousands of tails and the luckiest empty tail
    would otherwise look like a perfect test (winner's curse). ``two_sided``: rate bounds that stay
    below 1 for rates near 1 (:func:`rate_upper`). ``pessimism``: the training rates' one-sided level
    (default :data:`SELECTION_PESSIMISM_TWO_SIDED` or :data:`SELECTION_PESSIMISM`).
    """
    fpr, fnr = pessimistic_rates(fp, n_neg, fn, n_pos, two_sided, pessimism)
    fpr_ub = rate_upper(fpr * n_cert, n_cert, share * alpha, two_sided)
    fnr_ub = rate_upper(fnr * n_cert, n_cert, (1 - share) * alpha, two_sided)
    return bounds.epsilon_from_rates(fpr_ub, fnr_ub, delta)


def moving_average(values: npt.ArrayLike, window: int) -> FloatArray:
    """The mean of each value's ``window`` neighbours (fewer at the ends, where the window is cut)."""
    values = np.asarray(values, dtype=np.float64)
    if window <= 1 or values.size == 0:
        return values
    half = window // 2
    sums = np.concatenate([[0.0], np.cumsum(np.where(np.isfinite(values), values, 0.0))])
    index = np.arange(values.size)
    lo, hi = np.maximum(index - half, 0), np.minimum(index + half + 1, values.size)
    average: FloatArray = (sums[hi] - sums[lo]) / (hi - lo)
    return average


# a statistic with at most this many distinct values is a handful of events (a decoder's "the report names v"),
# not the points of a curve: among its tests the selection cannot tell apart, it takes the conventional one
FEW_ATOMS = 256
# a held-out half projects its one test at the one-sided level of SELECTION_PESSIMISM: its deep-tail counts are
# few, and the milder two-sided level lets the noise of two such counts (not the statistic) win the ranking
HELD_OUT_PESSIMISM = SELECTION_PESSIMISM
EVEN_SHARE = 0.5
# a continuous statistic's selection is noise-dominated when its best projection's standard error exceeds this share
# of the projection: only then is the central threshold taken (audit.statistics.selection._central_choice)
NOISY_SELECTION = 0.25
# held_out_rules' comparison of the two threshold rules is repeated at this level where it ties at HELD_OUT_PESSIMISM
# (both 0 included: a half of ~10⁴ releases projects nothing for a deep tail at 5 %): held out there is no winner's
# curse to correct, and the median-rate projection says which rule's test certifies more (ReportNoisyMax4's tail)
RULE_TIE_PESSIMISM = 0.5
# a selection in which no statistic projects above 0 at the levels above (a leak too weak for the training split to
# vouch for) is made again with the training rates read as they are (Aim.plug_in): at their median bounds, about
# (k + 2/3)/n for k of n, without pessimism; its test is then the one the training releases favour, not the trivial
# event, and its projected ε stays 0 (audit.certification.choice.select_test)
PLUG_IN_LEVEL = 0.5


@dataclass(frozen=True)
class Aim:
    """What a projection aims at: the certification's releases per side, its α and δ, and whether the rate bounds
    are two-sided (:func:`rate_upper`)."""

    n_cert: int
    alpha: float
    delta: float
    two_sided: bool = False
    plug_in: bool = False  # read every training rate at PLUG_IN_LEVEL (the fallback of a selection that found nothing)

    @property
    def level(self) -> float | None:
        """The one-sided level of the training rates' bounds: PLUG_IN_LEVEL, or None for the selection's default."""
        return PLUG_IN_LEVEL if self.plug_in else None

    def epsilon(
        self,
        fp: npt.ArrayLike,
        n_neg: float,
        fn: npt.ArrayLike,
        n_pos: float,
        share: float,
        pessimism: float | None = None,
    ) -> FloatOrArray:
        """:func:`projected_epsilon` of these counts at this aim."""
        level = self.level if pessimism is None else pessimism
        return projected_epsilon(
            fp, n_neg, fn, n_pos, self.n_cert, self.alpha, self.delta, share, self.two_sided, level
        )


class Scan(NamedTuple):
    """A statistic's threshold scan on a split (:func:`_scan`): the grid, the projection per (α share, threshold)
    — rows :data:`FP_SHARES`, smoothed for a continuous statistic under two-sided rates — the false-positive and
    false-negative counts per threshold, the (row, column) of the largest projection, and the split's sizes."""

    grid: FloatArray
    table: FloatArray
    fp: CountArray
    fn: CountArray
    best: tuple[int, int]
    n_pos: float
    n_neg: float


def _dense(grid: FloatArray) -> bool:
    """A continuous statistic's threshold curve, not a few atoms."""
    return grid.size >= 20 * SMOOTHING_WINDOW


def _projection_table(
    s_pos: FloatArray, s_neg: FloatArray, grid: FloatArray, aim: Aim
) -> tuple[FloatArray, CountArray, CountArray]:
    """Projected ε per (α share, threshold) — rows :data:`FP_SHARES` — with the false-positive and false-negative
    counts per threshold."""
    sp, sn = np.sort(s_pos), np.sort(s_neg)
    tp = sp.size - np.searchsorted(sp, grid, side="left")
    fp = sn.size - np.searchsorted(sn, grid, side="left")
    fn = sp.size - tp
    # the training rates' pessimistic bounds do not depend on the α split: computed once for every row
    n_cert, alpha, delta, two_sided = aim.n_cert, aim.alpha, aim.delta, aim.two_sided
    fpr, fnr = pessimistic_rates(fp, sn.size, fn, sp.size, two_sided, aim.level)
    table = np.stack(
        [
            bounds.epsilon_from_rates(
                rate_upper(fpr * n_cert, n_cert, share * alpha, two_sided),
                rate_upper(fnr * n_cert, n_cert, (1 - share) * alpha, two_sided),
                delta,
            )
            for share in FP_SHARES
        ]
    )
    return table, fp, fn


def _argmax(table: FloatArray) -> tuple[int, int]:
    """(share row, threshold column) of the largest projection; the earlier share and the lower threshold win
    exact ties."""
    best = (0, 0, -np.inf)
    for row, eps in enumerate(table):
        i = int(np.argmax(eps))
        if eps[i] > best[2]:
            best = (row, i, eps[i])
    return best[0], best[1]


def _scan(s_pos: FloatArray, s_neg: FloatArray, aim: Aim) -> Scan:
    """The threshold scan of scores ``s_pos``, ``s_neg`` at ``aim``."""
    grid = _threshold_grid(np.concatenate([s_pos, s_neg]))
    table, fp, fn = _projection_table(s_pos, s_neg, grid, aim)
    if aim.two_sided and _dense(grid):
        table = np.stack([moving_average(eps, SMOOTHING_WINDOW) for eps in table])
    return Scan(grid, table, fp, fn, _argmax(table), float(s_pos.size), float(s_neg.size))


def _held_out_score(
    threshold: float, share: float, s_pos: FloatArray, s_neg: FloatArray, held: int, aim: Aim, pessimism: float | None
) -> float:
    """The projection of the test [s ≥ threshold] from the rates on the held-out half ``held`` (0 or 1: alternate
    samples) of the selection split, scaled to the whole split's size, at ``pessimism`` (default
    :data:`HELD_OUT_PESSIMISM`, or :data:`PLUG_IN_LEVEL` where ``aim.plug_in``)."""
    held_pos, held_neg = s_pos[held::2], s_neg[held::2]
    fp = np.count_nonzero(held_neg >= threshold) * (s_neg.size / held_neg.size)
    fn = np.count_nonzero(held_pos < threshold) * (s_pos.size / held_pos.size)
    level = pessimism if pessimism is not None else aim.level if aim.plug_in else HELD_OUT_PESSIMISM
    projected = aim.epsilon(fp, s_neg.size, fn, s_pos.size, share, level)
    return max(0.0, float(projected))


def held_out_projection(
    s_pos: FloatArray,
    s_neg: FloatArray,
    n_cert: int,
    alpha: float,
    delta: float,
    two_sided: bool = False,
    plug_in: bool = False,
) -> float:
    """Two-fold estimate of the bound a threshold chosen on the selection split certifies on fresh samples.

    The maximum over thousands of thresholds of a noisy projection is biased upward (winner's curse): a
    continuous statistic's deep tail projects more than it certifies, and would win the statistic selection
    against an exact discrete test it cannot beat. Here each half of the selection split (alternate samples)
    chooses a threshold and α split, the other half estimates that one test's rates, projected at the size of the
    whole split and the stricter :data:`HELD_OUT_PESSIMISM` (:data:`PLUG_IN_LEVEL` with ``plug_in``), and the two
    projections are averaged. The estimate is conservative: a Gaussian's deep-tail test projects below its in-sample
    value and certifies above both (tests/audit/test_selection.py).
    """
    aim, halves = Aim(n_cert, alpha, delta, two_sided, plug_in), []
    for a, b in ((0, 1), (1, 0)):
        scan = _scan(s_pos[a::2], s_neg[a::2], aim)
        row, col = scan.best
        halves.append(_held_out_score(scan.grid[col], FP_SHARES[row], s_pos, s_neg, b, aim, None))
    return float(np.mean(halves))


def held_out_rules(
    s_pos: FloatArray,
    s_neg: FloatArray,
    n_cert: int,
    alpha: float,
    delta: float,
    two_sided: bool = False,
    pessimism: float | None = None,
    plug_in: bool = False,
) -> tuple[float, float]:
    """Two-fold held-out projections of the two threshold rules of a continuous statistic: the largest projection
    (:func:`_scan`'s argmax) and the most central test tied with it (:func:`_central_choice`). Each half of the
    selection split (alternate samples) applies both rules, the other half estimates each chosen test's rates as
    :func:`held_out_projection` does, and each rule's two projections are averaged: a leak whose likelihood ratio
    grows into a tail (the released maximum of noisy values) is not handed to the central rule because one half's
    maximum looked noisy, and a plateau (Laplace at small ε) keeps it. ``pessimism``: the held-out level (default
    :data:`HELD_OUT_PESSIMISM`; ``plug_in``: :data:`PLUG_IN_LEVEL` throughout)."""
    aim = Aim(n_cert, alpha, delta, two_sided, plug_in)
    scores: tuple[list[float], list[float]] = ([], [])
    for a, b in ((0, 1), (1, 0)):
        scan = _scan(s_pos[a::2], s_neg[a::2], aim)
        for rule, (row, col) in enumerate((scan.best, _central_choice(scan, aim))):
            scores[rule].append(_held_out_score(scan.grid[col], FP_SHARES[row], s_pos, s_neg, b, aim, pessimism))
    return float(np.mean(scores[0])), float(np.mean(scores[1]))


def _nearest_even_share(rows: CountArray) -> int:
    """Of the table rows ``rows`` (indices into :data:`FP_SHARES`), the one whose α split is nearest the even one."""
    return int(rows[np.argmin(np.abs(np.asarray(FP_SHARES)[rows] - EVEN_SHARE))])


def _one_standard_error_choice(scan: Scan, aim: Aim) -> tuple[int, int]:
    """Among the tests of a few-atom statistic, the conventional one the selection cannot tell from the best.

    Breiman's one-standard-error rule: the tests whose projection lies within one standard error of the largest
    are tied (the error of the best one's projection, from its binomial counts, propagated through
    :func:`projected_epsilon`); among them the narrowest event (the highest threshold) at the α split nearest the
    even one — the event and split of the LDP-auditing literature ("the guess is v", α/2 per rate), so that where
    that event is already a best test the two certify the same counts. The counts have the last word: where
    the test whose projection less its own standard error is largest (:func:`_lower_projections`) is a wider
    event, and the narrowest tied one falls more than that standard error short of it by the same measure, the
    wider event is taken. A deep tail of a score of a dozen atoms (the log-likelihood of SVT's ⊤/⊥ answers)
    projects high from a handful of counts and certifies little on fresh samples.
    """
    row, col = scan.best
    best = scan.table[row, col]
    if not np.isfinite(best):
        return row, col
    standard_error = _projection_standard_error(scan, aim)
    tied = scan.table >= best - standard_error
    col = int(np.flatnonzero(tied.any(axis=0))[-1])
    rows = np.flatnonzero(tied[:, col])
    row = _nearest_even_share(rows)
    lower = _lower_projections(scan, aim)
    lower_row, lower_col = np.unravel_index(int(np.argmax(lower)), lower.shape)
    if lower_col >= col or lower[row, col] >= lower[lower_row, lower_col] - standard_error:
        return row, col
    rows = np.flatnonzero(tied[:, lower_col])  # the counts' own choice, at the even split where it is tied
    if rows.size == 0:
        return int(lower_row), int(lower_col)
    return _nearest_even_share(rows), int(lower_col)


def _lower_projections(scan: Scan, aim: Aim) -> FloatArray:
    """Each test's projection less its own standard error (from its binomial counts, as
    :func:`_projection_standard_error`); −inf where the projection is not positive."""
    table = scan.table
    lower = np.full(table.shape, -np.inf)
    for row, share in enumerate(FP_SHARES):
        error = np.hypot(*_projection_drops(table[row], share, scan.fp, scan.fn, scan, aim))
        usable = np.isfinite(table[row]) & (table[row] > 0.0)
        lower[row] = np.where(usable, table[row] - np.where(np.isfinite(error), error, 0.0), -np.inf)
    return lower


def _projection_drops(
    projection: npt.ArrayLike, share: float, fp: npt.ArrayLike, fn: npt.ArrayLike, scan: Scan, aim: Aim
) -> tuple[FloatArray, FloatArray]:
    """How far a test's projection falls when its false-positive count, then its false-negative count, rises by one
    binomial standard deviation (elementwise over arrays of tests; the split's sizes are ``scan``'s)."""
    n_pos, n_neg = scan.n_pos, scan.n_neg
    base = np.asarray(projection, np.float64)
    fp_f, fn_f = np.asarray(fp, np.float64), np.asarray(fn, np.float64)
    sd_fp = np.sqrt(fp_f * np.maximum(0.0, 1.0 - fp_f / n_neg))
    sd_fn = np.sqrt(np.maximum(fn_f, 0.0) * np.maximum(0.0, 1.0 - fn_f / n_pos))
    fp_drop, fn_drop = (
        base - np.asarray(aim.epsilon(fp_f + dfp, n_neg, fn_f + dfn, n_pos, share))
        for dfp, dfn in ((sd_fp, 0.0), (0.0, sd_fn))
    )
    return fp_drop, fn_drop


def _projection_standard_error(scan: Scan, aim: Aim) -> float:
    """The standard error of the best test's projection, from its binomial counts, propagated through
    :func:`projected_epsilon` (0 where the projection is not finite)."""
    row, col = scan.best
    best, share = float(scan.table[row, col]), FP_SHARES[row]
    fp, fn = float(scan.fp[col]), float(scan.fn[col])
    drops = [float(d) for d in _projection_drops(best, share, fp, fn, scan, aim)]
    return math.hypot(*drops) if all(np.isfinite(drops)) else 0.0


def _central_choice(scan: Scan, aim: Aim) -> tuple[int, int]:
    """The threshold of a continuous statistic whose selection is dominated by noise: the most central one the
    selection cannot tell from the best.

    Where the best projection's standard error (from its counts) exceeds :data:`NOISY_SELECTION` of the projection
    itself, the maximum over thousands of thresholds is mostly noise, and it mostly lies in a tail, whose few counts
    certify least on fresh samples: a Laplace test at small ε, whose likelihood ratio is e^ε on a wide plateau. There
    the one-standard-error rule (:func:`_one_standard_error_choice`) takes, among the thresholds within one standard
    error of the best, the one whose rarer error is most frequent. A well-determined selection keeps its maximum."""
    row, col = scan.best
    best = float(scan.table[row, col])
    if not (np.isfinite(best) and best > 0.0):
        return row, col
    error = _projection_standard_error(scan, aim)
    if error <= NOISY_SELECTION * best:
        return row, col
    tied = scan.table >= best - error
    columns = np.flatnonzero(tied.any(axis=0))
    col = int(columns[np.argmax(np.minimum(scan.fp[columns], scan.fn[columns]))])
    rows = np.flatnonzero(tied[:, col])
    return _nearest_even_share(rows), col


def in_sample_projection(
    s_pos: FloatArray,
    s_neg: FloatArray,
    n_cert: int,
    alpha: float,
    delta: float,
    two_sided: bool = False,
    plug_in: bool = False,
) -> float:
    """The largest projection over the statistic's thresholds on the selection split itself (smoothed for a continuous
    statistic under two-sided rates): what :func:`choose_threshold` ranks a few-atom statistic by, and more than the
    held-out projection it ranks a continuous one by — a screen that is never below the ranking."""
    scan = _scan(s_pos, s_neg, Aim(n_cert, alpha, delta, two_sided, plug_in))
    row, col = scan.best
    return float(scan.table[row, col])


def choose_threshold(
    s_pos: FloatArray,
    s_neg: FloatArray,
    n_cert: int,
    alpha: float,
    delta: float,
    two_sided: bool = False,
    held_out_ranking: bool = False,
    plug_in: bool = False,
) -> tuple[float, float, float]:
    """(threshold, fp_share, projected ε) of the test chosen on the selection split; T = [s ≥ t].

    A statistic of more than :data:`FEW_ATOMS` values: the threshold and split of the largest projection (smoothed
    for a continuous one under two-sided rates), ranked by :func:`held_out_projection` — a fitted histogram of a
    few hundred cells overfits its selection split as a deep tail does. A statistic of a few atoms: the
    one-standard-error choice (:func:`_one_standard_error_choice`), ranked by its best projection, or with
    ``held_out_ranking`` by :func:`held_out_projection` as a continuous one: a statistic whose few values are sums of
    many coordinates (a norm of a discrete release, ~100 values) has no events known before the selection, and its
    best in-sample tail is the winner's curse of a curve (pure-ldp's SR at k = 2, ε = 2: the L1 norm's best in-sample
    projection 2.18, held out 1.70, certified 1.70 against the support projection's 1.98). ``plug_in``: every
    training rate read at :data:`PLUG_IN_LEVEL` (:class:`Aim`)."""
    aim = Aim(n_cert, alpha, delta, two_sided, plug_in)
    scan = _scan(s_pos, s_neg, aim)
    grid, (row, col) = scan.grid, scan.best
    best = float(scan.table[row, col])
    if not best > 0.0:
        return float(grid[0]), EVEN_SHARE, 0.0
    if not _few_atoms(grid):
        central = _central_choice(scan, aim)
        if central == (row, col):
            return (
                float(grid[col]),
                FP_SHARES[row],
                held_out_projection(s_pos, s_neg, n_cert, alpha, delta, two_sided, plug_in),
            )
        # the first is held_out_projection's value: the statistic is ranked by it whichever rule is taken
        largest, most_central = held_out_rules(s_pos, s_neg, n_cert, alpha, delta, two_sided, plug_in=plug_in)
        take_central = largest < most_central
        # a tie (both 0: a half's deep-tail counts project nothing at 5 %) is decided at the median rates
        if largest == most_central:
            tied_largest, tied_central = held_out_rules(
                s_pos, s_neg, n_cert, alpha, delta, two_sided, RULE_TIE_PESSIMISM, plug_in
            )
            take_central = tied_largest <= tied_central
        if take_central:  # else the noise-dominated look was wrong: the tail holds the leak
            row, col = central
        return float(grid[col]), FP_SHARES[row], largest
    # a few atoms: the chosen test is ranked by the best projection it is tied with (or held out: see above)
    row, col = _one_standard_error_choice(scan, aim)
    if held_out_ranking:
        best = held_out_projection(s_pos, s_neg, n_cert, alpha, delta, two_sided, plug_in)
    return float(grid[col]), FP_SHARES[row], best


def _exact_events(stat: Statistic, s_pos: FloatArray, s_neg: FloatArray) -> bool:
    """A kept test of a few exact events: a statistic of at most :data:`FEW_ATOMS` values ranked by its in-sample
    projection (not a sum of coordinates, :func:`choose_threshold`'s ``held_out_ranking``)."""
    if getattr(stat, "held_out_ranking", False):
        return False
    return not continuous_scores(s_pos, s_neg)


def continuous_scores(s_pos: FloatArray, s_neg: FloatArray) -> bool:
    """Scores of more than :data:`FEW_ATOMS` distinct values: a curve of thresholds, not a handful of exact events
    (whose test :func:`choose_threshold` takes by the one-standard-error rule)."""
    return not _few_atoms(_threshold_grid(np.concatenate([s_pos, s_neg])))


def _few_atoms(grid: FloatArray) -> bool:
    """A statistic of a few atoms: its threshold grid (:func:`_threshold_grid`, every distinct value up to
    :data:`MAX_THRESHOLDS`) holds at most :data:`FEW_ATOMS` values."""
    return bool(grid.size <= FEW_ATOMS)


def select_statistic(
    statistics: Sequence[Statistic],
    fit_p: FloatArray,
    fit_n: FloatArray,
    sel_p: FloatArray,
    sel_n: FloatArray,
    project: Callable[[FloatArray, FloatArray, bool], Projection],
    tie_margin: float = 0.0,
    applied: list[Statistic] | None = None,
    screen: Callable[[FloatArray, FloatArray], float] | None = None,
) -> tuple[Statistic, Scorer, FloatArray, FloatArray, Projection] | None:
    """Fit each statistic on (fit_p, fit_n) and keep the one whose projection on the selection half
    (``project(s_pos, s_neg, held_out_ranking)``, a tuple ending in the projected ε; ``held_out_ranking``: the
    statistic's own attribute of that name, see :func:`choose_threshold`) is largest; a later statistic
    replaces an earlier one only if it projects more than (1 + ``tie_margin``) times its ε — or its own
    ``selection_margin`` where that is larger (a flexible statistic must win clearly: a learned classifier's
    projection is noisier than a projection's), or its ``event_margin`` where the kept statistic is a test of a few
    exact events (:func:`_exact_events`: a held-out projection of a fitted form against an event's in-sample one),
    or the kept statistic's ``preferred_margin`` (a test of what the
    auditor knows exactly, which noise on the selection half must not displace).

    Returns ``(statistic, scorer, s_pos, s_neg, projection)`` or None when no statistic gives finite
    scores; ``applied`` (a list) collects every statistic that did. ``screen(s_pos, s_neg)``: a cheap projection
    that is at least the full one (the in-sample maximum of a continuous statistic, which its held-out projection
    does not exceed): a statistic it does not let beat the best so far skips the full projection."""
    best: tuple[Statistic, Scorer, FloatArray, FloatArray, Projection] | None = None
    for stat in statistics:
        scorer = stat.fit(fit_p, fit_n)
        if scorer is None:
            continue
        s_pos, s_neg = np.asarray(scorer(sel_p), np.float64), np.asarray(scorer(sel_n), np.float64)
        if not (np.all(np.isfinite(s_pos)) and np.all(np.isfinite(s_neg))):
            continue
        if applied is not None:
            applied.append(stat)
        held = float(getattr(best[0], "preferred_margin", None) or 0.0) if best is not None else 0.0
        margin = max(tie_margin, float(getattr(stat, "selection_margin", 0.0)), held)
        event_margin = float(getattr(stat, "event_margin", 0.0))
        if best is not None and event_margin > margin and _exact_events(best[0], best[2], best[3]):
            margin = event_margin
        if best is not None and screen is not None and screen(s_pos, s_neg) <= best[4][-1] * (1.0 + margin):
            continue
        projection = project(s_pos, s_neg, bool(getattr(stat, "held_out_ranking", False)))
        if best is None or projection[-1] > best[4][-1] * (1.0 + margin):
            best = (stat, scorer, s_pos, s_neg, projection)
    return best


DELTA_SELECTION_PESSIMISM = 0.25  # one-sided level of the δ test's training hit-rate bound (ranking only)


def projected_delta(
    hits: float, false_hits: float, n_sel: int, n_cert: int, alpha: float, epsilon: float, share: float
) -> float:
    """The δ bound n_cert fresh samples would give: hit rate at its 25% lower bound, false-hit rate at
    its 75% upper bound, except that NO false hits project as 0 (a point mass has none, and any
    upper bound on a zero count, ≥ ln(1/p)/n, projected to n_cert would hide leaks of a few per
    thousand at small training splits; the pessimism on non-zero counts keeps the lattice of a
    correct discrete mechanism, whose cells differ by at most e^ε, from being certified in vain).

    Ranking only: the certified bound does not depend on it; an over-optimistic pick only costs
    the certification samples (and at least MIN_DELTA_HITS training hits are required).
    """
    hit_rate = approximate_lower(hits, n_sel, DELTA_SELECTION_PESSIMISM)
    false_rate = approximate_upper(false_hits, n_sel, DELTA_SELECTION_PESSIMISM) if false_hits > 0 else 0.0
    lo = approximate_lower(hit_rate * n_cert, n_cert, (1.0 - share) * alpha)
    hi = approximate_upper(false_rate * n_cert, n_cert, share * alpha)
    return float(lo - bounds.exp_or_inf(epsilon) * hi) if hi > 0 else float(lo)
