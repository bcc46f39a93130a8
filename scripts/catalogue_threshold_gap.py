"""What the threshold selection alone loses on a scalar catalogue release, against the best threshold test.

For one algorithm of ``pgc.catalogue`` whose release is one number (ReportNoisyMax3, ReportNoisyMax4) and one of its
named pairs, the release distributions are estimated from ``--draws`` outputs per side. The *best test* is the
threshold event (either tail) and α split whose expected counts at ``--samples`` certify the largest ε (exact
Clopper–Pearson, confidence 0.95); the *chosen test* is what :func:`audit.statistics.selection.choose_threshold`
picks from ``--train`` training releases per side (the audit's rule, two-sided rates), oriented as the audit's
projection orients it (by the sides' means), and its bound is read at the same expected counts. The gap between the
two medians over seeds is the threshold selection's share of what the audit misses; the rest is the pair race, the
choice among statistics and the certification's own noise. Usage, from the repository root:

    python scripts/catalogue_threshold_gap.py ReportNoisyMax3 "all below, swapped" --train 21692 10846 --seeds 20
"""

from __future__ import annotations

import argparse
import statistics
import sys

import numpy as np

from pgc.options import positive_int

SHARES = (0.1, 0.25, 0.5, 0.75, 0.9)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("algorithm")
    parser.add_argument("pair", help="one of the algorithm's named pairs")
    parser.add_argument("--train", type=positive_int, nargs="+", default=[21_692], help="training releases per side")
    parser.add_argument("--samples", type=positive_int, default=52_915, help="certification releases per side")
    parser.add_argument("--draws", type=positive_int, default=2_000_000, help="outputs per side for the rates")
    parser.add_argument("--seeds", type=positive_int, default=20)
    args = parser.parse_args(argv)
    from pgc.cli.main import report_exception

    try:
        return _run(args)
    except Exception as exc:  # bad input: one line (exit 2); a bug: the traceback (exit 3)
        return report_exception(exc, "catalogue_threshold_gap.py")


def expected_bound(pos: np.ndarray, neg: np.ndarray, threshold: float, share: float, n: int) -> float:
    """ε the event [s ≥ threshold] certifies at the expected counts of n releases per side (``pos``, ``neg``:
    sorted scores of many draws)."""
    from audit.certification import bounds

    tpr = 1.0 - np.searchsorted(pos, threshold) / pos.size
    fpr = 1.0 - np.searchsorted(neg, threshold) / neg.size
    fp_upper = bounds.cp_upper(round(fpr * n), n, share * 0.05)
    fn_upper = bounds.cp_upper(round((1.0 - tpr) * n), n, (1.0 - share) * 0.05)
    return max(0.0, float(bounds.epsilon_from_rates(fp_upper, fn_upper, 0.0)))


def _run(args: argparse.Namespace) -> int:
    from audit.statistics.selection import choose_threshold
    from pgc.catalogue import CHANNEL, catalogue_system
    from pgc.errors import UserError

    system = catalogue_system(args.algorithm)
    pairs = system.canaries()
    if args.pair not in pairs:
        raise UserError(f"{args.algorithm} has no pair {args.pair!r}; its pairs: {', '.join(pairs)}")
    secret, secret_prime = pairs[args.pair]
    rng = np.random.default_rng(np.random.SeedSequence(0))
    pos_draws = system.release(secret, args.draws, rng)[CHANNEL]
    neg_draws = system.release(secret_prime, args.draws, rng)[CHANNEL]
    if pos_draws.shape[1] != 1:
        raise UserError(f"{args.algorithm} releases {pos_draws.shape[1]} numbers; this script reads scalar releases")
    sign = 1.0 if pos_draws.mean() >= neg_draws.mean() else -1.0  # the projection's orientation
    pos, neg = np.sort(sign * pos_draws[:, 0]), np.sort(sign * neg_draws[:, 0])
    grid = np.quantile(pos, np.linspace(0.001, 0.999, 999))
    best = max(expected_bound(pos, neg, t, share, args.samples) for t in grid for share in SHARES)
    print(f"{args.algorithm}, {args.pair}: best threshold test at n = {args.samples:,}: ε {best:.3f}")
    for train in args.train:
        chosen = []
        for seed in range(args.seeds):
            draw = np.random.default_rng(np.random.SeedSequence([1, seed, train]))
            s_pos = sign * system.release(secret, train, draw)[CHANNEL][:, 0]
            s_neg = sign * system.release(secret_prime, train, draw)[CHANNEL][:, 0]
            threshold, share, _ = choose_threshold(s_pos, s_neg, args.samples, 0.05, 0.0, two_sided=True)
            chosen.append(expected_bound(pos, neg, threshold, share, args.samples))
        print(
            f"  chosen on {train:,} training releases per side: median ε {statistics.median(chosen):.3f} "
            f"({statistics.median(chosen) / best:.0%} of the best), range {min(chosen):.3f}–{max(chosen):.3f}, "
            f"{args.seeds} seeds"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
