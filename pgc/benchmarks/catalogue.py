"""``pgc bench catalogue``: the DP-testing catalogue (DP-Sniper's 20 algorithms, :mod:`pgc.catalogue`) audited by
``audit_system`` beside DP-Sniper's method (:mod:`audit.peers.dp_sniper`), at the same total of releases per side.

Per cell (algorithm, seed), each tool spends ``--total`` releases per side, training included:

* ours, the chosen pair: ``audit_system(..., pairs=system.canaries())`` ranks the P pairs on its search stream
  (max(search_samples, n // 50) releases per side per pair, n the certification size, drawn per input) and
  certifies the chosen pair on fresh releases at the full confidence; :func:`pair_choice_split` sizes search +
  training + n to fit ``total`` (the search aimed at a quarter of it, the training split a quarter of n,
  ``--train-split``); this is the row that flags and enters Holm;
* ours, first pair: DP-Sniper's first pair alone on the whole ``total`` (no search: the largest certification n
  with n + the System audit's training split, a quarter of n and at least 1,000, ≤ ``total``);
* DP-Sniper: DD-Search over the P pairs with its stage sizes scaled to ``total`` (:func:`audit.peers.dp_sniper.
  scaled_config`), at the same confidence.

An algorithm is flagged when ε_LB exceeds its claimed ε. Holm's step-down (statsmodels ``multipletests``) runs
per seed over the catalogue on our p-values. The result is written after every cell (atomically: a temporary file,
then a rename); ``--resume`` keeps the finished cells of an earlier ``--out`` with the same settings. A Markdown
table is written beside it. Releases holding NaN are audited as far as the audit accepts them: a cell whose
audit refuses them records the refusal instead of a bound.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
import zlib
from pathlib import Path

import numpy as np

from pgc.errors import UserError
from pgc.options import add_confidence, add_out, non_negative_int, positive_int
from pgc.schemas.bench_study_results import (
    CatalogueAlgorithm,
    CatalogueBench,
    CatalogueCell,
    CatalogueSettings,
    CatalogueSummary,
    DpsniperSearch,
    DpsniperStages,
    FirstPairAudit,
    HolmCounts,
    OursPairChoice,
    PairChoiceSplit,
    ToolCounts,
)

help = "DP-Sniper's catalogue of 20 DP algorithms: our certified ε_LB beside DP-Sniper's, at equal releases"

TOTAL = 100_000


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--algorithms", nargs="+", default=None, help="only these algorithms (default: all 20)")
    p.add_argument(
        "--total",
        type=positive_int,
        default=TOTAL,
        help=f"releases per side per algorithm and tool, training included (default {TOTAL:,})",
    )
    p.add_argument("--seeds", type=non_negative_int, nargs="+", default=[0, 1, 2])
    p.add_argument(
        "--train-split",
        choices=SPLITS,
        default=SPLITS[0],
        help="our training split: a quarter of the certification (default), the audit's rule for the "
        "claimed ε (at least 20,000 per side below ε = 0.5), or a half",
    )
    add_confidence(p, default=0.95)
    add_out(p, default="runs/bench/catalogue.json", help="JSON result (a .md table beside it)")
    p.add_argument("--resume", action="store_true", help="keep the finished cells of an earlier --out")


def cell_seed(seed: int, algorithm: str) -> np.random.SeedSequence:
    """One cell's seed sequence, fixed by the run's seed and the algorithm alone."""
    return np.random.SeedSequence([seed, zlib.crc32(algorithm.encode())])


def certification_size(total: int, train_fraction: float, minimum: int) -> int:
    """The largest certification size n with n + the audit's training split (max(minimum, ⌊fraction·n⌋)) ≤ total."""
    n = int(total / (1.0 + train_fraction))
    while n > 0 and n + max(minimum, int(train_fraction * n)) > total:
        n -= 1
    if n < 100:
        raise UserError(f"--total {total} leaves fewer than 100 certification releases per side")
    return n


def _audit(system, pair: tuple, total: int, confidence: float, seed: int) -> FirstPairAudit:
    """audit_system on one pair within ``total`` releases per side: ε_LB, verdict, statistic, p-value, wall."""
    from audit.certification.tester import SYSTEM_SPLIT
    from audit.engine.system_audit import AuditSettings, audit_system
    from pgc.catalogue import CHANNEL

    samples = certification_size(total, SYSTEM_SPLIT.fraction, SYSTEM_SPLIT.minimum)
    settings = AuditSettings(
        samples=samples,
        seed=seed,
        confidence=confidence,
        train_fraction=SYSTEM_SPLIT.fraction,
        train_minimum=SYSTEM_SPLIT.minimum,
    )
    start = time.perf_counter()
    try:
        result = audit_system(system, pair[0], pair[1], settings, channels=[CHANNEL])
    except UserError as exc:
        return FirstPairAudit(status=f"not audited: {exc}", wall_s=time.perf_counter() - start)
    row = result.rows[0]
    return FirstPairAudit(
        status="audited",
        epsilon_lower_bound=float(row.epsilon_lower_bound),
        verdict=result.verdict,
        statistic=row.statistic,
        p_value=float(row.p_value),
        samples_per_side=samples,
        train_per_side=settings.train_samples,
        wall_s=time.perf_counter() - start,
    )


SEARCH_SHARE = 0.25  # the pair search's target share of the total; the audit's race draws at least samples // 50 a pair
SPLITS = ("quarter", "auto", "half")  # the training split: a quarter, the audit's rule for the claim, a half


def train_fraction_for(rule: str, samples: int, claimed_epsilon: float) -> float:
    """The training split's fraction of ``samples`` under ``rule`` (:data:`SPLITS`)."""
    from audit.certification.tester import SYSTEM_SPLIT, auto_train_fraction

    if rule == "auto":
        return auto_train_fraction(samples, claimed_epsilon)
    return {"quarter": SYSTEM_SPLIT.fraction, "half": 0.5}[rule]


def pair_choice_split(
    total: int,
    pairs: int,
    claimed_epsilon: float,
    rule: str = SPLITS[0],
    search_share: float = SEARCH_SHARE,
    race_share: int | None = None,
) -> PairChoiceSplit:
    """Releases per side of the pair-choice audit within ``total``: the largest certification size n with
    P · max(search_samples, n // floor) (the search, :func:`audit.engine.system_audit._chosen_pair`; the floor
    :data:`audit.engine.pair_search.NAMED_PAIR_RACE_SHARE` unless ``race_share``) + the training split
    (:data:`audit.certification.tester.SYSTEM_SPLIT` at the rule's fraction) + n ≤ total."""
    from audit.certification.tester import SYSTEM_SPLIT
    from audit.engine.pair_search import NAMED_PAIR_RACE_SHARE

    search_samples = max(2, int(search_share * total / pairs))
    floor = NAMED_PAIR_RACE_SHARE if race_share is None else race_share

    def parts(n: int) -> tuple[int, int, float]:
        fraction = train_fraction_for(rule, n, claimed_epsilon)
        return pairs * max(search_samples, n // floor), SYSTEM_SPLIT.size(n, fraction), fraction

    low, high = 0, total
    while low < high:  # the largest n whose parts fit: every part grows with n
        mid = (low + high + 1) // 2
        search, train, _ = parts(mid)
        low, high = (mid, high) if search + train + mid <= total else (low, mid - 1)
    if low < 100:
        raise UserError(f"--total {total} leaves fewer than 100 certification releases per side")
    search, train, fraction = parts(low)
    return PairChoiceSplit(
        samples=low,
        search_samples=search_samples,
        search_per_pair=search // pairs,
        search=search,
        train=train,
        train_fraction=fraction,
        rule=rule,
    )


def ours_pair_choice(
    system, pairs: dict, total: int, confidence: float, seed: int, rule: str = SPLITS[0], race_share: int | None = None
) -> OursPairChoice:
    """audit_system choosing among the named pairs on its search stream and certifying the chosen one, search,
    training and certification within ``total`` releases per side (:func:`pair_choice_split`)."""
    from audit.engine.pair_search import NAMED_PAIR_RACE_SHARE
    from audit.engine.system_audit import audit_system
    from pgc.catalogue import CHANNEL

    race_share = NAMED_PAIR_RACE_SHARE if race_share is None else race_share
    split = pair_choice_split(total, len(pairs), float(system.claim.epsilon), rule, race_share=race_share)
    start = time.perf_counter()
    releases = split.search + split.train + split.samples
    try:
        result = audit_system(
            system,
            None,
            None,
            pairs=pairs,
            samples=split.samples,
            seed=seed,
            confidence=confidence,
            train_fraction=split.train_fraction,
            search_samples=split.search_samples,
            pair_race_share=race_share,
            channels=[CHANNEL],
        )
    except UserError as exc:
        return OursPairChoice(
            pairs=len(pairs),
            split=split,
            releases_per_side=releases,
            status=f"not audited: {exc}",
            wall_s=time.perf_counter() - start,
        )
    row = result.rows[0]
    return OursPairChoice(
        pairs=len(pairs),
        split=split,
        releases_per_side=releases,
        status="audited",
        epsilon_lower_bound=float(row.epsilon_lower_bound),
        verdict=result.verdict,
        statistic=row.statistic,
        p_value=float(row.p_value),
        samples_per_side=result.samples_per_side,
        pair=(result.pair or "").split(" (chosen")[0],
        pair_scores=None if result.searched_pair is None else result.searched_pair.relation,
        wall_s=time.perf_counter() - start,
    )


def dpsniper_cell(system, pairs: dict, total: int, confidence: float, seq: np.random.SeedSequence) -> DpsniperSearch:
    """DP-Sniper's DD-Search over the pairs with its stages scaled to ``total`` releases per side."""
    from audit.peers.dp_sniper import dd_search, pair_draw, scaled_config, torch_like_init
    from pgc.catalogue import CHANNEL

    config = scaled_config(total, len(pairs), confidence=confidence)
    rng = np.random.Generator(np.random.PCG64(seq))
    draw = pair_draw(pairs, lambda secret, n: system.to_dpsniper(system.release(secret, n, rng)[CHANNEL]))
    start = time.perf_counter()
    result = dd_search(list(pairs), draw, config, torch_like_init(rng), system.dpsniper_flags)
    return DpsniperSearch(
        epsilon_lower_bound=float(result.epsilon_lower_bound),
        epsilon=float(result.epsilon),
        pair=result.pair,
        releases_per_side=config.releases_per_side(len(pairs)),
        stages=DpsniperStages(n_train=config.n_train, n=config.n, n_check=config.n_check, n_final=config.n_final),
        wall_s=time.perf_counter() - start,
    )


def audit_cell(name: str, total: int, confidence: float, seed: int, rule: str = SPLITS[0]) -> CatalogueCell:
    """One cell: ours choosing among the pairs and on the first pair, DP-Sniper over the pairs."""
    from pgc.catalogue import catalogue_system

    system = catalogue_system(name)
    pairs = system.canaries()
    first_seq, pairs_seq, sniper_seq = cell_seed(seed, name).spawn(3)
    first = next(iter(pairs.items()))
    ours_first = _audit(system, first[1], total, confidence, int(first_seq.generate_state(1)[0]))
    return CatalogueCell(
        algorithm=name,
        seed=seed,
        broken=system.broken,
        claimed_epsilon=float(system.claim.epsilon),
        pairs=len(pairs),
        first_pair=first[0],
        ours=ours_pair_choice(system, pairs, total, confidence, int(pairs_seq.generate_state(1)[0]), rule),
        ours_first_pair=ours_first,
        dpsniper=dpsniper_cell(system, pairs, total, confidence, sniper_seq),
    )


def flagged(bound: float | None, claimed: float) -> bool | None:
    """ε_LB above the claim (None: no bound)."""
    return None if bound is None else bool(bound > claimed * (1 + 1e-12))


def holm_per_seed(cells: list[CatalogueCell], confidence: float) -> dict[tuple[str, int], bool]:
    """Per seed, Holm's step-down over the catalogue on our p-values: which cells stay rejected."""
    from statsmodels.stats.multitest import multipletests

    rejected = {}
    for seed in sorted({c.seed for c in cells}):
        group = [c for c in cells if c.seed == seed and c.ours.p_value is not None]
        if group:
            keep = multipletests(
                [min(1.0, max(0.0, c.ours.p_value or 0.0)) for c in group], alpha=1.0 - confidence, method="holm"
            )[0]
            rejected.update({(c.algorithm, seed): bool(r) for c, r in zip(group, keep, strict=True)})
    return rejected


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return float(statistics.median(known)) if known else None


def per_algorithm(cells: list[CatalogueCell], rejected: dict[tuple[str, int], bool]) -> list[CatalogueAlgorithm]:
    """Per algorithm: the median over seeds of each tool's ε_LB, flags by that median, Holm per seed."""
    rows = []
    for name in dict.fromkeys(c.algorithm for c in cells):
        group = [c for c in cells if c.algorithm == name]
        claimed = group[0].claimed_epsilon
        ours = _median([c.ours.epsilon_lower_bound for c in group])
        sniper = _median([c.dpsniper.epsilon_lower_bound for c in group])
        rows.append(
            CatalogueAlgorithm(
                algorithm=name,
                broken=group[0].broken,
                claimed_epsilon=claimed,
                seeds=[c.seed for c in group],
                ours_median=ours,
                ours_first_pair_median=_median([c.ours_first_pair.epsilon_lower_bound for c in group]),
                dpsniper_median=sniper,
                ours_flags=flagged(ours, claimed),
                dpsniper_flags=flagged(sniper, claimed),
                ours_holm_rejected=[rejected.get((name, c.seed)) for c in group],
                ours_statistics=sorted({str(c.ours.statistic) for c in group}),
                ours_status=sorted({c.ours.status for c in group}),
                ours_pairs=[c.ours.pair for c in group],
                ours_wall_s=sum(c.ours.wall_s + c.ours_first_pair.wall_s for c in group),
                dpsniper_wall_s=sum(c.dpsniper.wall_s for c in group),
            )
        )
    return rows


def summary(cells: list[CatalogueCell], confidence: float) -> CatalogueSummary:
    rejected = holm_per_seed(cells, confidence)
    rows = per_algorithm(cells, rejected)
    broken, correct = [r for r in rows if r.broken], [r for r in rows if not r.broken]
    seeds = sorted({c.seed for c in cells})

    def flags(group: list[CatalogueAlgorithm]) -> ToolCounts:
        return ToolCounts(
            ours=sum(r.ours_flags is True for r in group), dpsniper=sum(r.dpsniper_flags is True for r in group)
        )

    def holm_count(group: list[CatalogueAlgorithm], seed: int) -> int:
        return sum(rejected.get((r.algorithm, seed)) is True for r in group)

    return CatalogueSummary(
        algorithms=rows,
        broken=len(broken),
        correct=len(correct),
        alpha=1.0 - confidence,
        broken_flagged=flags(broken),
        false_alarms=flags(correct),
        ours_holm_per_seed={
            str(s): HolmCounts(broken_flagged=holm_count(broken, s), false_alarms=holm_count(correct, s)) for s in seeds
        },
        ours_not_audited=[r.algorithm for r in rows if r.ours_median is None],
    )


def _fmt(value: float | None) -> str:
    return "—" if value is None else ("∞" if math.isinf(value) else f"{value:.3f}")


def write_table(path: Path, result: CatalogueBench) -> None:
    """The Markdown table: per algorithm, claim, both tools' median ε_LB and flags."""
    from pgc.files import write_text_atomic

    st = result.settings
    lines = [
        f"# `pgc bench catalogue`: {st.total:,} releases per side per tool, seeds {st.seeds}, "
        f"confidence {st.confidence}",
        "",
        f"Command: `{result.command}`",
        "",
        split_line(result),
        "",
        *([] if result.complete else [f"Partial: {len(result.cells)} cells finished; `--resume` goes on.", ""]),
        "| algorithm | broken | claimed ε | ours ε_LB (chosen pair) | ours ε_LB (first pair) | DP-Sniper ε_LB | "
        "ours flags | DP-Sniper flags | ours Holm per seed | our statistics | wall s (ours / DP-Sniper) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result.summary.algorithms if result.summary else []:
        holm = " ".join("—" if h is None else ("✔" if h else "·") for h in r.ours_holm_rejected)
        lines.append(
            f"| {r.algorithm} | {'yes' if r.broken else 'no'} | {r.claimed_epsilon:.3f} | "
            f"{_fmt(r.ours_median)} | {_fmt(r.ours_first_pair_median)} | {_fmt(r.dpsniper_median)} "
            f"| {r.ours_flags} | {r.dpsniper_flags} | {holm} | {', '.join(r.ours_statistics)} | "
            f"{r.ours_wall_s:.0f} / {r.dpsniper_wall_s:.0f} |"
        )
    lines += ["", "ε_LB: the median over seeds. " + summary_lines(result).replace("\n", "  \n")]
    write_text_atomic(path, "\n".join(lines) + "\n")


def split_line(result: CatalogueBench) -> str:
    """Our releases per side by number of pairs: the search over the pairs, the training split, the certification."""
    splits = {c.ours.pairs: c.ours.split for c in result.cells}
    parts = "; ".join(
        f"{p} pairs × {s.search_per_pair:,} search + {s.train:,} training + {s.samples:,} certification"
        for p, s in sorted(splits.items())
    )
    return f"Ours per side ({result.settings.train_split} training split): {parts}."


def summary_lines(result: CatalogueBench) -> str:
    s = result.summary
    if s is None:
        return "no cell finished"
    per_seed = ", ".join(
        f"seed {k}: {v.broken_flagged}/{s.broken} broken, {v.false_alarms}/{s.correct} correct"
        for k, v in s.ours_holm_per_seed.items()
    )
    medians = "; ".join(f"{r.algorithm} {_fmt(r.ours_median)} vs {_fmt(r.dpsniper_median)}" for r in s.algorithms)
    return (
        f"broken flagged: ours {s.broken_flagged.ours}/{s.broken}, DP-Sniper {s.broken_flagged.dpsniper}/{s.broken}\n"
        f"false alarms: ours {s.false_alarms.ours}/{s.correct}, DP-Sniper {s.false_alarms.dpsniper}/{s.correct}\n"
        f"ours after Holm over the catalogue: {per_seed}\n"
        f"not audited by ours (releases refused): {', '.join(s.ours_not_audited) or 'none'}\n"
        f"median-of-seeds ε_LB (ours vs DP-Sniper): {medians}"
    )


def _previous(path: Path, settings: CatalogueSettings) -> dict[tuple[str, int], CatalogueCell]:
    """Finished cells of an earlier run with the same settings, by (algorithm, seed)."""
    import pgc.schemas as schemas
    from pgc.files import read_json

    if not path.is_file():
        return {}
    old = schemas.load(read_json(path), where=str(path))
    same = ("total", "confidence", "train_split")
    if not isinstance(old, CatalogueBench) or any(getattr(old.settings, k) != getattr(settings, k) for k in same):
        written = old.settings.to_dict() if isinstance(old, CatalogueBench) else old.KIND
        raise UserError(f"--resume: {path} was written with other settings ({written})")
    return {(c.algorithm, c.seed): c for c in old.cells}


def _write(path: Path, result: CatalogueBench) -> None:
    from pgc.files import write_json_atomic

    write_json_atomic(path, result.to_dict())
    write_table(path.with_suffix(".md"), result)


def run(args: argparse.Namespace) -> int:
    from pgc.catalogue import BY_NAME, CATALOGUE

    names = [a.name for a in CATALOGUE] if args.algorithms is None else list(dict.fromkeys(args.algorithms))
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        raise UserError(f"unknown algorithm(s) {', '.join(unknown)}; the catalogue: {', '.join(BY_NAME)}")
    out = Path(args.out)
    settings = CatalogueSettings(
        total=args.total, confidence=args.confidence, seeds=list(args.seeds), train_split=args.train_split
    )
    done = _previous(out, settings) if args.resume else {}
    command = "pgc " + " ".join(sys.argv[1:])
    cells: list[CatalogueCell] = []
    todo = [(name, seed) for seed in args.seeds for name in names]  # a whole catalogue per seed first
    for i, (name, seed) in enumerate(todo, 1):
        cell = done.get((name, seed)) or audit_cell(name, args.total, args.confidence, seed, args.train_split)
        cells.append(cell)
        o, d = cell.ours, cell.dpsniper
        print(
            f"[{i}/{len(todo)}] {name} seed {seed}: ours {_fmt(o.epsilon_lower_bound)} on {o.pair} "
            f"[{o.status}], "
            f"first pair {_fmt(cell.ours_first_pair.epsilon_lower_bound)}, DP-Sniper "
            f"{_fmt(d.epsilon_lower_bound)}; claimed {cell.claimed_epsilon:.3f}",
            file=sys.stderr,
            flush=True,
        )
        partial = CatalogueBench(
            settings=settings,
            command=command,
            cells=list(cells),
            complete=False,
            summary=summary(cells, args.confidence),
        )
        _write(out, partial)
    result = CatalogueBench(
        settings=settings, command=command, cells=cells, complete=True, summary=summary(cells, args.confidence)
    )
    _write(out, result)
    print(summary_lines(result))
    print(f"wrote {out}, {out.with_suffix('.md')}")
    return 0
