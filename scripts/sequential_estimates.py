"""How good is the time estimate ``--samples auto`` prints before it starts? For several registered systems: the
estimate of ``audit.certification.sequential.estimate_seconds`` (two probe audits after a warm-up release) for the
stages that
then ran, beside their wall time. The goal: within 2× either way, compile time apart.

    .venv/bin/python scripts/sequential_estimates.py --out results/audit/sequential-estimates.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from audit.certification.sequential import audit_system_until_decisive, estimate_seconds, stage_sizes  # noqa: E402
from pgc.schemas.bench_study_results import SequentialEstimate, SequentialEstimates  # noqa: E402
from pgc.systems.registry import make_system  # noqa: E402

CASES = [  # (registered system, settings, budget per side)
    ("toy-oue", {"epsilon": 0.25}, 1_000_000),
    ("toy-grr", {"epsilon": 0.5}, 1_000_000),
    ("toy-hashed-report", {"epsilon": 2.0, "decoder": True}, 1_000_000),
    ("toy-laplace-count", {"epsilon": 0.5}, 1_000_000),
    ("toy-gaussian-vector", {}, 630_000),
    ("pendulum-gaussian-pg", {}, 70_000),
    ("pgc-a3c", {}, 70_000),
]


def measure(name: str, settings: dict[str, bool | float | str], budget: int, seed: int) -> SequentialEstimate:
    system = make_system(name, **settings)
    secret, secret_prime = next(iter(system.canaries().values()))
    start = time.perf_counter()
    estimate_all = estimate_seconds(system, secret, secret_prime, stage_sizes(10_000, budget), {})
    probe_s = time.perf_counter() - start
    start = time.perf_counter()
    result = audit_system_until_decisive(system, secret, secret_prime, budget=budget, seed=seed)
    wall = time.perf_counter() - start
    ran = [s.n_per_side for s in result.stages]
    estimate = estimate_seconds(system, secret, secret_prime, ran, {})
    return SequentialEstimate(
        system=name,
        settings=settings,
        budget=budget,
        stages_run=ran,
        decision=result.decision,
        estimate_all_stages_s=estimate_all,
        estimate_stages_run_s=estimate,
        wall_s=wall,
        probe_s=probe_s,
        wall_over_estimate=wall / estimate,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rows = []
    for name, settings, budget in CASES:
        row = measure(name, settings, budget, args.seed)
        rows.append(row)
        print(
            f"{name:<22} {row.decision:<28} stages {len(row.stages_run)}: estimate "
            f"{row.estimate_stages_run_s:7.1f} s, wall {row.wall_s:7.1f} s, ratio "
            f"{row.wall_over_estimate:.2f}",
            flush=True,
        )
    within = all(0.5 <= r.wall_over_estimate <= 2.0 for r in rows)
    out = SequentialEstimates(
        command="python scripts/sequential_estimates.py " + " ".join(sys.argv[1:]),
        rows=rows,
        goal="wall time within 2x of the estimate of the stages that ran",
        met=within,
    )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(args.out).with_suffix(".tmp")
    tmp.write_text(json.dumps(out.to_dict(), indent=1) + "\n")
    tmp.replace(args.out)
    print("goal met" if within else "goal MISSED: some wall time is more than 2x from its estimate")
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main())
