"""Trainer speed with and without the biases knob: best of 3 batches, one process.

    python scripts/bench_biases.py            # d = 112 (the paper's model)
    python scripts/bench_biases.py --biases   # d = 131

Run it in checkouts of two commits (PYTHONPATH=CHECKOUT) to compare the code before and after a change.
"""

from __future__ import annotations

import argparse
import time

from pgc.a3c.rollout import A3CHyperparams
from pgc.a3c.trainer import TrainConfig, train_batch


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--biases", action="store_true", help="Dense layers with biases (d = 131)")
    p.add_argument("--trials", type=int, default=96)
    p.add_argument("--submissions", type=int, default=1000)
    args = p.parse_args(argv)
    extra = {"hyper": A3CHyperparams(biases=True)} if args.biases else {}
    configs = [
        TrainConfig(mechanism="laplace", epsilon=1.0, submissions=args.submissions, seed=s, **extra)
        for s in range(args.trials)
    ]
    train_batch(configs[:2])  # compile / load the kernel
    best = 0.0
    for _ in range(3):
        start = time.perf_counter()
        results = train_batch(configs, processes=1)
        best = max(best, sum(r.agent_steps for r in results) / (time.perf_counter() - start))
    print(f"{best:.3e} agent-steps/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
