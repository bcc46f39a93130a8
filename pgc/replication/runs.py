"""Replication runs on disk (``pgc replicate``): each reading's grid run and analysed into ``OUT/<reading>/``,
a saved raw grid re-analysed, a confirmation checked against its search record, and the reading search.

Each reading's folder holds ``replicate.json`` (kind "replicate", read by ``pgc report``), the raw grid
``grid.raw.json``, the Markdown tables and the PNG figures. It is built under a temporary name and renamed
at the end (:func:`pgc.outdirs.replace_directory_atomically`), under the folder's lock, so an interrupted
run leaves nothing half-written; the raw grid is saved beside it as ``OUT/<reading>.grid.raw.json`` as
soon as the grid ends (it survives a failing analysis) and removed once the folder is in place.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from pgc import schemas
from pgc.errors import UserError
from pgc.files import json_safe, read_json, write_json_atomic
from pgc.outdirs import check_output_dir, is_pgc_output, output_lock, replace_directory_atomically, write_marker
from pgc.schemas.replicate_kinds import Confirmation, ReadingSearch, ReplicateOrigin, ReplicateRaw, ReplicateResult

from .analysis import analyse, replicate
from .grid import PAPER_TRIALS, GridRun, GridSpec, grid_settings, quick_spec, setting_configs
from .records import raw_record

RESULT_FILE = "replicate.json"
RAW_FILE = "grid.raw.json"
# proposals evaluated before the sampler's own (after the literal reading): the Keras A3C example's
# choices one group at a time, where the exploration schedule of §4 comes from
FIRST_PROPOSALS = (
    {"reward": "term", "returns": "n5", "bootstrap": "noboot"},
    {"returns": "n5"},
    {
        "reward": "term",
        "returns": "n5",
        "bootstrap": "noboot",
        "actions": "sample",
        "loss": "mean",
        "optimizer": "rms",
        "alpha": "astep",
    },
)
# called once a reading's folder is in place: (its result, the folder, the wall time with the analysis)
OnReading = Callable[[ReplicateResult, Path, float], None]


def quick_grid_description() -> str:
    """The quick grid in words, counted from the grid itself."""
    spec = quick_spec()
    settings = grid_settings(spec)
    table = [x for x in settings if x.role != "curve"]
    curves = [x for x in settings if x.role == "curve"]
    total = sum(len(setting_configs(spec, x)) for x in settings)
    return (
        f"smoke grid: {total} trials in all — {spec.trials} per setting of the table ({len(table)} settings: "
        f"non-private, ε = {', '.join(f'{e:g}' for e in spec.epsilons)} and their zero-information controls; "
        f"cap {spec.cap:,}) and {spec.curve_trials} {spec.curve_submissions:,}-submission Figure-2 trial per "
        f"curve ({len(curves)} curves)"
    )


def replicate_readings(
    specs: dict[str, GridSpec],
    out: Path,
    *,
    force: bool,
    record: dict,
    progress: bool,
    on_reading: OnReading,
    engine: str = "local",
    address: str | None = None,
) -> None:
    """Run and analyse each reading's grid into ``out/<reading>/``: every folder checked first, then all
    of them locked for the whole run (the grids' trials on the engine); ``record`` joins every result
    (the command's arguments ``cli_args`` and a confirmation's :class:`Confirmation` or None)."""
    from pgc.engines import chosen_engine

    for r in specs:
        check_output_dir(out / r, force=force, command="replicate")
    with contextlib.ExitStack() as locks:  # every reading's folder is ours until the end
        locks.enter_context(chosen_engine(engine, address, install=True))
        for r in specs:
            locks.enter_context(output_lock(out / r))
            check_output_dir(out / r, force=force, command="replicate")
        for r, spec in specs.items():
            start = time.perf_counter()
            raw_path = out / f"{r}.{RAW_FILE}"
            raws: list[ReplicateRaw] = []

            def save_raw(run: GridRun, raw_path=raw_path, raws=raws) -> None:  # survives a failing analysis
                raws.append(raw_record(run))
                write_json_atomic(raw_path, raws[-1].to_dict())

            result = replicate(spec, progress=progress, raw_hook=save_raw)
            wall = time.perf_counter() - start
            result = write_reading(result, raws[-1], out / r, record)
            on_reading(result, out / r, wall)
            raw_path.unlink(missing_ok=True)  # now inside the folder


def reanalyse(path: Path, out: Path, *, force: bool, record: dict, on_reading: OnReading) -> None:
    """A saved raw grid analysed again into ``out/<its reading>/`` (its own wall time and machine load kept)."""
    raw = read_json(path)
    try:
        run = GridRun.from_dict(_floats(raw))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise UserError(f"{path} is not a raw replicate grid: {exc}") from None
    target = out / run.spec.reading
    check_output_dir(target, force=force, command="replicate")
    with output_lock(target):
        check_output_dir(target, force=force, command="replicate")
        saved = schemas.load(raw, kind="replicate-raw", where=str(path))  # the input, kept as it was read
        assert isinstance(saved, ReplicateRaw)
        start = time.perf_counter()
        result = analyse(run)  # the grid's own wall time and machine load are kept in it
        wall = time.perf_counter() - start
        result = write_reading(result, saved, target, record, reanalysed_from=str(path))
        on_reading(result, target, wall)


def write_reading(
    result: ReplicateResult, raw: ReplicateRaw, target: Path, record: dict, *, reanalysed_from: str | None = None
) -> ReplicateResult:
    """The reading's folder (result, raw grid, tables, figures), replaced atomically; ``record`` holds the
    command's arguments (``cli_args``) and a confirmation's record (``confirmation``) or None. The result as
    written (with its origin)."""
    from reports.replication import render_all

    confirmation = record.get("confirmation")
    reading = result.reading.name if result.reading is not None else None
    origin = ReplicateOrigin(
        reanalysed_from=reanalysed_from,
        cli_args=record["cli_args"],
        role=confirmation.role if confirmation else "exploratory",
        confirmation=replace(confirmation, reading=reading) if confirmation else None,
    )
    result = replace(result, origin=origin)
    blobs = render_all(result)
    blobs[RESULT_FILE] = (json.dumps(json_safe(result.to_dict()), indent=1, ensure_ascii=False) + "\n").encode()
    blobs[RAW_FILE] = (json.dumps(json_safe(raw.to_dict()), ensure_ascii=False) + "\n").encode()
    with replace_directory_atomically(target, "replicate") as tmp:
        for name, blob in blobs.items():
            (tmp / name).write_bytes(blob)
    return result


def confirmation_record(
    search_json: str, readings: list[str], *, trials: int | None, curve_trials: int | None, seed: int | None
) -> Confirmation:
    """A confirmation run checked against its search record: fresh seeds only, readings the search tried."""
    from .search import search_seeds

    record = read_json(Path(search_json))
    if not isinstance(record, dict) or record.get("kind") != "reading-search":
        raise UserError(f"{search_json} is not a reading-search record (kind != 'reading-search')")
    used = set(search_seeds(record))
    trials = trials if trials is not None else PAPER_TRIALS
    curve = curve_trials if curve_trials is not None else 2
    first = 0 if seed is None else seed
    seeds = list(range(first, first + max(trials, curve)))
    clash = sorted(used & set(seeds))
    if clash:
        raise UserError(
            f"confirmation seeds {seeds[0]}..{seeds[-1]} overlap the search seeds "
            f"({len(clash)} shared, e.g. {clash[0]}): choose --seed outside {min(used)}..{max(used)}"
        )
    tried = [e["reading"] for e in record["readings"]]
    unknown = [r for r in readings if r not in tried]
    if unknown:
        raise UserError(f"reading(s) {unknown} were not tried by the search in {search_json}")
    return Confirmation(
        role="confirmation",
        search_record=str(search_json),
        search_seeds=sorted(used),
        confirmation_seeds=seeds,
        readings_tried_by_search=record["readings_tried"],
        search_proposals=record["proposals"],
        search_rank={r: tried.index(r) + 1 for r in readings},
    )


def reading_search(
    spec, out: Path, *, also: tuple[str, ...] = (), progress: bool = False, cli_args: dict | None = None
) -> ReadingSearch:
    """The reading search (:func:`pgc.replication.search.run_search`) in ``out`` (its SQLite study resumed
    when ``out`` holds one pgc wrote), with a progress bar over the proposals; the record, written to
    ``out/search.json``."""
    from pgc.tasks.progress import progress_bar

    from .search import run_search

    resume = (out / "search.db").is_file() and is_pgc_output(out)
    check_output_dir(out, update=resume, command="replicate")
    out.mkdir(parents=True, exist_ok=True)
    with output_lock(out):
        write_marker(out, command="replicate --search")
        bar = progress_bar(spec.readings, "reading", "reading search", progress)
        shown = [0]

        def report(done: int, total: int, entry: dict | None) -> None:
            bar.update(max(0, done - shown[0]))
            shown[0] = max(shown[0], done)

        start = time.perf_counter()
        try:
            record = run_search(
                spec,
                f"sqlite:///{(out / 'search.db').resolve()}",
                progress=report,
                first=FIRST_PROPOSALS,
                also=tuple(also),
            )
        finally:
            bar.close()
        record = replace(
            record, cli_args=json_safe(cli_args or {}), this_call_wall_time_s=round(time.perf_counter() - start, 1)
        )
        write_json_atomic(out / "search.json", record.to_dict())
    return record


def _floats(obj):
    """JSON's "inf"/"nan" strings back to floats in trial summaries."""
    if isinstance(obj, dict):
        return {k: (float(v) if k in ("fst",) and isinstance(v, str) else _floats(v)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_floats(v) for v in obj]
    return obj
