"""The audits' time estimates (audit.power.planning) against their wall time on this machine.

    python scripts/calibrate_planning.py --out results/audit/planning

Runs each audit below as ``pgc audit`` would (in this process, from a temporary folder), with the training
runs some of them need, and reads the estimate the audit printed and kept in its result
(``estimated_seconds``) beside its wall time. Writes ``OUT/calibration.json`` and ``OUT/calibration.txt``;
exits 1 when an estimate is off by more than a factor of 2 either way.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO)]

from pgc.cli.main import main  # noqa: E402
from pgc.files import write_text_atomic  # noqa: E402
from pgc.schemas.bench_results import AuditTimeEstimates, Machine, TimeEstimate  # noqa: E402

TOLERANCE = 2.0  # an estimate within this factor of the wall time, either way
TRAININGS = {  # run folder -> pgc train arguments
    "quick": ["--mechanism", "laplace", "--epsilon", "1", "--submissions", "3000", "--trials", "2"],
    "long": ["--mechanism", "laplace", "--epsilon", "1", "--submissions", "20000"],
    "balancing": ["--mechanism", "none", "--submissions", "3000"],
}
AUDITS = [  # (label, pgc audit arguments)
    ("laplace ε=1, 10⁵", ["--mechanism", "laplace", "--epsilon", "1", "--samples", "1e5"]),
    ("laplace ε=1, 10⁶", ["--mechanism", "laplace", "--epsilon", "1", "--samples", "1e6"]),
    (
        "gaussian-analytic (1, 1e-5), 10⁵",
        ["--mechanism", "gaussian-analytic", "--epsilon", "1", "--delta", "1e-5", "--samples", "1e5"],
    ),
    ("prs ε=5 (d̂ 2), 10⁵", ["--mechanism", "prs", "--epsilon", "5", "--samples", "1e5"]),
    ("prs ε=50 (d̂ 20), 2·10⁴", ["--mechanism", "prs", "--epsilon", "50", "--samples", "2e4"]),
    (
        "README quick start: run, 5:15, 2·10⁴ + mechanism 10⁵",
        ["--run", "{quick}", "--pairs", "5:15", "--samples", "20000", "--mechanism-samples", "100000"],
    ),
    (
        "the same run's initial model, 9.7:9.9 and 5:15",
        [
            "--run",
            "{quick}",
            "--initial",
            "--pairs",
            "9.7:9.9",
            "5:15",
            "--samples",
            "20000",
            "--mechanism-samples",
            "100000",
        ],
    ),
    (
        "a balancing model (μ ≈ 200), laplace ε=1, 5:15",
        [
            "--run",
            "{balancing}",
            "--mechanism",
            "laplace",
            "--epsilon",
            "1",
            "--pairs",
            "5:15",
            "--samples",
            "20000",
            "--mechanism-samples",
            "100000",
        ],
    ),
    (
        "README: run of 20,000 submissions, 9.7:9.9 and 5:15, defaults",
        ["--run", "{long}", "--pairs", "9.7:9.9", "5:15"],
    ),
    (
        "adversarial 5:15, quick search, 2·10⁴",
        [
            "--mechanism",
            "laplace",
            "--epsilon",
            "1",
            "--adversarial-model",
            "--pairs",
            "5:15",
            "--search-budget",
            "quick",
            "--samples",
            "20000",
        ],
    ),
    (
        "adversarial 5:15, default search, 2·10⁴",
        ["--mechanism", "laplace", "--epsilon", "1", "--adversarial-model", "--pairs", "5:15", "--samples", "20000"],
    ),
]


def _pgc(argv: list[str]) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    if code != 0:
        raise SystemExit(f"pgc {' '.join(argv)} exited {code}")


def run(work: Path) -> list[TimeEstimate]:
    runs = {}
    for name, argv in TRAININGS.items():
        runs[name] = str(work / name)
        _pgc(["train", *argv, "--seed", "0", "--no-progress", "--out", runs[name]])
    rows = []
    for i, (label, argv) in enumerate(AUDITS):
        out = work / f"audit-{i}.json"
        argv = [a.format(**runs) for a in argv]
        start = time.perf_counter()
        _pgc(["audit", *argv, "--no-progress", "--out", str(out)])
        wall = time.perf_counter() - start
        estimate = json.loads(out.read_text())["estimated_seconds"]
        rows.append(
            TimeEstimate(
                audit=label,
                command="pgc audit " + " ".join(argv),
                estimated_s=estimate,
                wall_s=round(wall, 2),
                estimate_over_wall=round(estimate / wall, 3),
                within=1 / TOLERANCE <= estimate / wall <= TOLERANCE,
            )
        )
        print(f"{label:<62} estimate {estimate:7.1f} s  wall {wall:7.1f} s  ratio {estimate / wall:5.2f}", flush=True)
    return rows


def main_() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="results/audit/planning", help="folder of calibration.json and .txt")
    args = p.parse_args()
    out = Path(args.out)
    with tempfile.TemporaryDirectory(prefix="pgc-planning-") as tmp, contextlib.chdir(tmp):
        start = time.perf_counter()
        rows = run(Path(tmp))
        total = time.perf_counter() - start
    out.mkdir(parents=True, exist_ok=True)
    result = AuditTimeEstimates(
        command="python scripts/calibrate_planning.py " + " ".join(sys.argv[1:]),
        tolerance=TOLERANCE,
        rows=rows,
        all_within=all(r.within for r in rows),
        wall_s=round(total, 1),
        machine=Machine(
            python=platform.python_version(), cpus=os.cpu_count() or 1, loadavg_1min_at_end=os.getloadavg()[0]
        ),
    )
    write_text_atomic(out / "calibration.json", json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n")
    lines = [
        f"{r.audit:<62} estimate {r.estimated_s:7.1f} s  wall {r.wall_s:7.1f} s  ratio {r.estimate_over_wall:5.2f}"
        for r in rows
    ]
    write_text_atomic(out / "calibration.txt", "\n".join(lines) + "\n")
    print(f"wrote {out / 'calibration.json'}; every estimate within {TOLERANCE:g}x: {result.all_within}")
    return 0 if result.all_within else 1


if __name__ == "__main__":
    sys.exit(main_())
