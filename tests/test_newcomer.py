"""What a newcomer does first: the README's Quick start and Commands blocks, run as written from an empty
folder outside the repository, each checked against what the README says it prints.

* Quick start: its three commands print what the README shows, line for line (the timings aside), and the
  report's Markdown twin holds the README's verdict and summary table.
* Commands: every line, at the small sizes the README's table gives for it, from an empty folder, each after
  the earlier lines it reads (``[…]`` dropped, each ``a|b`` alternative run, a line whose comment says it needs
  a server skipped): exit 0 (a benchmark may miss its goals at these sizes: exit 1, every message a "goal
  missed"), the quoted text of its comment printed, no traceback, warning or progress bar off a terminal,
  nothing written into the repository, and a result file new for every run under ``runs/<command>/`` where
  no ``--out`` is given. The quick pipeline (the main job) runs as users install it, by the ``pgc`` of a wheel of
  this checkout installed in a fresh environment (tests/conftest.py), and is then checked as tests/test_pipeline.py
  says; its report keeps the references the package ships. The Flower bench's result is checked as
  :func:`check_bench_flower` says.
"""

from __future__ import annotations

import contextlib
import glob
import io
import itertools
import json
import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from pgc.cli.main import COMMANDS, main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _block(after: str, fence: str) -> str:
    """The first fenced block (```fence) after the text ``after``."""
    start = README.index(after)
    body = README.index(f"```{fence}\n", start) + len(fence) + 4
    return README[body : README.index("```", body)]


# ---------------------------------------------------------------------------------------------
# the README's Commands block as runnable steps
# ---------------------------------------------------------------------------------------------


@dataclass
class Step:
    line: str  # as the README writes it
    argv: list[str]  # one alternative, options in brackets dropped, small sizes added
    quoted: list[str]  # what its comment says it prints
    skipped: str = ""  # why it cannot run here (its comment says what it needs)


def _lines() -> list[tuple[str, str]]:
    """(command, comment) of every line of the Commands block, continuation lines joined."""
    text = _block("## Commands", "bash").replace("\\\n", " ")
    out = []
    for raw in text.splitlines():
        command, comment = (re.split(r"\s+#\s", raw, maxsplit=1) + [""])[:2]
        if command.strip():
            out.append((" ".join(command.split()), comment.strip()))
    return out


def _small_sizes() -> list[tuple[list[str], list[str]]]:
    """The README's table of small sizes: (the tokens a line must hold, the options to add)."""
    rows = re.findall(r"^\| `(pgc [^`]+)` \| `([^`]+)` \|$", README, re.M)
    return [([t for t in pattern.split() if t != "…"], shlex.split(extra)) for pattern, extra in rows]


def _with_small_sizes(argv: list[str]) -> list[str]:
    """The options of the most specific table row whose tokens the command holds, added at its end."""
    rows = [(tokens, extra) for tokens, extra in _small_sizes() if set(tokens) <= set(argv)]
    return argv + (max(rows, key=lambda row: len(row[0]))[1] if rows else [])


def steps() -> list[Step]:
    out = []
    for command, comment in _lines():
        plain = re.sub(r"\s*\[[^\]]*\]", "", command)
        words = shlex.split(plain)
        choices = [w.split("|") if "|" in w and not w.startswith(("'", '"')) else [w] for w in words]
        for chosen in itertools.product(*choices):
            argv = list(chosen)
            if argv[0] == "pgc":
                argv = _with_small_sizes(argv)
            needs = re.search(r"needs a ([\w ]+?) server", comment)
            out.append(
                Step(
                    command,
                    argv,
                    re.findall(r'"([^"]+)"', comment),
                    f"needs a {needs.group(1)} server" if needs else "",
                )
            )
    return out


# the default result name of a pgc audit subcommand, where it is not the subcommand's own name
_DEFAULT_NAME = {"adversarial-model": "adversarial"}


def _writes(argv: list[str]) -> str | None:
    """Where a step writes (a path prefix), or None."""
    if argv[:1] == ["echo"]:
        return argv[-1] if ">" in argv else None
    if argv[:2] == ["pgc", "bench"] or "--help" in argv:
        return None
    if "--out" in argv:
        return argv[argv.index("--out") + 1]
    command = argv[1]
    if command == "audit":  # pgc audit SUBCOMMAND TARGET ...
        subcommand = argv[2]
        return f"runs/audit/{_DEFAULT_NAME.get(subcommand, subcommand)}-"
    if command == "attack":
        return f"runs/attack/{'active' if '--active' in argv else 'run' if '--run' in argv else 'model'}-"
    if command == "bandit":
        return f"runs/bandit/{argv[2]}-"
    return f"runs/{command}"


def groups() -> list[list[Step]]:
    """The steps in README order, split into groups that read nothing another group writes (each group
    runs in its own empty folder)."""
    all_steps = [s for s in steps() if not s.skipped]
    parent = list(range(len(all_steps)))

    def find(i):
        while parent[i] != i:
            i = parent[i]
        return i

    for j, later in enumerate(all_steps):
        for i in range(j):
            wrote = _writes(all_steps[i].argv)
            if wrote and (
                wrote == _writes(later.argv)
                or any(
                    token.split("*")[0].startswith(wrote)
                    or token.startswith(wrote + "/")
                    or token == wrote
                    or token.removeprefix("run:").startswith(wrote)
                    for token in later.argv[1:]
                )
            ):
                parent[find(j)] = find(i)
    by_root: dict[int, list[Step]] = {}
    for i, step in enumerate(all_steps):
        by_root.setdefault(find(i), []).append(step)
    return list(by_root.values())


GROUPS = groups()


# ---------------------------------------------------------------------------------------------
# running a step in this process
# ---------------------------------------------------------------------------------------------


def _run(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue()


def _run_installed(pgc: Path, argv: list[str], cwd: Path) -> tuple[int, str, str]:
    """``argv`` run by the installed wheel's ``pgc`` (tests/conftest.py ``installed_pgc``), progress lines every
    half second as in this process."""
    from test_installed_wheel import run_installed

    r = run_installed(pgc, *argv, cwd=cwd, progress_interval_s="0.5")
    return r.returncode, r.stdout, r.stderr


def check_installed_main_job(pgc: Path, job: Path) -> None:
    """The installed main job's report keeps the committed references (package data), a report of its results
    builds again there, and numba's cache is not written beside the installed package."""
    inputs = json.dumps(json.loads((job / "report" / "report.json").read_text()))
    assert "laplace-eps1.json" in inputs and "paper-psi-score.json" in inputs  # the shipped references
    code, _, err = _run_installed(pgc, ["report", str(job / "audit.json"), "--out", str(job.parent / "again")], job)
    assert code == 0 and (job.parent / "again" / "report.html").is_file(), err
    assert not list(pgc.parents[1].rglob("*.nbi")), "numba's cache written beside the installed package"


def check_bench_flower(result: dict) -> None:
    """The Flower bench's audits through Flower's Message path give the rows the numpy reference gives, no false
    alarm, and its tightness summary over seeds is the summary of its own ratios."""
    import numpy as np

    assert result["identical_rows"] is True and result["flagged"] == 0
    over_seeds = result["audit_over_oracle_over_seeds"]
    curve = over_seeds["curve"]
    assert over_seeds["seeds"] == 3 and len(curve["ratios"]) == 3
    assert curve["min"] <= curve["median"] <= curve["max"]
    assert curve["mean"] == pytest.approx(np.mean(curve["ratios"]))
    assert curve["share_at_least_0.9"] == pytest.approx(np.mean(np.asarray(curve["ratios"]) >= 0.9))


def _snapshot(folder: Path) -> dict[str, tuple]:
    seen = {}
    for dirpath, _, filenames in os.walk(folder):
        for name in filenames:
            st = os.lstat(os.path.join(dirpath, name))
            seen[os.path.relpath(os.path.join(dirpath, name), folder)] = (st.st_size, st.st_mtime_ns)
    return seen


@pytest.fixture
def quick_progress(monkeypatch):
    """Progress lines after half a second instead of 30 s, so that the steps show theirs."""
    monkeypatch.setattr("pgc.tasks.progress.LINE_INTERVAL_S", 0.5)
    monkeypatch.setattr("pgc.tasks.progress.START_DELAY_S", 0.5)


def _group_id(group: list[Step]) -> str:
    first = group[0].argv
    return " ".join(first[:3] if first[0] == "pgc" else first[:1]) + (f" (+{len(group) - 1})" if len(group) > 1 else "")


# the README's self-test (every correct mechanism and planted bug, about 75 s) and its adversarial-model audits
# (about 30 s; the quick pipeline tests audit a crafted model too) run in the long tests (scripts/long_tests.sh,
# its result committed under results/long-tests/), not in the default run
LONG_GROUPS = ("pgc audit self-test", "pgc audit adversarial-model (+1)")


@pytest.mark.parametrize(
    "group",
    [
        pytest.param(g, marks=pytest.mark.long)
        if _group_id(g) in LONG_GROUPS
        else pytest.param(g, marks=pytest.mark.slow)
        if g[0].argv[1:3] == ["pipeline", "--quick"]
        else g
        for g in GROUPS
    ],
    ids=[_group_id(g) for g in GROUPS],
)
def test_readme_commands_run_from_an_empty_folder(group, tmp_path, quick_progress, request):
    repository = {name: _snapshot(ROOT / name) for name in ("results", "runs")}
    for step in group:
        if step.argv[0] != "pgc":  # a shell line (writing my.json)
            subprocess.run(["bash", "-c", step.line], cwd=tmp_path, check=True)
            continue
        argv = [
            w
            for arg in step.argv[1:]
            for w in (sorted(glob.glob(arg, root_dir=tmp_path)) or [arg] if "*" in arg else [arg])
        ]
        defaults = tmp_path / "runs" / argv[0]
        before = set(defaults.glob("*.json")) if defaults.is_dir() else set()
        if argv[:2] == ["bench", "flower"]:  # its result is checked below (check_bench_flower)
            argv = [*argv, "--out", "bench-flower.json"]
        if argv[:2] == ["pipeline", "--quick"]:  # the main job runs as users install it: the wheel, not the checkout
            code, out, err = _run_installed(request.getfixturevalue("installed_pgc"), argv, tmp_path)
        else:
            code, out, err = _run(argv, tmp_path)
        said = f"pgc {' '.join(argv)}\n{out[-3000:]}\n{err[-3000:]}"
        if argv[:2] == ["bandit", "attack"] and code == 1:  # DP20 FedUCB's schedule beats its ceiling: a finding
            assert "row(s) with accuracy above the (ε, δ) ceiling" in err, said
        elif argv[0] == "bench" and code == 1:  # a goal missed at these sizes: said so, line by line
            assert all(
                line.startswith("goal missed: ")
                for line in err.splitlines()
                if not re.match(r"\[\d\d:\d\d:\d\d\] ", line)
            ), said
        else:
            assert code == 0, said
        assert "Traceback" not in err and "Warning" not in err and "\r" not in err, said
        for text in step.quoted:
            assert text in out, (text, said)
        if argv[0] in ("audit", "attack", "bandit") and "--out" not in argv and "--help" not in argv:
            new = set(defaults.glob("*.json")) - before  # a new result of its own, named by kind and time
            assert len(new) == 1 and re.fullmatch(r"[a-z-]+-\d{8}-\d{6}(-\d+)?\.json", new.pop().name), said
        if argv[:2] == ["bench", "flower"]:
            check_bench_flower(json.loads((tmp_path / "bench-flower.json").read_text()))
        if argv[:2] == ["pipeline", "--quick"]:
            from test_pipeline import check_quick_pipeline

            with contextlib.chdir(tmp_path):
                (tmp_path / "scratch").mkdir()
                check_quick_pipeline(Path("runs/pipeline"), out, tmp_path / "scratch")
            check_installed_main_job(request.getfixturevalue("installed_pgc"), tmp_path / "runs" / "pipeline")
    for name, before in repository.items():  # nothing written into the repository
        assert _snapshot(ROOT / name) == before, name


def test_every_command_line_runs_or_says_what_it_needs():
    ran = [s for g in GROUPS for s in g]
    assert [s.line for s in steps() if s.skipped] == [s.line for s in steps() if "postgresql://" in s.line]
    commands = {s.argv[1] for s in ran if s.argv[0] == "pgc"}
    assert set(COMMANDS) - {"thesis"} <= commands | {"help"}, set(COMMANDS) - commands
    for s in ran:  # every pgc line found its small sizes (or needs none: a report, a help page)
        assert (
            s.argv[0] != "pgc"
            or s.argv[1] in ("report",)
            or "--help" in s.argv
            or len(s.argv) > len(shlex.split(re.sub(r"\s*\[[^\]]*\]", "", s.line)))
        ), s.line


# ---------------------------------------------------------------------------------------------
# the Quick start
# ---------------------------------------------------------------------------------------------

# what varies from run to run in the README's printout: rates, seconds, the estimate, the page's size
TIMING = re.compile(
    r"\(\d[\d.]*e[+-]\d+/s\)|\b\d+(?:\.\d+)?s\b|about (?:\d+ h \d+ min|\d+ min \d+ s|\d+ s|under 1 s)"
    r"|\d+ KiB"
)


def _pattern(expected_line: str) -> str:
    """The README's line as a regular expression: literal, its timings any text."""
    parts, last = [], 0
    for m in TIMING.finditer(expected_line):
        parts += [re.escape(expected_line[last : m.start()]), ".+?"]
        last = m.end()
    return "".join(parts) + re.escape(expected_line[last:])


@pytest.mark.slow
def test_readme_quick_start_prints_what_the_readme_says(tmp_path, quick_progress):
    commands = [shlex.split(line) for line in _block("## Quick start", "bash").splitlines() if line.strip()]
    printed = []
    for argv in commands:
        assert argv[0] == "pgc"
        code, out, err = _run(argv[1:], tmp_path)
        assert code == 0 and "Traceback" not in err and "\r" not in err, err
        printed.append(out.rstrip("\n"))
    expected = _block("What they print", "text").rstrip("\n").split("\n")
    actual = "\n\n".join(printed).split("\n")
    assert len(actual) == len(expected), "\n".join(actual)
    for want, got in zip(expected, actual, strict=True):
        assert re.fullmatch(_pattern(want), got), (want, got)
    markdown = (tmp_path / "runs" / "quick" / "report" / "report.md").read_text()
    for line in _block("from its Markdown twin", "text").strip().splitlines():
        assert line in markdown, line
    assert json.loads((tmp_path / "runs" / "quick" / "audit.json").read_text())["kind"] == "run-audit"
