"""``pgc bench versions``: every adapter against the last three minor releases of the library it audits.

Each release is downloaded and installed without its dependencies into a throwaway folder
(``pip install --no-deps --target``), which is placed first on ``PYTHONPATH`` for the adapter's commands, run as
users run them (``python -m pgc.cli audit ...``, from the repository root: the commands audit its examples). A cell
records the release the command imported (the result's provenance), its exit status, the verdict or the one line it
refused with, whether a traceback was printed, and its seconds. The default tests keep one pinned release per
library; this bench is what checks the others.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from pgc.errors import UserError
from pgc.options import add_out
from pgc.schemas.bench_library_results import CommandRun, VersionCell, VersionsBench

help = "every adapter on the last three minor releases of its library (each installed into a throwaway folder)"


@dataclass(frozen=True)
class Library:
    """A library an adapter reads, the releases checked (oldest first) and the commands that exercise it."""

    name: str
    releases: tuple[str, ...]
    commands: tuple[tuple[str, ...], ...]


MATRIX = (
    Library(
        "opacus",
        ("1.4.1", "1.5.4", "1.6.0"),
        (("audit", "opacus", "examples/opacus/linear_client.py:make", "--samples", "300"),),
    ),
    Library(
        "nvflare",
        ("2.7.3", "2.8.1", "2.9.0"),
        tuple(
            ("audit", "nvflare", f"nvflare.app_common.filters.{target}", "--samples", "2000")
            for target in ("svt_privacy:SVTPrivacy", "percentile_privacy:PercentilePrivacy", "exclude_vars:ExcludeVars")
        ),
    ),
    Library(
        "flwr",
        ("1.40.0", "1.41.0", "1.42.0"),
        (("audit", "flower", "examples/flower/digits_app.py:app", "--samples", "300"),),
    ),
    Library(
        "pure-ldp",
        ("1.0.0", "1.1.2", "1.2.0"),
        (("audit", "ldp", "pure-ldp:RAPPOR", "--setting", "k=25", "--setting", "epsilon=2", "--setting", "hashes=2"),),
    ),
    Library(
        "multi-freq-ldpy",
        ("0.2.3", "0.2.4", "0.2.5"),
        (("audit", "ldp", "multi-freq-ldpy:OLH", "--setting", "k=25", "--setting", "epsilon=1"),),
    ),
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--only", nargs="+", metavar="LIBRARY", choices=[lib.name for lib in MATRIX], help="only these libraries"
    )
    p.add_argument("--timeout", type=int, default=900, help="seconds one command may run (default 900)")
    add_out(p, help="JSON result file")


def install(library: str, release: str, folder: Path) -> str | None:
    """``library==release`` installed without dependencies into ``folder``; None, or the line pip failed with."""
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    done = subprocess.run(
        [*pip, "install", "--no-deps", "--no-compile", "--target", str(folder), f"{library}=={release}"],
        capture_output=True,
        text=True,
    )
    if done.returncode == 0:
        return None
    lines = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith("WARNING")]
    return lines[-1] if lines else f"pip exited {done.returncode}"


def run_command(command: tuple[str, ...], folder: Path, out: Path, timeout: int) -> tuple[CommandRun, str | None]:
    """One adapter command with ``folder`` first on PYTHONPATH: its exit, verdict and what it imported, or the last
    line it said (None when it wrote its result)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")]).rstrip(":"))
    env["NUMBA_CACHE_DIR"] = str(folder.parent / "numba")  # compiled clients of this release only
    argv = [sys.executable, "-m", "pgc.cli", *command, "--out", str(out), "--force", "--no-progress", "--seed", "1"]
    start = time.perf_counter()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout)
        code, stdout, stderr = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired:
        code, stdout, stderr = None, "", f"timed out after {timeout} s"
    ran = CommandRun(
        command="pgc " + " ".join(command),
        exit=code,
        seconds=round(time.perf_counter() - start, 1),
        traceback="Traceback (most recent call last)" in stderr,
    )
    if out.exists() and code in (0, 1):
        result = json.loads(out.read_text())  # the command's own output, read for its verdict and libraries
        claims = [r.get("claimed_epsilon") for r in result.get("rows", [])]
        libraries = result.get("provenance", {}).get("libraries", [])
        return dataclasses.replace(
            ran,
            verdict=result.get("verdict"),
            claimed_epsilon=claims[0] if claims else None,
            imported={lib["name"]: lib["version"] for lib in libraries},
        ), None
    lines = [line for line in (stderr or stdout).splitlines() if line.strip()]
    return ran, lines[-1] if lines else ""


def run(args: argparse.Namespace) -> int:
    from pgc.files import write_json_atomic

    if not Path("examples").is_dir():
        raise UserError("pgc bench versions audits the repository's examples: run it from the repository root")
    cells = []
    for library in MATRIX:
        if args.only and library.name not in args.only:
            continue
        for release in library.releases:
            with tempfile.TemporaryDirectory(prefix=f"pgc-{library.name}-{release}-") as tmp:
                folder = Path(tmp) / "site"
                failed = install(library.name, release, folder)
                ran = (
                    [VersionCell(library=library.name, release=release, installed=False, said=failed)]
                    if failed
                    else [
                        _cell(library.name, release, *run_command(c, folder, Path(tmp) / "out.json", args.timeout))
                        for c in library.commands
                    ]
                )
            for cell in ran:
                print(_line(cell), flush=True)
            cells += ran
    if args.out:
        write_json_atomic(args.out, VersionsBench(cells=cells).to_dict())
    bad = [c for c in cells if c.installed and c.run is not None and (c.run.traceback or c.run.exit not in (0, 1, 2))]
    for cell in bad:
        print(f"goal missed: {cell.library} {cell.release}: {cell.said or 'a traceback'}", file=sys.stderr)
    return 1 if bad else 0


def _cell(library: str, release: str, ran: CommandRun, said: str | None) -> VersionCell:
    return VersionCell(library=library, release=release, installed=True, run=ran, said=said)


def _line(cell: VersionCell) -> str:
    head = f"{cell.library:16} {cell.release:7}"
    if not cell.installed or cell.run is None:
        return f"{head} not installed: {cell.said}"
    run = cell.run
    imported = (run.imported or {}).get(cell.library, "?")
    outcome = run.verdict or f"refused: {cell.said or ''}"
    return f"{head} exit {run.exit} ({imported} imported, {run.seconds} s) {outcome} <- {run.command}"
