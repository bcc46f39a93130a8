"""How well the named-pair race ranks DP-Sniper's pairs: the engine's ranking against the held-out gain alone, the
projected ε alone and the tail read from the first round.

``pgc bench catalogue`` races an algorithm's named pairs by successive halving on P · max(search_samples, n / 25)
releases per side (:func:`audit.engine.pair_search.choose_named_pair`). This script runs that race alone for every
algorithm and seed at the bench's sizes (:func:`pgc.benchmarks.catalogue.pair_choice_split`), ranked as the engine
ranks (:func:`audit.engine.pair_search.race_score`: a decisive projected ε, then, once a pair has drawn
:data:`audit.engine.separability.TAIL_RANKING_RELEASES` per side, the held-out tail projection of a classifier's
score, then its held-out log-likelihood gain), by the held-out gain without the tail, by the threshold test's
projected ε alone, and with the tail read from the first round whatever a pair has drawn (each other rule switched on
in this process; ``--rankings`` picks among the four), and scores each chosen pair by what an oracle certifies on it
(the exact-loss bound of ``oracle.json`` at the totals' certification size, :mod:`pgc.benchmarks.catalogue_oracle`):
the mean over seeds, in how many seeds the chosen pair reaches 90 % of the best pair's bound, and in how many its
bound exceeds the claim. Each seed's race stream is ``SeedSequence([seed, crc32(algorithm's name)])``; every ranking
sees the same releases. Usage, from the repository root:

    python scripts/catalogue_race_ranking.py --seeds 0-23 \\
        --oracle results/catalogue/oracle/oracle.json --out results/catalogue/race-ranking/table.md
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from pgc.options import positive_int, seed_range

RANKINGS = ("engine", "held-out gain alone", "projected ε alone", "tail from the first round")
# the oracle's bound at 5·10⁴ per side: the bench's 52,915 certified releases at 10⁵ in total, rounded down
ORACLE_TOTAL = 50_000
NEAR_BEST = 0.9


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=seed_range, default=seed_range("0-23"), help="a range, e.g. 0-23")
    parser.add_argument("--algorithms", nargs="+", default=None, help="default: the catalogue's broken algorithms")
    parser.add_argument("--total", type=positive_int, default=100_000)
    parser.add_argument("--oracle", type=Path, default=Path("results/catalogue/oracle/oracle.json"))
    parser.add_argument(
        "--oracle-total",
        type=positive_int,
        default=ORACLE_TOTAL,
        help="score a chosen pair by the oracle's bound at this many releases per side (one of the oracle's totals)",
    )
    parser.add_argument(
        "--rankings", nargs="+", choices=RANKINGS, default=list(RANKINGS), help="the rankings to race (default: all)"
    )
    parser.add_argument("--out", type=Path, default=None, help="write the Markdown table here too")
    args = parser.parse_args(argv)
    from pgc.cli.main import report_exception

    try:
        return _run(args)
    except Exception as exc:  # bad input: one line (exit 2); a bug: the traceback (exit 3)
        return report_exception(exc, "catalogue_race_ranking.py")


def _oracle_bounds(path: Path, total: int) -> dict[str, dict[str, float]]:
    """Per algorithm, per pair name: the oracle's bound at ``total`` releases per side (typed through its schema)."""
    from pgc.errors import UserError
    from pgc.files import read_json
    from pgc.schemas import load
    from pgc.schemas.bench_library_results import CatalogueOracle

    oracle = load(read_json(path), where=str(path))
    if not isinstance(oracle, CatalogueOracle):
        raise UserError(f"{path} is not a pgc bench catalogue-oracle result")
    if total not in oracle.totals:
        raise UserError(f"{path} holds no bounds at {total} releases per side (it holds {oracle.totals})")
    return {a.algorithm: {name: p.bound[str(total)] for name, p in a.pairs.items()} for a in oracle.algorithms}


def _race(system, pairs, split, seq, ranking: str) -> str:
    from audit.engine import pair_search, separability
    from pgc.catalogue import CHANNEL

    engine_score, tail_size = pair_search.race_score, separability.TAIL_RANKING_RELEASES
    if ranking == "projected ε alone":
        pair_search.race_score = lambda *a: (pair_search.releases_objective(*a), 0.0, 0.0)  # type: ignore[assignment]
    elif ranking == "held-out gain alone":
        separability.TAIL_RANKING_RELEASES = sys.maxsize  # the tail never ranks
    elif ranking == "tail from the first round":
        separability.TAIL_RANKING_RELEASES = 4  # the tail ranks at any size
    try:
        name, _, _ = pair_search.choose_named_pair(
            system,
            (CHANNEL,),
            (CHANNEL,),
            pairs,
            seq,
            n=split.search_per_pair,  # max(search_samples, n // the race's floor), as the bench's audit races
            n_cert=split.samples,
            alpha=0.05,
            deltas={CHANNEL: 0.0},
        )
    finally:
        pair_search.race_score, separability.TAIL_RANKING_RELEASES = engine_score, tail_size  # type: ignore[assignment]
    return name


def _run(args: argparse.Namespace) -> int:
    import zlib

    import numpy as np

    from pgc.benchmarks.catalogue import pair_choice_split
    from pgc.catalogue import BROKEN, catalogue_system
    from pgc.errors import UserError
    from pgc.files import write_text_atomic

    oracle = _oracle_bounds(args.oracle, args.oracle_total)
    args.algorithms = list(BROKEN) if args.algorithms is None else args.algorithms
    unknown = [name for name in args.algorithms if name not in oracle]
    if unknown:
        raise UserError(f"no oracle bounds for {', '.join(unknown)} in {args.oracle} (the broken algorithms only)")
    systems = [catalogue_system(name) for name in args.algorithms]
    lines = [
        f"Command: `python scripts/catalogue_race_ranking.py --seeds {args.seeds[0]}-{args.seeds[-1]} "
        f"--total {args.total}"
        + (f" --algorithms {' '.join(args.algorithms)}" if args.algorithms != list(BROKEN) else "")
        + (
            f" --oracle {args.oracle.as_posix()} --oracle-total {args.oracle_total}"
            if args.oracle_total != ORACLE_TOTAL
            else ""
        )
        + (f" --rankings {' '.join(repr(r) for r in args.rankings)}" if args.rankings != list(RANKINGS) else "")
        + f"`; oracle bounds at {args.oracle_total:,} per side from {args.oracle.as_posix()}",
        "",
        "| algorithm | best pair's oracle bound | "
        + " | ".join(f"chosen pair's oracle bound, mean: {rule}" for rule in args.rankings)
        + " | "
        + " | ".join(f"seeds within {NEAR_BEST:.0%} of the best: {rule}" for rule in args.rankings)
        + " | "
        + " | ".join(f"seeds whose chosen pair's bound exceeds the claim: {rule}" for rule in args.rankings)
        + " | race time per seed, s |",
        "|---|---|" + "---|" * (3 * len(args.rankings)) + "---|",
    ]
    print("\n".join(lines), flush=True)
    for name, system in zip(args.algorithms, systems, strict=True):
        pairs = system.canaries()
        split = pair_choice_split(args.total, len(pairs), float(system.claim.epsilon))
        best = max(oracle[name].values())
        values: dict[str, list[float]] = {rule: [] for rule in args.rankings}
        start = time.perf_counter()
        for seed in args.seeds:
            for rule in args.rankings:
                seq = np.random.SeedSequence([seed, zlib.crc32(name.encode())])
                values[rule].append(oracle[name][_race(system, pairs, split, seq, rule)])
        per_seed = (time.perf_counter() - start) / len(args.seeds)
        means = " | ".join(f"{statistics.mean(values[rule]):.3f}" for rule in args.rankings)
        near = " | ".join(
            f"{sum(v >= NEAR_BEST * best for v in values[rule])} of {len(values[rule])}" for rule in args.rankings
        )
        claim = float(system.claim.epsilon)
        above = " | ".join(f"{sum(v > claim for v in values[rule])} of {len(values[rule])}" for rule in args.rankings)
        line = f"| {name} | {best:.3f} | {means} | {near} | {above} | {per_seed:.1f} |"
        print(line, flush=True)
        lines.append(line)
    if args.out is not None:
        write_text_atomic(args.out, "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
