"""One catalogue algorithm audited at one named pair over several seeds: what the selection chooses and certifies.

The bench's chosen-pair audits mix two losses: the race among pairs and the selection at the pair it chose. This
script takes the pair as given (``--pair``, one of the algorithm's DP-Sniper pairs) and audits it with the audit's
own selection, ``--samples`` certification releases per side and a training split of ``--train-fraction`` of them,
one audit per seed, and prints per seed the chosen statistic, its threshold, the certification counts and ε_LB, then
the median and how many seeds certify above the claim. ``--offer sign-vote-dense``: the system offers the dense sign
vote (:class:`audit.statistics.SignVote`, tried after the audit's own statistics), as a user's system may. Usage, from
the repository root:

    python scripts/catalogue_fixed_pair.py --algorithm SVT6 --pair "X shape" --seeds 0-7 \\
        --samples 52915 --train-fraction 0.4
"""

from __future__ import annotations

import argparse
import statistics
import sys

from pgc.options import positive_int, probability, seed_range


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--algorithm", required=True)
    parser.add_argument("--pair", required=True, help="one of the algorithm's named pairs, e.g. 'X shape'")
    parser.add_argument("--seeds", type=seed_range, default=seed_range("0-7"), help="a range, e.g. 0-7")
    parser.add_argument("--samples", type=positive_int, default=52_915, help="certification releases per side")
    parser.add_argument("--train-fraction", type=probability, default=0.4)
    parser.add_argument("--offer", choices=OFFERS, help="a statistic the system offers beside the audit's own")
    args = parser.parse_args(argv)
    from pgc.cli.main import report_exception

    try:
        return _run(args)
    except Exception as exc:  # bad input: one line (exit 2); a bug: the traceback (exit 3)
        return report_exception(exc, "catalogue_fixed_pair.py")


OFFERS = ("sign-vote-dense",)


def offered_statistic(name: str) -> object:
    """The statistic ``--offer`` names."""
    from audit.statistics import SignVote

    return {"sign-vote-dense": SignVote("every")}[name]


class OfferingSystem:
    """A System that offers ``statistic`` for every channel (:class:`pgc.contracts.OffersStatistics`) after what the
    wrapped system offers; everything else is the wrapped system's."""

    def __init__(self, system: object, statistic: object):
        self._system, self._statistic = system, statistic

    def __getattr__(self, name: str) -> object:
        return getattr(self._system, name)

    def audit_statistics(self, channel: str) -> list:
        own = getattr(self._system, "audit_statistics", None)
        return (list(own(channel)) if own is not None else []) + [self._statistic]


def _run(args: argparse.Namespace) -> int:
    from audit.engine.system_audit import audit_system
    from pgc.catalogue import CHANNEL, catalogue_system
    from pgc.errors import UserError

    system = catalogue_system(args.algorithm)
    pairs = system.canaries()
    if args.pair not in pairs:
        raise UserError(f"{args.algorithm} names no pair {args.pair!r}; its pairs: {'; '.join(pairs)}")
    first, second = pairs[args.pair]
    if args.offer:
        system = OfferingSystem(system, offered_statistic(args.offer))
    claim = float(system.claim.epsilon)
    print(
        f"{args.algorithm} at {args.pair!r}: {args.samples:,} certified per side, "
        f"training fraction {args.train_fraction}" + (f", the system offering {args.offer}" if args.offer else "")
    )
    print("| seed | statistic | threshold | false positives | false negatives | ε_LB |")
    print("|---|---|---|---|---|---|")
    bounds = []
    for seed in args.seeds:
        result = audit_system(
            system,
            first,
            second,
            samples=args.samples,
            seed=seed,
            confidence=0.95,
            train_fraction=args.train_fraction,
            channels=[CHANNEL],
        )
        row = result.rows[0]
        bounds.append(float(row.epsilon_lower_bound))
        print(
            f"| {seed} | {row.statistic} | {row.threshold:.4g} | {row.false_positives:,} | {row.false_negatives:,} | "
            f"{bounds[-1]:.3f} |",
            flush=True,
        )
    above = sum(b > claim for b in bounds)
    print(f"\nmedian ε_LB {statistics.median(bounds):.3f}; {above} of {len(bounds)} seeds above the claim {claim:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
