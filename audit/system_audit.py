"""Audit any locally private system through one contract (:class:`audit.interfaces.System`).

``audit_system(system, secret, secret_prime)`` answers, per channel of what the aggregator sees: does
the system's (ε, δ) claim hold for these two neighbouring secrets, and what does the channel leak?

Protocol (the α of every bound is spent once, on fresh samples):

1. **Broadcast.** Honest: ``broadcast`` (None = the system's default). Adversarial: the system's own
   crafted family (``crafted_broadcasts``) where it has one, else CMA-ES (the ``cmaes`` package) over
   its ``broadcast_space``; either way the candidates are ranked on a SEARCH stream of releases, per
   channel, by the bound each would project (:func:`audit.selection.choose_threshold`).
2. **Select.** For each broadcast kept, a TRAINING split of releases per side (drawn in several calls,
   so that noise reused from call to call shows) fits every candidate statistic per channel and picks
   one statistic, threshold and α split per channel (:func:`audit.tester.fit_candidate`).
3. **Certify.** FRESH releases per side, drawn in chunks; each channel's chosen test is counted on
   them, and the counts give ε_LB at the claimed δ and δ_LB at the claimed ε (the same two
   Clopper–Pearson rate bounds hold jointly with probability ≥ 1 − α, so both hold together; and
   ε_LB > ε ⇔ δ_LB > δ for one set of counts).

Channels: every channel the system releases, and ``all`` (every channel jointly: the columns side by
side, unless the system returns its own ``all``; covered when every channel is). A channel the claim
does not cover is *unprotected*. Row verdicts: a covered channel is ``violated`` when ε_LB exceeds
the claimed ε (equivalently δ_LB the claimed δ); an uncovered one is an ``unprotected channel`` when
it leaks at all (ε_LB > 0), whatever its size, since no claim bounds it; else ``consistent`` — each at
the stated confidence on its own. The result's ``verdict`` looks at all rows together with Holm's step-down procedure
(statsmodels ``multipletests``) on the rows' p-values of "the claim holds"; then, over the uncovered
rows, of "no leak".

Beside every claim with δ > 0 the accountant (:mod:`audit.accountant`) gives the ε(δ) of the noise the
system says it adds (``dp_event()``), and each row shows the Gaussian-DP estimate μ̂ (an estimate
assuming a Gaussian trade-off curve; never used for a verdict).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
from optim import cmaes_maximize
from systems.contract import ALL, PrivacyClaim

from . import bounds
from .accountant import accountant_epsilon, gdp_mu_estimate
from .progress import progress_bar
from .statistics import ChannelSumLikelihoodRatio, LaplaceLogLikelihood, default_statistics
from .tester import (CHUNK, TRAIN_CALLS, CandidateTest, EpsilonBound, bound_from_counts, count_accepts,
                     fit_candidate)

SEARCH_SAMPLES = 2_000  # releases per side per candidate broadcast on the search stream
SEARCH_GENERATIONS = 10  # CMA-ES generations over broadcast_space
SEARCH_POPULATION = 8
RELATIVE_RESOLUTION_BITS = 30  # releases are rounded to 30 significant bits unless float_exact


def round_significant(values: np.ndarray, bits: int = RELATIVE_RESOLUTION_BITS) -> np.ndarray:
    """Each value rounded to ``bits`` significant bits (post-processing: a bound on the rounded releases
    holds for the system). It blinds the statistics to the last bits of floating-point noise, whose
    pattern depends on the noiseless value (Mironov 2012): the audit then measures the mechanism's
    arithmetic. ``float_exact=True`` audits the exact bits instead."""
    mantissa, exponent = np.frexp(values)
    return np.ldexp(np.round(mantissa * 2.0**bits) / 2.0**bits, exponent)


def check_system(system: Any) -> tuple[str, ...]:
    """The system's channels (without ``all``); a clear ValueError when it does not meet the contract."""
    missing = [k for k in ("name", "claim", "channels", "release") if not hasattr(system, k)]
    if missing:
        raise ValueError(f"{type(system).__name__} is not a System: it lacks {', '.join(missing)}")
    if not callable(system.release):
        raise ValueError(f"{system.name}: release must be callable")
    PrivacyClaim.of(system.claim)
    channels = tuple(system.channels)
    if not channels or not all(isinstance(c, str) and c for c in channels) or len(set(channels)) != len(channels):
        raise ValueError(f"{system.name}: channels must be distinct non-empty names, got {channels!r}")
    return tuple(c for c in channels if c != ALL)


def claim_for(system: Any, channel: str) -> tuple[float, float]:
    """(ε, δ) claimed for one channel: the system's ``claim_for(channel)`` where it has one, else its claim."""
    claim = PrivacyClaim.of(system.claim_for(channel) if callable(getattr(system, "claim_for", None)) else system.claim)
    return float(claim.epsilon), float(claim.delta)


def is_covered(system: Any, channel: str, base_channels: Sequence[str]) -> bool:
    return PrivacyClaim.of(system.claim).covering(channel, tuple(base_channels))


# ---------------------------------------------------------------------------------------------
# Drawing releases
# ---------------------------------------------------------------------------------------------


def draw_releases(system: Any, secret: Any, n: int, rng: np.random.Generator, broadcast: Any,
                  channels: Sequence[str], base_channels: Sequence[str], float_exact: bool = False) -> dict[str, np.ndarray]:
    """n releases of ``secret``: the requested channels as (n, k) float64 arrays (``all`` assembled from
    the base channels in order when the system does not return one), rounded by :func:`round_significant`
    unless ``float_exact``."""
    out = system.release(secret, n, rng, broadcast=broadcast)
    if not isinstance(out, Mapping):
        raise ValueError(f"{system.name}.release must return a mapping channel -> array, got {type(out).__name__}")
    arrays: dict[str, np.ndarray] = {}
    need = set(channels) | (set(base_channels) if ALL in channels and ALL not in out else set())
    for name in need - {ALL} | ({ALL} if ALL in out and ALL in channels else set()):
        if name not in out:
            raise ValueError(f"{system.name}.release returned no channel {name!r} (got {sorted(out)})")
        arr = np.asarray(out[name], dtype=np.float64)
        if arr.ndim == 1:
            arr = arr[:, None]
        if arr.ndim != 2 or arr.shape[0] != n:
            raise ValueError(f"{system.name}.release: channel {name!r} has shape {arr.shape}, expected ({n}, k)")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{system.name}.release: channel {name!r} holds NaN or inf")
        arrays[name] = arr if float_exact else round_significant(arr)
    if ALL in channels and ALL not in arrays:
        arrays[ALL] = np.concatenate([arrays[c] for c in base_channels], axis=1)
    return {c: arrays[c] for c in channels}


def channel_groups(widths: Sequence[int]) -> tuple[slice, ...]:
    edges = np.concatenate([[0], np.cumsum(widths)]).astype(int)
    return tuple(slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]))


def joint_statistics(groups: Sequence[slice]) -> list:
    """Candidate statistics of a joint channel: the defaults, the scaled Laplace log-likelihood ratio and
    the sum of each channel's calibrated likelihood ratio (channels on very different scales)."""
    return default_statistics() + [LaplaceLogLikelihood(scaled=True), ChannelSumLikelihoodRatio(groups)]


# ---------------------------------------------------------------------------------------------
# Select on training data, certify on fresh data: many channels over the same releases
# ---------------------------------------------------------------------------------------------


def fit_channel_tests(train_pos: Mapping[str, np.ndarray], train_neg: Mapping[str, np.ndarray],
                      channels: Sequence[str], n_cert: int, confidence: float, deltas: Mapping[str, float],
                      labels: Mapping[str, str],
                      statistics_for: Callable[[str], Sequence | None] = lambda channel: None,
                      two_sided_rates: bool = True) -> dict[str, CandidateTest]:
    """One chosen test per channel, from the training split only."""
    alpha = 1.0 - confidence
    tests = {}
    for ch in channels:
        cand = fit_candidate(labels[ch], train_pos[ch], train_neg[ch], n_cert, alpha, deltas[ch], statistics_for(ch),
                             two_sided_rates)
        if cand is None:
            raise ValueError(f"no statistic applies to channel {ch!r}")
        tests[ch] = cand
    return tests


def certify_channel_tests(tests: Mapping[str, CandidateTest], chunks_pos: Iterable[Mapping[str, np.ndarray]],
                          chunks_neg: Iterable[Mapping[str, np.ndarray]], confidence: float,
                          deltas: Mapping[str, float], detectable_at: Mapping[str, float]) -> dict[str, EpsilonBound]:
    """Count every channel's test on the same fresh chunks of releases; one bound per channel."""
    accepts = {ch: [0, 0, 0, 0] for ch in tests}  # tp, n_pos, fp, n_neg
    for side, chunks in ((0, chunks_pos), (2, chunks_neg)):
        for chunk in chunks:
            for ch, test in tests.items():
                hits, total = count_accepts(test, [chunk[ch]])
                accepts[ch][side] += hits
                accepts[ch][side + 1] += total
    return {ch: bound_from_counts(test, *accepts[ch], confidence, deltas[ch], detectable_at[ch])
            for ch, test in tests.items()}


# ---------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SystemAuditRow:
    channel: str
    claimed_epsilon: float
    claimed_delta: float
    epsilon_lower_bound: float  # at the claimed δ
    delta_lower_bound: float  # at the claimed ε
    p_value: float  # of H0 "the claim holds on this channel"
    verdict: str
    statistic: str
    samples_per_side: int
    max_certifiable_epsilon: float
    confidence: float
    covered: bool
    false_positives: int
    false_negatives: int
    fp_share: float
    p_value_leak: float  # of H0 "the channel does not leak" (ε ≤ 0)
    accountant_epsilon: float | None = None
    gdp_mu_estimate: float | None = None
    broadcast: str = "honest"
    holm_rejected: bool = False

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class SystemAuditResult:
    system: str
    secret: str
    secret_prime: str
    pair: str | None
    broadcast: str  # honest | given | crafted | searched
    claim: dict
    confidence: float
    samples_per_side: int
    seed: int
    rows: list[SystemAuditRow]
    verdict: str
    accountant: dict | None
    wall_time_s: float
    broadcasts: dict = field(default_factory=dict, repr=False)  # label -> the broadcast value certified at
    report_section: str | None = None  # the system's own report section (its ``report_section``), if any

    def row(self, channel: str) -> SystemAuditRow:
        for r in self.rows:
            if r.channel == channel:
                return r
        raise KeyError(channel)

    def to_dict(self) -> dict:
        return {"kind": "system-audit", "format_version": 1, "system": self.system, "pair": self.pair,
                "secret": self.secret, "secret_prime": self.secret_prime, "broadcast": self.broadcast,
                "claim": self.claim, "confidence": self.confidence, "samples_per_side": self.samples_per_side,
                "seed": self.seed, "rows": [r.to_dict() for r in self.rows], "verdict": self.verdict,
                "accountant": self.accountant, "wall_time_s": self.wall_time_s,
                **({"report_section": self.report_section} if self.report_section else {})}


def row_verdict(claimed_epsilon: float, epsilon_lb: float, covered: bool, delta_lb: float = 0.0,
                claimed_delta: float = 0.0, *, held_to_claim: bool = False) -> str:
    """The one verdict rule of a certified row.

    A covered channel is ``violated`` when a bound exceeds the claim (ε_LB > ε, or δ_LB > δ at the claimed
    ε). A channel the claim does not cover is an ``unprotected channel`` when it leaks at all (ε_LB > 0),
    whatever its size — unless ``held_to_claim``: a participant whose whole release is promised the claim
    (PGC-A3C's agent: ε per submission) is ``violated`` by an uncovered channel that leaks more than it.
    Else ``consistent``."""
    if covered or held_to_claim:
        if epsilon_lb > claimed_epsilon or (covered and delta_lb > claimed_delta):
            return "violated"
    if not covered and epsilon_lb > 0:
        return "unprotected channel"
    return "consistent"


def holm_verdict(rows: Sequence[SystemAuditRow], alpha: float) -> tuple[str, list[bool]]:
    """The overall verdict with Holm's procedure: over the covered rows' p-values of "the claim holds"
    (violated), then over the uncovered rows' p-values of "no leak" (unprotected channel). Returns the
    verdict and, per row, whether Holm rejects its claim."""
    from statsmodels.stats.multitest import multipletests

    covered = [r for r in rows if r.covered]
    flags = list(multipletests([r.p_value for r in covered], alpha=alpha, method="holm")[0]) if covered else []
    by_row = dict(zip((id(r) for r in covered), flags))
    rejected = [bool(by_row.get(id(r), False)) for r in rows]
    if any(rejected):
        return "violated", rejected
    uncovered = [r for r in rows if not r.covered]
    if uncovered and any(multipletests([r.p_value_leak for r in uncovered], alpha=alpha, method="holm")[0]):
        return "unprotected channel", rejected
    return "consistent", rejected


def make_rows(bounds_by_channel: Mapping[str, EpsilonBound], claims: Mapping[str, tuple[float, float]],
              covered: Mapping[str, bool], confidence: float, accountant: Mapping[str, float | None],
              broadcast_labels: Mapping[str, str]) -> tuple[list[SystemAuditRow], str]:
    """The rows of a system audit and the overall verdict (Holm over the rows)."""
    alpha = 1.0 - confidence
    rows = []
    for ch, b in bounds_by_channel.items():
        eps, delta = claims[ch]
        n = b.samples_per_side
        delta_lb = (bounds.delta_lower_bound(b.false_positives, n, b.false_negatives, n, alpha, eps, b.fp_share)
                    if math.isfinite(eps) else 0.0)
        p = bounds.claim_p_value(b.false_positives, n, b.false_negatives, n, eps, delta, b.fp_share)
        p_leak = bounds.claim_p_value(b.false_positives, n, b.false_negatives, n, 0.0, delta, b.fp_share)
        mu = gdp_mu_estimate(b.fpr_upper, b.fnr_upper) if delta > 0 else None
        rows.append(SystemAuditRow(
            ch, eps, delta, b.epsilon_lower_bound, delta_lb, p, row_verdict(eps, b.epsilon_lower_bound, covered[ch],
                                                                             delta_lb, delta),
            b.statistic, n, b.max_certifiable_epsilon, confidence, covered[ch], b.false_positives,
            b.false_negatives, b.fp_share, p_leak, accountant.get(ch), mu, broadcast_labels.get(ch, "honest")))
    verdict, rejected = holm_verdict(rows, alpha)
    return [SystemAuditRow(**{**r.__dict__, "holm_rejected": bool(x)}) for r, x in zip(rows, rejected)], verdict


def system_accountant(system: Any, channels: Sequence[str], claims: Mapping[str, tuple[float, float]],
                      covered: Mapping[str, bool]) -> tuple[dict[str, float | None], dict | None]:
    """ε at each covered channel's claimed δ of the noise the system says it adds (``dp_event`` /
    ``dp_event_for``), and a summary for the claim itself; None where the system gives no event or δ = 0."""
    per_channel: dict[str, float | None] = {}
    summary = None
    event_for = getattr(system, "dp_event_for", None)
    base = system.dp_event() if callable(getattr(system, "dp_event", None)) else None
    if base is not None and system.claim.delta > 0:
        summary = {"epsilon": accountant_epsilon(base, system.claim.delta), "delta": float(system.claim.delta),
                   "description": str(base)}
    for ch in channels:
        delta = claims[ch][1]
        event = event_for(ch) if callable(event_for) else base
        per_channel[ch] = (accountant_epsilon(event, delta) if event is not None and delta > 0 and covered[ch]
                           else None)
    return per_channel, summary


# ---------------------------------------------------------------------------------------------
# Adversarial broadcasts
# ---------------------------------------------------------------------------------------------


def release_pair(system, secret, secret_prime, n: int, seq: np.random.SeedSequence, broadcast, channels, base,
                 float_exact: bool = False) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """n releases of each secret from the two fixed children of ``seq`` (not spawned: every call with the
    same ``seq`` draws the same numbers, so candidates compared on one ``seq`` share common random numbers)."""
    rp, rn = (np.random.Generator(np.random.PCG64(np.random.SeedSequence(seq.entropy, spawn_key=seq.spawn_key + (i,))))
              for i in (0, 1))
    return (draw_releases(system, secret, n, rp, broadcast, channels, base, float_exact),
            draw_releases(system, secret_prime, n, rn, broadcast, channels, base, float_exact))


def _projected_by_channel(system, secret, secret_prime, broadcast, channels, base, n, seq, n_cert, confidence,
                          deltas, float_exact) -> dict[str, float]:
    pos, neg = release_pair(system, secret, secret_prime, n, seq, broadcast, channels, base, float_exact)
    out = {}
    for ch in channels:
        cand = fit_candidate(ch, pos[ch], neg[ch], n_cert, 1.0 - confidence, deltas[ch], two_sided_rates=True)
        out[ch] = 0.0 if cand is None else float(cand.projected_epsilon)
    return out


def mean_separation(pos: np.ndarray, neg: np.ndarray) -> float:
    """Σ_j (mean difference of column j)² / (its pooled variance): a smooth measure of how far apart two
    release distributions are, informative even where no threshold test yet projects a bound."""
    var = 0.5 * (pos.var(axis=0) + neg.var(axis=0))
    diff = pos.mean(axis=0) - neg.mean(axis=0)
    return float(np.sum(np.where(var > 0, diff**2 / np.where(var > 0, var, 1.0), np.where(diff != 0, 1e12, 0.0))))


def search_broadcast_space(system, secret, secret_prime, channels, base, seq: np.random.SeedSequence, *,
                           n: int, generations: int = SEARCH_GENERATIONS, population: int = SEARCH_POPULATION,
                           float_exact: bool = False, progress: bool = False) -> np.ndarray:
    """CMA-ES over the system's ``broadcast_space`` box for the broadcast whose releases lie furthest
    apart (:func:`mean_separation`) on any of ``channels`` (common random numbers within a generation;
    search stream only)."""
    lower, upper = (np.asarray(x, dtype=np.float64) for x in system.broadcast_space)
    if lower.shape != upper.shape or lower.ndim != 1 or not np.all(lower < upper):
        raise ValueError(f"{system.name}.broadcast_space must be two 1-D arrays with lower < upper")
    init_seq, gen_seq = seq.spawn(2)
    rng = np.random.Generator(np.random.PCG64(init_seq))
    mean = rng.uniform(lower, upper)
    seed = int(rng.integers(2**31))
    gens = gen_seq.spawn(generations)  # one stream per generation: its candidates share common random numbers

    def separation(x: np.ndarray, generation: int) -> float:
        pos, neg = release_pair(system, secret, secret_prime, n, gens[generation], x, channels, base, float_exact)
        return max(mean_separation(pos[ch], neg[ch]) for ch in channels)

    bar = progress_bar(len(gens), "generation", f"searching {system.name}'s broadcast space (CMA-ES)", progress)
    found = cmaes_maximize(separation, mean, float(np.max(upper - lower)) / 4.0, generations=generations,
                           population=population, seed=seed, bounds=np.stack([lower, upper], axis=1),
                           on_generation=lambda generation, best: bar.update(1))
    bar.close()
    return np.asarray(found.best_x)


# ---------------------------------------------------------------------------------------------
# The entry point
# ---------------------------------------------------------------------------------------------


def audit_system(system: Any, secret: Any, secret_prime: Any, *, samples: int = 100_000, seed: int = 0,
                 confidence: float = 0.95, broadcast: Any = None, adversarial: bool = False,
                 channels: Sequence[str] | None = None, train_fraction: float = 0.25,
                 search_samples: int = SEARCH_SAMPLES, search_generations: int = SEARCH_GENERATIONS,
                 pair: str | None = None, float_exact: bool = False, progress: bool = False) -> SystemAuditResult:
    """Certified ε and δ lower bounds per channel of ``system`` for ``secret`` vs ``secret_prime``
    (see the module docstring). ``samples``: certification releases per side; ``float_exact``: audit the
    releases' exact bits (default: rounded to 30 significant bits, :func:`round_significant`)."""
    start = time.perf_counter()
    base = check_system(system)
    if not isinstance(samples, (int, np.integer)) or isinstance(samples, bool) or samples < 100:
        raise ValueError(f"samples must be an integer >= 100, got {samples!r}")
    if not (0.0 < confidence < 1.0):
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    if not (0.0 < train_fraction <= 1.0):
        raise ValueError(f"train_fraction must lie in (0, 1], got {train_fraction!r}")
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if adversarial and broadcast is not None:
        raise ValueError("give either a broadcast or adversarial=True, not both")
    known = list(base) + [ALL]
    wanted = known if channels is None else list(dict.fromkeys(channels))
    unknown = [c for c in wanted if c not in known]
    if unknown or not wanted:
        raise ValueError(f"unknown or no channels {unknown or wanted}; {system.name} has: {', '.join(known)}")
    claims = {ch: claim_for(system, ch) for ch in wanted}
    deltas = {ch: claims[ch][1] for ch in wanted}
    covered = {ch: is_covered(system, ch, base) for ch in wanted}
    detectable_at = {ch: claims[ch][0] if math.isfinite(claims[ch][0]) else 0.0 for ch in wanted}
    n_train = max(1_000, int(train_fraction * samples))
    root = np.random.SeedSequence(seed)
    search_seq, train_seq, cert_seq = root.spawn(3)

    # 1. the broadcast(s): honest, given, or the adversary's candidates ranked per channel on the search stream
    if not adversarial:
        candidates = [("given" if broadcast is not None else "honest", broadcast)]
    elif callable(getattr(system, "crafted_broadcasts", None)):
        crafted_seq, rank_seq = search_seq.spawn(2)
        crafted = system.crafted_broadcasts(secret, secret_prime, np.random.Generator(np.random.PCG64(crafted_seq)))
        candidates = [(f"crafted-{i}", b) for i, b in enumerate(crafted)]
        if not candidates:
            raise ValueError(f"{system.name}.crafted_broadcasts returned no broadcast")
    elif getattr(system, "broadcast_space", None) is not None:
        space_seq, rank_seq = search_seq.spawn(2)
        # what could break the claim: the covered channels (an unprotected one leaks whatever is sent)
        targets = [ch for ch in wanted if covered[ch] and ch != ALL] or [ch for ch in wanted if ch != ALL] or wanted
        found = search_broadcast_space(system, secret, secret_prime, targets, base, space_seq, n=search_samples,
                                       generations=search_generations, float_exact=float_exact, progress=progress)
        candidates = [("searched", found), ("honest", None)]
    else:
        raise ValueError(f"{system.name} offers no crafted_broadcasts and no broadcast_space: "
                         "an adversarial audit has nothing to search")
    choice = {ch: 0 for ch in wanted}
    if len(candidates) > 1:
        scores = [_projected_by_channel(system, secret, secret_prime, b, wanted, base, search_samples, rank_seq,
                                        samples, confidence, deltas, float_exact) for _, b in candidates]
        choice = {ch: int(np.argmax([s[ch] for s in scores])) for ch in wanted}
    broadcast_kind = ("given" if broadcast is not None else "honest") if not adversarial else (
        "crafted" if candidates[0][0].startswith("crafted") else "searched")

    # 2.-3. per broadcast kept: select on a training split, certify on fresh releases
    bounds_by_channel: dict[str, EpsilonBound] = {}
    used = sorted(set(choice.values()))
    train_seqs, cert_seqs = train_seq.spawn(len(candidates)), cert_seq.spawn(len(candidates))
    bar = progress_bar(2 * len(used) * (n_train + samples), "release", f"auditing {system.name}", progress)
    for index in used:
        label, value = candidates[index]
        group = [ch for ch in wanted if choice[ch] == index]
        tp, tn = (np.random.Generator(np.random.PCG64(s)) for s in train_seqs[index].spawn(2))
        extra = [c for c in base if c not in group] if ALL in group else []
        train = []
        for side_secret, rng in ((secret, tp), (secret_prime, tn)):
            calls = [draw_releases(system, side_secret, m, rng, value, group + extra, base, float_exact)
                     for m in _split(n_train, TRAIN_CALLS)]
            train.append({ch: np.concatenate([c[ch] for c in calls]) for ch in group + extra})
            bar.update(n_train)
        own_joint = ALL in tuple(system.channels)  # the system assembles its own joint channel
        groups = channel_groups([train[0][c].shape[1] for c in base]) if ALL in group and not own_joint else None

        def statistics_for(ch: str):
            if ch != ALL or len(base) < 2:
                return None
            return joint_statistics(groups) if groups is not None else default_statistics() + [
                LaplaceLogLikelihood(scaled=True)]

        labels = {ch: f"{describe_secret(system, secret)} vs {describe_secret(system, secret_prime)} [{ch}]" for ch in group}
        tests = fit_channel_tests(train[0], train[1], group, samples, confidence, deltas, labels, statistics_for)
        cp, cn = (np.random.Generator(np.random.PCG64(s)) for s in cert_seqs[index].spawn(2))

        def chunks(side_secret, rng):
            for m in _split(samples, max(1, -(-samples // CHUNK))):
                yield draw_releases(system, side_secret, m, rng, value, group, base, float_exact)
                bar.update(m)

        bounds_by_channel.update(certify_channel_tests(tests, chunks(secret, cp), chunks(secret_prime, cn),
                                                       confidence, deltas, detectable_at))
    bar.close()
    ordered = {ch: bounds_by_channel[ch] for ch in wanted}
    per_channel_accountant, accountant = system_accountant(system, wanted, claims, covered)
    labels_by_channel = {ch: candidates[choice[ch]][0] for ch in wanted}
    rows, verdict = make_rows(ordered, claims, covered, confidence, per_channel_accountant, labels_by_channel)
    claim = {"epsilon": float(system.claim.epsilon), "delta": float(system.claim.delta),
             "covers": list(system.claim.covers)}
    return SystemAuditResult(system.name, describe_secret(system, secret), describe_secret(system, secret_prime), pair,
                             broadcast_kind, claim, confidence, int(samples), int(seed), rows, verdict, accountant,
                             time.perf_counter() - start,
                             {candidates[i][0]: candidates[i][1] for i in used},
                             getattr(system, "report_section", None))


def _split(n: int, parts: int) -> list[int]:
    size = -(-n // parts)
    return [min(size, n - i) for i in range(0, n, size)]


def describe_secret(system: Any, secret: Any, limit: int = 80) -> str:
    """The system's ``describe_secret(secret)``, else the secret's repr on one line, cut to ``limit`` characters."""
    describe = getattr(system, "describe_secret", None)
    text = str(describe(secret)) if callable(describe) else " ".join(repr(secret).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
