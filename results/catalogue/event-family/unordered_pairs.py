"""The catalogue bench's chosen-pair audit (``pgc.benchmarks.catalogue.ours_pair_choice``, its cell seeds) with
DP-Sniper's 16 ordered pairs against the 8 unordered ones (each pattern once, its ", swapped" copy dropped: a test
and its complement certify both directions, so a pair and its swap are one hypothesis test), at 10⁵ releases per side
in all.
Variants: "ordered" (the bench), "unordered" (8 pairs, the race's floor n // 25 per pair: a cheaper race, more
certification releases), "unordered-12" (8 pairs, a floor of n // 12: the race's budget of 16 pairs). Run from the
repository root, one JSON line per audit, then the summary:

    .venv/bin/python results/catalogue/event-family/unordered_pairs.py run ALGORITHMS FIRST_SEED END_SEED VARIANT
    .venv/bin/python results/catalogue/event-family/unordered_pairs.py summary FILE.jsonl
"""

import collections
import json
import sys
import time

import numpy as np


def run(algorithms: list[str], seeds: range, variant: str) -> None:
    from pgc.benchmarks.catalogue import cell_seed, ours_pair_choice
    from pgc.catalogue import catalogue_system

    for name in algorithms:
        system = catalogue_system(name)
        pairs = system.canaries()
        if variant != "ordered":
            pairs = {k: v for k, v in pairs.items() if not k.endswith(", swapped")}
        share = None if variant in ("ordered", "unordered") else int(variant.split("-")[1])
        for seed in seeds:
            _, pairs_seq, _ = cell_seed(seed, name).spawn(3)
            start = time.perf_counter()
            r = ours_pair_choice(system, pairs, 100_000, 0.95, int(pairs_seq.generate_state(1)[0]), race_share=share)
            row = {"alg": name, "seed": seed, "variant": variant, "eps": r.epsilon_lower_bound, "pair": r.pair}
            row |= {"stat": r.statistic, "n": r.split.samples, "train": r.split.train}
            print(json.dumps(row | {"s": round(time.perf_counter() - start, 1)}), flush=True)


def summary(path: str) -> None:
    rows = [json.loads(line) for line in open(path)]
    by = collections.defaultdict(dict)
    for r in rows:
        by[(r["alg"], r["variant"])][r["seed"]] = r["eps"]
    print("| algorithm | variant | median ε_LB | seeds above 0.1 | paired difference with ordered |")
    print("|---|---|---|---|---|")
    for alg in sorted({r["alg"] for r in rows}):
        base = by[(alg, "ordered")]
        for variant in ("ordered", "unordered", "unordered-12"):
            got = by[(alg, variant)]
            seeds = sorted(got)
            x, b = np.array([got[s] for s in seeds]), np.array([base[s] for s in seeds])
            d = x - b
            print(
                f"| {alg} | {variant} | {np.median(x):.3f} | {int(np.sum(x > 0.1))} of {len(x)} | "
                f"{d.mean():+.3f} ± {d.std() / np.sqrt(len(d)):.3f} |"
            )


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2].split(","), range(int(sys.argv[3]), int(sys.argv[4])), sys.argv[5])
    else:
        summary(sys.argv[2])
