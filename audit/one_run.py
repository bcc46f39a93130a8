"""The one-run audit's bound: ε_LB from (M canaries, r guesses, v correct) (pure functions).

Steinke, Nasr & Jagielski, "Privacy Auditing with One (1) Training Run" (2023), Theorem 3: M canaries,
each included (here: playing ψ′ instead of ψ) by an independent fair coin; an auditor guesses r of the
coins from the output of an (ε, δ)-DP algorithm and abstains on the rest. Then the number W of correct
guesses satisfies

    P[W ≥ v] ≤ P[Binomial(r, q) ≥ v] + 2Mδ · max_{i=1..v} P[v − i ≤ Binomial(r, q) < v] / i,
    q = e^ε / (1 + e^ε)

(the δ = 0 case is the ε-DP statement: the tail of ε-randomized response). The p-value of an (ε, δ)
claim is that right-hand side; ε_LB at confidence 1 − α is the largest ε whose p-value is still ≤ α
(the p-value grows with ε, so it is found by bisection). :func:`epsilon_lower_bound` is checked against
jax-privacy's ``auditing._epsilon_one_run`` in ``tests/test_one_run_bound.py``.

:func:`guess_canaries` ranks canaries by confidence and guesses on the r most confident;
:func:`best_guess_count` picks r on samples the auditor simulated itself.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy import stats

EPSILON_CEILING = 60.0  # search ceiling for ε_LB (q = expit(60) is 1 to double precision)


def _check_counts(canaries: int, guesses: int, correct: int) -> None:
    for name, value in (("canaries", canaries), ("guesses", guesses), ("correct", correct)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    if not 0 <= correct <= guesses <= canaries:
        raise ValueError(f"need 0 <= correct <= guesses <= canaries, got {correct}, {guesses}, {canaries}")


def randomized_response_accuracy(epsilon: float) -> float:
    """q = e^ε / (1 + e^ε): the best accuracy an ε-DP guess of a fair coin can have."""
    return float(1.0 / (1.0 + math.exp(-epsilon)))


def one_run_p_value(canaries: int, guesses: int, correct: int, epsilon: float, delta: float = 0.0) -> float:
    """P[≥ ``correct`` of ``guesses`` right] under an (ε, δ)-DP claim (Steinke et al. 2023, Theorem 3)."""
    _check_counts(canaries, guesses, correct)
    if not (epsilon >= 0 and 0 <= delta <= 1):
        raise ValueError(f"need epsilon >= 0 and delta in [0, 1], got {epsilon!r}, {delta!r}")
    q = randomized_response_accuracy(epsilon)
    tail = float(stats.binom.sf(correct - 1, guesses, q))  # P[Binomial(r, q) ≥ v]
    if delta == 0 or correct == 0:
        return min(tail, 1.0)
    i = np.arange(1, correct + 1)
    # P[v − i ≤ Binomial(r, q) < v] = P[B ≥ v − i] − P[B ≥ v]
    window = stats.binom.sf(correct - i - 1, guesses, q) - tail
    return float(min(tail + 2.0 * canaries * delta * float(np.max(window / i)), 1.0))


def epsilon_lower_bound(canaries: int, guesses: int, correct: int, *, alpha: float = 0.05, delta: float = 0.0,
                        tolerance: float = 1e-7) -> float:
    """ε_LB: the largest ε whose (ε, δ) claim the guesses refute at level ``alpha`` (0 when none is)."""
    _check_counts(canaries, guesses, correct)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    if guesses == 0 or one_run_p_value(canaries, guesses, correct, 0.0, delta) > alpha:
        return 0.0
    lo, hi = 0.0, 1.0
    while hi < EPSILON_CEILING and one_run_p_value(canaries, guesses, correct, hi, delta) <= alpha:
        lo, hi = hi, 2.0 * hi
    hi = min(hi, EPSILON_CEILING)
    while hi - lo > tolerance:
        mid = 0.5 * (lo + hi)
        if one_run_p_value(canaries, guesses, correct, mid, delta) <= alpha:
            lo = mid
        else:
            hi = mid
    return lo


def guess_canaries(log_ratio: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Guesses (1: ψ′, 0: ψ) from each canary's estimated log-likelihood ratio log p(x|ψ′)/p(x|ψ), and the
    order of confidence (most confident first; ties keep the canaries' order)."""
    llr = np.asarray(log_ratio, dtype=np.float64)
    if llr.ndim != 1 or not np.all(np.isfinite(llr)):
        raise ValueError("log_ratio must be a finite 1-d array")
    return (llr > 0).astype(np.int8), np.argsort(-np.abs(llr), kind="stable")


def correct_among_top(guesses: np.ndarray, order: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Correct guesses among the r most confident, for r = 0..M (length M + 1)."""
    hits = (np.asarray(guesses)[order] == np.asarray(truth)[order]).astype(np.int64)
    return np.concatenate([[0], np.cumsum(hits)])


def candidate_guess_counts(canaries: int, count: int = 60) -> np.ndarray:
    """r on a geometric grid from 10 (or M) to M."""
    low = min(10, canaries)
    return np.unique(np.round(np.geomspace(low, canaries, count)).astype(np.int64))


def best_guess_count(guesses: np.ndarray, order: np.ndarray, truth: np.ndarray, canaries: int, *,
                     alpha: float = 0.05, delta: float = 0.0, grid: Sequence[int] | None = None) -> tuple[int, float]:
    """The r of ``grid`` whose guesses on these (simulated) canaries give the largest ε_LB, and that ε_LB.

    Run it on canaries the auditor simulated itself: the r it returns is then fixed before the real
    canaries are looked at."""
    grid = candidate_guess_counts(canaries) if grid is None else np.asarray(grid, dtype=np.int64)
    correct = correct_among_top(guesses, order, truth)
    best = (int(grid[-1]), -1.0)
    for r in grid:
        r = int(min(r, len(order)))
        eps = epsilon_lower_bound(canaries, r, int(correct[r]), alpha=alpha, delta=delta)
        if eps > best[1]:
            best = (r, eps)
    return best


def binned_log_ratio(train_pos: np.ndarray, train_neg: np.ndarray, bins: int = 64):
    """A function score ↦ estimated log p(score|ψ′)/p(score|ψ), from scores of simulated releases: quantile
    bins of the pooled scores, log((n′ + ½)/(n + ½)) per bin, made monotone (pooled adjacent violators)
    when the score is a likelihood-ratio-like statistic that grows with ψ′."""
    pos, neg = np.asarray(train_pos, np.float64), np.asarray(train_neg, np.float64)
    edges = np.unique(np.quantile(np.concatenate([pos, neg]), np.linspace(0, 1, bins + 1)[1:-1]))
    n_pos = np.bincount(np.searchsorted(edges, pos, side="right"), minlength=edges.size + 1).astype(np.float64)
    n_neg = np.bincount(np.searchsorted(edges, neg, side="right"), minlength=edges.size + 1).astype(np.float64)
    llr = _isotonic(np.log((n_pos + 0.5) / (n_neg + 0.5)) + math.log(max(neg.size, 1) / max(pos.size, 1)),
                    n_pos + n_neg)

    def log_ratio(scores: np.ndarray) -> np.ndarray:
        return llr[np.searchsorted(edges, np.asarray(scores, np.float64), side="right")]

    return log_ratio


def _isotonic(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Non-decreasing least-squares fit (pool adjacent violators)."""
    blocks: list[list[float]] = []  # [mean, weight, count]
    for v, w in zip(values, np.maximum(weights, 1e-12)):
        blocks.append([float(v), float(w), 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            v2, w2, c2 = blocks.pop()
            v1, w1, c1 = blocks.pop()
            blocks.append([(v1 * w1 + v2 * w2) / (w1 + w2), w1 + w2, c1 + c2])
    return np.concatenate([np.full(c, v) for v, _, c in blocks])


# ---------------------------------------------------------------------------------------------
# The audit: statistics fitted on the auditor's own simulated releases, applied to the canaries
# ---------------------------------------------------------------------------------------------

ONE_RUN_CHANNELS = ("gradient", "score", "all")
MAX_SIMULATED_BROADCASTS = 16  # live canaries: distinct θ versions the auditor simulates at (pooled)


def oriented_log_ratio(train_pos: np.ndarray, train_neg: np.ndarray, bins: int = 64):
    """:func:`binned_log_ratio` for a score of either orientation (the one whose medians agree with it)."""
    sign = 1.0 if np.median(train_pos) >= np.median(train_neg) else -1.0
    fitted = binned_log_ratio(sign * np.asarray(train_pos), sign * np.asarray(train_neg), bins)
    return lambda scores: fitted(sign * np.asarray(scores, np.float64))


def transcript_releases(transcript, positions: np.ndarray) -> dict[str, np.ndarray]:
    """The canaries' submissions as the aggregator saw them, in the channels of
    :class:`audit.pgc_system.PGCA3CSystem` (``all`` = score, arrival − start, gradient, as float32)."""
    grad = np.asarray(transcript.gradient[positions], dtype=np.float32)
    score = np.asarray(transcript.score[positions], dtype=np.float64)[:, None]
    arrival = np.asarray(transcript.arrival_tick[positions] - transcript.start_tick[positions], np.float64)[:, None]
    return {"gradient": grad.astype(np.float64), "score": score,
            "all": np.concatenate([score, arrival, grad], axis=1).astype(np.float32).astype(np.float64)}


def simulate_pooled(system, secret, n: int, broadcasts: Sequence, rng: np.random.Generator,
                    channels: Sequence[str]) -> dict[str, np.ndarray]:
    """n releases of ``secret``, split evenly over ``broadcasts`` (the models the canaries played)."""
    parts = [n // len(broadcasts) + (1 if i < n % len(broadcasts) else 0) for i in range(len(broadcasts))]
    outs = [system.release(secret, m, rng, broadcast=b) for b, m in zip(broadcasts, parts) if m > 0]
    return {ch: np.concatenate([np.asarray(o[ch], dtype=np.float64).reshape(len(o[ch]), -1) for o in outs])
            for ch in channels}


def observed_width(observed: dict[str, np.ndarray], channel: str) -> int:
    arr = np.asarray(observed.get(channel, np.zeros((0, 3))))
    return arr.shape[1] if arr.ndim == 2 else 1


def one_run_audit(system, secret, secret_prime, observed: dict[str, np.ndarray], truth: np.ndarray,
                  broadcasts: Sequence, *, channels: Sequence[str] = ONE_RUN_CHANNELS, samples: int | None = None,
                  seed: int = 0, confidence: float = 0.95) -> list[dict]:
    """One row per channel: ε_LB of the one-run theorem from guesses on the M canaries ``observed``.

    ``observed[ch]``: (M, k) releases of the canaries (each played ``secret`` or ``secret_prime`` by a
    fair coin); ``truth``: the coins (1 = ``secret_prime``), used only to count correct guesses after
    every choice is made. Everything the guesses depend on comes from the system's own releases at
    ``broadcasts`` (``samples`` per side, default max(40,000, 4M)): half fits a statistic per channel
    (:func:`audit.tester.fit_candidate`, the multi-sample audit's selection), a quarter calibrates its
    log-likelihood ratio, a quarter plays M simulated canaries with the auditor's coins, on which r is
    chosen (:func:`best_guess_count`).
    """
    from .system_audit import channel_groups, claim_for, fit_channel_tests, joint_statistics

    truth = np.asarray(truth, dtype=np.int64)
    m = int(truth.size)
    if m < 10:
        raise ValueError(f"a one-run audit needs at least 10 canaries, got {m}")
    samples = int(samples or max(40_000, 4 * m))
    alpha = 1.0 - confidence
    root = np.random.SeedSequence(seed)
    pos_rng, neg_rng, coin_rng = (np.random.Generator(np.random.PCG64(s)) for s in root.spawn(3))
    sim_pos = simulate_pooled(system, secret_prime, samples, broadcasts, pos_rng, channels)
    sim_neg = simulate_pooled(system, secret, samples, broadcasts, neg_rng, channels)
    # the simulated releases are in broadcast order: shuffle before splitting so every split sees every θ
    for sim, rng in ((sim_pos, pos_rng), (sim_neg, neg_rng)):
        perm = rng.permutation(samples)
        for ch in channels:
            sim[ch] = sim[ch][perm]
    n_fit, n_cal = samples // 2, samples // 4
    fit_sl, cal_sl, sel_sl = slice(0, n_fit), slice(n_fit, n_fit + n_cal), slice(n_fit + n_cal, samples)
    claims = {ch: claim_for(system, ch) for ch in channels}
    widths = [1, 1, observed_width(observed, "all") - 2]  # all = score, arrival, gradient

    def statistics_for(ch: str):
        return None if ch != "all" else joint_statistics(channel_groups(widths))

    labels = {ch: f"{secret} vs {secret_prime} [{ch}, one-run]" for ch in channels}
    tests = fit_channel_tests({ch: sim_pos[ch][fit_sl] for ch in channels},
                              {ch: sim_neg[ch][fit_sl] for ch in channels}, channels, m, confidence,
                              {ch: claims[ch][1] for ch in channels}, labels, statistics_for)
    n_sel = min(samples - n_fit - n_cal, m)
    sim_coins = coin_rng.integers(0, 2, size=n_sel)
    ratios = {ch: _calibrated(tests[ch].scorer, sim_pos[ch][cal_sl], sim_neg[ch][cal_sl]) for ch in channels}
    if "all" in channels and "gradient" in channels and "score" in channels:
        # the joint channel (score, arrival, gradient): besides its own statistic, the sum of the score's
        # and the gradient's calibrated log-likelihood ratios (their noises are independent given the
        # episode); the one of the two that certifies more on the simulated canaries is kept
        ratios["all"] = [ratios["all"][0], lambda x: ratios["score"][0](x[:, :1]) + ratios["gradient"][0](x[:, 2:])]
    rows = []
    for ch in channels:
        delta = float(claims[ch][1])
        sim_out = np.where(sim_coins[:, None] == 1, sim_pos[ch][sel_sl][:n_sel], sim_neg[ch][sel_sl][:n_sel])
        options = ratios[ch] if isinstance(ratios[ch], list) else [ratios[ch]]
        picked = []
        for log_ratio in options:  # choose the ratio and r on the simulated canaries only
            g_sim, o_sim = guess_canaries(log_ratio(sim_out))
            picked.append((*best_guess_count(g_sim, o_sim, sim_coins, n_sel, alpha=alpha, delta=delta), log_ratio))
        r_sim, eps_sim, llr = max(picked, key=lambda item: item[1])
        statistic = tests[ch].statistic if llr is options[0] else "sum of score and gradient ratios"
        r = max(1, min(m, int(round(r_sim * m / n_sel))))
        guesses, order = guess_canaries(llr(np.asarray(observed[ch], dtype=np.float64)))
        correct = int(correct_among_top(guesses, order, truth)[r])
        eps_lb = epsilon_lower_bound(m, r, correct, alpha=alpha, delta=delta)
        claimed = float(claims[ch][0])
        rows.append({"channel": ch, "claimed_epsilon": claimed, "claimed_delta": delta, "epsilon_lower_bound": eps_lb,
                     "canaries": m, "guesses": r, "correct": correct, "accuracy": correct / r,
                     "p_value": one_run_p_value(m, r, correct, claimed, delta) if math.isfinite(claimed) else 1.0,
                     "statistic": statistic, "simulated_epsilon_lower_bound": eps_sim,
                     "max_certifiable_epsilon": max_certifiable_epsilon(m, alpha=alpha, delta=delta),
                     "samples_per_side": samples})
    return rows


def _calibrated(scorer, pos: np.ndarray, neg: np.ndarray):
    """x ↦ the calibrated log-likelihood ratio of the statistic's score (the list form: its options)."""
    fitted = oriented_log_ratio(scorer(pos), scorer(neg))
    return [lambda x: fitted(scorer(x))]


def max_certifiable_epsilon(canaries: int, *, alpha: float = 0.05, delta: float = 0.0) -> float:
    """The largest ε_LB M canaries can give: every guess right, at the best r."""
    return max(epsilon_lower_bound(canaries, int(r), int(r), alpha=alpha, delta=delta)
               for r in candidate_guess_counts(canaries))
