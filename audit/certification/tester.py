"""Choose a test on a training split, certify it on fresh samples.

Protocol (so that the α budget is spent exactly once):

1. For every candidate hypothesis pair (canary pair, environment pair, channel) draw a small
   PILOT split and rank the pairs; the best ``FINALISTS`` pairs get the full TRAINING split.
   On each split, Half of it fits each statistic (:mod:`audit.statistics`), the other half scores it; a
   threshold t and the α split between FPR and FNR (``fp_share``) are chosen to maximise the bound
   the certification sample size would give at the training rates (smoothed, so an empty tail is
   not mistaken for a perfect test).
2. The single best (pair, statistic, t, fp_share) is then run once on FRESH certification samples;
   only those counts enter :func:`audit.certification.bounds.epsilon_lower_bound`. The selection never sees them,
   so the bound holds at the stated confidence with no multiple-testing correction.

:class:`CertifiedTest` implements :class:`pgc.contracts.Tester`: ``lower_bound()`` and
``rejects(claim)`` are separate questions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict

import numpy as np
import numpy.typing as npt

from audit.certification import bounds
from audit.certification.choice import TIE_MARGIN, select_test
from audit.certification.curves import mu_lower_bound, profile_excess, split_alpha
from audit.certification.paired import (
    NUISANCE_SHARE,
    certified_epsilon,
    discordant_pairs,
    projected_certificates,
)
from audit.certification.paired import max_certifiable_epsilon as paired_max_certifiable_epsilon
from audit.statistics import default_statistics, search_statistics
from audit.statistics.fitted import witness_of
from audit.statistics.selection import Aim, continuous_scores
from audit.statistics.shapes import for_absent_entries, shapes_of
from pgc.contracts import Sampler, Scorer, Statistic
from pgc.errors import UserError
from pgc.tasks.progress import progress_bar

CHUNK = 65_536
CHUNK_BYTES = 1 << 30  # releases of which CHUNK fit in this many bytes come CHUNK at a time
WIDE_CHUNK_BYTES = 1 << 25  # wider releases come in chunks of at most this many bytes
FINALISTS = 2  # pairs that get the full training split after the pilot ranking
TRAIN_CALLS = 4  # the training split of each side is drawn in this many mechanism calls


@dataclass(frozen=True)
class TrainingSplit:
    """How many releases per side an audit spends on selecting its test: ``fraction`` of the certification
    size, at least ``minimum`` and at most ``maximum`` (None: no cap). One rule, with one preset per documented
    reason (:data:`MECHANISM_SPLIT`, :data:`SYSTEM_SPLIT`, :data:`ENVIRONMENT_SPLIT`)."""

    fraction: float
    minimum: int
    maximum: int | None
    why: str

    def size(self, samples: int, fraction: float | None = None, minimum: int | None = None) -> int:
        """The training releases per side for ``samples`` certification releases (``fraction`` and ``minimum``
        override the preset's)."""
        fraction = self.fraction if fraction is None else fraction
        if not (0.0 < fraction <= 1.0):
            raise UserError(f"train_fraction must lie in (0, 1], got {fraction!r}")
        n = max(self.minimum if minimum is None else int(minimum), int(fraction * samples))
        return n if self.maximum is None else min(self.maximum, n)


MECHANISM_SPLIT = TrainingSplit(
    0.1,
    2_000,
    200_000,
    "a mechanism audit ranks several canary pairs on a pilot split "
    "first, so a tenth suffices; its certification sizes reach 10^6, "
    "where 2e5 selects well",
)
SYSTEM_SPLIT = TrainingSplit(
    0.25,
    1_000,
    None,
    "one pair of secrets per audit: a quarter, at least 1,000 per side so that a statistic's fit half is not noise",
)
SMALL_CLAIM = 0.5  # a claimed ε below this: the training split is at least SMALL_CLAIM_TRAINING per side
SMALL_CLAIM_TRAINING = 20_000


def auto_train_fraction(samples: int, claimed_epsilon: float, preset: TrainingSplit | None = None) -> float:
    """The training split's fraction of ``samples`` certification releases when the user gives none: the preset's
    (a quarter for a System audit), raised for a claimed ε below :data:`SMALL_CLAIM` until the split holds
    :data:`SMALL_CLAIM_TRAINING` releases per side (at most as many as the certification). A small ε's best test
    lies on a wide plateau of likelihood ratio ≈ e^ε, and telling its centre from its noisy tails takes releases:
    a Laplace ε = 0.1 audit of 8e4 certification releases selects on 2e4 (median certified 0.0827 over 40 seeds,
    at most ≈ 0.085 at that size: results/shapes/laplace-eps0.1.json), not on 5e3."""
    preset = preset or SYSTEM_SPLIT
    fraction = preset.fraction
    if claimed_epsilon < SMALL_CLAIM and samples > 0:
        fraction = max(fraction, min(1.0, SMALL_CLAIM_TRAINING / samples))
    return fraction


ENVIRONMENT_SPLIT = TrainingSplit(
    0.25,
    200,
    None,
    "PGC-A3C's environment audits play an episode per release; the "
    "committed audits were selected on a quarter, at least 200 per side",
)


@dataclass(frozen=True)
class EpsilonBound:
    """A certified lower bound with everything needed to read it."""

    epsilon_lower_bound: float
    confidence: float
    delta: float
    samples_per_side: int
    false_positives: int
    false_negatives: int
    fpr_upper: float
    fnr_upper: float
    fp_share: float | None  # the α split of the split certificate; None where the paired one ran
    max_certifiable_epsilon: float  # a perfect test's bound with this n and α, by the certificate that ran
    smallest_detectable_delta: float  # at ε = 0 ... see detectable_delta_at
    detectable_delta_at: float  # the ε at which smallest_detectable_delta was computed
    hypothesis: str  # which pair / channel
    statistic: str
    threshold: float
    projected_epsilon: float  # what the training split predicted
    # the curve test (claims with a μ-GDP curve): its counts at its own threshold on the same fresh samples and
    # the certified μ; α is then split evenly between the threshold bound above and this one
    mu_lower_bound: float | None = None
    curve_false_positives: int | None = None
    curve_false_negatives: int | None = None
    curve_threshold: float | None = None
    # a claimed privacy profile's curve test (instead of μ): the certified ε excess over the profile at its
    # point δ_i (> 0: violated) and the ε_i claimed there
    profile_excess: float | None = None
    profile_delta: float | None = None
    profile_claimed_epsilon: float | None = None
    shapes_searched: tuple[str, ...] | None = None  # the leak shapes the selection's statistics covered
    event: str | None = None  # the certified event in words, where the fitted statistic says it
    witness: dict[str, Any] | None = None  # the fitted statistic saved (audit.statistics.fitted), where it can be
    # the paired certificate (audit.certification.paired): pairs with only the x-release, only the x'-release in
    # the event; None where the split certificate ran
    discordant_pairs: tuple[int, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Every field but the witness (a row saves it: :class:`pgc.schemas.audit_rows.FittedStatistic`)."""
        return {k: v for k, v in self.__dict__.items() if k != "witness"}


class _CurveFields(TypedDict, total=False):
    """The curve test's fields of an :class:`EpsilonBound`."""

    curve_false_positives: int
    curve_false_negatives: int
    curve_threshold: float
    mu_lower_bound: float
    profile_excess: float
    profile_delta: float
    profile_claimed_epsilon: float


class _Progress(Protocol):
    """What a progress bar of :func:`pgc.tasks.progress.progress_bar` does for the certified test."""

    def update(self, n: int = 1) -> None: ...


@dataclass
class CandidateTest:
    label: str
    statistic: str
    scorer: Scorer
    threshold: float
    fp_share: float
    projected_epsilon: float
    train_samples: int
    curve_threshold: float | None = None  # the curve test's threshold on the same statistic, when the claim has one
    profile: tuple[tuple[float, float], ...] | None = None  # the claimed privacy profile the curve test checks
    width: int | None = None  # the number of entries per output the test was fitted on
    shapes: tuple[
        str, ...
    ] = ()  # the leak shapes of the statistics the selection could fit (audit.statistics.shapes.SHAPES)
    paired: bool = False  # certified by the paired certificate (audit.certification.paired), not the split one


def fit_candidate(
    label: str,
    train_pos: npt.ArrayLike,
    train_neg: npt.ArrayLike,
    n_cert: int,
    alpha: float,
    delta: float,
    statistics: Sequence[Statistic] | None = None,
    two_sided_rates: bool = False,
    curve: bool = False,
    curve_alpha: float | None = None,
    profile: tuple[tuple[float, float], ...] | None = None,
    threshold_on_whole_split: bool = True,
) -> CandidateTest | None:
    """Best statistic and threshold for one hypothesis pair, from its training split only
    (``two_sided_rates``: see :func:`audit.statistics.selection.rate_upper`). With ``curve`` (a claim with a μ-GDP
    curve, or the privacy ``profile`` given) the chosen statistic also gets the threshold that maximises the
    projected certified μ (or ε excess over the profile) at ``curve_alpha``
    (:func:`audit.certification.curves.select_curve_threshold`), chosen on the same selection half. A row with a
    curve is judged on it first, so there the statistics are ranked by what its curve test projects, not by the
    threshold test's ε (a tail event can project a high ε and a poor μ): see
    :func:`audit.certification.choice.projector`. A statistic whose
    fit learns only an orientation (its ``orientation_only(width)``: the projection of one number) overfits neither
    half: the thresholds of its curve are chosen on the whole training split, unless ``threshold_on_whole_split`` is
    False (a training split that begins with releases that won a race among pairs: their tails overstate the pair's
    separation)."""
    statistics = default_statistics() if statistics is None else statistics
    train_pos, train_neg = _as_2d(train_pos), _as_2d(train_neg)
    if train_pos.shape[1] != train_neg.shape[1]:
        width = max(train_pos.shape[1], train_neg.shape[1])
        train_pos, train_neg = _as_2d(train_pos, width), _as_2d(train_neg, width)
    statistics = for_absent_entries(statistics, train_pos, train_neg)
    applied: list[Statistic] = []
    # first half fits, second half selects: samplers draw the training split in TRAIN_CALLS
    # separate calls, so each half comes from its own calls (this is what exposes noise reused
    # from call to call)
    half_p, half_n = len(train_pos) // 2, len(train_neg) // 2
    fit_p, sel_p = train_pos[:half_p], train_pos[half_p:]
    fit_n, sel_n = train_neg[:half_n], train_neg[half_n:]
    assert curve_alpha is not None or not curve, "a curve test is selected at its curve_alpha"
    chosen, project, aim = select_test(
        statistics,
        (fit_p, fit_n, sel_p, sel_n),
        Aim(n_cert, alpha, delta, two_sided_rates),
        curve_alpha if curve else None,
        profile,
        applied,
    )
    if chosen is None:
        return None
    stat, scorer, s_pos, s_neg, projection = chosen
    orientation_only = getattr(stat, "orientation_only", None)
    whole = threshold_on_whole_split and callable(orientation_only) and orientation_only(train_pos.shape[1])
    if whole and continuous_scores(s_pos, s_neg):
        # twice the releases (the fit half's scores before the selection half's, in the split's order); a few exact
        # events keep the selection half's one-standard-error choice
        s_pos = np.concatenate([np.asarray(scorer(fit_p), np.float64), s_pos])
        s_neg = np.concatenate([np.asarray(scorer(fit_n), np.float64), s_neg])
        projection = project(s_pos, s_neg, bool(getattr(stat, "held_out_ranking", False)))
    t, share, eps = projection[0], projection[1], 0.0 if aim.plug_in else projection[2]
    curve_threshold = projection[3] if curve else None  # chosen with the threshold test, on the same releases
    paired = delta == 0.0 and not curve  # the paired certificate bounds pure ε, where it projects more
    if paired:
        split_projection, paired_projection = projected_certificates(
            s_pos, s_neg, t, share, n_cert, alpha, two_sided_rates, aim.level
        )
        paired = paired_projection > split_projection
    return CandidateTest(
        label,
        stat.name,
        scorer,
        t,
        share,
        eps,
        len(train_pos),
        curve_threshold,
        profile if curve else None,
        train_pos.shape[1],
        shapes_of(applied),
        paired,
    )


def _as_2d(x: npt.ArrayLike, width: int | None = None) -> npt.NDArray[np.float64]:
    """Outputs as an (n, k) float array; NaN marks an absent entry. ``width``: the k a test was fitted on — a
    narrower batch of variable-length outputs is padded with absent entries, a wider one cut to it (the test is a
    fixed function of the first ``width`` entries)."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2:
        raise UserError(f"outputs must be (n, k), got shape {x.shape}")
    if np.isinf(x).any():
        raise UserError("the audited outputs contain inf (an absent entry is NaN)")
    return x if width is None else to_width(x, width)


def to_width(x: npt.NDArray[np.float64], width: int) -> npt.NDArray[np.float64]:
    """(n, k) outputs as (n, ``width``): the first ``width`` entries of a wider batch, a narrower one padded with
    absent entries (NaN)."""
    if x.shape[1] == width:
        return x
    return x[:, :width] if x.shape[1] > width else np.pad(x, ((0, 0), (0, width - x.shape[1])), constant_values=np.nan)


def count_both(test: CandidateTest, chunk: npt.ArrayLike) -> tuple[npt.NDArray[np.bool_], int]:
    """(score ≥ threshold, one per release; the count of score ≥ curve threshold) on one chunk; the second 0
    without a curve test."""
    s = np.asarray(test.scorer(_as_2d(chunk, test.width)))
    curve = 0 if test.curve_threshold is None else int(np.count_nonzero(s >= test.curve_threshold))
    return np.asarray(s >= test.threshold, dtype=bool).reshape(-1), curve


class CertificationTally:
    """What one chosen test counts on its certification releases, chunk by chunk, per side (0: the first secret's
    releases, 1: the second's): its hits, its curve test's hits and the releases seen, and where the paired
    certificate runs each release's hit (one byte per release), paired in order when the bound is taken."""

    def __init__(self, test: CandidateTest):
        self.test = test
        self.hits, self.curve_hits, self.totals = [0, 0], [0, 0], [0, 0]
        self.events: tuple[list[npt.NDArray[np.bool_]], list[npt.NDArray[np.bool_]]] = ([], [])

    def add(self, side: int, chunk: npt.ArrayLike) -> None:
        """Count the test on one chunk of ``side``'s releases."""
        hits, curve = count_both(self.test, chunk)
        self.hits[side] += int(np.count_nonzero(hits))
        self.curve_hits[side] += curve
        self.totals[side] += hits.size
        if self.test.paired:
            self.events[side].append(hits)

    def bound(self, confidence: float, delta: float = 0.0, detectable_delta_at: float = 0.0) -> EpsilonBound:
        """The certified bound of the counts so far (:func:`bound_from_counts`)."""
        pairs = None
        if self.test.paired:
            pairs = discordant_pairs(*(np.concatenate([np.zeros(0, dtype=bool), *kept]) for kept in self.events))
        curve = (self.curve_hits[0], self.curve_hits[1]) if self.test.curve_threshold is not None else None
        tp, fp = self.hits
        n_pos, n_neg = self.totals
        return bound_from_counts(self.test, tp, n_pos, fp, n_neg, confidence, delta, detectable_delta_at, curve, pairs)


def certify(
    test: CandidateTest,
    cert_pos: Iterable[npt.ArrayLike],
    cert_neg: Iterable[npt.ArrayLike],
    confidence: float,
    delta: float = 0.0,
    detectable_delta_at: float = 0.0,
) -> EpsilonBound:
    """Run the chosen test (and its curve test, if it has one) once on fresh samples and turn its error
    counts into a bound."""
    tally = CertificationTally(test)
    for side, chunks in enumerate((cert_pos, cert_neg)):
        for chunk in chunks:
            tally.add(side, chunk)
    return tally.bound(confidence, delta, detectable_delta_at)


def bound_from_counts(
    test: CandidateTest,
    true_positives: int,
    n_pos: int,
    false_positives: int,
    n_neg: int,
    confidence: float,
    delta: float = 0.0,
    detectable_delta_at: float = 0.0,
    curve_counts: tuple[int, int] | None = None,
    pairs: tuple[int, int] | None = None,
) -> EpsilonBound:
    """The certified bound of a chosen test from its counts on fresh samples (same n per side).

    ``pairs`` (a test certified by the paired certificate, :mod:`audit.certification.paired`): the pairs with only
    the x-release and only the x'-release in the event, the i-th release of each side paired with the i-th.

    ``curve_counts`` (true positives, false positives at the curve threshold, for a test with one) add the
    certified μ; α is then split between the threshold bound and the curve bound
    (:func:`audit.certification.curves.split_alpha`)."""
    alpha = 1.0 - confidence
    if n_pos != n_neg:
        raise UserError("certification needs the same number of samples per side")
    curve: _CurveFields = {}
    if test.curve_threshold is not None:
        if curve_counts is None:
            raise UserError("a test with a curve threshold needs its curve counts")
        alpha, curve_alpha = split_alpha(alpha)  # the row is flagged when either bound exceeds its claim
        c_fp, c_fn = int(curve_counts[1]), int(n_pos - curve_counts[0])
        curve = {
            "curve_false_positives": c_fp,
            "curve_false_negatives": c_fn,
            "curve_threshold": float(test.curve_threshold),
        }
        if test.profile is None:
            curve["mu_lower_bound"] = float(mu_lower_bound(c_fp, c_fn, n_neg, n_pos, curve_alpha))
        else:
            excess, delta_i, eps_i = profile_excess(c_fp, c_fn, n_neg, n_pos, curve_alpha, test.profile)
            curve.update({"profile_excess": excess, "profile_delta": delta_i, "profile_claimed_epsilon": eps_i})
    fp, fn = false_positives, n_pos - true_positives
    if test.paired != (pairs is not None) or (test.paired and delta != 0.0):
        raise UserError("a test certified by the paired certificate (pure ε) needs its discordant pairs, and only it")
    share = test.fp_share
    # the rates' upper bounds at their shares of α; where the paired certificate ran, at its nuisance level γ/2
    fp_alpha, fn_alpha = (share * alpha, (1 - share) * alpha) if pairs is None else (NUISANCE_SHARE * alpha / 2,) * 2
    eps = certified_epsilon(fp, fn, n_pos, alpha, delta, share, pairs)
    return EpsilonBound(
        epsilon_lower_bound=float(eps),
        confidence=confidence,
        delta=delta,
        samples_per_side=n_pos,
        false_positives=fp,
        false_negatives=fn,
        fpr_upper=float(bounds.cp_upper(fp, n_neg, fp_alpha)),
        fnr_upper=float(bounds.cp_upper(fn, n_pos, fn_alpha)),
        fp_share=None if pairs is not None else share,
        discordant_pairs=pairs,
        max_certifiable_epsilon=float(
            bounds.max_certifiable_epsilon(n_pos, alpha, delta, share)
            if pairs is None
            else paired_max_certifiable_epsilon(n_pos, alpha)
        ),
        smallest_detectable_delta=float(
            bounds.smallest_detectable_delta(
                n_pos, alpha, detectable_delta_at if math.isfinite(detectable_delta_at) else 0.0, share
            )
        ),
        detectable_delta_at=float(detectable_delta_at if math.isfinite(detectable_delta_at) else 0.0),
        hypothesis=test.label,
        statistic=test.statistic,
        threshold=float(test.threshold),
        projected_epsilon=float(test.projected_epsilon),
        shapes_searched=test.shapes or None,
        event=event_words(test.scorer, test.threshold),
        witness=witness_of(test.scorer),
        **curve,
    )


def event_words(scorer: Any, threshold: float) -> str | None:
    """The event [score ≥ ``threshold``] in the words of a scorer that says it (``event``), else None."""
    event = getattr(scorer, "event", None)
    return str(event(threshold)) if callable(event) else None


def sampled_chunks(
    sampler: Sampler,
    n: int,
    rng: np.random.Generator,
    chunk: int = CHUNK,
    on_chunk: Callable[[int], None] | None = None,
) -> Iterator[Any]:
    """Draw n outputs from ``sampler`` in chunks (memory stays O(chunk·k))."""
    done = 0
    while done < n:
        m = min(chunk, n - done)
        yield sampler(m, rng)
        done += m
        if on_chunk is not None:
            on_chunk(m)


def chunk_rows(width: int) -> int:
    """Releases per certification chunk for releases of ``width`` numbers in all: :data:`CHUNK` where that many fit
    in :data:`CHUNK_BYTES` (up to 2,048 numbers); wider releases (model updates) in chunks of at most
    :data:`WIDE_CHUNK_BYTES`, which the memory allocator reuses from chunk to chunk — larger ones are fresh pages
    every time, whose first touch cost a 10⁵-number release more than its rounding and counting together."""
    bytes_per_release = 8 * max(1, int(width))
    if CHUNK * bytes_per_release <= CHUNK_BYTES:
        return CHUNK
    return max(1, min(CHUNK, WIDE_CHUNK_BYTES // bytes_per_release))


@dataclass(frozen=True)
class HypothesisPair:
    """Two samplers to tell apart (the positive one is "x", the negative "x'")."""

    label: str
    positive: Sampler
    negative: Sampler


@dataclass
class CertifiedTest:
    """Select on a training split over all pairs, certify the winner on fresh samples (a Tester).

    ``lower_bound()`` computes (once) and returns the :class:`EpsilonBound`; ``rejects(claim)``
    only says whether that bound exceeds the claim.
    """

    pairs: Sequence[HypothesisPair]
    samples: int
    train_samples: int
    confidence: float = 0.95
    delta: float = 0.0
    seed: int | np.random.SeedSequence = 0
    statistics: Sequence[Statistic] | None = None
    detectable_delta_at: float = 0.0
    progress: bool = False
    pilot_samples: int | None = None  # per pair; None: max(2000, train_samples // 5)
    two_sided_rates: bool = False  # selection's rate bounds (audit.statistics.selection.rate_upper)
    claimed_mu: float | None = None  # a claimed μ-GDP curve: the chosen test also gets a curve threshold
    candidates: list[CandidateTest] = field(default_factory=list, init=False)
    _bound: EpsilonBound | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.pairs:
            raise UserError("need at least one hypothesis pair")
        if not (0.0 < self.confidence < 1.0):
            raise UserError(f"confidence must lie in (0, 1), got {self.confidence!r}")
        if self.samples < 10 or self.train_samples < 20:
            raise UserError("need samples >= 10 and train_samples >= 20")
        if self.pilot_samples is None:
            self.pilot_samples = max(2_000, self.train_samples // 5)

    def lower_bound(self) -> EpsilonBound:
        if self._bound is None:
            self._bound = self._run()
        return self._bound

    def rejects(self, claimed_epsilon: float) -> bool:
        return self.lower_bound().epsilon_lower_bound > claimed_epsilon

    def _run(self) -> EpsilonBound:
        # with a claimed curve the threshold test selects at its share of α (audit.certification.curves.split_alpha)
        alpha = split_alpha(1.0 - self.confidence)[0] if self.claimed_mu is not None else 1.0 - self.confidence
        root = self.seed if isinstance(self.seed, np.random.SeedSequence) else np.random.SeedSequence(self.seed)
        train_seq, cert_seq = root.spawn(2)
        pilot = self.pilot_samples if len(self.pairs) > FINALISTS else None
        if pilot is not None and pilot >= self.train_samples:
            pilot = None
        total = 2 * self.samples + 2 * (
            len(self.pairs) * pilot + FINALISTS * self.train_samples if pilot else len(self.pairs) * self.train_samples
        )
        bar = progress_bar(total, "output", "certified test (training + certification outputs)", self.progress)
        pilot_seq, final_seq = train_seq.spawn(2)
        finalists = list(self.pairs)
        if pilot is not None:  # stage 1: a small pilot split ranks the pairs
            ranked: list[tuple[float, int, HypothesisPair]] = []
            for pair, seq in zip(self.pairs, pilot_seq.spawn(len(self.pairs)), strict=True):
                cand = self._train(pair, pilot, seq, alpha, bar, pilot=True)
                if cand is not None:
                    ranked.append((cand.projected_epsilon, len(ranked), pair))
            finalists = [pair for _, _, pair in sorted(ranked, key=_occam_key(ranked))[:FINALISTS]]
        best: CandidateTest | None = None
        best_pair: HypothesisPair | None = None
        # stage 2: the full training split
        for pair, seq in zip(finalists, final_seq.spawn(len(finalists)), strict=True):
            cand = self._train(pair, self.train_samples, seq, alpha, bar)
            if cand is None:
                continue
            self.candidates.append(cand)
            if best is None or cand.projected_epsilon > best.projected_epsilon * (1.0 + TIE_MARGIN):
                best, best_pair = cand, pair
        if best is None or best_pair is None:  # set together
            raise UserError("no statistic applies to these outputs")
        rp, rn = (np.random.Generator(np.random.PCG64(s)) for s in cert_seq.spawn(2))
        bound = certify(
            best,
            sampled_chunks(best_pair.positive, self.samples, rp, on_chunk=bar.update),
            sampled_chunks(best_pair.negative, self.samples, rn, on_chunk=bar.update),
            self.confidence,
            self.delta,
            self.detectable_delta_at,
        )
        bar.close()
        return bound

    def _train(
        self,
        pair: HypothesisPair,
        n: int,
        seq: np.random.SeedSequence,
        alpha: float,
        bar: _Progress,
        pilot: bool = False,
    ) -> CandidateTest | None:
        """One pair's candidate test from ``n`` training releases per side; the pilot ranking of the pairs fits every
        statistic but the learned one (a classifier per pair only to rank the pairs: the finalists get it)."""
        rp, rn = (np.random.Generator(np.random.PCG64(s)) for s in seq.spawn(2))
        chunk = -(-n // TRAIN_CALLS)
        pos = np.concatenate(list(sampled_chunks(pair.positive, n, rp, chunk, bar.update)))
        neg = np.concatenate(list(sampled_chunks(pair.negative, n, rn, chunk, bar.update)))
        curve = self.claimed_mu is not None
        statistics = self.statistics
        if pilot:
            statistics = [s for s in statistics or search_statistics() if getattr(s, "shape", None) != "learned"]
        return fit_candidate(
            pair.label,
            pos,
            neg,
            self.samples,
            alpha,
            self.delta,
            statistics,
            self.two_sided_rates,
            curve,
            split_alpha(1.0 - self.confidence)[1] if curve else None,
        )


def _occam_key(
    ranked: Sequence[tuple[float, int, HypothesisPair]],
) -> Callable[[tuple[float, int, HypothesisPair]], tuple[int, float]]:
    """Sort key: by projected ε, but candidates within TIE_MARGIN of the best keep their given order
    (simpler canaries and statistics come first; near-ties are noise, not evidence)."""
    top = max(r[0] for r in ranked) if ranked else 0.0
    return lambda r: (0, r[1]) if r[0] >= top / (1.0 + TIE_MARGIN) else (1, -r[0])
