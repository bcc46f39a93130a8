"""The one-run audit of any System: ε_LB from the M canaries of one real run.

The canaries' observed releases (channel → (M, k) arrays, from a system's adapter: PGC-A3C's is
:func:`pgc.a3c.transcript.transcript_releases`) and their true coins go in; the guesses come only from
releases the auditor simulates through the System contract, and the bound from
:mod:`audit.one_run.bounds` (Steinke, Nasr & Jagielski 2023, Theorem 3).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from audit.one_run.bounds import (
    best_guess_count,
    binned_log_ratio,
    correct_among_top,
    epsilon_lower_bound,
    fdp_epsilon_lower_bound,
    fdp_epsilon_p_value,
    fdp_mu_lower_bound,
    fdp_p_value,
    guess_canaries,
    max_certifiable_epsilon,
    one_run_p_value,
)
from audit.power.measured import one_run_detectable_epsilon
from audit.verdicts import judge
from pgc.contracts import HasJointLayout
from pgc.errors import UserError
from pgc.schemas.audit_rows import OneRunRow
from pgc.schemas.channels import ChannelFamily, ChannelKind

ONE_RUN_CHANNELS = ("gradient", "score", "all")
MAX_SIMULATED_BROADCASTS = 16  # live canaries: distinct θ versions the auditor simulates at (pooled)


def oriented_log_ratio(train_pos: np.ndarray, train_neg: np.ndarray, bins: int = 64):
    """:func:`binned_log_ratio` for a score of either orientation (the one whose medians agree with it)."""
    sign = 1.0 if np.median(train_pos) >= np.median(train_neg) else -1.0
    fitted = binned_log_ratio(sign * np.asarray(train_pos), sign * np.asarray(train_neg), bins)
    return lambda scores: fitted(sign * np.asarray(scores, np.float64))


def simulate_pooled(
    system, secret, n: int, broadcasts: Sequence, rng: np.random.Generator, channels: Sequence[str]
) -> dict[str, np.ndarray]:
    """n releases of ``secret``, split evenly over ``broadcasts`` (the models the canaries played)."""
    parts = [n // len(broadcasts) + (1 if i < n % len(broadcasts) else 0) for i in range(len(broadcasts))]
    outs = [system.release(secret, m, rng, broadcast=b) for b, m in zip(broadcasts, parts, strict=True) if m > 0]
    return {
        ch: np.concatenate([np.asarray(o[ch], dtype=np.float64).reshape(len(o[ch]), -1) for o in outs])
        for ch in channels
    }


def one_run_audit(
    system,
    secret,
    secret_prime,
    observed: dict[str, np.ndarray],
    truth: np.ndarray,
    broadcasts: Sequence,
    *,
    channels: Sequence[str] = ONE_RUN_CHANNELS,
    samples: int | None = None,
    seed: int = 0,
    confidence: float = 0.95,
    scope: str | None = None,
) -> list[OneRunRow]:
    """One judged row per channel: ε_LB of the one-run theorem from guesses on the M canaries ``observed``.

    ``observed[ch]``: (M, k) releases of the canaries (each played ``secret`` or ``secret_prime`` by a
    fair coin); ``truth``: the coins (1 = ``secret_prime``), used only to count correct guesses after
    every choice is made. Everything the guesses depend on comes from the system's own releases at
    ``broadcasts`` (``samples`` per side, default max(40,000, 4M)): half fits a statistic per channel
    (:func:`audit.certification.tester.fit_candidate`, the multi-sample audit's selection), a quarter calibrates its
    log-likelihood ratio, a quarter plays M simulated canaries with the auditor's coins, on which r is
    chosen (:func:`best_guess_count`).
    """
    from audit.engine.system_audit import ReadClaims, channel_kinds, checked_system

    base, claim = checked_system(system)
    read = ReadClaims.of(system, claim, channels, base)  # the claim, read once for every channel
    truth = np.asarray(truth, dtype=np.int64)
    m = int(truth.size)
    if m < 10:
        raise UserError(f"a one-run audit needs at least 10 canaries, got {m}")
    samples = int(samples or max(40_000, 4 * m))
    alpha = 1.0 - confidence
    root = np.random.SeedSequence(seed)
    pos_rng, neg_rng, coin_rng = (np.random.Generator(np.random.PCG64(s)) for s in root.spawn(3))
    layout = tuple(system.joint_layout) if "all" in channels and isinstance(system, HasJointLayout) else ()
    drawn = list(channels) + [c for c in layout if c not in channels]
    # ---- the system's own releases at the canaries' broadcasts, both sides ----
    sim_pos = simulate_pooled(system, secret_prime, samples, broadcasts, pos_rng, drawn)
    sim_neg = simulate_pooled(system, secret, samples, broadcasts, neg_rng, drawn)
    # the simulated releases are in broadcast order: shuffle before splitting so every split sees every θ
    for sim, rng in ((sim_pos, pos_rng), (sim_neg, neg_rng)):
        perm = rng.permutation(samples)
        for ch in drawn:
            sim[ch] = sim[ch][perm]
    n_fit, n_cal = samples // 2, samples // 4
    fit_sl, cal_sl, sel_sl = slice(0, n_fit), slice(n_fit, n_fit + n_cal), slice(n_fit + n_cal, samples)
    claims = read.claims
    # ---- a statistic per channel (fit half), its calibrated log-likelihood ratio (calibration quarter) ----
    labels = {ch: f"{secret} vs {secret_prime} [{ch}, one-run]" for ch in channels}
    tests, ratios, summed = _fit_one_run_ratios(
        {ch: sim_pos[ch][fit_sl] for ch in sim_pos},
        {ch: sim_neg[ch][fit_sl] for ch in sim_neg},
        {ch: sim_pos[ch][cal_sl] for ch in channels},
        {ch: sim_neg[ch][cal_sl] for ch in channels},
        channels,
        layout,
        m,
        confidence,
        {ch: claims[ch][1] for ch in channels},
        labels,
    )
    # ---- r and the ratio chosen on M simulated canaries; then the real canaries are guessed and counted ----
    n_sel = min(samples - n_fit - n_cal, m)
    sim_coins = coin_rng.integers(0, 2, size=n_sel)
    rows, kinds = [], channel_kinds(system, channels)
    for ch in channels:
        sim_out = np.where(sim_coins[:, None] == 1, sim_pos[ch][sel_sl][:n_sel], sim_neg[ch][sel_sl][:n_sel])
        options = ratios[ch] if isinstance(ratios[ch], list) else [ratios[ch]]
        names = [tests[ch].statistic, f"sum of {' and '.join(summed)} ratios"]
        fields = _one_run_row(
            options, names, sim_out, sim_coins, observed[ch], truth, claims[ch], alpha, read.per_channel[ch].gdp_mu
        )
        rows.append(
            one_run_row(
                ch,
                {**fields, "samples_per_side": samples},
                covered=read.covered[ch],
                confidence=confidence,
                scope=scope,
                partly_covered=(ch in read.partly_covered) or None,
                **kinds[ch].fields(),
            )
        )
    return rows


def _one_run_row(
    options: list,
    names: list[str],
    sim_out: np.ndarray,
    sim_coins: np.ndarray,
    observed: np.ndarray,
    truth: np.ndarray,
    claim: tuple,
    alpha: float,
    claimed_mu: float | None = None,
) -> dict:
    """One channel: the ratio and r chosen on the simulated canaries, then the real canaries guessed and counted.

    A claim with a μ-GDP curve gets both one-run bounds, each at α/2 (fixed before the data): Steinke–Nasr–
    Jagielski's ε and the f-DP bounds of Mahloujifar et al. (ε_LB at δ through the (ε, δ) curve and μ_LB, α/4
    each: :func:`_fdp_bounds`); the row's ε_LB is the larger ε, its p-value the Bonferroni minimum."""
    claimed, delta = float(claim[0]), float(claim[1])
    m, n_sel = int(truth.size), int(sim_coins.size)
    if claimed_mu is not None:
        alpha /= 2.0
    picked = []
    for log_ratio in options:  # choose the ratio and r on the simulated canaries only
        g_sim, o_sim = guess_canaries(log_ratio(sim_out))
        picked.append((*best_guess_count(g_sim, o_sim, sim_coins, n_sel, alpha=alpha, delta=delta), log_ratio))
    r_sim, eps_sim, llr = max(picked, key=lambda item: item[1])
    statistic = names[0] if llr is options[0] else names[1]
    r = max(1, min(m, int(round(r_sim * m / n_sel))))
    guesses, order = guess_canaries(llr(np.asarray(observed, dtype=np.float64)))
    correct = int(correct_among_top(guesses, order, truth)[r])
    steinke = epsilon_lower_bound(m, r, correct, alpha=alpha, delta=delta)
    p_value = one_run_p_value(m, r, correct, claimed, delta) if math.isfinite(claimed) else 1.0
    row = {
        "claimed_epsilon": claimed,
        "claimed_delta": delta,
        "epsilon_lower_bound": steinke,
        "canaries": m,
        "guesses": r,
        "correct": correct,
        "accuracy": correct / r,
        "p_value": p_value,
        "p_value_leak": one_run_p_value(m, r, correct, 0.0, delta),
        "statistic": statistic,
        "test_confidence": 1.0 - alpha,
        "max_certifiable_epsilon": max_certifiable_epsilon(m, alpha=alpha, delta=delta),
        "simulated_epsilon_lower_bound": eps_sim,
    }
    if claimed_mu is not None:
        row.update(_fdp_bounds(row, alpha, claimed_mu))
    return row


def one_run_row(
    channel: str, fields: dict, *, covered: bool, confidence: float, scope: str | None = None, **context
) -> OneRunRow:
    """A one-run audit's judged row: its bounds, the power of its r guesses
    (:func:`audit.power.measured.one_run_detectable_epsilon`, at the Steinke bound's α) and the one verdict
    rule. No point-mass search runs in a one-run audit."""
    fields = dict(fields)
    if "fdp_mu_lower_bound" in fields:
        fields["mu_lower_bound"] = fields.pop("fdp_mu_lower_bound")
    row = OneRunRow.make(
        channel=channel,
        covered=covered,
        confidence=confidence,
        scope=scope,
        point_mass_search=False,
        **fields,
        **context,
    )
    eps = row.claimed_epsilon
    detectable = (
        one_run_detectable_epsilon(
            row.canaries, row.guesses, 1.0 - (row.test_confidence or confidence), row.claimed_delta or 0.0, eps
        )
        if covered and eps is not None and math.isfinite(eps)
        else None
    )
    row = row.updated(
        detectable_epsilon=detectable,
        power_basis="the one-run audit's r guesses under a leak of ε (audit.power.measured)",
    )
    return judge(row)


def _fdp_bounds(steinke: dict, alpha: float, claimed_mu: float | None) -> dict:
    """The f-DP one-run bounds beside Steinke et al.'s row ``steinke`` (its counts, claim, ε_LB and p-values), on the
    f-DP half ``alpha`` of the row's α: ε_LB at δ through the (ε, δ) curve's own recursion, and μ_LB through the
    μ-GDP curve, judged against a claimed μ only (a falsified Gaussian curve says nothing of the (ε, δ) claim:
    :mod:`audit.one_run.bounds`). With a claimed μ the two are two tests of the claim, at ``alpha``/2 each; without
    one μ_LB judges nothing and ε_LB takes ``alpha``. The row's p-values of "the claim holds" and of "no leak"
    (ε = 0) are the Bonferroni minimum over its tests (Steinke's at the row's other half)."""
    m, r, correct = steinke["canaries"], steinke["guesses"], steinke["correct"]
    claimed, delta = steinke["claimed_epsilon"], steinke["claimed_delta"]
    tests = 2 if claimed_mu is not None else 1
    mu_lb = fdp_mu_lower_bound(m, r, correct, alpha=alpha / tests)
    fdp_eps = fdp_epsilon_lower_bound(m, r, correct, alpha=alpha / tests, delta=delta)
    p_values = [2.0 * steinke["p_value"]]
    if math.isfinite(claimed):
        p_values.append(2.0 * tests * fdp_epsilon_p_value(m, r, correct, claimed, delta))
    if claimed_mu is not None:
        p_values.append(2.0 * tests * fdp_p_value(m, r, correct, claimed_mu))
    leak = 2.0 * tests * fdp_epsilon_p_value(m, r, correct, 0.0, delta)
    return {
        "claimed_mu": claimed_mu,
        "p_value_leak": min(1.0, 2.0 * steinke["p_value_leak"], leak),
        "fdp_mu_lower_bound": mu_lb,
        "fdp_epsilon_lower_bound": fdp_eps,
        "steinke_epsilon_lower_bound": steinke["epsilon_lower_bound"],
        "epsilon_lower_bound": max(steinke["epsilon_lower_bound"], fdp_eps),
        "p_value": min(1.0, *p_values),
        "bounds": "Steinke–Nasr–Jagielski at α/2 and f-DP (Mahloujifar et al.) at α/2"
        + (", its ε and μ tests α/4 each" if claimed_mu is not None else ""),
    }


def _fit_one_run_ratios(
    fit_pos: dict,
    fit_neg: dict,
    cal_pos: dict,
    cal_neg: dict,
    channels: Sequence[str],
    layout: tuple,
    m: int,
    confidence: float,
    deltas: dict,
    labels: dict,
):
    """Per channel: the fitted test and its calibrated log-likelihood ratio (for the joint channel, also
    the sum of its audited parts' ratios), and the parts summed."""
    from audit.engine.releases import channel_groups, fit_channel_tests, joint_statistics

    # the joint channel's column groups, in the order the system assembles it (its joint_layout)
    groups = dict(zip(layout, channel_groups([fit_pos[c].shape[1] for c in layout]), strict=True))

    def statistics_for(ch: str):
        return None if ch != "all" or not groups else joint_statistics(tuple(groups.values()))

    tests = fit_channel_tests(
        {ch: fit_pos[ch] for ch in channels},
        {ch: fit_neg[ch] for ch in channels},
        channels,
        m,
        confidence,
        deltas,
        labels,
        statistics_for,
    )
    ratios = {ch: _calibrated(tests[ch].scorer, cal_pos[ch], cal_neg[ch]) for ch in channels}
    summed = [c for c in groups if c in channels and c != "all"]
    if len(summed) > 1:
        # the joint channel: besides its own statistic, the sum of its audited parts' calibrated log-likelihood
        # ratios (their noises independent given the secret); the one that certifies more on the simulated
        # canaries is kept
        ratios["all"] = [ratios["all"][0], _summed_ratio([(ratios[c][0], groups[c]) for c in summed])]
    return tests, ratios, summed


def _summed_ratio(parts: list):
    """x ↦ Σ ratio(x[:, columns]) over (ratio, columns) parts: a joint release scored by its parts."""
    return lambda x: sum(ratio(x[:, columns]) for ratio, columns in parts)


def _calibrated(scorer, pos: np.ndarray, neg: np.ndarray):
    """x ↦ the calibrated log-likelihood ratio of the statistic's score (the list form: its options)."""
    fitted = oriented_log_ratio(scorer(pos), scorer(neg))
    return [lambda x: fitted(scorer(x))]


def one_run_scores_audit(
    scores: np.ndarray,
    truth: np.ndarray,
    simulated: np.ndarray,
    simulated_truth: np.ndarray,
    *,
    centre: float,
    claimed_epsilon: float,
    claimed_delta: float,
    claimed_mu: float | None,
    confidence: float = 0.95,
    channel: str = "aggregate",
    scope: str | None = None,
    kind: ChannelKind | None = None,
) -> OneRunRow:
    """The one-run bounds from canary scores that an observer computed (higher: more likely coin 1).

    The guesses are the canaries whose score lies farthest from ``centre`` (above: coin 1, below: coin 0);
    how many (r) is chosen on ``simulated`` scores with known coins (the observer's promised noise), never
    on the real coins. Steinke et al.'s ε and the f-DP bounds (Mahloujifar et al.: :func:`_fdp_bounds`) each take
    α/2; the headline ε_LB is the larger of Steinke's and the f-DP recursion's through the (ε, δ) curve.
    An observer promised only a curve is held to the ε it implies at δ. ``kind``: the channel's kind (default: one
    submission of a channel of no family)."""
    from audit.certification.curves import gdp_epsilon

    truth = np.asarray(truth, dtype=np.int64)
    m = int(truth.size)
    alpha = (1.0 - confidence) / 2.0
    delta = float(claimed_delta or 0.0)
    r, _ = best_guess_count(
        *guess_canaries(np.asarray(simulated) - centre), np.asarray(simulated_truth), m, alpha=alpha, delta=delta
    )
    guesses, order = guess_canaries(np.asarray(scores, dtype=np.float64) - centre)
    correct = int(correct_among_top(guesses, order, truth)[r])
    if claimed_epsilon is None and claimed_mu is not None:
        claimed_epsilon = gdp_epsilon(claimed_delta, claimed_mu)
    covered = claimed_epsilon is not None and math.isfinite(claimed_epsilon)
    claimed = float(claimed_epsilon) if covered else math.inf
    steinke = epsilon_lower_bound(m, r, correct, alpha=alpha, delta=delta)
    fields = {
        "claimed_epsilon": claimed,
        "claimed_delta": delta,
        "epsilon_lower_bound": steinke,
        "canaries": m,
        "guesses": int(r),
        "correct": correct,
        "accuracy": correct / max(r, 1),
        "p_value": one_run_p_value(m, r, correct, claimed, delta) if covered else 1.0,
        "p_value_leak": one_run_p_value(m, r, correct, 0.0, delta),
        "test_confidence": 1.0 - alpha,
        "max_certifiable_epsilon": max_certifiable_epsilon(m, alpha=alpha, delta=delta),
    }
    fields.update(_fdp_bounds(fields, alpha, claimed_mu))
    kind = kind or ChannelKind.single(ChannelFamily.OTHER, channel)
    return one_run_row(channel, fields, covered=covered, confidence=confidence, scope=scope, **kind.fields())
