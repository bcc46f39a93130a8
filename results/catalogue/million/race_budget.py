"""The catalogue bench's chosen-pair audit of one algorithm (``pgc.benchmarks.catalogue.ours_pair_choice``, the bench's
cell seeds) at TOTAL releases per side, with the race's floor per pair n // SHARE (the bench: 25): a larger share
of the total spent on racing DP-Sniper's 16 pairs, less on certifying the winner. One line per seed (ε_LB, the
chosen pair, the certification size), then the median and how many seeds certify above the claim. Usage, from the
repository root:

    python results/catalogue/million/race_budget.py SVT4 1000000 25 0 12
"""

from __future__ import annotations

import argparse
import statistics
import sys

from pgc.options import non_negative_int, positive_int


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("algorithm")
    parser.add_argument("total", type=positive_int, help="releases per side in total")
    parser.add_argument("share", type=positive_int, help="the race's floor per pair: total // share")
    parser.add_argument("first_seed", type=non_negative_int)
    parser.add_argument("end_seed", type=positive_int, help="one past the last seed")
    args = parser.parse_args()
    from pgc.cli.main import report_exception

    try:
        _run(args.algorithm, args.total, args.share, range(args.first_seed, args.end_seed))
    except Exception as exc:  # bad input: one line (exit 2); a bug: the traceback (exit 3)
        return report_exception(exc, "race_budget.py")
    return 0


def _run(name: str, total: int, share: int, seeds: range) -> None:
    from pgc.benchmarks.catalogue import cell_seed, ours_pair_choice
    from pgc.catalogue import catalogue_system
    from pgc.errors import UserError

    if not seeds:
        raise UserError(f"no seeds in {seeds.start}..{seeds.stop - 1}")
    system = catalogue_system(name)
    claim = float(system.claim.epsilon)
    print(f"{name} at {total:,} per side in total, the race's floor n // {share}\n")
    print("| seed | ε_LB | chosen pair | certified per side |")
    print("|---|---|---|---|")
    bounds = []
    for seed in seeds:
        _, pairs_seq, _ = cell_seed(seed, name).spawn(3)
        seed_value = int(pairs_seq.generate_state(1)[0])
        r = ours_pair_choice(system, system.canaries(), total, 0.95, seed_value, race_share=share)
        bounds.append(r.epsilon_lower_bound)
        print(f"| {seed} | {r.epsilon_lower_bound:.3f} | {r.pair} | {r.split.samples:,} |", flush=True)
    above = sum(b > claim for b in bounds)
    print(f"\nmedian ε_LB {statistics.median(bounds):.3f}; {above} of {len(bounds)} seeds above the claim {claim:g}")


if __name__ == "__main__":
    sys.exit(main())
