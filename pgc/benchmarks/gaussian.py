"""``pgc bench gaussian``: the Gaussian mechanism's certified ε_LB against the oracle bound in the same run.

The oracle is the exact likelihood-ratio threshold test on the TRUE output distributions (the canary
±G·e₁ clipped to ±C/2·e₁, so the first coordinate is N(±C/2, σ²)), with the same n per side and
Clopper–Pearson bounds at the expected error counts: the best bound a threshold test with n samples can
expect. The audit is the black-box canary audit (``audit_mechanism``, canary ±G·e₁, the statistic and
threshold chosen on its own training split, certified on n fresh samples) over several seeds.

A Gaussian's claim has a trade-off curve (μ-GDP), so the audit runs two tests at once and certifies its
threshold test at its share of α (:func:`audit.certification.curves.split_alpha`), the curve test at the rest. The goal
(mean ≥ 0.95 × the oracle) compares each audit with the oracle at the α its threshold test is certified at:
how close the statistic and threshold it selects come to the best ones. The oracle at the whole α is
printed beside it: the audit's bound against it also pays for the curve test (about 3 % at ε = 1).
Also: the Gaussian with σ/1.5 claiming (2, δ) (true ε ≈ 3.16) must be flagged.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from pgc.errors import UserError
from pgc.options import add_confidence, add_out, add_samples, positive_float, positive_int
from pgc.schemas.bench_results import GaussianBench, GaussianBenchRow, OracleBound, ShrunkNoise

from . import goals_exit

help = "Gaussian mechanism: certified ε_LB vs the oracle likelihood-ratio test (same n, Clopper–Pearson)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--epsilons", type=positive_float, nargs="+", default=[1.0, 2.0, 4.0])
    p.add_argument("--delta", type=float, default=1e-5)
    add_samples(p, default=1_000_000, help="certification samples per side")
    p.add_argument("--seeds", type=positive_int, default=5, help="audit seeds per ε (default 5)")
    p.add_argument("--dim", type=positive_int, default=112, help="gradient dimension (default 112)")
    add_confidence(p, default=0.95)
    add_out(p, help="JSON result file")


GOAL = 0.95  # mean audit bound / the oracle at the α of the audit's threshold test, at least


def oracle_bound(epsilon: float, delta: float, n: int, confidence: float, clip: float = 1.0) -> OracleBound:
    """The best certified ε at the expected counts of the LR test of N(C/2, σ²) vs N(−C/2, σ²)."""
    from scipy.stats import norm

    from audit.certification.bounds import epsilon_lower_bound
    from audit.statistics.selection import FP_SHARES
    from pgc.mechanisms.calibration import analytic_gaussian_sigma

    sigma = analytic_gaussian_sigma(epsilon, delta, clip)
    best = OracleBound(epsilon_lower_bound=0.0, threshold=0.0, fpr=1.0, fnr=1.0, fp_share=0.0)
    for t in np.linspace(-0.5 * clip, clip / 2 + 8 * sigma, 2001):
        fpr, fnr = norm.sf((t + clip / 2) / sigma), norm.cdf((t - clip / 2) / sigma)
        for share in FP_SHARES:
            eps = epsilon_lower_bound(round(fpr * n), n, round(fnr * n), n, 1 - confidence, delta, share)
            if eps > best.epsilon_lower_bound:
                best = OracleBound(
                    epsilon_lower_bound=float(eps), threshold=float(t), fpr=float(fpr), fnr=float(fnr), fp_share=share
                )
    return best


def run(args: argparse.Namespace) -> int:
    from audit.certification.curves import split_alpha
    from audit.engine.blackbox import audit_mechanism, canary_pairs
    from audit.selftest.mutants import GaussianNoiseShrunk
    from pgc.files import write_json_atomic
    from pgc.mechanisms import Gaussian

    if not (0.0 < args.delta < 1.0):
        raise UserError("--delta must lie in (0, 1)")
    rows, missed = [], []
    start = time.perf_counter()
    canary = canary_pairs(args.dim)[:1]  # ±G·e1: the oracle's pair
    test_confidence = 1.0 - split_alpha(1.0 - args.confidence)[0]  # the threshold test's share of α
    for eps in args.epsilons:
        row = _epsilon_row(args, eps, canary, test_confidence, audit_mechanism, Gaussian)
        rows.append(row)
        if row.ratio_mean_to_oracle < GOAL:
            missed.append(
                f"Gaussian ε={eps:g}: mean ε_LB {row.audit_mean:.3f} is {row.ratio_mean_to_oracle:.3f}"
                f"× the oracle at the test's α (goal ≥ {GOAL})"
            )
    shrunk = GaussianNoiseShrunk(2.0, args.delta, shrink=1.5)
    flagged = audit_mechanism(
        shrunk,
        dim=args.dim,
        samples=args.samples,
        confidence=args.confidence,
        seed=0,
        canaries=canary,
        delta_test_samples=0,
        train_fraction=1.0,
    )
    if flagged.verdict != "violated":
        missed.append(f"σ/1.5 claiming (2, {args.delta:g}) judged {flagged.verdict} (goal: violated)")
    print(
        f"σ/1.5 claiming (2, {args.delta:g}) (true ε {shrunk.true_epsilon(args.dim):.3f}): ε_LB "
        f"{flagged.epsilon_lower_bound:.3f} -> {flagged.verdict.upper()}"
    )
    if args.out:
        result = GaussianBench(
            samples=args.samples,
            confidence=args.confidence,
            threshold_test_confidence=test_confidence,
            goal=GOAL,
            dim=args.dim,
            seeds=args.seeds,
            rows=rows,
            shrunk=ShrunkNoise(
                claim=[2.0, args.delta],
                true_epsilon=shrunk.true_epsilon(args.dim),
                epsilon_lower_bound=flagged.epsilon_lower_bound,
                verdict=flagged.verdict,
            ),
            wall_time_s=time.perf_counter() - start,
            command=f"pgc bench gaussian --epsilons {' '.join(f'{e:g}' for e in args.epsilons)} --delta "
            f"{args.delta:g} --samples {args.samples} --seeds {args.seeds} --dim {args.dim} --out {args.out}",
        )
        write_json_atomic(Path(args.out), result.to_dict())
    return goals_exit(missed)


def _epsilon_row(args, eps: float, canary, test_confidence: float, audit_mechanism, gaussian) -> GaussianBenchRow:
    """One ε: the audits over seeds, the oracle at the threshold test's α and at the whole α."""
    oracle = oracle_bound(eps, args.delta, args.samples, test_confidence)
    whole = oracle_bound(eps, args.delta, args.samples, args.confidence)
    bounds, walls = [], []
    for seed in range(args.seeds):
        t0 = time.perf_counter()
        res = audit_mechanism(
            gaussian(eps, args.delta),
            dim=args.dim,
            samples=args.samples,
            confidence=args.confidence,
            seed=seed,
            canaries=canary,
            delta_test_samples=0,
            train_fraction=1.0,
        )
        walls.append(time.perf_counter() - t0)
        bounds.append(res.epsilon_lower_bound)
    mean = float(np.mean(bounds))
    ratio = mean / oracle.epsilon_lower_bound
    print(
        f"Gaussian ε={eps:g} δ={args.delta:g}, n={args.samples:,}/side: oracle ε_LB "
        f"{oracle.epsilon_lower_bound:.3f} at the threshold test's α ({whole.epsilon_lower_bound:.3f} at the "
        f"whole α); audit {', '.join(f'{b:.3f}' for b in bounds)} (mean {mean:.3f}, {ratio:.3f}× the oracle, goal "
        f"≥ {GOAL}; {mean / whole.epsilon_lower_bound:.3f}× at the whole α); accountant ε "
        f"{res.accountant_epsilon:.4f}; {np.mean(walls):.1f}s per audit",
        flush=True,
    )
    return GaussianBenchRow(
        epsilon=eps,
        delta=args.delta,
        oracle=oracle,
        oracle_whole_alpha=whole,
        audit_bounds=bounds,
        audit_mean=mean,
        ratio_mean_to_oracle=ratio,
        ratio_mean_to_oracle_whole_alpha=mean / whole.epsilon_lower_bound,
        ratios=[b / oracle.epsilon_lower_bound for b in bounds],
        accountant_epsilon=res.accountant_epsilon,
        wall_s_per_audit=float(np.mean(walls)),
    )
