"""``pgc replicate``: the paper's Tables 1–3 and Figures 2–3 with a zero-information control.

    pgc replicate --quick --out runs/replicate-quick            # smoke test (seconds to a minute)
    pgc replicate --reading sampled --out results/replicate     # the paper's grid, cap 90,000
    pgc replicate --from-raw OUT/sampled/grid.raw.json --out OUT --force   # re-analyse a saved grid
    pgc replicate --search --out results/replicate/search --processes 2   # search the unstated choices
    pgc replicate --reading NAME --confirms results/replicate/search/search.json --out OUT   # fresh seeds

Each reading is written to ``OUT/<reading>/``: ``replicate.json`` (kind "replicate", read by
``pgc report``), the Markdown tables and the PNG figures. The folder is built under a temporary
name and renamed at the end, so an interrupted run leaves nothing half-written.
"""

from __future__ import annotations

from pgc.options import add_force, add_out, add_progress, add_seed

import argparse
import contextlib
import json
import math
import time
from pathlib import Path

import pgc.schemas as schemas
from pgc.replication.analysis import analyse, replicate
from pgc.replication.grid import (CONTROL_MODES, PAPER_CAP, PAPER_EPSILONS, PAPER_TRIALS, READINGS, GridRun, GridSpec,
                              get_reading, quick_spec, reading_knobs)

from pgc.a3c.rundir import check_output_dir, is_pgc_output, output_lock, replace_directory_atomically, write_marker

from ..engine_option import add_engine_arguments, command_engine
from reports.files import json_safe, read_json, write_json_atomic
from pgc.errors import UserError
from pgc.options import non_negative_int, positive_float, positive_int

RESULT_FILE = "replicate.json"
RAW_FILE = "grid.raw.json"


def finite_epsilon(text: str) -> float:
    value = positive_float(text)
    if math.isinf(value):
        raise argparse.ArgumentTypeError("ε must be finite (ε = ∞ is always run as the non-private reference)")
    return value


def spec_from_args(args: argparse.Namespace, reading: str) -> GridSpec:
    seed = 0 if args.seed is None else args.seed
    base = quick_spec(reading, seed=seed) if args.quick else GridSpec(reading=reading, seed=seed)
    changes = {}
    for flag, name in (("trials", "trials"), ("cap", "cap"), ("controls", "controls"),
                       ("curve_trials", "curve_trials"), ("curve_submissions", "curve_submissions"),
                       ("workers", "workers"), ("processes", "processes")):
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
    return GridSpec(**{**data, "epsilons": tuple(data["epsilons"]), "mechanisms": tuple(data["mechanisms"]),
                       "nonprivate_variants": tuple(data["nonprivate_variants"])})


def _quick_help() -> str:
    """--quick's help, counted from the quick grid itself."""
    from pgc.replication.grid import grid_settings, setting_configs

    spec = quick_spec()
    settings = grid_settings(spec)
    table = [x for x in settings if x.role != "curve"]
    curves = [x for x in settings if x.role == "curve"]
    total = sum(len(setting_configs(spec, x)) for x in settings)
    return (f"smoke grid: {total} trials in all — {spec.trials} per setting of the table ({len(table)} settings: "
            f"non-private, ε = {', '.join(f'{e:g}' for e in spec.epsilons)} and their zero-information controls; "
            f"cap {spec.cap:,}) and {spec.curve_trials} {spec.curve_submissions:,}-submission Figure-2 trial per "
            f"curve ({len(curves)} curves)")


class ReplicateCommand:
    help = "replicate the paper's Tables 1-3 and Figures 2-3 with a zero-information control"

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument("--quick", action="store_true", help=_quick_help())
        p.add_argument("--reading", nargs="+", type=reading_name, default=None,
                       help=f"reading(s) of the paper's ambiguities: a preset ({', '.join(sorted(READINGS))}) or a "
                            "knob reading 'kn-…' as named by --search (default: sampled); see docs/README-replicate.md")
        p.add_argument("--search", action="store_true",
                       help="search the knob readings on search seeds (resumable; writes OUT/search.json)")
        p.add_argument("--search-readings", type=positive_int, default=40,
                       help="readings the search proposes (default 40; repeats are not re-run)")
        p.add_argument("--search-also", nargs="+", type=knob_name, metavar="KNOB_READING", default=(),
                       help="--search: also evaluate these knob readings (first, before the sampler's proposals; "
                            "each counts as a proposal; e.g. the best reading with one knob changed)")
        p.add_argument("--confirms", metavar="SEARCH_JSON",
                       help="this run confirms a search: record role 'confirmation' and the search seeds; "
                            "refused if any seed was used by the search")
        p.add_argument("--trials", type=positive_int, help=f"trials per setting (default {PAPER_TRIALS})")
        p.add_argument("--cap", type=positive_int, help=f"submissions per trial, the FST cap (default {PAPER_CAP:,})")
        p.add_argument("--epsilons", type=finite_epsilon, nargs="+",
                       help=f"private ε values (default {' '.join(f'{e:g}' for e in PAPER_EPSILONS)})")
        p.add_argument("--mechanisms", nargs="+", choices=["laplace", "prs"], help="default: laplace prs")
        p.add_argument("--nonprivate-variants", nargs="+", metavar="NAME",
                       help="run only these ε=∞ variants of the reading (e.g. C=10); default: all")
        p.add_argument("--controls", choices=CONTROL_MODES,
                       help="zero-information controls: eps1 (one per mechanism at the smallest ε, default), "
                            "matched (one per private setting), none")
        p.add_argument("--curve-trials", type=non_negative_int, help="Figure 2 trials per curve (default 2; 0: skip)")
        p.add_argument("--curve-submissions", type=positive_int, help="length of Figure 2 runs (default 15,000)")
        p.add_argument("--workers", type=positive_int, help="W concurrent workers (default 9)")
        p.add_argument("--processes", type=positive_int,
                       help="forked trainer processes (default 1; 2 uses both cores of the reference machine)")
        add_engine_arguments(p, "where the grid's trials run: local processes (--processes; default) or a Ray cluster")
        add_seed(p, default=None,
                       help="first seed (default 0; with --search 1,000,000, so confirmation grids on 0..19 are fresh)")
        add_out(p, default="runs/replicate", help="output folder (default runs/replicate)")
        add_force(p, help="replace existing OUT/<reading> folders")
        p.add_argument("--from-raw", metavar="FILE",
                       help=f"re-analyse a saved raw grid (OUT/<reading>.{RAW_FILE}) instead of running it")
        add_progress(p, help="progress (default on): a bar on a terminal, a dated line every 30 s otherwise")

    def run(self, args: argparse.Namespace) -> int:
        from reports.replication import render_all

        out = Path(args.out)
        if args.search_also and not args.search:
            raise UserError("--search-also needs --search")
        if args.search:
            with command_engine(args, install=True):  # the search's grids run their trials on the engine
                return self._search(out, args)
        if args.from_raw:
            return self._from_raw(Path(args.from_raw), out, args, render_all)
        readings = args.reading or ["sampled"]
        args._confirmation = self._confirmation(args, readings) if args.confirms else None
        if len(set(readings)) != len(readings):
            raise UserError("--reading lists a reading twice")
        specs = {r: spec_from_args(args, r) for r in readings}  # validate everything before running
        if out.exists() and not out.is_dir():
            raise UserError(f"{out} exists and is not a folder")
        for r in readings:
            check_output_dir(out / r, force=args.force, command="replicate")
        progress = args.progress
        with contextlib.ExitStack() as locks:  # every reading's folder is ours until the end
            locks.enter_context(command_engine(args, install=True))
            for r in readings:
                locks.enter_context(output_lock(out / r))
                check_output_dir(out / r, force=args.force, command="replicate")
            self._run_readings(specs, out, args, progress, render_all)
        return 0

    def _run_readings(self, specs, out: Path, args, progress: bool, render_all) -> None:
        for r, spec in specs.items():
            start = time.perf_counter()
            raw_path = out / f"{r}.{RAW_FILE}"
            raw: dict = {}

            def save_raw(run: GridRun, raw_path=raw_path, raw=raw) -> None:  # survives a failing analysis
                raw.update(run.to_dict())
                write_json_atomic(raw_path, schemas.dump("replicate-raw", raw))

            result = replicate(spec, progress=progress, raw_hook=save_raw)
            self._finish(result, raw, out / r, args, render_all, time.perf_counter() - start)
            raw_path.unlink(missing_ok=True)  # now inside the folder

    def _from_raw(self, path: Path, out: Path, args: argparse.Namespace, render_all) -> int:
        raw = read_json(path)
        try:
            run = GridRun.from_dict(_floats(raw))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise UserError(f"{path} is not a raw replicate grid: {exc}") from None
        target = out / run.spec.reading
        check_output_dir(target, force=args.force, command="replicate")
        with output_lock(target):
            check_output_dir(target, force=args.force, command="replicate")
            start = time.perf_counter()
            result = analyse(run)
            result["reanalysed_from"] = str(path)  # the grid's own wall time and machine load are kept in it
            self._finish(result, raw, target, args, render_all, time.perf_counter() - start)
        return 0

    @staticmethod
    def _confirmation(args: argparse.Namespace, readings: list[str]) -> dict:
        """Check a confirmation run against its search record: fresh seeds only."""
        from pgc.replication.search import search_seeds

        record = read_json(Path(args.confirms))
        if not isinstance(record, dict) or record.get("kind") != "reading-search":
            raise UserError(f"{args.confirms} is not a reading-search record (kind != 'reading-search')")
        used = set(search_seeds(record))
        trials = args.trials if args.trials is not None else PAPER_TRIALS
        curve = args.curve_trials if args.curve_trials is not None else 2
        first = 0 if args.seed is None else args.seed
        seeds = list(range(first, first + max(trials, curve)))
        clash = sorted(used & set(seeds))
        if clash:
            raise UserError(f"confirmation seeds {seeds[0]}..{seeds[-1]} overlap the search seeds "
                           f"({len(clash)} shared, e.g. {clash[0]}): choose --seed outside {min(used)}..{max(used)}")
        tried = [e["reading"] for e in record["readings"]]
        unknown = [r for r in readings if r not in tried]
        if unknown:
            raise UserError(f"reading(s) {unknown} were not tried by the search in {args.confirms}")
        return {"role": "confirmation", "search_record": str(args.confirms), "search_seeds": sorted(used),
                "confirmation_seeds": seeds, "readings_tried_by_search": record["readings_tried"],
                "search_proposals": record["proposals"],
                "search_rank": {r: tried.index(r) + 1 for r in readings}}

    def _search(self, out: Path, args: argparse.Namespace) -> int:
        from pgc.replication.search import SearchSpec, run_search

        try:
            spec = SearchSpec(readings=args.search_readings, trials=args.trials or 10, cap=args.cap or PAPER_CAP,
                              seed=SearchSpec().seed if args.seed is None else args.seed, processes=args.processes or 1,
                              workers=args.workers or 9)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        resume = (out / "search.db").is_file() and is_pgc_output(out)
        check_output_dir(out, update=resume, command="replicate")
        out.mkdir(parents=True, exist_ok=True)
        from pgc.tasks.progress import progress_bar

        with output_lock(out):
            write_marker(out, command="replicate --search")
            bar = progress_bar(spec.readings, "reading", "reading search", args.progress)
            shown = [0]

            def report(done: int, total: int, entry: dict | None) -> None:
                bar.update(max(0, done - shown[0]))
                shown[0] = max(shown[0], done)

            start = time.perf_counter()
            try:
                record = run_search(spec, f"sqlite:///{(out / 'search.db').resolve()}", progress=report,
                                    first=_FIRST_PROPOSALS, also=tuple(args.search_also))
            finally:
                bar.close()
            record["cli_args"] = {k: v for k, v in vars(args).items() if not k.startswith("_")}
            record["this_call_wall_time_s"] = round(time.perf_counter() - start, 1)
            write_json_atomic(out / "search.json", schemas.dump("reading-search", json_safe(record)))
        print(f"search: {record['readings_tried']} readings tried ({record['proposals']} proposals, "
              f"{record['rejected']} rejected by their control) in {record['wall_time_s']:.0f}s of grids")
        for e in record["readings"][:5]:
            state = "REJECTED (control)" if e["rejected"] else "accepted"
            print(f"  {e['reading']:<48} fit {e['fit']['total']:9.2f}  {state}")
        print(f"best: {', '.join(record['best']) or 'none accepted'}; wrote {out}/search.json")
        return 0

    @staticmethod
    def _finish(result: dict, raw: dict, target: Path, args, render_all, wall: float) -> None:
        result["cli_args"] = {k: v for k, v in vars(args).items() if not k.startswith("_")}
        confirmation = getattr(args, "_confirmation", None)
        result["role"] = confirmation["role"] if confirmation else "exploratory"
        if confirmation:
            result["confirmation"] = {**confirmation, "reading": result["reading"]["name"]}
        blobs = render_all(result)
        blobs[RESULT_FILE] = (json.dumps(json_safe(schemas.dump("replicate", result)), indent=1, ensure_ascii=False)
                              + "\n").encode()
        blobs[RAW_FILE] = (json.dumps(json_safe(schemas.dump("replicate-raw", raw)), ensure_ascii=False) + "\n").encode()
        _write_folder(target, blobs)
        _print_summary(result, target, wall)


# proposals evaluated before the sampler's own (after the literal reading): the Keras A3C example's
# choices one group at a time, where the exploration schedule of §4 comes from
_FIRST_PROPOSALS = (
    {"reward": "term", "returns": "n5", "bootstrap": "noboot"},
    {"returns": "n5"},
    {"reward": "term", "returns": "n5", "bootstrap": "noboot", "actions": "sample", "loss": "mean",
     "optimizer": "rms", "alpha": "astep"},
)


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


def _floats(obj):
    """JSON's "inf"/"nan" strings back to floats in trial summaries."""
    if isinstance(obj, dict):
        return {k: (float(v) if k in ("fst",) and isinstance(v, str) else _floats(v)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_floats(v) for v in obj]
    return obj


def _write_folder(target: Path, blobs: dict[str, bytes]) -> None:
    with replace_directory_atomically(target, "replicate") as tmp:
        for name, blob in blobs.items():
            (tmp / name).write_bytes(blob)


def _print_summary(result: dict, target: Path, wall: float) -> None:
    steps = result["agent_steps"]
    print(f"reading {result['reading']['name']}: {result['trials_total']} trials, cap {result['spec']['cap']:,}: "
          f"grid {result['wall_time_s']:.1f}s ({wall:.1f}s with analysis), {steps:,} agent-steps "
          f"({steps / max(result['wall_time_s'], 1e-9):.3g}/s)")
    for row in result["settings"]:
        fst = row["median_fst"]
        fst_s = "∞" if math.isinf(fst) else f"{fst:,.1f}"
        vs = row.get("vs_control", {}).get("verdict", "")
        print(f"  {row['key']:<40} success {row['successes']:>2}/{row['trials']:<2}  median FST {fst_s:>10}  {vs}")
    print(f"wrote {target}/")
