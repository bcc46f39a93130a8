"""The named-pair race's ranking of SVT4's 16 pairs: each pair's held-out log-likelihood gain
(audit.engine.separability.held_out_log_likelihood_gain, the race's score) on N releases per side, over R draws,
as mean ± standard error in units of 10⁻⁴ nats per release. Usage, from the repository root:

    python results/catalogue/million/race_gains.py SVT4 40000 4
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from audit.engine.releases import AuditTarget
from audit.engine.separability import held_out_log_likelihood_gain
from pgc.catalogue import CHANNEL, catalogue_system
from pgc.options import positive_int


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("algorithm")
    parser.add_argument("n", type=positive_int, help="releases per side per draw")
    parser.add_argument("draws", type=positive_int)
    args = parser.parse_args()
    from pgc.cli.main import report_exception

    try:
        _run(args.algorithm, args.n, args.draws)
    except Exception as exc:  # bad input: one line (exit 2); a bug: the traceback (exit 3)
        return report_exception(exc, "race_gains.py")
    return 0


def _run(algorithm: str, n: int, draws: int) -> None:
    system = catalogue_system(algorithm)
    print(f"{algorithm}: held-out gain per pair on {n:,} releases per side, {draws} draws (10⁻⁴ nats per release)\n")
    print("| pair | mean | standard error |")
    print("|---|---|---|")
    for name, pair in system.canaries().items():
        target = AuditTarget(system, *pair, (CHANNEL,), False)
        gains = []
        for draw in range(draws):
            pos, neg = target.release_pair(n, np.random.SeedSequence(1000 + draw), None, [CHANNEL])
            gains.append(held_out_log_likelihood_gain(pos[CHANNEL], neg[CHANNEL]))
        print(f"| {name} | {np.mean(gains) * 1e4:.2f} | {np.std(gains) / np.sqrt(draws) * 1e4:.2f} |")


if __name__ == "__main__":
    sys.exit(main())
