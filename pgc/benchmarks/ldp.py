"""``pgc bench ldp``: every frequency oracle of the reference, multi-freq-ldpy and pure-ldp, per ε × k, audited
by ``audit_system`` beside LDP-Auditor's method on the same releases and beside the exact ε.

Per cell (library, protocol, k, ε): the oracle's System (pair 0 vs k − 1) is audited at ``--samples`` per side
(certification; the training split is a quarter more); LDP-Auditor's method — one guess per report, the event
"guess = 0", Clopper–Pearson at α/2 per rate (:func:`audit.peers.ldp_auditor.ldp_auditor_epsilon`) — is counted on
exactly the certification releases (:class:`pgc.ldp.guesses.GuessRecorder`), at the same α. A cell records
``epsilon_lower_bound`` (ours), ``reference_epsilon_lower_bound`` (LDP-Auditor's), ``exact_epsilon`` (of the
release as the oracle returns it, for that pair), the verdict (Holm over the result's one row) and the wall time.

``--timing-samples N`` also times one audit of every library protocol at N per side per k (ε = 1): the
"≤ 60 s per 1e5-per-side audit" goal. The result is written after every cell (atomically); ``--resume``
keeps the finished cells of an earlier ``--out`` with the same settings. A Markdown table and a figure are
written beside it (:mod:`pgc.benchmarks.ldp_render`).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import zlib
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pgc.errors import UserError
from pgc.options import add_confidence, add_out, add_samples, add_seed, positive_float, positive_int

from .ldp_render import at_least_reference, write_figure, write_table

if TYPE_CHECKING:
    from pgc.schemas import LdpBench, LdpBenchCell, LdpBenchSettings, LdpBenchSummary

    Cells = dict[tuple[str, str, int, float, int], LdpBenchCell]  # finished cells by LdpBenchCell.key

help = "LDP frequency oracles (ours, multi-freq-ldpy, pure-ldp): certified ε_LB vs LDP-Auditor's method vs exact ε"

EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)
KS = (2, 25, 100)
TIGHT_SHARE = 0.9  # the goal: ε_LB ≥ 0.9·ε at 1e6 per side where the exact ε allows it
TIGHT_SAMPLES = 1_000_000


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--libraries", nargs="+", default=["reference", "multi-freq-ldpy", "pure-ldp"])
    p.add_argument("--protocols", nargs="+", default=None, help="only these protocols (default: every one)")
    p.add_argument("--epsilons", type=positive_float, nargs="+", default=list(EPSILONS))
    p.add_argument("--ks", type=positive_int, nargs="+", default=list(KS))
    add_samples(p, default=TIGHT_SAMPLES, help="certification releases per side")
    p.add_argument(
        "--timing-samples",
        type=positive_int,
        default=None,
        help="also time one audit of every library protocol at this n per side, per k, at ε = 1",
    )
    add_confidence(p, default=0.95)
    add_seed(p, default=0)
    add_out(p, default="runs/bench/ldp.json", help="JSON result (a .md table and a .png figure beside it)")
    p.add_argument("--resume", action="store_true", help="keep the finished cells of an earlier --out")
    p.add_argument(
        "--merge",
        nargs="+",
        default=[],
        metavar="RESULT",
        help="also keep the finished cells of these results (same settings): run parts of the grid in "
        "parallel processes (--libraries, --protocols), then the whole grid once with --merge",
    )


def cell_seed(seed: int, library: str, protocol: str, k: int, epsilon: float) -> np.random.SeedSequence:
    """One cell's seed sequence, fixed by the run's seed and the cell alone (not by which other cells run)."""
    return np.random.SeedSequence([seed, zlib.crc32(f"{library}:{protocol}:{k}:{epsilon!r}".encode())])


def audit_cell(
    library: str, protocol: str, k: int, epsilon: float, samples: int, confidence: float, seed: int
) -> LdpBenchCell:
    """One cell: our certified bound, LDP-Auditor's on the same certification releases, the exact ε."""
    from audit.engine.system_audit import AuditSettings, audit_system
    from audit.peers.ldp_auditor import ldp_auditor_epsilon
    from pgc.ldp.guesses import GuessRecorder
    from pgc.ldp.system import ldp_system
    from pgc.schemas import LdpBenchCell, LdpCellOracle

    system = ldp_system(f"{library}:{protocol}", k, epsilon)
    audit_seq, guess_seq = cell_seed(seed, library, protocol, k, epsilon).spawn(2)
    v, v_prime = system.pair
    recorder = GuessRecorder(system, v, np.random.Generator(np.random.PCG64(guess_seq)))
    settings = AuditSettings(samples=samples, seed=int(audit_seq.generate_state(1)[0]), confidence=confidence)
    start = time.perf_counter()
    result = audit_system(recorder, v, v_prime, settings, channels=["report"])
    wall = time.perf_counter() - start
    row = result.rows[0]
    tp, n_pos = recorder.counts_after(v, settings.train_samples)
    fp, n_neg = recorder.counts_after(v_prime, settings.train_samples)
    exact = system.exact_epsilon()
    oracle = LdpCellOracle(
        library=library,
        protocol=protocol,
        version=system.oracle.version,
        k=k,
        epsilon=epsilon,
        parameters=system.oracle.parameters(),
    )
    return LdpBenchCell(
        oracle=oracle,
        samples_per_side=samples,
        epsilon_lower_bound=row.epsilon_lower_bound,
        reference_epsilon_lower_bound=ldp_auditor_epsilon(tp, n_pos, fp, n_neg, 1.0 - confidence),
        exact_epsilon=exact,
        claimed_epsilon=float(system.claim.epsilon),
        max_certifiable_epsilon=row.max_certifiable_epsilon,
        statistic=row.statistic,
        verdict=result.verdict,
        p_value=row.p_value,
        guess_counts=[tp, n_pos, fp, n_neg],
        wall_s=wall,
    )


def grid(args: argparse.Namespace) -> list[tuple[str, str, int, float]]:
    from pgc.ldp.registry import library_name, protocols

    cells = []
    for library in args.libraries:
        library = library_name(library)
        names = list(protocols(library))
        wanted = names if args.protocols is None else [p.upper() for p in args.protocols if p.upper() in names]
        cells += [(library, p, k, float(e)) for p in wanted for k in args.ks for e in args.epsilons]
    return cells


def todo_order(todo: list[tuple]) -> callable:
    """Sort key: the grid's order of (library, protocol, k)."""
    order = {c[:3]: i for i, c in reversed(list(enumerate(todo)))}
    return lambda c: order[c[:3]]


def holm_over(cells: list[LdpBenchCell], confidence: float) -> list[bool]:
    """Holm's step-down over every cell's p-value of "the claim holds": which cells stay rejected."""
    from statsmodels.stats.multitest import multipletests

    p_values = [min(1.0, max(0.0, float(c.p_value if c.p_value is not None else 1.0))) for c in cells]
    return list(multipletests(p_values, alpha=1.0 - confidence, method="holm")[0]) if cells else []


def _is_correct(c: LdpBenchCell) -> bool:
    return c.exact_epsilon <= c.claimed_epsilon * (1 + 1e-9)


def summary(cells: list[LdpBenchCell], timing: list[LdpBenchCell], confidence: float) -> LdpBenchSummary:
    """How many cells meet each goal, and which do not."""
    from pgc.schemas import LdpBenchSummary, LdpBoundGoals, LdpFlagGoals

    def ok_tight(c: LdpBenchCell) -> bool:
        return c.epsilon_lower_bound >= TIGHT_SHARE * c.claimed_epsilon

    tight = [
        c for c in cells if c.samples_per_side >= TIGHT_SAMPLES and c.exact_epsilon >= TIGHT_SHARE * c.claimed_epsilon
    ]
    applies = {id(c) for c in tight}
    correct = [c for c in cells if _is_correct(c)]
    broken = [c for c in cells if not _is_correct(c)]
    rejected = holm_over(cells, confidence)
    bounds = LdpBoundGoals(
        cells=len(cells),
        ours_at_least_reference=sum(at_least_reference(c) for c in cells),
        ours_below_reference=[c.label for c in cells if not at_least_reference(c)],
        tightness_applies=len(tight),
        tight=sum(ok_tight(c) for c in tight),
        not_tight=[c.label for c in tight if not ok_tight(c)],
        tightness_not_applicable=[c.label for c in cells if id(c) not in applies],
    )
    flags = LdpFlagGoals(
        correct_cells=len(correct),
        correct_flagged=[c.label for c in correct if c.verdict == "violated"],
        correct_flagged_after_holm_over_all_cells=[
            c.label for c, r in zip(cells, rejected, strict=True) if r and _is_correct(c)
        ],
        broken_flagged_after_holm_over_all_cells=sum(
            bool(r) for c, r in zip(cells, rejected, strict=True) if not _is_correct(c)
        ),
        alpha=1.0 - confidence,
        broken_cells=len(broken),
        broken_flagged=sum(c.verdict == "violated" for c in broken),
        broken_not_flagged=[c.label for c in broken if c.verdict != "violated"],
    )
    return LdpBenchSummary(
        bounds=bounds,
        flags=flags,
        timing_max_s=max((t.wall_s for t in timing), default=None),
        timing_over_60s=[f"{t.oracle.library}:{t.oracle.protocol} k={t.oracle.k}" for t in timing if t.wall_s > 60.0],
    )


def _previous(path: Path, settings: LdpBenchSettings) -> tuple[Cells, Cells]:
    """Finished cells and timings of an earlier run with the same settings, by key (the earlier result read as the
    command's input, through its schema)."""
    import pgc.schemas as schemas
    from pgc.files import read_json

    if not path.is_file():
        return {}, {}
    old = schemas.load(read_json(path), kind="ldp-bench", where=str(path))
    assert isinstance(old, schemas.LdpBench)
    same = ("samples", "confidence", "seed")  # timing cells are keyed by their own n
    if any(getattr(old.settings, k) != getattr(settings, k) for k in same):
        raise UserError(f"--resume: {path} was written with other settings ({old.settings.to_dict()})")
    return {c.key: c for c in old.cells}, {t.key: t for t in old.timing}


def _write(path: Path, result: LdpBench) -> None:
    from pgc.files import write_json_atomic

    write_json_atomic(path, result.to_dict())


def print_cell(c: LdpBenchCell, done: int, total: int) -> None:
    exact = "∞" if math.isinf(c.exact_epsilon) else f"{c.exact_epsilon:.3f}"
    print(
        f"[{done}/{total}] {c.label} n={c.samples_per_side:,}: "
        f"ours {c.epsilon_lower_bound:.3f} [{c.statistic}], LDP-Auditor "
        f"{c.reference_epsilon_lower_bound:.3f}, "
        f"exact {exact}; {c.verdict.value}; {c.wall_s:.1f} s",
        flush=True,
    )


def _timed(args: argparse.Namespace, todo: list[tuple[str, str, int, float]]) -> list[tuple[str, str, int, float]]:
    """The timing audits: every library protocol of the grid, per k, at ε = 1."""
    return sorted({(c[0], c[1], c[2], 1.0) for c in todo if c[0] != "reference"}, key=todo_order(todo))


def run(args: argparse.Namespace) -> int:
    from pgc.schemas import LdpBench, LdpBenchSettings

    if not (0.0 < args.confidence < 1.0):
        raise UserError(f"--confidence must lie in (0, 1), got {args.confidence}")
    out = Path(args.out)
    settings = LdpBenchSettings(
        samples=args.samples, confidence=args.confidence, seed=args.seed, timing_samples=args.timing_samples
    )
    cells_done, timing_done = _previous(out, settings) if args.resume else ({}, {})
    for part in args.merge:
        if not Path(part).is_file():
            raise UserError(f"--merge: no result at {part}")
        cells, timing = _previous(Path(part), settings)
        cells_done.update(cells)
        timing_done.update(timing)
    todo = grid(args)
    result = LdpBench(
        settings=settings,
        command="pgc " + " ".join(sys.argv[1:]),
        cells=[],
        complete=False,
        merged=[str(m) for m in args.merge] or None,
    )
    for i, (library, protocol, k, epsilon) in enumerate(todo, 1):
        key = (library, protocol, k, epsilon, args.samples)
        cell = cells_done.get(key) or audit_cell(
            library, protocol, k, epsilon, args.samples, args.confidence, args.seed
        )
        result = replace(result, cells=[*result.cells, cell])
        print_cell(cell, i, len(todo))
        _write(out, result)
    for library, protocol, k, epsilon in _timed(args, todo) if args.timing_samples else []:
        key = (library, protocol, k, epsilon, args.timing_samples)
        t = timing_done.get(key) or audit_cell(
            library, protocol, k, epsilon, args.timing_samples, args.confidence, args.seed
        )
        result = replace(result, timing=[*result.timing, t])
        print(f"timing {library}:{protocol} k={k}: {t.wall_s:.1f} s at {args.timing_samples:,} per side", flush=True)
        _write(out, result)
    s = summary(result.cells, result.timing, args.confidence)
    result = replace(result, summary=s, complete=True)
    _write(out, result)
    write_table(out.with_suffix(".md"), result)
    write_figure(out.with_suffix(".png"), result)
    print(
        f"{s.bounds.cells} cells: ours ≥ LDP-Auditor in {s.bounds.ours_at_least_reference}; ≥ 0.9·ε in "
        f"{s.bounds.tight} of {s.bounds.tightness_applies} where it applies; correct protocols flagged: "
        f"{len(s.flags.correct_flagged)} of {s.flags.correct_cells} (α = {s.flags.alpha:g}); broken protocols "
        f"flagged: {s.flags.broken_flagged} of {s.flags.broken_cells}; wrote {out}, {out.with_suffix('.md')}, "
        f"{out.with_suffix('.png')}"
    )
    return 0
