"""Black-box mechanism audit: canary input pairs → outputs → certified ε lower bound.

``audit_mechanism(mechanism, dim=112, samples=1_000_000, confidence=0.95, seed=0)`` works on any
object satisfying :class:`pgc.mechanisms.Mechanism` (an ``epsilon`` attribute and
``__call__(gradients (n, d), rng) -> outputs (n, k)``); only the outputs are used. A ``clip``
attribute, when present, only sets the canaries' magnitude.

Canary pairs (x, x'), all with magnitude G ≫ C so that any sane clipping saturates them:

* ``±G·e_1`` — one coordinate; Laplace: the exact LR statistic is y_1, tight; PRS: the LR of y_1 is
  exactly e^{(ε/d̂)·y_1/(√3C)} whatever the hidden matrix M.
* ``0 vs G·e_1`` — half the distance (detects mechanisms that are wrong only near 0).
* ``±G·1`` — dense: all PRS rows saturate (the reference "naive" canary); L2-clipping bugs.
* ``G·e_1 vs −G·1`` — sparse versus dense.
* ``±G·10⁶·(1, 10⁻², 10⁻⁴, 10⁻⁶, 0, …)`` — lexicographic: every PRS row whose first four entries
  are not all zero saturates with the sign of its first non-zero entry; the joint histogram of
  (y_1..y_4), or for a mechanism with PRS's structure (``reduced_dim_for``) the exact likelihood
  ratio of the claimed algorithm (:class:`audit.statistics.PRSLexicographicLikelihoodRatio`),
  reads the votes.

The statistic and threshold are chosen on a training split (``train_fraction`` × samples per side
per canary pair) and certified on ``samples`` fresh outputs per side (:mod:`audit.certification.tester`).

δ-type leaks (rare releases without noise, point masses) barely move a threshold on a projection:
a mechanism that releases 1 in 1,000 gradients exactly and Laplace otherwise gives ε_LB ≈ ε. A
second, separate test looks for them (:func:`delta_test`): on its own training split it searches
"the output equals (or lies within η·spread of) a value that recurs under x but not under x'"
events (:class:`audit.statistics.ExactRelease`) over every canary pair, and certifies the best one
on fresh samples as a δ lower bound at the claimed ε (:func:`audit.certification.bounds.delta_lower_bound`).
The overall α = 1 − confidence is SPLIT: the ε test runs at α_ε = (1 − DELTA_ALPHA_SHARE)·α, the δ
test at α_δ = DELTA_ALPHA_SHARE·α, so by the union bound both bounds hold together at the stated
confidence and the verdict "violated" (ε_LB > claimed ε, or δ_LB > claimed δ) is wrong with
probability ≤ α.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from audit.certification import bounds
from audit.certification.tester import MECHANISM_SPLIT, TRAIN_CALLS, CertifiedTest, HypothesisPair, sampled_chunks
from audit.engine.mechanism_result import DeltaTestResult, MechanismAuditResult, mechanism_row
from audit.power.measured import point_mass_detectable
from audit.statistics import PRSLexicographicLikelihoodRatio, default_statistics, exact_release_statistics
from audit.statistics.selection import FP_SHARES, projected_delta
from pgc.contracts import ProjectsDimension
from pgc.errors import UserError

CANARY_MAGNITUDE = 1e4  # G / C
RESOLUTION = 2.0**-30  # default output rounding, relative to C (ulps of C-scale float64 are ~2^-52·C)
LEX_COLUMNS = 4  # non-zero coordinates of the lexicographic canary (weights 1, 10⁻², 10⁻⁴, 10⁻⁶)
DELTA_ALPHA_SHARE = 0.1  # share of α = 1 − confidence spent on the δ test (the ε test gets the rest)
MIN_DELTA_HITS = 3  # training hits an event needs before it is certified
DELTA_TIE_MARGIN = 0.1  # a later (coarser) event must beat the current one by 10%: hit counts are small
DELTA_SEED_KEY = 0xDE17A  # spawn key of the δ test's random streams (apart from the ε test's)


@dataclass(frozen=True)
class CanaryPair:
    name: str
    positive: np.ndarray
    negative: np.ndarray


def canary_pairs(dim: int, scale: float = 1.0) -> list[CanaryPair]:
    """The default canary pairs for gradients of dimension ``dim`` (see module docstring)."""
    if not isinstance(dim, (int, np.integer)) or dim < 1:
        raise UserError(f"dim must be a positive integer, got {dim!r}")
    if not (math.isfinite(scale) and scale > 0):
        raise UserError(f"scale must be a positive finite number, got {scale!r}")
    g = CANARY_MAGNITUDE * scale
    e1 = np.zeros(dim)
    e1[0] = g
    ones = np.full(dim, g)
    lex = np.zeros(dim)
    lex[: min(LEX_COLUMNS, dim)] = (g * 1e6 * 0.01 ** np.arange(LEX_COLUMNS))[: min(LEX_COLUMNS, dim)]
    pairs = [
        CanaryPair("+G·e1 vs −G·e1", e1, -e1),
        CanaryPair("0 vs G·e1", e1, np.zeros(dim)),
        CanaryPair("+G·1 vs −G·1", ones, -ones),
        CanaryPair("G·e1 vs −G·1", e1, -ones),
    ]
    if dim >= 2:
        pairs.append(CanaryPair("+G·lex vs −G·lex", lex, -lex))
    return pairs


def naive_canary(dim: int, scale: float = 1.0) -> list[CanaryPair]:
    """The reference: the dense all-ones canary only (with the same statistic search)."""
    return [p for p in canary_pairs(dim, scale) if p.name == "+G·1 vs −G·1"]


class MechanismSampler:
    """Outputs of ``mechanism`` on n copies of one input row, optionally rounded to ``resolution``.

    Rounding is post-processing, so a bound certified on rounded outputs is valid for the mechanism
    itself; it only blinds the statistics to the last bits of the floating-point outputs.
    """

    def __init__(self, mechanism, row: np.ndarray, resolution: float | None = None):
        self.mechanism = mechanism
        self.row = np.asarray(row, dtype=np.float64)
        self.resolution = resolution

    def __call__(self, n: int, rng: np.random.Generator) -> np.ndarray:
        inputs = np.repeat(self.row[None, :], n, axis=0)
        out = np.asarray(self.mechanism(inputs, rng))
        if out.ndim != 2 or out.shape[0] != n:
            raise UserError(f"mechanism returned shape {out.shape} for {n} inputs; expected ({n}, k)")
        if self.resolution is not None:
            out = np.round(np.asarray(out, dtype=np.float64) / self.resolution) * self.resolution
        return out


def describe(mechanism) -> str:
    fields_ = []
    for name in ("epsilon", "delta", "clip", "reduced_dim", "rounds"):
        if hasattr(mechanism, name):
            fields_.append(f"{name}={getattr(mechanism, name)!r}")
    return f"{type(mechanism).__name__}({', '.join(fields_)})"


def _check_common(mechanism, dim: int, samples: int, confidence: float) -> float:
    if not callable(mechanism) or not hasattr(mechanism, "epsilon"):
        raise TypeError("mechanism must satisfy mechanisms.Mechanism (epsilon attribute, callable)")
    claimed = float(mechanism.epsilon)
    if math.isnan(claimed) or claimed <= 0:
        raise UserError(f"mechanism.epsilon must be a positive number, got {mechanism.epsilon!r}")
    if not isinstance(dim, (int, np.integer)) or dim < 1:
        raise UserError(f"dim must be a positive integer, got {dim!r}")
    if not isinstance(samples, (int, np.integer)) or samples < 100:
        raise UserError(f"samples must be an integer >= 100, got {samples!r}")
    if not (0.0 < confidence < 1.0):
        raise UserError(f"confidence must lie in (0, 1), got {confidence!r}")
    return claimed


def _candidates(test: CertifiedTest) -> list[dict]:
    return [
        {
            "hypothesis": c.label,
            "statistic": c.statistic,
            "projected_epsilon": c.projected_epsilon,
            "train_samples": c.train_samples,
        }
        for c in test.candidates
    ]


@dataclass
class _DeltaCandidate:
    pair: HypothesisPair
    statistic: str
    scorer: object
    sign: float  # +1: event {score ≥ 1} under x; −1: event {score ≤ −1} under x'
    fp_share: float
    projected: float
    point_masses: int


def _event_hits(cand: _DeltaCandidate, chunks) -> tuple[int, int]:
    hits = total = 0
    for chunk in chunks:
        s = np.asarray(cand.scorer(np.asarray(chunk, dtype=np.float64)))
        hits += int(np.count_nonzero(cand.sign * s >= 1.0))
        total += len(s)
    return hits, total


def _select_delta_event(
    pairs: Sequence[HypothesisPair],
    statistics: Sequence,
    train_seq: np.random.SeedSequence,
    train_samples: int,
    samples: int,
    alpha: float,
    claimed_epsilon: float,
) -> _DeltaCandidate | None:
    """Over every pair, statistic, direction and α split, the point-mass event with the largest projected δ
    bound, from the training split only (the first half fits the point masses, the second half scores)."""
    best: _DeltaCandidate | None = None
    for pair, seq in zip(pairs, train_seq.spawn(len(pairs)), strict=True):
        rp, rn = (np.random.Generator(np.random.PCG64(x)) for x in seq.spawn(2))
        chunk = -(-train_samples // TRAIN_CALLS)
        pos = np.concatenate(list(sampled_chunks(pair.positive, train_samples, rp, chunk)))
        neg = np.concatenate(list(sampled_chunks(pair.negative, train_samples, rn, chunk)))
        if np.isinf(pos).any() or np.isinf(neg).any():
            raise UserError("the audited outputs contain inf (an absent entry is NaN)")
        half_p, half_n = len(pos) // 2, len(neg) // 2
        for stat in statistics:
            scorer = stat.fit(pos[:half_p], neg[:half_n])
            if scorer is None:
                continue
            s_pos, s_neg = np.asarray(scorer(pos[half_p:])), np.asarray(scorer(neg[half_n:]))
            n_sel = min(len(s_pos), len(s_neg))
            masses = getattr(scorer, "point_masses", (0, 0))
            for sign, own, other, m in ((1.0, s_pos, s_neg, masses[0]), (-1.0, s_neg, s_pos, masses[1])):
                hits, false_hits = np.count_nonzero(sign * own >= 1), np.count_nonzero(sign * other >= 1)
                if hits < MIN_DELTA_HITS:
                    continue
                for share in FP_SHARES:
                    proj = projected_delta(hits, false_hits, n_sel, samples, alpha, claimed_epsilon, share)
                    if best is None or proj > max(best.projected * (1.0 + DELTA_TIE_MARGIN), best.projected + 1e-12):
                        best = _DeltaCandidate(pair, stat.name, scorer, sign, share, proj, int(m))
    return best


def delta_test(
    pairs: Sequence[HypothesisPair],
    claimed_epsilon: float,
    samples: int,
    train_samples: int,
    confidence: float,
    seed: np.random.SeedSequence,
    claimed_delta: float = 0.0,
    statistics: Sequence | None = None,
) -> DeltaTestResult:
    """Certified δ lower bound at the claimed ε from the best point-mass event (module docstring).

    Selection (training split only, ``train_samples`` per side per pair, drawn in TRAIN_CALLS calls;
    the first half fits the event's point masses, the second half scores it): over every pair, every
    :class:`ExactRelease` statistic and both directions, the event and α split (fp_share) with the
    largest projected δ bound. If none is positive nothing is certified (δ_LB = 0). Otherwise the
    single chosen event is counted on ``samples`` fresh outputs per side and
    :func:`audit.certification.bounds.delta_lower_bound` turns the counts into δ_LB at confidence ``confidence``.
    """
    if not math.isfinite(claimed_epsilon):
        raise UserError("the δ test needs a finite claimed ε")
    alpha = 1.0 - confidence
    statistics = exact_release_statistics(claimed_epsilon) if statistics is None else statistics
    train_seq, cert_seq = seed.spawn(2)
    best = _select_delta_event(pairs, statistics, train_seq, train_samples, samples, alpha, claimed_epsilon)
    detectable = float(bounds.smallest_detectable_delta(samples, alpha, claimed_epsilon))
    if best is None or best.projected <= 0:
        return DeltaTestResult(
            hypothesis=best.pair.label if best else "",
            statistic=best.statistic if best else "",
            direction="positive" if best is None or best.sign > 0 else "negative",
            certified=False,
            samples_per_side=0,
            hits=0,
            false_hits=0,
            fp_share=best.fp_share if best else 0.5,
            confidence=confidence,
            claimed_epsilon=claimed_epsilon,
            claimed_delta=claimed_delta,
            delta_lower_bound=0.0,
            epsilon_lower_bound=0.0,
            smallest_detectable_delta=detectable,
            projected_delta=best.projected if best else 0.0,
            train_samples=train_samples,
            point_masses=best.point_masses if best else 0,
        )
    rp, rn = (np.random.Generator(np.random.PCG64(x)) for x in cert_seq.spawn(2))
    own_sampler, other_sampler = (
        (best.pair.positive, best.pair.negative) if best.sign > 0 else (best.pair.negative, best.pair.positive)
    )
    hits, n_own = _event_hits(best, sampled_chunks(own_sampler, samples, rp))
    false_hits, n_other = _event_hits(best, sampled_chunks(other_sampler, samples, rn))
    misses = n_own - hits
    delta_lb = bounds.delta_lower_bound(false_hits, n_other, misses, n_own, alpha, claimed_epsilon, best.fp_share)
    eps_lb = bounds.epsilon_lower_bound(false_hits, n_other, misses, n_own, alpha, claimed_delta, best.fp_share)
    return DeltaTestResult(
        hypothesis=best.pair.label,
        statistic=best.statistic,
        direction="positive" if best.sign > 0 else "negative",
        certified=True,
        samples_per_side=n_own,
        hits=hits,
        false_hits=false_hits,
        fp_share=best.fp_share,
        confidence=confidence,
        claimed_epsilon=claimed_epsilon,
        claimed_delta=claimed_delta,
        delta_lower_bound=float(delta_lb),
        epsilon_lower_bound=float(eps_lb),
        smallest_detectable_delta=float(
            bounds.smallest_detectable_delta(samples, alpha, claimed_epsilon, best.fp_share)
        ),
        projected_delta=best.projected,
        train_samples=train_samples,
        point_masses=best.point_masses,
    )


def _canary_tests(
    mechanism,
    dim: int,
    claimed: float,
    canaries: Sequence[CanaryPair] | None,
    statistics: Sequence | None,
    float_exact: bool,
) -> tuple[list[HypothesisPair], list]:
    """The hypothesis pairs of the canary inputs (outputs rounded to ``RESOLUTION``·C unless ``float_exact``)
    and the candidate statistics (PRS: its lexicographic likelihood ratio too)."""
    scale = float(getattr(mechanism, "clip", None) or 1.0)
    resolution = None if float_exact else RESOLUTION * scale
    pairs = [
        HypothesisPair(
            c.name,
            MechanismSampler(mechanism, c.positive, resolution),
            MechanismSampler(mechanism, c.negative, resolution),
        )
        for c in (canary_pairs(dim, scale) if canaries is None else canaries)
    ]
    if statistics is None:
        statistics = default_statistics()
        if isinstance(mechanism, ProjectsDimension) and math.isfinite(claimed):
            statistics.append(
                PRSLexicographicLikelihoodRatio(scale, mechanism.reduced_dim_for(dim), claimed, min(LEX_COLUMNS, dim))
            )
    return pairs, statistics


def audit_mechanism(
    mechanism,
    dim: int = 112,
    samples: int = 1_000_000,
    confidence: float = 0.95,
    seed: int = 0,
    *,
    delta: float | None = None,
    train_fraction: float = 0.1,
    canaries: Sequence[CanaryPair] | None = None,
    statistics: Sequence | None = None,
    float_exact: bool = False,
    delta_test_samples: int | None = None,
    delta_train_samples: int | None = None,
    progress: bool = False,
) -> MechanismAuditResult:
    """Black-box audit (see module docstring). ``samples``: certification outputs per side.

    By default the outputs are rounded to ``RESOLUTION``·C before any statistic sees them: the
    audit then measures the mechanism's arithmetic, not the last bits of its floating-point
    implementation. ``float_exact=True`` audits the exact float64 outputs, where the core's
    Laplace shows a Mironov (2012) style violation (see docs/README-audit.md).

    ``delta``: the claim's δ (None: the mechanism's own ``delta``, 0 when it has none: pure ε-DP). An
    (ε, δ) claim selects its test with two-sided rate bounds (:func:`audit.statistics.selection.rate_upper`: the
    best test of a Gaussian lies deep in a tail) and reports the accountant's ε at δ for a mechanism
    with Gaussian noise (:mod:`audit.certification.accountant`). The δ test (:func:`delta_test`) certifies on
    ``delta_test_samples`` fresh outputs per side (default ``samples``; 0 turns it off, and then
    the ε test gets the whole α) after selecting its event on ``delta_train_samples`` per side per
    canary pair (default: the ε test's training size). It does not run for an infinite claimed ε.
    """
    claimed = _check_common(mechanism, dim, samples, confidence)
    from audit.certification.claims import mechanism_claim

    claim = mechanism_claim(mechanism, delta)
    delta = claim.delta
    delta_samples = samples if delta_test_samples is None else delta_test_samples
    if not isinstance(delta_samples, (int, np.integer)) or (delta_samples != 0 and delta_samples < 100):
        raise UserError(f"delta_test_samples must be 0 or an integer >= 100, got {delta_test_samples!r}")
    run_delta = delta_samples > 0 and math.isfinite(claimed)
    alpha = 1.0 - confidence
    eps_confidence = 1.0 - (1.0 - DELTA_ALPHA_SHARE) * alpha if run_delta else confidence
    pairs, statistics = _canary_tests(mechanism, dim, claimed, canaries, statistics, float_exact)
    train = MECHANISM_SPLIT.size(samples, train_fraction)
    start, cpu = time.perf_counter(), time.process_time()
    claimed_mu = claim.gdp_mu if delta > 0 else None
    test = CertifiedTest(
        pairs,
        samples=samples,
        train_samples=train,
        confidence=eps_confidence,
        delta=delta,
        seed=seed,
        statistics=statistics,
        detectable_delta_at=claimed,
        progress=progress,
        two_sided_rates=delta > 0,
        claimed_mu=claimed_mu,
    )
    bound = test.lower_bound()
    dtest, delta_cpu, point_mass_power = None, 0.0, None
    if run_delta:
        cpu_d = time.process_time()
        dtrain = train if delta_train_samples is None else int(delta_train_samples)
        if dtrain < 20:
            raise UserError(f"delta_train_samples must be >= 20, got {delta_train_samples!r}")
        delta_confidence = 1.0 - DELTA_ALPHA_SHARE * alpha
        dtest = delta_test(
            pairs,
            claimed,
            delta_samples,
            dtrain,
            delta_confidence,
            np.random.SeedSequence(seed, spawn_key=(DELTA_SEED_KEY,)),
            claimed_delta=delta,
        )
        point_mass_power = point_mass_detectable(
            int(delta_samples), dtrain, 1.0 - delta_confidence, claimed, delta, MIN_DELTA_HITS
        )
        delta_cpu = time.process_time() - cpu_d
    wall = time.perf_counter() - start
    mode = "black-box" + (" float-exact" if float_exact else "")
    row = mechanism_row(
        describe(mechanism),
        claim,
        bound,
        confidence,
        mode,
        declared_accountant(mechanism, delta),
        dtest,
        point_mass_power,
    )
    return MechanismAuditResult(
        describe(mechanism),
        row,
        bound,
        mode,
        wall,
        _candidates(test),
        time.process_time() - cpu,
        delta_test=dtest,
        delta_time_s=delta_cpu,
    )


def declared_accountant(mechanism, delta: float) -> float | None:
    """The accountant's ε at ``delta`` of the noise the mechanism declares (its ``noise_scale`` and clip:
    :func:`pgc.mechanisms.accounting.mechanism_event`); None for a pure ε claim or no declared Gaussian noise."""
    if delta <= 0:
        return None
    from audit.certification.accountant import accountant_epsilon
    from pgc.mechanisms.accounting import mechanism_event

    event = mechanism_event(mechanism)
    return None if event is None else accountant_epsilon(event, delta)
