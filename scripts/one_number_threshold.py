"""A one-number release's threshold chosen on the whole training split against the selection half alone.

Of a one-number release the projection statistic is ±y (its fit learns a sign), and ``fit_candidate`` chooses the
threshold of its curve on both halves of the training split. This script audits catalogue algorithms whose releases
are one continuous number, each at one fixed pair, over several seeds, once with the engine as it is and once with
that rule switched off in this process (the threshold chosen on the selection half, as for every other statistic),
and writes a Markdown table of the certified ε_LB: medians, the share above the claim, the paired difference.
With ``--raced-seeds N`` a second table audits the catalogue bench's chosen-pair cells (its own cell seeds 0 … N−1:
the named pairs raced, the survivor's race releases at the head of its training split), once as the engine does —
the raced releases keep the threshold on the selection half — and once with the whole split for them too. Usage:

    python scripts/one_number_threshold.py --seeds 40 --raced-seeds 12 \
        --out results/catalogue/one-number-threshold/table.md
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from audit.engine.system_audit import audit_system
from audit.statistics import SparseProjection
from pgc.catalogue import CHANNEL, catalogue_system
from pgc.files import write_text_atomic
from pgc.options import non_negative_int, positive_int

# (algorithm, pair, certification releases per side, training fraction): the catalogue bench's sizes at 10⁵ per side
# in total — 16 pairs: 52,915 certified and about 21,000 training (the race's survivor's releases included); 4 pairs:
# 60,000 and 21,250
CASES = (
    ("ReportNoisyMax3", "all above", 52_915, 0.4),
    ("ReportNoisyMax4", "all below", 52_915, 0.4),
    ("LaplaceMechanism", "one above", 60_000, 0.35),
)
RULES = ("whole split", "selection half")


def _audit(name: str, pair: str, samples: int, fraction: float, seed: int) -> float:
    system = catalogue_system(name)
    first, second = system.canaries()[pair]
    result = audit_system(
        system, first, second, samples=samples, seed=seed, confidence=0.95, train_fraction=fraction, channels=[CHANNEL]
    )
    return float(result.rows[0].epsilon_lower_bound)


def run(seeds: int) -> list[str]:
    """The table's rows, one per case."""
    rows = []
    whole_rule = SparseProjection.orientation_only
    for name, pair, samples, fraction in CASES:
        bounds: dict[str, np.ndarray] = {}
        start = time.perf_counter()
        for rule in RULES:
            SparseProjection.orientation_only = whole_rule if rule == RULES[0] else (lambda self, width: False)  # type: ignore[method-assign]
            try:
                bounds[rule] = np.array([_audit(name, pair, samples, fraction, s) for s in range(seeds)])
            finally:
                SparseProjection.orientation_only = whole_rule  # type: ignore[method-assign]
        claim = float(catalogue_system(name).claim.epsilon)
        rows.append(_row(f"{name} ({pair}), {samples:,} certified", bounds[RULES[0]], bounds[RULES[1]], claim))
        print(rows[-1], f"({time.perf_counter() - start:.0f} s)", flush=True)
    return rows


def _row(case: str, first: np.ndarray, second: np.ndarray, claim: float) -> str:
    """One table row: each rule's median ε_LB and how many seeds lie above the claim, and the paired difference
    first − second (mean ± standard error)."""
    cells = [case]
    for b in (first, second):
        cells.append(f"{statistics.median(b):.4f} ({int(np.sum(b > claim))} of {len(b)} > {claim:g})")
    diff = first - second
    cells.append(f"{diff.mean():+.4f} ± {diff.std(ddof=1) / np.sqrt(len(diff)):.4f}")
    return "| " + " | ".join(cells) + " |"


RACED = ("ReportNoisyMax3", "ReportNoisyMax4")
RACED_RULES = ("raced: selection half (the engine)", "raced: whole split")


def run_raced(seeds: int) -> list[str]:
    """The second table's rows: the bench's chosen-pair audit of each :data:`RACED` algorithm per cell seed, under
    both :data:`RACED_RULES`."""
    import audit.engine.pair_search as pair_search
    from audit.engine.releases import SelectionPool
    from pgc.benchmarks.catalogue import cell_seed, ours_pair_choice

    rows = []
    for name in RACED:
        system = catalogue_system(name)
        claim = float(system.claim.epsilon)
        bounds: dict[str, np.ndarray] = {}
        for rule in RACED_RULES:
            pair_search.SelectionPool = SelectionPool if rule == RACED_RULES[0] else _UnracedPool  # type: ignore[misc]
            try:
                found = []
                for seed in range(seeds):
                    stream = cell_seed(seed, name).spawn(3)[1]  # the bench's stream for the chosen-pair audit
                    ours = ours_pair_choice(system, system.canaries(), 100_000, 0.95, int(stream.generate_state(1)[0]))
                    found.append(float(ours.epsilon_lower_bound or 0.0))
                bounds[rule] = np.array(found)
            finally:
                pair_search.SelectionPool = SelectionPool  # type: ignore[misc]
        rows.append(
            _row(f"{name}, chosen pair, seeds 0–{seeds - 1}", bounds[RACED_RULES[0]], bounds[RACED_RULES[1]], claim)
        )
        print(rows[-1], flush=True)
    return rows


class _UnracedPool:
    """A selection pool that does not say its releases won a race: the whole-split threshold applies to them."""

    def __new__(cls, *args, **kwargs):
        from audit.engine.releases import SelectionPool

        kwargs["raced"] = False
        return SelectionPool(*args, **kwargs)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=positive_int, default=40, help="seeds 0 … N−1 per case and rule")
    p.add_argument(
        "--raced-seeds", type=non_negative_int, default=0, help="also the bench's chosen-pair cells, seeds 0 … N−1"
    )
    p.add_argument("--out", default="results/catalogue/one-number-threshold/table.md")
    args = p.parse_args(argv)
    if args.seeds < 2 or args.raced_seeds == 1:
        p.error("--seeds and --raced-seeds need at least 2 seeds (a paired standard error); --raced-seeds 0 skips")
    command = "python " + " ".join(sys.argv if argv is None else [__file__, *argv])
    lines = [
        "# A one-number release's threshold: the whole training split against the selection half",
        "",
        f"Command: `{command}`",
        "",
        "| case | ε_LB median, whole split | ε_LB median, selection half | paired difference (mean ± s.e.) |",
        "|---|---|---|---|",
        *run(args.seeds),
        "",
    ]
    if args.raced_seeds:
        lines += [
            "| case | ε_LB median, raced releases on the selection half | raced releases on the whole split | "
            "paired difference, selection half − whole |",
            "|---|---|---|---|",
            *run_raced(args.raced_seeds),
            "",
        ]
    write_text_atomic(Path(args.out), "\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
