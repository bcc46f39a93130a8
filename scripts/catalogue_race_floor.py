"""How the named-pair race's floor shares a fixed budget on DP-Sniper's catalogue.

``pgc bench catalogue`` gives each tool ``--total`` releases per side; ours spends them on the race among the
algorithm's named pairs (P · max(search_samples, n / floor)), the training split and the certification n
(:func:`pgc.benchmarks.catalogue.pair_choice_split`). A lower floor leaves more of the total to the certificate but
ranks the pairs on fewer releases. This script audits the chosen pair of each algorithm and seed (the bench's own
cell seeds) at each floor and prints, per algorithm and floor, the median ε_LB and how many seeds certify above the
claim. Usage, from the repository root:

    python scripts/catalogue_race_floor.py --floors 10 25 --seeds 0-11 \\
        --algorithms ReportNoisyMax3 ReportNoisyMax4 SVT6 SVT34Parallel
"""

from __future__ import annotations

import argparse
import statistics
import sys

from pgc.options import positive_int, seed_range


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--floors", type=positive_int, nargs="+", default=[10, 25])
    parser.add_argument("--seeds", type=seed_range, default=seed_range("0-11"), help="a range, e.g. 0-11")
    parser.add_argument("--algorithms", nargs="+", default=["ReportNoisyMax3", "ReportNoisyMax4", "SVT6"])
    parser.add_argument("--total", type=positive_int, default=100_000)
    args = parser.parse_args(argv)
    from pgc.cli.main import report_exception

    try:
        return _run(args)
    except Exception as exc:  # bad input: one line (exit 2); a bug: the traceback (exit 3)
        return report_exception(exc, "catalogue_race_floor.py")


def _run(args: argparse.Namespace) -> int:
    from pgc.benchmarks.catalogue import cell_seed, ours_pair_choice
    from pgc.catalogue import catalogue_system

    systems = [catalogue_system(name) for name in args.algorithms]  # an unknown name fails before any output
    print(f"releases per side per audit: {args.total:,} (race, training and certification); confidence 0.95")
    print("| algorithm | floor | certified n | median ε_LB | seeds above the claim | ε_LB per seed (chosen pair) |")
    print("|---|---|---|---|---|---|")
    for name, system in zip(args.algorithms, systems, strict=True):
        pairs = system.canaries()
        claim = float(system.claim.epsilon)
        for floor in args.floors:
            rows = []
            for seed in args.seeds:
                pairs_seq = cell_seed(seed, name).spawn(3)[1]  # the bench's stream for the chosen-pair audit
                ours = ours_pair_choice(
                    system, pairs, args.total, 0.95, int(pairs_seq.generate_state(1)[0]), race_share=floor
                )
                rows.append((ours.epsilon_lower_bound, ours.pair, ours.split.samples))
            bounds = [r[0] for r in rows]
            above = sum(b > claim for b in bounds)
            detail = ", ".join(f"{b:.3f} ({p})" for b, p, _ in rows)
            print(
                f"| {name} | {floor} | {rows[0][2]:,} | {statistics.median(bounds):.3f} | {above} of {len(rows)} | "
                f"{detail} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
