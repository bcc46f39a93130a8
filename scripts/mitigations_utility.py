"""Utility cost of the channel mitigations (pgc.a3c.protect) on the paper's PRS and Laplace settings.

PRS (|B| = 100) and Laplace (|B| = 1), the paper's buffers, ε ∈ {1, 5, 10}, 20 trials per cell, the confirmed
reading of ``pgc replicate`` (:data:`pgc.replication.grid.CONFIRMED_READING`; any reading name with ``--reading``), 9
workers, stop at the first success, cap N submissions, each cell run without mitigations and with
each of them. Seeds 0..K−1 are shared by all variants.

* success / median FST — as the trainer's aggregator measures them (eq. 26 on the scores it sees:
  the privatized ones when the score is protected, and the trial stops there);
* true success / median true FST — evaluation only, eq. 26 on the true scores of the same trial;
* ``…, run to cap`` variants keep training to the cap (no stop on the privatized μ), so their true
  FST measures what the budget split (the gradient at ε − ε_score) costs the learning itself;
* ticks — median environment-step clock at the true success (successful trials): the fixed
  schedule's cost in time.

    python scripts/mitigations_utility.py --out results/mitigations            # cap 90,000, 1 process
    python scripts/mitigations_utility.py --reading sampled --mechanisms prs    # the earlier run
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

import pgc.schemas as schemas
from pgc.a3c.trainer import train_batch
from pgc.files import write_json_atomic, write_text_atomic
from pgc.replication.grid import CONFIRMED_READING, PAPER_BUFFER, GridSpec, Setting, setting_configs
from pgc.replication.stats import median_fst, median_interval, success_interval

VARIANTS = {  # name -> (protect, stop at the aggregator's success)
    "none": ((), True),
    "score": (("score",), True),
    "score, run to cap": (("score",), False),
    "timing": (("timing",), True),
    "order": (("order",), True),
    "all": (("score", "timing", "order"), True),
    "all, run to cap": (("score", "timing", "order"), False),
}


def _fmt(x: float) -> str:
    return "∞" if not math.isfinite(x) else f"{x:,.0f}" if x == int(x) else f"{x:,.1f}"


def _utility_row(rs: list, mech: str, eps: float, name: str) -> schemas.MitigationRow:
    """One cell: a mechanism, ε and mitigation variant over its trials."""
    k = len(rs)
    stop = VARIANTS[name][1]
    fst = [r.fst for r in rs] if stop else [math.inf] * k  # no stop: the aggregator's FST is not used
    true = [r.true_fst for r in rs]
    ok = int(sum(math.isfinite(f) for f in fst))
    ok_true = int(sum(math.isfinite(f) for f in true))
    ticks = [r.ticks for r, f in zip(rs, true, strict=True) if math.isfinite(f) and stop and f == r.scores.size]
    cfg = rs[0].config
    return schemas.MitigationRow(
        mechanism=mech,
        epsilon=eps,
        variant=name,
        protect=list(cfg.protect),
        stop_at_success=stop,
        gradient_epsilon=cfg.gradient_epsilon,
        score_epsilon=cfg.score_epsilon_total,
        trials=k,
        aggregator=schemas.AggregatorSuccess(
            successes=ok if stop else None,
            success_ci=list(success_interval(ok, k)) if stop else None,
            median_fst=median_fst(fst) if stop else None,
            fsts=fst,
        ),
        true=schemas.TrueSuccess(
            true_successes=ok_true,
            true_success_ci=list(success_interval(ok_true, k)),
            median_true_fst=median_fst(true),
            median_true_fst_ci=list(median_interval(true)[:2]),
            true_fsts=true,
        ),
        median_ticks_at_success=float(np.median(ticks)) if ticks else None,
        median_submissions=float(np.median([r.scores.size for r in rs])),
        median_updates=float(np.median([r.updates for r in rs])),
    )


def _utility_table(rows: list[schemas.MitigationRow], args: argparse.Namespace, trials: int, wall: float) -> list[str]:
    """The Markdown table of utility.md."""
    lines = [
        f"Paper buffers (Laplace |B| = 1, PRS |B| = 100), reading `{args.reading}`, {args.trials} trials per "
        f"cell, cap {args.cap:,} submissions "
        f"({trials} trials, {wall:.0f} s on {args.processes} process(es)).",
        "",
        "| mechanism | ε | variant | ε grad + score | success (aggregator) | median FST (aggregator) "
        "| true success | median true FST [95 % CI] | median ticks at success |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        agg = "—" if r.successes is None else f"{r.successes}/{r.trials}"
        mfst = "—" if r.median_fst is None else _fmt(r.median_fst)
        lo, hi = r.median_true_fst_ci
        ticks = "—" if r.median_ticks_at_success is None else _fmt(r.median_ticks_at_success)
        lines.append(
            f"| {r.mechanism} | {r.epsilon:g} | {r.variant} | {r.gradient_epsilon:g} + {r.score_epsilon:g} | "
            f"{agg} | {mfst} | {r.true_successes}/{r.trials} | {_fmt(r.median_true_fst)} "
            f"[{_fmt(lo)}, {_fmt(hi)}] | {ticks} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cap", type=int, default=90_000, help="submissions per trial (default 90,000, the paper's)")
    p.add_argument("--trials", type=int, default=20)
    p.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 5.0, 10.0])
    p.add_argument("--mechanisms", nargs="+", choices=("prs", "laplace"), default=["prs", "laplace"])
    p.add_argument(
        "--reading", default=CONFIRMED_READING, help="a reading name of pgc replicate (default: the confirmed one)"
    )
    p.add_argument("--processes", type=int, default=1)
    p.add_argument("--out", default="results/mitigations")
    args = p.parse_args(argv)
    try:
        spec = GridSpec(
            reading=args.reading,
            cap=args.cap,
            trials=args.trials,
            epsilons=tuple(args.epsilons),
            mechanisms=tuple(args.mechanisms),
            controls="none",
            curve_trials=0,
        )
    except ValueError as exc:  # unknown reading, trials or cap out of range: one line, exit 2
        p.error(str(exc))
    jobs, cells = [], []
    for mech in spec.mechanisms:
        for eps in spec.epsilons:
            base = setting_configs(spec, Setting(mech, eps, PAPER_BUFFER[mech]))
            for name, (protect, stop) in VARIANTS.items():
                cells.append((mech, eps, name, len(jobs), len(base)))
                jobs += [c.replace(protect=protect, stop_at_success=stop) for c in base]
    start = time.perf_counter()
    results = train_batch(jobs, processes=args.processes)
    wall = time.perf_counter() - start
    rows = [_utility_row(results[i0 : i0 + k], mech, eps, name) for mech, eps, name, i0, k in cells]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    command = "python scripts/mitigations_utility.py " + " ".join(argv if argv is not None else sys.argv[1:])
    result = schemas.MitigationsUtility(
        command=command.strip(),
        spec=spec.to_dict(),
        reading=args.reading,
        mechanisms=list(spec.mechanisms),
        buffer_size={m: PAPER_BUFFER[m] for m in spec.mechanisms},
        wall_time_s=wall,
        agent_steps=int(sum(r.agent_steps for r in results)),
        rows=rows,
    )
    write_json_atomic(out / "utility.json", result.to_dict())
    lines = _utility_table(rows, args, len(results), wall)
    write_text_atomic(out / "utility.md", "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
