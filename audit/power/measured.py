"""Power of the test that ran: what this audit's certified test would have caught, from its own counts.

An audit selects one test per channel on its training split and counts it once on fresh releases. Its power
statement is about THAT test, measured on THOSE releases — never about an ideal test of a leak shape the
statistics may not even read:

* **Separation.** The test must have told the two secrets apart: some certified bound above 0 (ε_LB, μ_LB,
  a profile point's ε, or δ_LB) at the row's confidence. A test that did not separate them (a statistic
  that cannot read the release, or a channel that carries nothing of the secret) states no power: the row
  cannot say which leak it would have caught (:func:`separated`).
* **ε-type leaks through the certified event** (:func:`event_detectable_epsilon`). The certified test is an
  event E (the score at or above its threshold). Its rate under the second secret, FPR = a, is measured by
  the certification counts. A leak of size X through E moves the first secret's rate to the most an
  X-private release allows: TPR = min(e^X·a, 1 − e^−X·(1 − a)) for a pure ε claim (where the ε-DP bound is
  tight, as a Laplace tail is), TPR = Φ̄(Φ̄⁻¹(a) − μ_X) with μ_X the Gaussian curve that is exactly (X, δ)
  for a claim with δ > 0. The detectable ε is the smallest X whose counts (n per side, each at its √p'
  binomial quantile, p' = :func:`audit.power.oracle_power` of the promised 0.8: room for the re-selection a
  leaky release would get) give the certified bound above the claim; ∞ when no leak through E can. A row certified
  by the paired certificate (:mod:`audit.certification.paired`) is read by it: its x-only and x'-only pairs and its
  false positives at quantiles that hold together with probability ≥ p' (four tails at (1 − p')/4 each).
* **The curve test** (claims with a μ-GDP curve or a privacy profile): the same through its own event E_c
  and α share, against the claimed μ (:func:`curve_event_detectable_epsilon`) or the profile.
* **δ-type leaks** (:func:`point_mass_detectable`): the smallest point mass w (releases under the first
  secret that never occur under the second) that the mechanism audit's δ test finds and certifies with
  probability ≥ 0.8, following its own rules: the mass recurs in the training split's fit half, hits the
  selection half at least ``min_hits`` times with a positive projection, then its certified δ_LB exceeds the
  claimed δ. Audits without a point-mass search state none.

Every number here is a function of a row's recorded counts, so a committed result is re-judged from its file
alone (``scripts/recertify.py``). ``results/power/`` checks the promise by simulation.
"""

from __future__ import annotations

import functools
import math

from scipy.stats import binom, norm, poisson

from audit.certification import bounds
from audit.certification.curves import gdp_epsilon, gdp_mu_for, mu_lower_bound, profile_excess
from audit.certification.paired import paired_epsilon_over
from audit.power import POWER, oracle_power, smallest_sample_size

LARGEST_LEAK = 60.0  # ε beyond which no leak is searched
TOLERANCE = 1e-3  # relative precision of a detectable size
N_MAX = 10**9  # the largest sample size a decision is planned for


def separated(epsilon_lower_bound: float, *others: float | None) -> bool:
    """The certified test told the two secrets apart: ε_LB (or another certified bound given) above 0."""
    return epsilon_lower_bound > 0 or any(x is not None and x > 0 for x in others)


def _quantile_count(rate: float, n: int, q: float) -> float:
    """The count that Binomial(n, rate) stays at or below with probability ≥ q (exact quantile)."""
    rate = min(max(rate, 0.0), 1.0)
    return float(binom.ppf(q, n, rate))


def _base_rate(count: int, n: int) -> float:
    """A measured event rate, 0 counts read as half a count (an empty tail is not a zero-probability event)."""
    return max(float(count), 0.5) / n


def leak_tpr(a: float, leak: float, delta: float, gaussian: bool) -> float:
    """The first secret's rate of an event whose second-secret rate is ``a``, under a leak of ε = ``leak``
    (at ``delta``): the ε-DP boundary (pure ε) or the Gaussian curve exactly (leak, δ)-DP (δ > 0)."""
    if gaussian and delta > 0:
        mu = gdp_mu_for(leak, delta)
        return float(norm.sf(norm.isf(a) - mu))
    return float(min(1.0, math.exp(min(leak, 700.0)) * a, 1.0 - math.exp(-leak) * (1.0 - a)))


def _threshold_bound(a: float, tpr: float, n: int, alpha: float, share: float, delta: float, q: float) -> float:
    fp = _quantile_count(a, n, q)
    fn = _quantile_count(1.0 - tpr, n, q)
    return float(
        bounds.epsilon_from_rates(
            bounds.cp_upper(fp, n, share * alpha), bounds.cp_upper(fn, n, (1.0 - share) * alpha), delta
        )
    )


def _paired_threshold_bound(a: float, tpr: float, n: int, alpha: float, p: float) -> float:
    """The paired certificate's bound (:mod:`audit.certification.paired`) at counts that hold together with
    probability ≥ ``p`` (a union bound over four tails, each at (1 − p)/4): the x-only pairs at their low quantile,
    the x'-only pairs at their high one, and the nuisance interval widened to both quantiles of the false positives
    (the bound falls and rises with them)."""
    tail = (1.0 - p) / 4.0
    only_positive = float(binom.ppf(tail, n, min(max(tpr * (1.0 - a), 0.0), 1.0)))
    only_negative = _quantile_count(a * (1.0 - tpr), n, 1.0 - tail)
    fp_low, fp_high = float(binom.ppf(tail, n, a)), _quantile_count(a, n, 1.0 - tail)
    return float(paired_epsilon_over(only_positive, only_negative, fp_low, fp_high, n, alpha))


def _smallest(flags, low: float) -> float:
    """Smallest leak ≥ ``low`` that ``flags`` (monotone); ∞ when none up to LARGEST_LEAK does."""
    if not flags(LARGEST_LEAK):
        return math.inf
    if flags(low):
        return low
    lo, hi = low, LARGEST_LEAK
    while hi - lo > TOLERANCE * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if flags(mid) else (mid, hi)
    return hi


@functools.lru_cache(maxsize=8192)
def event_detectable_epsilon(
    false_positives: int,
    n: int,
    alpha: float,
    fp_share: float | None,
    claimed_epsilon: float,
    delta: float,
    gaussian: bool,
    power: float = POWER,
) -> float:
    """Smallest ε of a leak through the certified event (second-secret rate ``false_positives``/n) that its
    certification flags against ``claimed_epsilon`` with probability ≥ ``power`` (module docstring); ``fp_share``
    None: the event was certified by the paired certificate (:mod:`audit.certification.paired`)."""
    if not (math.isfinite(claimed_epsilon) and claimed_epsilon > 0):
        return math.inf
    a, q = _base_rate(false_positives, n), math.sqrt(oracle_power(power))

    def bound(x: float) -> float:
        tpr = leak_tpr(a, x, delta, gaussian)
        if fp_share is None:
            return _paired_threshold_bound(a, tpr, n, alpha, oracle_power(power))
        return _threshold_bound(a, tpr, n, alpha, fp_share, delta, q)

    return _smallest(lambda x: bound(x) > claimed_epsilon, claimed_epsilon)


def _curve_counts(a: float, mu: float, n: int, q: float) -> tuple[float, float]:
    return _quantile_count(a, n, q), _quantile_count(float(norm.cdf(norm.isf(a) - mu)), n, q)


@functools.lru_cache(maxsize=8192)
def curve_event_detectable_epsilon(
    curve_false_positives: int, n: int, alpha: float, claimed_mu: float, delta: float, power: float = POWER
) -> float:
    """The ε at δ of the smallest Gaussian leak (μ) that the curve test's certified event flags against
    ``claimed_mu`` with probability ≥ ``power``; ∞ at δ = 0 or when none does."""
    if delta <= 0:
        return math.inf
    a, q = _base_rate(curve_false_positives, n), math.sqrt(oracle_power(power))

    def flags(leak: float) -> bool:
        fp, fn = _curve_counts(a, gdp_mu_for(leak, delta), n, q)
        return mu_lower_bound(int(fp), int(fn), n, n, alpha) > claimed_mu

    return _smallest(flags, gdp_epsilon(delta, claimed_mu) if claimed_mu > 0 else 1e-3)


@functools.lru_cache(maxsize=4096)
def profile_event_detectable_epsilon(
    curve_false_positives: int, n: int, alpha: float, profile: tuple, delta: float, power: float = POWER
) -> float:
    """The ε at δ of the smallest Gaussian leak that the curve test's certified event flags against a claimed
    privacy profile with probability ≥ ``power``; ∞ at δ = 0 or when none does."""
    if delta <= 0:
        return math.inf
    a, q = _base_rate(curve_false_positives, n), math.sqrt(oracle_power(power))

    def flags(leak: float) -> bool:
        fp, fn = _curve_counts(a, gdp_mu_for(leak, delta), n, q)
        return profile_excess(int(fp), int(fn), n, n, alpha, profile)[0] > 0.0

    return _smallest(flags, 1e-3)


def samples_to_decide(detectable_at) -> int | None:
    """Smallest n per side (doubling from 1,000, then bisection to 1 %) at which ``detectable_at(n)`` is finite:
    from there the same test would state power; None when no n up to 10⁹ does."""
    return smallest_sample_size(lambda n: math.isfinite(detectable_at(n)), N_MAX)


# --- δ-type leaks: the δ test's point masses ------------------------------------------------------------


def _certify_hits(n_cert: int, alpha: float, share: float, epsilon: float, claimed_delta: float) -> int | None:
    """Fewest certification hits (with no false hit) whose δ_LB exceeds ``claimed_delta``; None if none does."""
    ceiling = bounds.exp_or_inf(epsilon) * bounds.cp_upper(0, n_cert, share * alpha)
    if not math.isfinite(ceiling) or 1.0 - ceiling <= claimed_delta:
        return None
    lo, hi = 1, n_cert
    while lo < hi:
        mid = (lo + hi) // 2
        if bounds.cp_lower(mid, n_cert, (1.0 - share) * alpha) - ceiling > claimed_delta:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _selection_hits(n_sel: int, n_cert: int, alpha: float, share: float, epsilon: float, min_hits: int) -> int | None:
    """Fewest selection-half hits (no false hit) whose projected δ bound is positive (the δ test's rule)."""
    from audit.statistics.selection import projected_delta

    for hits in range(min_hits, n_sel + 1):
        if projected_delta(hits, 0, n_sel, n_cert, alpha, epsilon, share) > 0:
            return hits
        if hits > 10 * min_hits + 200:
            return None
    return None


@functools.lru_cache(maxsize=1024)
def point_mass_detectable(
    n_cert: int,
    n_train: int,
    alpha: float,
    epsilon: float,
    claimed_delta: float,
    min_hits: int = 3,
    min_repeats: int = 2,
    power: float = POWER,
) -> float:
    """Smallest point-mass weight w that the δ test flags with probability ≥ ``power`` (module docstring):
    P(≥ ``min_repeats`` in the fit half) · P(enough selection hits) · P(enough certification hits), Poisson
    for the training halves and binomial for the certification, at the best α split; 1.0 when none does."""
    from audit.statistics.selection import FP_SHARES

    n_fit, n_sel = n_train // 2, n_train - n_train // 2
    best = 1.0
    for share in FP_SHARES:
        k_cert = _certify_hits(n_cert, alpha, share, epsilon, claimed_delta)
        k_sel = _selection_hits(n_sel, n_cert, alpha, share, epsilon, min_hits)
        if k_cert is None or k_sel is None:
            continue

        def probability(w: float) -> float:
            return float(
                poisson.sf(min_repeats - 1, w * n_fit)
                * poisson.sf(k_sel - 1, w * n_sel)  # noqa: B023 called within the iteration
                * binom.sf(k_cert - 1, n_cert, w)  # noqa: B023 called within the iteration
            )

        if probability(1.0) < power:
            continue
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if probability(mid) >= power else (mid, hi)
            if hi - lo <= TOLERANCE * hi:
                break
        best = min(best, hi)
    return float(best)


def detectable_delta_words(
    detectable_delta: float | None, claimed_delta: float | None, point_mass_search: bool | None
) -> str:
    """What the audit says about δ-type leaks, in one clause."""
    if not point_mass_search or detectable_delta is None:
        return "no point-mass search ran: δ-type leaks are not excluded"
    claimed = claimed_delta or 0.0
    if claimed < detectable_delta:
        return (
            f"a point mass ≥ {detectable_delta:.2g} would have been caught; the claimed δ = {claimed:g} lies below "
            f"it, so smaller point masses (δ-type leaks) are not excluded"
        )
    return f"a point mass ≥ {detectable_delta:.2g} would have been caught (≤ the claimed δ = {claimed:g})"


# --- the one-run audit: r guesses among M canaries --------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def one_run_detectable_epsilon(
    canaries: int, guesses: int, alpha: float, delta: float, claimed_epsilon: float, power: float = POWER
) -> float:
    """Smallest ε of a leak that the one-run audit's r = ``guesses`` guesses flag against ``claimed_epsilon``
    with probability ≥ ``power``: under an ε-leak each guess is right with probability e^ε/(1 + e^ε) (the
    one-run theorem's extreme case), and the number right is taken at its binomial quantile."""
    from scipy.special import expit

    from audit.one_run.bounds import epsilon_lower_bound

    if not (math.isfinite(claimed_epsilon) and claimed_epsilon > 0) or guesses < 1:
        return math.inf
    low = 1.0 - oracle_power(power)

    def flags(leak: float) -> bool:
        right = int(binom.ppf(low, guesses, float(expit(leak))))
        return epsilon_lower_bound(canaries, guesses, right, alpha=alpha, delta=delta) > claimed_epsilon

    return _smallest(flags, claimed_epsilon)
