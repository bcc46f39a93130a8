"""Laplace ε = 0.1 at 10^5 releases per side in total (training included): what the System audit certifies.

One scalar Laplace mechanism (sensitivity 1, scale 10) audited by ``audit_system`` at 80,000 certification releases
per side with the default training split (a quarter: 20,000, also the small-claim minimum), over several seeds; the
most any test can certify at that size is about 0.085. Usage:

    python scripts/laplace_small_epsilon.py --seeds 0 1 2 3 4 --out results/shapes/laplace-eps0.1.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from audit.engine.system_audit import audit_system
from pgc.contracts import PrivacyClaim
from pgc.files import write_json_atomic
from pgc.schemas.bench_results import LaplaceSmallEpsilon, SmallEpsilonCell

TOTAL = 100_000
SAMPLES = 80_000


class ScalarLaplace:
    name, channels = "laplace-eps0.1", ("y",)

    def __init__(self, epsilon: float = 0.1):
        self.epsilon, self.claim = epsilon, PrivacyClaim(epsilon, 0.0, ("y",))

    def release(self, secret, n, rng, *, broadcast=None):
        return {"y": secret + rng.laplace(0.0, 1.0 / self.epsilon, n)}


def audit_seeds(seeds: list[int], samples: int = SAMPLES, command: str = "") -> LaplaceSmallEpsilon:
    """The Laplace mechanism at ε = 0.1 audited once per seed at ``samples`` certification samples per side."""
    cells = []
    for seed in seeds:
        start = time.perf_counter()
        row = audit_system(ScalarLaplace(), 0.0, 1.0, samples=samples, seed=seed).rows[0]
        cells.append(
            SmallEpsilonCell(
                seed=seed,
                epsilon_lower_bound=row.epsilon_lower_bound,
                statistic=row.statistic,
                threshold=row.threshold,
                false_positives=row.false_positives,
                false_negatives=row.false_negatives,
                verdict=row.verdict,
                wall_s=round(time.perf_counter() - start, 2),
            )
        )
        print(f"seed {seed}: ε_LB {row.epsilon_lower_bound:.4f} [{row.statistic}]", flush=True)
    bounds = [c.epsilon_lower_bound for c in cells]
    return LaplaceSmallEpsilon(
        command=command,
        claimed_epsilon=0.1,
        total_per_side=round(samples * TOTAL / SAMPLES),  # the certification samples and the training split
        samples_per_side=samples,
        cells=cells,
        median=statistics.median(bounds),
        minimum=min(bounds),
        goal=0.08,
        at_least_goal=int(np.sum(np.asarray(bounds) >= 0.08)),
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    p.add_argument("--out", default="results/shapes/laplace-eps0.1.json")
    args = p.parse_args(argv)
    result = audit_seeds(args.seeds, command="python " + " ".join(sys.argv if argv is None else [__file__, *argv]))
    write_json_atomic(Path(args.out), result.to_dict())
    print(
        f"median {result.median:.4f}, min {result.minimum:.4f}; {result.at_least_goal} of {len(result.cells)} "
        f"≥ 0.08; wrote {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
