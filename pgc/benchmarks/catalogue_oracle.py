"""``pgc bench catalogue-oracle``: the most any threshold test can certify on the catalogue's broken algorithms at a
given number of releases per side — the reference for what an audit of them can be asked to flag.

For each broken algorithm (:data:`pgc.catalogue.BROKEN`) and each of its DP-Sniper input pairs, ``--draws`` outputs
per side are sampled from the algorithm and their exact privacy loss L = ln p_a(o) − ln p_a′(o) is computed from its
definition (:mod:`pgc.catalogue.likelihood`). By the Neyman–Pearson lemma the most powerful test of a given
false-positive rate thresholds L, so the events {L ≥ τ} (and their complements) hold the best test of every size. The
*oracle bound* at n releases per side is the certified ε_LB (exact Clopper–Pearson at the bench's confidence, by the
audit's two certificates: :func:`audit.certification.bounds.epsilon_lower_bound` at its α split and
:mod:`audit.certification.paired` at the pairs' expected discordant counts) that the expected counts n·P of the best
such event give, the certificate and α split included — what an auditor who knew the algorithm, the best pair and the
best event in advance would certify, as a median, with all n releases spent on certification: no training and no
search. The event and split are chosen on one half of the draws and their probabilities read on the other half, so
that the choice cannot ride on the sampling noise of rare events (n at most half of ``--draws``); the choosing half
reads each event's probabilities at their pessimistic bounds (:data:`CHOICE_PESSIMISM`), so that at n near the half's
size a rare event whose counts happened to lie far apart there is not taken over a wider one. Beside each bound its
standard error: the other half's binomial sampling error propagated through the bound. An algorithm whose oracle
bound at n does not exceed its claim is flagged at n by no audit more than about half the time.

The bench states, per algorithm, the oracle bound of its best pair at each of ``--totals`` (default 2e4, 5e4 and 1e5
per side), the same at the first step of Holm's procedure over the 20-algorithm catalogue (α/20), and the smallest n
(a 1-2-5 grid) at which some pair's oracle bound exceeds the claim.
"""

from __future__ import annotations

import argparse
import math
import shlex
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from pgc.errors import UserError
from pgc.files import write_json_atomic
from pgc.options import add_confidence, add_out, positive_int
from pgc.schemas.bench_library_results import AlgorithmOracle, CatalogueOracle, PairOracle

help = "the best bound any test can certify on the catalogue's broken algorithms, per releases per side"

SHARES = (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)
PAIRED_ROW = len(SHARES)  # bound_table's row of the paired certificate, after the split certificate's α splits
CATALOGUE_SIZE = 20
# the one-sided level of the bounds at which the choosing half's probabilities choose the event: at n close to the
# half's size the plug-in probabilities of a rare event are as noisy as the certification they choose for, and their
# maximum over thousands of events is a winner's curse (results/catalogue/oracle/choice-pessimism.md: SVT3's "one
# above rest below" at 10⁶ per side from halves of 10⁶ draws bounds 0.080 in the mean read as plug-in, 0.106 at 5 %
# bounds; where the half is five to ten times n the 5 % reading costs at most about 0.01, ReportNoisyMax4's deep tail)
CHOICE_PESSIMISM = 0.05


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
    p.add_argument(
        "--pairs",
        nargs="+",
        default=None,
        help="only these named pairs (e.g. 'all above'; default: all of each algorithm's pairs)",
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
    """Certified ε_LB per (certificate, event) at the expected counts of n releases per side: a row per α split in
    :data:`SHARES` of the split certificate, then the paired certificate's (:data:`PAIRED_ROW`,
    :mod:`audit.certification.paired`, at the pairs' expected discordant counts). The event says "a", so its false
    positives are n·p_b and its false negatives n·(1 − p_a); both directions count."""
    from audit.certification.bounds import epsilon_lower_bound
    from audit.certification.paired import expected_discordant, paired_epsilon_lower_bound

    split = [epsilon_lower_bound(n * p_b, n, n * (1.0 - p_a), n, alpha, 0.0, s) for s in SHARES]
    only_a, only_b = expected_discordant(n * np.asarray(p_a), n * np.asarray(p_b), n)
    return np.stack([*split, paired_epsilon_lower_bound(only_a, only_b, n * np.asarray(p_b), n, alpha)])


def pessimistic_probabilities(
    p_a: np.ndarray, p_b: np.ndarray, draws: int, pessimism: float = CHOICE_PESSIMISM
) -> tuple[np.ndarray, np.ndarray]:
    """Events' probabilities from ``draws`` outputs per side at the bounds that make them look least separated:
    P_a at its lower, P_a′ at its upper one-sided ``pessimism`` bound (two-sided rate bounds, so that an event and
    its complement are both read pessimistically)."""
    from audit.statistics.selection import rate_upper

    upper_b = rate_upper(np.asarray(p_b) * draws, draws, pessimism, two_sided=True)
    lower_a = 1.0 - np.asarray(rate_upper((1.0 - np.asarray(p_a)) * draws, draws, pessimism, two_sided=True))
    return np.clip(lower_a, 0.0, 1.0), np.clip(np.asarray(upper_b), 0.0, 1.0)


class OracleBound(NamedTuple):
    """One pair's oracle at one n: the bound the bounding half gives the chosen event, and its standard error (that
    half's sampling error)."""

    bound: float
    standard_error: float


def split_oracle_bound(
    chosen: tuple[np.ndarray, np.ndarray],
    fresh: tuple[np.ndarray, np.ndarray],
    n: int,
    alpha: float,
    draws: int | None = None,
    pessimism: float = CHOICE_PESSIMISM,
) -> float:
    """The event and α split that are best on the ``chosen`` draws' probabilities, bounded with the ``fresh`` draws'
    probabilities of the same event: the choice cannot ride on the sampling noise of rare events. ``draws``: the
    outputs per side behind the ``chosen`` probabilities, read at their ``pessimism`` bounds
    (:func:`pessimistic_probabilities`); None: probabilities known exactly, read as they are."""
    return oracle_bound(chosen, fresh, n, alpha, draws, pessimism=pessimism).bound


def oracle_bound(
    chosen: tuple[np.ndarray, np.ndarray],
    fresh: tuple[np.ndarray, np.ndarray],
    n: int,
    alpha: float,
    draws: int | None = None,
    fresh_draws: int | None = None,
    pessimism: float = CHOICE_PESSIMISM,
) -> OracleBound:
    """:func:`split_oracle_bound` with its standard error — the ``fresh`` probabilities' binomial sampling error at
    ``fresh_draws`` outputs per side (0 where None), each rate moved one standard deviation towards the other and
    the two falls of the bound added in quadrature. A rate of 0 or 1 has no sampling error here (an event one input
    never produced), and the error leaves out how the choice of the event itself varies from draw to draw."""
    choosing = chosen if draws is None else pessimistic_probabilities(*chosen, draws, pessimism)
    table = bound_table(*choosing, n, alpha)
    share, event = np.unravel_index(int(np.argmax(table)), table.shape)

    def bound_of(p_a: float, p_b: float) -> float:  # the chosen event's bound by the chosen certificate
        return float(bound_table(np.array([p_a]), np.array([p_b]), n, alpha)[share, 0])

    p_a, p_b = float(fresh[0][event]), float(fresh[1][event])
    bound = bound_of(p_a, p_b)
    if not fresh_draws or not np.isfinite(bound):
        return OracleBound(bound, 0.0)
    sd_a, sd_b = (math.sqrt(p * (1.0 - p) / fresh_draws) for p in (p_a, p_b))
    falls = [bound - bound_of(max(p_a - sd_a, 0.0), p_b), bound - bound_of(p_a, min(p_b + sd_b, 1.0))]
    return OracleBound(bound, float(math.hypot(*falls)) if all(np.isfinite(falls)) else 0.0)


def smallest_flagging_n(
    chosen, fresh, claim: float, alpha: float, largest: int, draws: int | None = None
) -> int | None:
    """The smallest n per side (a 1-2-5 grid from 1,000 to ``largest``) whose split oracle bound exceeds
    ``claim`` (``draws``: as :func:`split_oracle_bound`'s)."""
    for exponent in range(3, 10):
        for mantissa in (1, 2, 5):
            n = mantissa * 10**exponent
            if n > largest:
                return None
            if split_oracle_bound(chosen, fresh, n, alpha, draws) > claim:
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
    algorithm,
    totals: list[int],
    draws: int,
    alpha: float,
    seed: np.random.SeedSequence,
    only: list[str] | None = None,
) -> AlgorithmOracle:
    """Per pair: losses of two independent halves of ``draws`` per side; events chosen on one, bounded on the
    other (:func:`oracle_bound`); the best pair and its bounds at each of ``totals`` (the largest of the pairs'
    bounds, each with its own sampling error: where several pairs lie within a standard error of each other, it
    overstates the best pair's by up to about one). ``only``: these pairs (by name) and no others; each pair draws
    from its own child of ``seed`` whichever are chosen."""
    from pgc.catalogue.patterns import input_pairs

    start = time.perf_counter()
    pairs = input_pairs(algorithm.domain)
    per_pair = {}
    half = draws // 2
    for (name, pair), child in zip(pairs.items(), seed.spawn(len(pairs)), strict=True):
        if only is not None and name not in only:
            continue
        rng = np.random.default_rng(child)
        first, second = (pair_losses(algorithm, pair, half, rng) for _ in range(2))
        taus, *chosen = event_probabilities(*first)
        _, *fresh = event_probabilities(*second, taus=taus)
        at_alpha = {str(n): oracle_bound(chosen, fresh, n, alpha, half, half) for n in totals}
        per_pair[name] = PairOracle(
            bound={n: o.bound for n, o in at_alpha.items()},
            bound_standard_error={n: o.standard_error for n, o in at_alpha.items()},
            bound_holm_first={
                str(n): split_oracle_bound(chosen, fresh, n, alpha / CATALOGUE_SIZE, half) for n in totals
            },
            largest_loss=float(max(np.max(first[0]), -np.min(first[1]))),
            flags_from=smallest_flagging_n(chosen, fresh, algorithm.claimed_epsilon, alpha, half, half),
        )
    best = {str(n): max(per_pair, key=lambda k: per_pair[k].bound[str(n)]) for n in totals}
    flags_from = [v.flags_from for v in per_pair.values() if v.flags_from is not None]
    return AlgorithmOracle(
        algorithm=algorithm.name,
        claimed_epsilon=algorithm.claimed_epsilon,
        best_pair=best,
        bound={n: per_pair[pair].bound[n] for n, pair in best.items()},
        bound_standard_error={n: (per_pair[pair].bound_standard_error or {})[n] for n, pair in best.items()},
        bound_holm_first={n: per_pair[pair].bound_holm_first[n] for n, pair in best.items()},
        flags_from=min(flags_from) if flags_from else None,
        pairs=per_pair,
        wall_s=round(time.perf_counter() - start, 1),
    )


def _check_pairs(names: list[str], pairs: list[str]) -> None:
    """A clear error where one of ``pairs`` is not a pair of every algorithm in ``names``."""
    from pgc.catalogue import BY_NAME
    from pgc.catalogue.patterns import input_pairs

    for name in names:
        offered = input_pairs(BY_NAME[name].domain)
        missing = [p for p in pairs if p not in offered]
        if missing:
            raise UserError(f"{name} has no pair {', '.join(map(repr, missing))}; its pairs: {'; '.join(offered)}")


def run(args: argparse.Namespace) -> int:
    from pgc.catalogue import BROKEN, BY_NAME

    names = args.algorithms or list(BROKEN)
    unknown = sorted(set(names) - set(BROKEN))
    if unknown:
        raise UserError(f"not broken catalogue algorithms: {', '.join(unknown)} (broken: {', '.join(BROKEN)})")
    if max(args.totals) > args.draws // 2:
        raise UserError(f"--totals must be at most half of --draws ({args.draws // 2:,}), got {max(args.totals):,}")
    if args.pairs:
        _check_pairs(names, args.pairs)
    alpha = 1.0 - args.confidence
    root = np.random.SeedSequence(args.seed)
    rows = []
    for name, child in zip(names, root.spawn(len(names)), strict=True):
        row = algorithm_oracle(BY_NAME[name], args.totals, args.draws, alpha, child, args.pairs)
        rows.append(row)
        errors = row.bound_standard_error or {}
        bounds = ", ".join(f"{int(n):,}: {b:.3f} ± {errors.get(n, 0.0):.3f}" for n, b in row.bound.items())
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
    if args.pairs:
        argv = [*argv, "--pairs", *map(shlex.quote, args.pairs)]
    return [*argv, "--confidence", str(args.confidence), "--out", str(args.out)]
