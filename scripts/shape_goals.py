"""The measured goals of the command line's shape, as one typed result (kind ``shape-goals``).

* ``pgc audit system --help``: wall seconds of each of ``--runs`` warm runs (one unmeasured run first) and their
  median (goal ≤ 1 s);
* the most options one ``pgc audit`` subcommand takes (goal ≤ 25);
* with ``--ci-log``, the default test run's time and count as pytest printed them in a fresh clone's CI log (goal
  ≤ 480 s, no failure).

    git clone . /tmp/ci-check && (cd /tmp/ci-check && bash .ci/run) > /tmp/ci.log 2>&1
    python scripts/shape_goals.py --ci-log /tmp/ci.log --out results/shape/goals.json
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from pgc.options import positive_int

HELP = ["audit", "system", "--help"]
# pytest's last line: "1412 passed, 71 warnings in 437.80s (0:07:17)"; any failure or error is named in it
SUMMARY = re.compile(r"^(?P<counts>.*?) in (?P<seconds>[0-9.]+)s(?: \(.*\))?\s*$")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=positive_int, default=5, help="warm help runs (default 5)")
    parser.add_argument("--ci-log", type=Path, help="a fresh clone's .ci/run output, for the test run's time")
    parser.add_argument("--out", required=True, help="the JSON result")
    args = parser.parse_args(argv)
    from pgc.cli.main import report_exception

    try:
        return _run(args, argv if argv is not None else sys.argv[1:])
    except Exception as exc:  # a missing or unreadable log: one line, exit 2
        return report_exception(exc, "shape_goals.py")


def _run(args: argparse.Namespace, argv: list[str]) -> int:
    from pgc.cli.commands.audit.subcommands import SUBCOMMANDS
    from pgc.errors import UserError
    from pgc.files import write_json_atomic
    from pgc.schemas import ShapeGoals

    tests = _test_run(args.ci_log) if args.ci_log is not None else None
    pgc = shutil.which("pgc") or str(Path(sys.executable).with_name("pgc"))
    if not Path(pgc).exists():
        raise UserError("no pgc command next to this Python or on PATH: run scripts/setup.sh first")
    subprocess.run([pgc, *HELP], capture_output=True, check=True)  # warm: the files in the page cache
    seconds = []
    for _ in range(args.runs):
        start = time.perf_counter()
        subprocess.run([pgc, *HELP], capture_output=True, check=True)
        seconds.append(round(time.perf_counter() - start, 4))
    options = {name: _option_count(command) for name, command in SUBCOMMANDS.items()}
    widest = max(options, key=lambda name: options[name])
    median = statistics.median(seconds)
    met = median <= 1.0 and options[widest] <= 25 and (tests is None or (tests[2] and tests[1] <= 480.0))
    result = ShapeGoals(
        help_command="pgc " + " ".join(HELP),
        help_seconds=seconds,
        help_median_s=median,
        widest_subcommand=widest,
        widest_subcommand_options=options[widest],
        test_log=None if args.ci_log is None else str(args.ci_log),
        tests_passed=None if tests is None else tests[0],
        test_seconds=None if tests is None else tests[1],
        goals_met=met,
        script="python scripts/shape_goals.py " + " ".join(argv),
    )
    write_json_atomic(args.out, result.to_dict())
    shown = "" if tests is None else f"; tests: {tests[0]} passed in {tests[1]:.1f} s"
    print(
        f"help median {median:.3f} s; widest subcommand {widest} ({options[widest]} options){shown}; "
        f"goals met: {met}; wrote {args.out}"
    )
    return 0 if met else 1


def _option_count(command) -> int:
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    return sum(1 for a in parser._actions if a.option_strings and a.dest != "help")


def _test_run(log: Path) -> tuple[int, float, bool]:
    """(tests passed, pytest's seconds, no failure or error) from the last summary line of a CI log."""
    from pgc.errors import UserError

    lines = log.read_text(errors="replace").splitlines()
    for line in reversed(lines):
        match = SUMMARY.match(line.strip("= "))
        if match and "passed" in match["counts"]:
            counts = dict((word, int(n)) for n, word in re.findall(r"(\d+) (\w+)", match["counts"]))
            clean = counts.get("failed", 0) == 0 and counts.get("errors", 0) == 0 and counts.get("error", 0) == 0
            return counts["passed"], float(match["seconds"]), clean
    raise UserError(f"{log}: no pytest summary line (N passed ... in S s)")


if __name__ == "__main__":
    sys.exit(main())
