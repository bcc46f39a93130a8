"""``pgc bench flower``: a Flower client audited through Flower's Message path, against a numpy reference.

1. **Adapter cost.** Flower's ``LocalDpMod`` at (ε, δ) on crafted updates ±C·e₁ (its sensitivity 2C,
   correct), audited at ``--samples`` per side through :class:`pgc.flower.FlowerClientSystem`, and the
   numpy reference of the same mod (:class:`pgc.flower.reference.NumpyLocalDp`) on the same streams:
   the rows must be identical; the wall-time ratio is the adapter's cost.
2. **Tightness.** The audit's threshold bound and curve bound against the oracle (the likelihood-ratio
   threshold test on the true output distributions at the same n and the same α share, its counts at
   their expectations), as ``pgc bench gaussian`` computes it. One audit's bound is one draw (its
   certification counts and its training split are random; the oracle's counts are expectations), so
   the ratio is also measured over ``--tightness-seeds`` audits at ``--samples`` per side of the numpy
   reference, which releases what Flower releases on the same streams (checked in 1 and 3).
3. **False alarms.** ``--seeds`` audits of the correct mod at ``--seed-samples`` per side through Flower:
   none may be flagged, and each row must equal the numpy reference's on the same seed.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from pgc.errors import UserError
from pgc.options import add_out, add_samples, positive_float, positive_int
from pgc.schemas.bench_library_results import (
    FlowerBench,
    FlowerFalseAlarms,
    FlowerOracle,
    OverOracle,
    OverOracleOverSeeds,
    RatioSpread,
    SeedRow,
)

from . import goals_exit

help = "a Flower LocalDpMod client audited through Flower vs the numpy reference of the same mod"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--epsilon", type=positive_float, default=1.0)
    p.add_argument("--delta", type=float, default=1e-5)
    add_samples(p, default=100_000, help="certification releases per side")
    p.add_argument("--seeds", type=positive_int, default=20, help="false-alarm audits through Flower (default 20)")
    p.add_argument("--seed-samples", type=positive_int, default=5_000, help="releases per side of each (default 5,000)")
    p.add_argument(
        "--tightness-seeds",
        type=positive_int,
        default=20,
        help="audits of the numpy reference at --samples per side for the audit/oracle ratio (default 20)",
    )
    add_out(p, help="JSON result file")


def oracle_bounds(sigma: float, clip: float, delta: float, n: int, alpha_threshold: float, alpha_curve: float) -> dict:
    """The best threshold ε bound and curve μ bound at the expected counts of the LR test of N(C, σ²) vs N(−C, σ²)."""
    from scipy.stats import norm

    from audit.certification.bounds import epsilon_lower_bound
    from audit.certification.curves import curve_epsilon, mu_lower_bound
    from audit.statistics.selection import FP_SHARES

    best_eps, best_mu = 0.0, 0.0
    for t in np.linspace(-clip, clip + 8 * sigma, 1201):
        fp, fn = round(norm.sf((t + clip) / sigma) * n), round(norm.cdf((t - clip) / sigma) * n)
        best_mu = max(best_mu, mu_lower_bound(fp, fn, n, n, alpha_curve))
        for share in FP_SHARES:
            best_eps = max(best_eps, float(epsilon_lower_bound(fp, n, fn, n, alpha_threshold, delta, share)))
    return FlowerOracle(threshold_epsilon=best_eps, mu=best_mu, curve_epsilon=curve_epsilon(best_mu, delta))


def run(args: argparse.Namespace) -> int:
    from audit.certification.curves import split_alpha
    from audit.engine.system_audit import audit_system
    from pgc.files import write_json_atomic
    from pgc.flower import local_dp_update_system
    from pgc.flower.reference import NumpyLocalDp

    if not (0.0 < args.delta < 1.0):
        raise UserError("--delta must lie in (0, 1)")
    flower = local_dp_update_system(args.epsilon, args.delta)
    reference = NumpyLocalDp(args.epsilon, args.delta)
    audits, walls = {}, {}
    for label, system in (("flower", flower), ("numpy reference", reference)):
        t0 = time.perf_counter()
        audits[label] = audit_system(system, "+", "-", samples=args.samples, seed=0, channels=["update"])
        walls[label] = time.perf_counter() - t0
        row = audits[label].rows[0]
        print(
            f"{label:16} {args.samples:,}/side: ε_LB {row.epsilon_lower_bound:.4f}, μ_LB {row.mu_lower_bound:.4f} "
            f"(curve ε {row.curve_epsilon:.4f}) vs claimed μ {row.claimed_mu:.4f}; {row.verdict}; "
            f"{walls[label]:.1f} s",
            flush=True,
        )
    a, b = audits["flower"].rows[0].to_dict(), audits["numpy reference"].rows[0].to_dict()
    identical = _same_row(a, b)
    ratio = walls["flower"] / walls["numpy reference"]
    print(f"identical rows: {identical}; Flower path / numpy reference wall time: {ratio:.1f}x")
    alpha_threshold, alpha_curve = split_alpha(1.0 - audits["flower"].confidence)
    oracle = oracle_bounds(
        reference.sigma, reference.clipping_norm, args.delta, args.samples, alpha_threshold, alpha_curve
    )
    if oracle.threshold_epsilon <= 0.0 or oracle.curve_epsilon <= 0.0:
        raise UserError(
            f"--samples {args.samples:,}: even the oracle test certifies nothing at this size (threshold ε "
            f"{oracle.threshold_epsilon:.3g}, curve ε {oracle.curve_epsilon:.3g}), so the audit/oracle ratio is "
            "undefined; give more samples per side"
        )
    row = audits["flower"].rows[0]
    tightness = OverOracle(
        threshold=row.epsilon_lower_bound / oracle.threshold_epsilon, curve=row.curve_epsilon / oracle.curve_epsilon
    )
    print(
        f"oracle at the same n and α shares: threshold ε {oracle.threshold_epsilon:.4f} (audit/oracle "
        f"{tightness.threshold:.3f}), curve ε {oracle.curve_epsilon:.4f} (audit/oracle {tightness.curve:.3f})"
    )
    over_seeds = _tightness_over_seeds(args, reference, oracle, audits["numpy reference"].rows[0])
    false_alarms, seeds_identical = _false_alarms(args, flower, reference)
    flagged = false_alarms.flagged
    identical = identical and seeds_identical
    result = FlowerBench(
        epsilon=args.epsilon,
        delta=args.delta,
        samples=args.samples,
        sigma=reference.sigma,
        true_epsilon=row.accountant_epsilon,
        wall_s=walls,
        adapter_over_reference=ratio,
        identical_rows=identical,
        rows={label: audit.rows[0] for label, audit in audits.items()},
        oracle=oracle,
        audit_over_oracle=tightness,
        audit_over_oracle_over_seeds=over_seeds,
        false_alarms=false_alarms,
        command=f"pgc bench flower --epsilon {args.epsilon:g} --delta {args.delta:g} --samples {args.samples} "
        f"--seeds {args.seeds} --seed-samples {args.seed_samples} --tightness-seeds {args.tightness_seeds}",
    )
    if args.out:
        write_json_atomic(Path(args.out), result.to_dict())
    return goals_exit(
        ([] if identical else ["the Flower adapter's rows differ from the numpy reference's (goal: identical)"])
        + ([f"{flagged} false alarm(s) over {args.seeds} seeds (goal: none)"] if flagged else [])
    )


COMPARED = (
    "epsilon_lower_bound",
    "delta_lower_bound",
    "mu_lower_bound",
    "curve_epsilon",
    "false_positives",
    "false_negatives",
    "curve_false_positives",
    "curve_false_negatives",
    "p_value",
    "verdict",
    "statistic",
    "accountant_epsilon",
    "detectable_epsilon",
)


def _same_row(a: dict, b: dict) -> bool:
    return all(a[k] == b[k] for k in COMPARED)


def _tightness_over_seeds(
    args: argparse.Namespace, reference, oracle: FlowerOracle, seed_zero_row
) -> OverOracleOverSeeds:
    """audit/oracle of ``--tightness-seeds`` audits of the numpy reference at ``--samples`` per side (seed 0's
    row is the one the bench already certified)."""
    from audit.engine.system_audit import audit_system

    ratios: dict[str, list[float]] = {"threshold": [], "curve": []}
    for seed in range(args.tightness_seeds):
        row = (
            seed_zero_row
            if seed == 0
            else audit_system(reference, "+", "-", samples=args.samples, seed=seed, channels=["update"]).rows[0]
        )
        ratios["threshold"].append(row.epsilon_lower_bound / oracle.threshold_epsilon)
        ratios["curve"].append(row.curve_epsilon / oracle.curve_epsilon)
    spread = {}
    for name, values in ratios.items():
        v = np.asarray(values)
        spread[name] = RatioSpread(
            mean=float(v.mean()),
            median=float(np.median(v)),
            min=float(v.min()),
            max=float(v.max()),
            share_at_least_09=float(np.mean(v >= 0.9)),
            ratios=values,
        )
        print(
            f"audit/oracle ({name}) over {args.tightness_seeds} seeds at {args.samples:,}/side: mean "
            f"{v.mean():.3f}, median {np.median(v):.3f}, range {v.min():.3f}-{v.max():.3f}, "
            f"≥ 0.9 in {int(np.sum(v >= 0.9))}/{v.size}",
            flush=True,
        )
    return OverOracleOverSeeds(
        seeds=args.tightness_seeds, samples=args.samples, threshold=spread["threshold"], curve=spread["curve"]
    )


def _false_alarms(args: argparse.Namespace, flower, reference) -> tuple[FlowerFalseAlarms, bool]:
    from audit.engine.system_audit import audit_system

    rows, identical = [], True
    for seed in range(1, args.seeds + 1):
        row = audit_system(flower, "+", "-", samples=args.seed_samples, seed=seed, channels=["update"]).rows[0]
        twin = audit_system(reference, "+", "-", samples=args.seed_samples, seed=seed, channels=["update"]).rows[0]
        identical = identical and _same_row(row.to_dict(), twin.to_dict())
        rows.append(
            SeedRow(
                seed=seed,
                verdict=row.verdict,
                epsilon_lower_bound=row.epsilon_lower_bound,
                mu_lower_bound=row.mu_lower_bound,
            )
        )
    flagged = sum(r.verdict == "violated" for r in rows)
    print(
        f"false alarms: {flagged}/{args.seeds} correct LocalDpMod audits through Flower flagged "
        f"({args.seed_samples:,}/side each); rows equal to the numpy reference's on every seed: {identical}"
    )
    result = FlowerFalseAlarms(
        false_alarm_seeds=args.seeds, false_alarm_samples=args.seed_samples, flagged=flagged, false_alarm_rows=rows
    )
    return result, identical
