"""How the oracle's event choice reads the choosing half: plug-in probabilities against their pessimistic bounds.

For one broken catalogue algorithm and one of its pairs, ``--repeats`` independent pairs of halves of ``--draws``
outputs per side are drawn; on each, the event is chosen on one half and bounded on the other, both ways round
(:func:`pgc.benchmarks.catalogue_oracle.split_oracle_bound`), with the choosing half's probabilities read as plug-in
and at their pessimistic bounds at each level of ``--levels``. Prints per n the mean, spread and least of the
2 × repeats bounds per reading. Usage, from the repository root:

    python results/catalogue/oracle/choice_pessimism.py --algorithm SVT3 --pair "one above rest below" \\
        --draws 2000000 --repeats 3 --totals 500000 1000000
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from pgc.options import positive_int, probability


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--algorithm", required=True)
    parser.add_argument("--pair", required=True)
    parser.add_argument("--draws", type=positive_int, default=1_000_000, help="outputs per side per pair, both halves")
    parser.add_argument("--repeats", type=positive_int, default=4)
    parser.add_argument("--totals", type=positive_int, nargs="+", default=[50_000, 100_000])
    parser.add_argument("--levels", type=probability, nargs="+", default=[0.25, 0.05, 0.01])
    args = parser.parse_args(argv)
    from pgc.cli.main import report_exception

    try:
        return _run(args)
    except Exception as exc:  # bad input: one line (exit 2); a bug: the traceback (exit 3)
        return report_exception(exc, "choice_pessimism.py")


def _run(args: argparse.Namespace) -> int:
    from pgc.benchmarks import catalogue_oracle as oracle
    from pgc.catalogue import BROKEN, BY_NAME
    from pgc.catalogue.patterns import input_pairs
    from pgc.errors import UserError

    if args.algorithm not in BROKEN:
        raise UserError(f"not a broken catalogue algorithm: {args.algorithm!r} (broken: {', '.join(BROKEN)})")
    algorithm = BY_NAME[args.algorithm]
    pairs = input_pairs(algorithm.domain)
    if args.pair not in pairs:
        raise UserError(f"{args.algorithm} has no pair {args.pair!r}; its pairs: {'; '.join(pairs)}")
    half = args.draws // 2
    if max(args.totals) > half:
        raise UserError(f"--totals must be at most half of --draws ({half:,})")
    readings: list[float | None] = [None, *args.levels]
    bounds: dict[tuple[int, float | None], list[float]] = {}
    for seed in np.random.SeedSequence(0).spawn(args.repeats):
        rng = np.random.default_rng(seed)
        first, second = (oracle.pair_losses(algorithm, pairs[args.pair], half, rng) for _ in range(2))
        taus, *chosen = oracle.event_probabilities(*first)
        _, *fresh = oracle.event_probabilities(*second, taus=taus)
        for n in args.totals:
            for level in readings:
                draws, pessimism = (None, oracle.CHOICE_PESSIMISM) if level is None else (half, level)
                for choose, bound in ((chosen, fresh), (fresh, chosen)):
                    bounds.setdefault((n, level), []).append(
                        oracle.split_oracle_bound(choose, bound, n, 0.05, draws, pessimism)
                    )
    print(
        f"{args.algorithm}, {args.pair!r}: {args.draws:,} draws per side, {args.repeats} repeats, each half choosing "
        "once\n\n| n per side | choice reads | mean | spread | least |\n|---|---|---|---|---|"
    )
    for (n, level), values in bounds.items():
        reading = "plug-in" if level is None else f"{level:g} bounds"
        print(f"| {n:,} | {reading} | {np.mean(values):.4f} | {np.std(values):.4f} | {np.min(values):.4f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
