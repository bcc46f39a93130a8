"""The paired certificate at the ε-DP boundary: how often it certifies more than the true ε, beside the split one.

For each ε and rate p′ of an event under x', the event's rate under x is the most ε-DP allows,
p = min(e^ε·p′, 1 − e^−ε·(1 − p′)), and ``--audits`` audits of n pairs each are drawn (the four pair types of one
release per side, multinomial). Each audit certifies by both certificates (:mod:`audit.certification.paired`; the
split one at its even α split, :func:`audit.certification.bounds.epsilon_lower_bound`): the table gives how often
each certifies more than ε (at most α for an exact certificate) and their median bounds. Usage, from the repository
root:

    python scripts/paired_certificate_validity.py --audits 20000 > results/certificate/paired-validity.md
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pgc.options import positive_int  # noqa: E402

EPSILONS = (0.1, 1.0)
SIZES = (500, 20_000)
ALPHA = 0.05


def rates(eps: float) -> tuple[float, ...]:
    """The x'-rates p′ of the grid: rare, common, the crossing 1/(1 + e^ε) where ψ_max is largest, and frequent."""
    return (0.001, 0.01, 0.1, 1.0 / (1.0 + math.exp(eps)), 0.6, 0.95)


def main(argv: list[str] | None = None) -> int:
    from audit.certification.bounds import epsilon_lower_bound
    from audit.certification.paired import paired_epsilon_lower_bound

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--audits", type=positive_int, default=20_000, help="audits per case")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    root = np.random.SeedSequence(args.seed)
    print(f"`python scripts/paired_certificate_validity.py --audits {args.audits} --seed {args.seed}`\n")
    print("| ε | p′ | n per side | paired: ε_LB > ε | split: ε_LB > ε | paired median ε_LB | split median ε_LB |")
    print("|---|---|---|---|---|---|---|")
    cases = [(eps, p, n) for eps in EPSILONS for p in rates(eps) for n in SIZES]
    for (eps, p_neg, n), seq in zip(cases, root.spawn(len(cases)), strict=True):
        rng = np.random.default_rng(seq)
        p_pos = min(math.exp(eps) * p_neg, 1.0 - math.exp(-eps) * (1.0 - p_neg))
        kinds = [p_pos * p_neg, p_pos * (1 - p_neg), (1 - p_pos) * p_neg, (1 - p_pos) * (1 - p_neg)]
        c = rng.multinomial(n, kinds, size=args.audits)
        hits, false_positives = c[:, 0] + c[:, 1], c[:, 0] + c[:, 2]
        paired = paired_epsilon_lower_bound(c[:, 1], c[:, 2], false_positives, n, ALPHA)
        split = epsilon_lower_bound(false_positives, n, n - hits, n, ALPHA, 0.0, 0.5)
        print(
            f"| {eps:g} | {p_neg:.3f} | {n:,} | {np.mean(paired > eps):.4f} | {np.mean(split > eps):.4f} "
            f"| {np.median(paired):.3f} | {np.median(split):.3f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
