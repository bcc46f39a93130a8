"""``pgc replicate``: the paper's Tables 1–3 and Figures 2–3 with a zero-information control.

    pgc replicate --quick --out runs/replicate-quick            # smoke test (seconds to a minute)
    pgc replicate --reading sampled --out results/replicate     # the paper's grid, cap 90,000
    pgc replicate --from-raw OUT/sampled/grid.raw.json --out OUT --force   # re-analyse a saved grid
    pgc replicate --search --out results/replicate/search --processes 2   # search the unstated choices
    pgc replicate --reading NAME --confirms results/replicate/search/search.json --out OUT   # fresh seeds

Each reading is written to ``OUT/<reading>/``: ``replicate.json`` (kind "replicate", read by
``pgc report``), the Markdown tables and the PNG figures. The folder is built under a temporary
name and renamed at the end, so an interrupted run leaves nothing half-written (:mod:`pgc.replication.runs`).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from pgc.engines import chosen_engine
from pgc.errors import UserError
from pgc.options import (
    add_engine,
    add_force,
    add_out,
    add_progress,
    add_seed,
    non_negative_int,
    positive_float,
    positive_int,
)
from pgc.replication.grid import (
    CONTROL_MODES,
    PAPER_CAP,
    PAPER_EPSILONS,
    PAPER_TRIALS,
    READINGS,
    GridSpec,
    get_reading,
    quick_spec,
    reading_knobs,
)
from pgc.replication.runs import RAW_FILE, quick_grid_description
from pgc.schemas.replicate_kinds import GridCost, ReplicateResult


def finite_epsilon(text: str) -> float:
    value = positive_float(text)
    if math.isinf(value):
        raise argparse.ArgumentTypeError("ε must be finite (ε = ∞ is always run as the non-private reference)")
    return value


def spec_from_args(args: argparse.Namespace, reading: str) -> GridSpec:
    seed = 0 if args.seed is None else args.seed
    base = quick_spec(reading, seed=seed) if args.quick else GridSpec(reading=reading, seed=seed)
    changes = {}
    for flag, name in (
        ("trials", "trials"),
        ("cap", "cap"),
        ("controls", "controls"),
        ("curve_trials", "curve_trials"),
        ("curve_submissions", "curve_submissions"),
        ("workers", "workers"),
        ("processes", "processes"),
    ):
        value = getattr(args, flag)
        if value is not None:
            changes[name] = value
    if args.epsilons is not None:
        changes["epsilons"] = tuple(args.epsilons)
    if args.mechanisms is not None:
        changes["mechanisms"] = tuple(args.mechanisms)
    if args.nonprivate_variants is not None:
        changes["nonprivate_variants"] = tuple(args.nonprivate_variants)
    data = {**base.to_dict(), **changes}
    return GridSpec(
        **{
            **data,
            "epsilons": tuple(data["epsilons"]),
            "mechanisms": tuple(data["mechanisms"]),
            "nonprivate_variants": tuple(data["nonprivate_variants"]),
        }
    )


class ReplicateCommand:
    help = "replicate the paper's Tables 1-3 and Figures 2-3 with a zero-information control"

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument("--quick", action="store_true", help=quick_grid_description())
        p.add_argument(
            "--reading",
            nargs="+",
            type=reading_name,
            default=None,
            help=f"reading(s) of the paper's ambiguities: a preset ({', '.join(sorted(READINGS))}) or a "
            "knob reading 'kn-…' as named by --search (default: sampled); see docs/README-replicate.md",
        )
        p.add_argument(
            "--search",
            action="store_true",
            help="search the knob readings on search seeds (resumable; writes OUT/search.json)",
        )
        p.add_argument(
            "--search-readings",
            type=positive_int,
            default=40,
            help="readings the search proposes (default 40; repeats are not re-run)",
        )
        p.add_argument(
            "--search-also",
            nargs="+",
            type=knob_name,
            metavar="KNOB_READING",
            default=(),
            help="--search: also evaluate these knob readings (first, before the sampler's proposals; "
            "each counts as a proposal; e.g. the best reading with one knob changed)",
        )
        p.add_argument(
            "--confirms",
            metavar="SEARCH_JSON",
            help="this run confirms a search: record role 'confirmation' and the search seeds; "
            "refused if any seed was used by the search",
        )
        p.add_argument("--trials", type=positive_int, help=f"trials per setting (default {PAPER_TRIALS})")
        p.add_argument("--cap", type=positive_int, help=f"submissions per trial, the FST cap (default {PAPER_CAP:,})")
        p.add_argument(
            "--epsilons",
            type=finite_epsilon,
            nargs="+",
            help=f"private ε values (default {' '.join(f'{e:g}' for e in PAPER_EPSILONS)})",
        )
        p.add_argument("--mechanisms", nargs="+", choices=["laplace", "prs"], help="default: laplace prs")
        p.add_argument(
            "--nonprivate-variants",
            nargs="+",
            metavar="NAME",
            help="run only these ε=∞ variants of the reading (e.g. C=10); default: all",
        )
        p.add_argument(
            "--controls",
            choices=CONTROL_MODES,
            help="zero-information controls: eps1 (one per mechanism at the smallest ε, default), "
            "matched (one per private setting), none",
        )
        p.add_argument("--curve-trials", type=non_negative_int, help="Figure 2 trials per curve (default 2; 0: skip)")
        p.add_argument("--curve-submissions", type=positive_int, help="length of Figure 2 runs (default 15,000)")
        p.add_argument("--workers", type=positive_int, help="W concurrent workers (default 9)")
        p.add_argument(
            "--processes",
            type=positive_int,
            help="forked trainer processes (default 1; 2 uses both cores of the reference machine)",
        )
        add_engine(p, "where the grid's trials run: local processes (--processes; default) or a Ray cluster")
        add_seed(
            p,
            default=None,
            help="first seed (default 0; with --search 1,000,000, so confirmation grids on 0..19 are fresh)",
        )
        add_out(p, default="runs/replicate", help="output folder (default runs/replicate)")
        add_force(p, help="replace existing OUT/<reading> folders")
        p.add_argument(
            "--from-raw",
            metavar="FILE",
            help=f"re-analyse a saved raw grid (OUT/<reading>.{RAW_FILE}) instead of running it",
        )
        add_progress(p, help="progress (default on): a bar on a terminal, a dated line every 30 s otherwise")

    def run(self, args: argparse.Namespace) -> int:
        from pgc.replication import runs

        out = Path(args.out)
        cli_args = {k: v for k, v in vars(args).items() if not k.startswith("_")}
        if args.search_also and not args.search:
            raise UserError("--search-also needs --search")
        if args.search:
            with chosen_engine(args.engine, args.address, install=True):  # the search's grids run on the engine
                return self._search(out, args, cli_args)
        if args.from_raw:
            runs.reanalyse(
                Path(args.from_raw), out, force=args.force, record={"cli_args": cli_args}, on_reading=_print_summary
            )
            return 0
        readings = args.reading or ["sampled"]
        confirmation = (
            runs.confirmation_record(
                args.confirms, readings, trials=args.trials, curve_trials=args.curve_trials, seed=args.seed
            )
            if args.confirms
            else None
        )
        if len(set(readings)) != len(readings):
            raise UserError("--reading lists a reading twice")
        specs = {r: spec_from_args(args, r) for r in readings}  # validate everything before running
        if out.exists() and not out.is_dir():
            raise UserError(f"{out} exists and is not a folder")
        runs.replicate_readings(
            specs,
            out,
            force=args.force,
            record={"cli_args": cli_args, "confirmation": confirmation},
            progress=args.progress,
            on_reading=_print_summary,
            engine=args.engine,
            address=args.address,
        )
        return 0

    @staticmethod
    def _search(out: Path, args: argparse.Namespace, cli_args: dict) -> int:
        from pgc.replication.runs import reading_search
        from pgc.replication.search import SearchSpec

        try:
            spec = SearchSpec(
                readings=args.search_readings,
                trials=args.trials or 10,
                cap=args.cap or PAPER_CAP,
                seed=SearchSpec().seed if args.seed is None else args.seed,
                processes=args.processes or 1,
                workers=args.workers or 9,
            )
        except ValueError as exc:
            raise UserError(str(exc)) from None
        record = reading_search(spec, out, also=tuple(args.search_also), progress=args.progress, cli_args=cli_args)
        print(
            f"search: {record.readings_tried} readings tried ({record.proposals} proposals, "
            f"{record.rejected} rejected by their control) in {record.wall_time_s or 0:.0f}s of grids"
        )
        for e in record.readings[:5]:
            state = "REJECTED (control)" if e.rejected else "accepted"
            print(f"  {e.reading:<48} fit {e.fit.total:9.2f}  {state}")
        print(f"best: {', '.join(record.best) or 'none accepted'}; wrote {out}/search.json")
        return 0


def _name_checked_by(check):
    """An argparse type: the text itself, once ``check(text)`` accepts it (its ValueError is the message)."""

    def parse(text: str) -> str:
        try:
            check(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return text

    return parse


reading_name = _name_checked_by(get_reading)  # a preset or a knob reading
knob_name = _name_checked_by(reading_knobs)  # a knob reading ``kn-…``, as --search names them


def _print_summary(result: ReplicateResult, target: Path, wall: float) -> None:
    cost, spec = result.cost or GridCost(), result.spec
    steps, grid_wall = cost.agent_steps or 0, cost.wall_time_s or 0.0
    print(
        f"reading {result.reading.name if result.reading else '?'}: {cost.trials_total} trials, "
        f"cap {spec.cap if spec else 0:,}: grid {grid_wall:.1f}s ({wall:.1f}s with analysis), {steps:,} agent-steps "
        f"({steps / max(grid_wall, 1e-9):.3g}/s)"
    )
