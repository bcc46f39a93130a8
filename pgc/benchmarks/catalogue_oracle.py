"""``pgc bench catalogue-oracle``: the most any threshold test can certify on the catalogue's broken algorithms at a
given number of releases per side — the reference for what an audit of them can be asked to flag.

For each broken algorithm (:data:`pgc.catalogue.BROKEN`) and each of its DP-Sniper input pairs, ``--draws``
outputs per side are sampled from the algorithm and their exact privacy loss L = ln p_a(o) − ln p_a′(o) is computed
from its definition (:mod:`pgc.catalogue.likelihood`). By the Neyman–Pearson lemma the most powerful test of a
given false-positive rate thresholds L, so the events {L ≥ τ} (and their complements) hold the best test of every
size. The *oracle bound* at n releases per side is the certified ε_LB (:func:`audit.certification.bounds.
epsilon_lower_bound`, exact Clopper–Pearson at the bench's confidence) that the expected counts n·P of the best such
event give, the α split included — what an auditor who knew the algorithm, the best pair and the best event in
advance would certify, as a median, with all n releases spent on certification: no training and no search. The event
and split are chosen on one half of the draws and their probabilities read on the other half, so that the choice
cannot ride on the sampling noise of rare events (n at most half of ``--draws``). An algorithm whose oracle bound
at n does not exceed its claim is flagged at n by no audit more than about half the time.

The bench states, per algorithm, the oracle bound of its best pair at each of ``--totals`` (default 2e4, 5e4 and
1e5 per side), the same at the first step of Holm's procedure over the 20-algorithm catalogue (α/20), and the
smallest n (a 1-2-5 grid) at which some pair's oracle bound exceeds the claim.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from pgc.errors import UserError
from pgc.files import write_json_atomic
from pgc.options import add_confidence, add_out, positive_int
from pgc.schemas.bench_library_results import AlgorithmOracle, CatalogueOracle, PairOracle

help = "the best bound any test can certify on the catalogue's broken algorithms, per releases per side"

SHARES = (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)
CATALOGUE_SIZE = 20


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--algorithms", nargs="+", default=None, help="only these broken algorithms (default: all 9)")
    p.add_argument(
        "--totals",
        type=positive_int,
        nargs="+",
        default=[20_000, 50_000, 100_000],
        help="releases per side to state (each at most half of --draws)",
    )
    p.add_argument(
        "--draws",
        type=positive_int,
        default=1_000_000,
        help="outputs sampled per side per pair: half choose the event, half bound it",
    )
    p.add_argument("--seed", type=int, default=0)
    add_confidence(p, default=0.95)
    add_out(p, default="runs/bench/catalogue-oracle.json", help="JSON result")


def event_probabilities(
    loss_a: np.ndarray, loss_b: np.ndarray, taus: np.ndarray | None = None, points: int = 2_000
) -> tuple[np.ndarray, ...]:
    """P_a(L ≥ τ) and P_a′(L ≥ τ) for τ in ``taus`` (default: the quantiles of the pooled losses and +inf, an
    output one input cannot produce being an event of its own)."""
    if taus is None:
        pooled = np.concatenate([loss_a, loss_b])
        taus = np.unique(np.quantile(pooled[np.isfinite(pooled)], np.linspace(0.0, 1.0, points)))
        taus = np.concatenate([taus, [np.inf]])
    sa, sb = np.sort(loss_a), np.sort(loss_b)
    p_a = 1.0 - np.searchsorted(sa, taus, side="left") / sa.size
    p_b = 1.0 - np.searchsorted(sb, taus, side="left") / sb.size
    return taus, p_a, p_b


def bound_table(p_a: np.ndarray, p_b: np.ndarray, n: int, alpha: float) -> np.ndarray:
    """Certified ε_LB per (α split in :data:`SHARES`, event) at the expected counts of n releases per side: the
    event says "a", so its false positives are n·p_b and its false negatives n·(1 − p_a); both directions count."""
    from audit.certification.bounds import epsilon_lower_bound

    return np.stack([epsilon_lower_bound(n * p_b, n, n * (1.0 - p_a), n, alpha, 0.0, s) for s in SHARES])


def split_oracle_bound(chosen: tuple[np.ndarray, np.ndarray], fresh: tuple[np.ndarray, np.ndarray], n, alpha):
    """The event and α split that are best on the ``chosen`` draws' probabilities, bounded with the ``fresh`` draws'
    probabilities of the same event: the choice cannot ride on the sampling noise of rare events."""
    share, event = np.unravel_index(int(np.argmax(bound_table(*chosen, n, alpha))), (len(SHARES), chosen[0].size))
    table = bound_table(fresh[0][event : event + 1], fresh[1][event : event + 1], n, alpha)
    return float(table[share, 0])


def smallest_flagging_n(chosen, fresh, claim: float, alpha: float, largest: int) -> int | None:
    """The smallest n per side (a 1-2-5 grid from 1,000 to ``largest``) whose split oracle bound exceeds
    ``claim``."""
    for exponent in range(3, 10):
        for mantissa in (1, 2, 5):
            n = mantissa * 10**exponent
            if n > largest:
                return None
            if split_oracle_bound(chosen, fresh, n, alpha) > claim:
                return n
    return None


def pair_losses(algorithm, pair: tuple, draws: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The privacy loss ln p_a(o) − ln p_a′(o) of ``draws`` outputs of a and of a′."""
    from pgc.catalogue.likelihood import log_likelihood

    f = log_likelihood(algorithm.name, algorithm.parameters)
    a, b = (np.asarray(x, dtype=np.float64) for x in pair)
    out_a, out_b = algorithm.run(a, draws, rng), algorithm.run(b, draws, rng)
    with np.errstate(invalid="ignore"):
        return f(a, out_a) - f(b, out_a), f(a, out_b) - f(b, out_b)


def algorithm_oracle(
    algorithm, totals: list[int], draws: int, alpha: float, seed: np.random.SeedSequence
) -> AlgorithmOracle:
    """Per pair: losses of two independent halves of ``draws`` per side; events chosen on one, bounded on the
    other (:func:`split_oracle_bound`); the best pair and its bounds at each of ``totals``."""
    from pgc.catalogue.patterns import input_pairs

    start = time.perf_counter()
    pairs = input_pairs(algorithm.domain)
    per_pair = {}
    for (name, pair), child in zip(pairs.items(), seed.spawn(len(pairs)), strict=True):
        rng = np.random.default_rng(child)
        first, second = (pair_losses(algorithm, pair, draws // 2, rng) for _ in range(2))
        taus, *chosen = event_probabilities(*first)
        _, *fresh = event_probabilities(*second, taus=taus)
        per_pair[name] = PairOracle(
            bound={str(n): split_oracle_bound(chosen, fresh, n, alpha) for n in totals},
            bound_holm_first={str(n): split_oracle_bound(chosen, fresh, n, alpha / CATALOGUE_SIZE) for n in totals},
            largest_loss=float(max(np.max(first[0]), -np.min(first[1]))),
            flags_from=smallest_flagging_n(chosen, fresh, algorithm.claimed_epsilon, alpha, draws // 2),
        )
    best = {str(n): max(per_pair, key=lambda k: per_pair[k].bound[str(n)]) for n in totals}
    flags_from = [v.flags_from for v in per_pair.values() if v.flags_from is not None]
    return AlgorithmOracle(
        algorithm=algorithm.name,
        claimed_epsilon=algorithm.claimed_epsilon,
        best_pair=best,
        bound={n: per_pair[pair].bound[n] for n, pair in best.items()},
        bound_holm_first={n: per_pair[pair].bound_holm_first[n] for n, pair in best.items()},
        flags_from=min(flags_from) if flags_from else None,
        pairs=per_pair,
        wall_s=round(time.perf_counter() - start, 1),
    )


def run(args: argparse.Namespace) -> int:
    from pgc.catalogue import BROKEN, BY_NAME

    names = args.algorithms or list(BROKEN)
    unknown = sorted(set(names) - set(BROKEN))
    if unknown:
        raise UserError(f"not broken catalogue algorithms: {', '.join(unknown)} (broken: {', '.join(BROKEN)})")
    if max(args.totals) > args.draws // 2:
        raise UserError(f"--totals must be at most half of --draws ({args.draws // 2:,}), got {max(args.totals):,}")
    alpha = 1.0 - args.confidence
    root = np.random.SeedSequence(args.seed)
    rows = []
    for name, child in zip(names, root.spawn(len(names)), strict=True):
        row = algorithm_oracle(BY_NAME[name], args.totals, args.draws, alpha, child)
        rows.append(row)
        bounds = ", ".join(f"{int(n):,}: {b:.3f}" for n, b in row.bound.items())
        last = str(args.totals[-1])
        above = (
            f"above the claim from n = {row.flags_from:,}"
            if row.flags_from
            else f"not above the claim up to n = {args.draws // 2:,}"
        )
        print(
            f"{name:<16} claim {row.claimed_epsilon:.3f}  oracle ε_LB per side {bounds}  "
            f"(best pair at {int(last):,}: {row.best_pair[last]!r}; {above}; {row.wall_s} s)",
            flush=True,
        )
    for n in map(str, args.totals):
        above = [r.algorithm for r in rows if r.bound[n] > r.claimed_epsilon]
        holm = [r.algorithm for r in rows if r.bound_holm_first[n] > r.claimed_epsilon]
        print(
            f"oracle bound above the claim at {int(n):,} per side: {len(above)}/{len(rows)} ({', '.join(above)}); "
            f"at Holm's first step (α/{CATALOGUE_SIZE}): {len(holm)}/{len(rows)}"
        )
    result = CatalogueOracle(
        command="pgc bench catalogue-oracle " + " ".join(_argv(args)),
        confidence=args.confidence,
        draws=args.draws,
        seed=args.seed,
        totals=args.totals,
        algorithms=rows,
    )
    write_json_atomic(Path(args.out), result.to_dict())
    print(f"wrote {args.out}")
    return 0


def _argv(args: argparse.Namespace) -> list[str]:
    argv = ["--totals", *map(str, args.totals), "--draws", str(args.draws), "--seed", str(args.seed)]
    if args.algorithms:
        argv = ["--algorithms", *args.algorithms, *argv]
    return [*argv, "--confidence", str(args.confidence), "--out", str(args.out)]
