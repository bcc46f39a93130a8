"""The reliability generators of ``tests/test_reliability_generated.py``, run longer.

    python scripts/reliability_run.py --seed 0 --cases 300 --kills 32 --writers 4 --out results/reliability

Tries ``--cases`` generated hostile inputs (config files, argument vectors of train/audit/attack/report/
tune, damaged run folders, result documents, and committed results of every kind damaged at any depth),
``--kills`` kill -9 of ``pgc train|tune|replicate|
pipeline`` at seeded random moments, and groups of ``--writers`` concurrent writers of one output
(train, audit, report) and ``--writers`` concurrent ``pgc tune`` workers on one study, and a new user's walk
through auditing their own system (``tests/user_code_cases.py``: their code raising in each place, sibling
imports, typos in claims and paths, a class for an instance, NaN and string releases, Ctrl-C, and one planted
bug of pgc-audit's own); writes ``OUT/summary.json`` with the counts. Every failure count must be 0; the exit
code is 1 otherwise.
"""

from __future__ import annotations

import argparse
import collections
import json
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

import numpy as np  # noqa: E402
import reliability_gen as gen  # noqa: E402
import user_code_cases  # noqa: E402
from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402

import pgc.schemas as schemas  # noqa: E402
from pgc.schemas import Reliability, ReliabilityFailure  # noqa: E402

# share of the generated cases per family (argument vectors per command, result files per reader)
FAMILIES = {
    "config": 0.14,
    "argv:train": 0.12,
    "argv:audit": 0.09,
    "argv:attack": 0.09,
    "argv:report": 0.07,
    "argv:tune": 0.05,
    "result:audit": 0.09,
    "result:attack": 0.09,
    "result:report": 0.07,
    "report-doc": 0.07,
    "result-kinds": 0.12,
}


def run_cases(
    total: int, root_seed: int, base: Path, counts: collections.Counter, failures: list[ReliabilityFailure]
) -> None:
    clean = gen.make_run(base / "clean-run")
    names = iter(range(10**9))

    def record(family: str, result) -> None:
        outcome, problems = result
        counts["cases"] += 1
        counts[f"cases:{family}"] += 1
        counts["exit_0_or_1" if outcome.rc in (0, 1) else f"exit_{outcome.rc}"] += 1
        for p in problems:
            key = (
                "tracebacks"
                if p == "traceback"
                else "hangs"
                if p == "hang"
                else "files_outside_output"
                if "outside" in p
                else "pickles_executed"
                if "pickle" in p
                else "multi_line_errors"
                if "one-line" in p
                else "wrong_outcomes"
            )
            counts[key] += 1
        if problems:
            failures.append(
                ReliabilityFailure(family=family, argv=outcome.argv, problems=problems, stderr=outcome.err[-600:])
            )

    for i, (family, share) in enumerate(FAMILIES.items()):
        n = max(1, round(total * share))
        if family == "config":
            strategy, case = gen.config_documents(), lambda d: gen.config_case(base, f"c{next(names)}", d)
        elif family.startswith("argv:"):
            command = family.split(":")[1]
            strategy = gen.argument_vectors(command)
            case = lambda a: gen.argv_case(base, f"c{next(names)}", clean, a)  # noqa: E731
        elif family.startswith("result:"):
            reader = family.split(":")[1]
            strategy = gen.mutations()
            case = (lambda r: lambda m: gen.result_case(base, f"c{next(names)}", clean, r, m))(reader)
        elif family == "result-kinds":
            strategy, case = gen.damaged_results(), lambda d: gen.damaged_result_case(base, f"c{next(names)}", d)
        else:
            strategy, case = gen.result_documents(), lambda d: gen.report_document_case(base, f"c{next(names)}", d)

        def make_body(family=family, case=case):
            def body(value):
                record(family, case(value))

            return body

        test = settings(
            max_examples=n,
            deadline=None,
            database=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )(given(strategy)(make_body()))
        seed(root_seed * 1000 + i)(test)()


KILLED_COMMANDS = ("train", "tune", "replicate", "pipeline")


def _kill_phase(args: argparse.Namespace, base: Path) -> gen.KillLog:
    """kill -9 at random moments of each long command, spread evenly, then resume and check."""
    kill_log = gen.KillLog()
    rng = np.random.default_rng(np.random.SeedSequence(args.seed))
    for j, kind in enumerate(KILLED_COMMANDS):
        k = args.kills // len(KILLED_COMMANDS) + (j < args.kills % len(KILLED_COMMANDS))
        if k:
            (base / "kills" / kind).mkdir(parents=True)
            gen.kill_series(kind, base / "kills" / kind, rng, k, kill_log)
    return kill_log


def _writer_phase(args: argparse.Namespace, base: Path):
    """Concurrent writers on one run folder (train, audit, report) and concurrent tuners on one study."""
    writer_log = gen.WriterLog()
    tune_counts = None
    if args.writers:
        clean = gen.make_run(base / "writers" / "clean-run")
        for kind in ("train", "audit", "report"):
            (base / "writers" / kind).mkdir(parents=True)
            gen.concurrent_writers(kind, base / "writers" / kind, args.writers, writer_log, run=clean)
        (base / "writers" / "tune").mkdir(parents=True)
        tune_counts = gen.concurrent_tuners(base / "writers" / "tune", args.writers, 2 * args.writers, writer_log)
    return writer_log, tune_counts


def _user_code_phase(base: Path) -> dict:
    """Every case of the walk through a user's own system, each in its own folder: the counts and what failed."""
    outcomes = collections.Counter()
    by_family, exits, failed = collections.Counter(), collections.Counter(), []
    for i, case in enumerate(user_code_cases.CASES):
        result = user_code_cases.run_case(case, base / "user-code" / f"case{i}")
        by_family[case.family] += 1
        exits[f"exit_{result.rc}"] += 1
        for problem in result.problems:
            key = (
                "tracebacks"
                if problem == "traceback"
                else "blames_of_pgc_audit_for_user_code"
                if problem == "blames pgc-audit"
                else "hangs"
                if problem == "hang"
                else "wrong_outcomes"
            )
            outcomes[key] += 1
        if result.problems:
            failed.append(
                ReliabilityFailure(
                    case=case.name, argv=list(case.argv), problems=result.problems, stderr=result.err[-600:]
                )
            )
    return {
        "cases": len(user_code_cases.CASES),
        "cases_by_family": dict(sorted(by_family.items())),
        "exit_codes": dict(sorted(exits.items())),
        "outcomes": {
            key: outcomes.get(key, 0)
            for key in ("tracebacks", "blames_of_pgc_audit_for_user_code", "wrong_outcomes", "hangs")
        },
        "failures": failed,
    }


def _summary(args, argv, counts, failures, walls, kill_log, writer_log, tune_counts, user_code) -> Reliability:
    outcomes = {
        key: counts.get(key, 0)
        for key in (
            "tracebacks",
            "hangs",
            "multi_line_errors",
            "wrong_outcomes",
            "files_outside_output",
            "pickles_executed",
        )
    }
    outcomes.update(
        lost_results=kill_log.lost_results,
        failed_resumes=kill_log.failed_resumes,
        concurrency_violations=writer_log.bad,
    )
    outcomes.update({f"user_code_{key}": value for key, value in user_code["outcomes"].items()})
    study = None
    if tune_counts is not None:
        study = schemas.ConcurrentTuneStudy(
            asked_trials=2 * args.writers,
            complete=tune_counts["COMPLETE"],
            pruned=tune_counts["PRUNED"],
            running=tune_counts["RUNNING"],
            fail=tune_counts["FAIL"],
            surplus=tune_counts["SURPLUS"],
            distinct_parameter_sets=len(set(tune_counts["params"])),
            note="workers count the study's trials and ask for new ones one at a time (pgc.tuning.storage.ask_lock), "
            "so the study ends with exactly the asked number",
        )
    return Reliability(
        command="python scripts/reliability_run.py " + " ".join(sys.argv[1:] if argv is None else argv),
        seed=args.seed,
        cases=schemas.GeneratedCases(
            cases_tried=counts.get("cases", 0),
            cases_by_family={k.split(":", 1)[1]: v for k, v in sorted(counts.items()) if k.startswith("cases:")},
            case_exit_codes={k: v for k, v in sorted(counts.items()) if k.startswith("exit_")},
        ),
        kills=schemas.Kills(
            kills=kill_log.kills,
            kills_by_command={
                kind: args.kills // len(KILLED_COMMANDS) + (j < args.kills % len(KILLED_COMMANDS))
                for j, kind in enumerate(KILLED_COMMANDS)
            },
            state_after_kill=dict(sorted(kill_log.states.items())),
        ),
        writers=schemas.ConcurrentWriters(
            concurrent_writer_groups=writer_log.groups,
            concurrent_writers=writer_log.writers,
            concurrent_tune_study=study,
        ),
        user_code_walk=schemas.UserCodeWalk(**{key: value for key, value in user_code.items() if key != "failures"}),
        outcomes=outcomes,
        all_zero=not any(outcomes.values()),
        failures=failures[:50]
        + [ReliabilityFailure(detail=d) for d in kill_log.details + writer_log.details]
        + user_code["failures"],
        wall_s=walls,
        machine=schemas.CheckMachine(python=platform.python_version(), cpus=__import__("os").cpu_count()),
    )


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, default=0, help="root seed of every generator (default 0)")
    p.add_argument("--cases", type=int, default=300, help="generated hostile inputs (default 300)")
    p.add_argument("--kills", type=int, default=32, help="kill -9 in total, spread over 4 commands (default 32)")
    p.add_argument("--writers", type=int, default=4, help="concurrent writers per group (default 4)")
    p.add_argument("--out", default="results/reliability", help="folder of summary.json")
    args = p.parse_args(argv)
    if min(args.cases, args.kills, args.writers) < 0 or args.writers == 1:
        p.error("--cases and --kills must be >= 0, --writers 0 or >= 2")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="pgc-reliability-"))
    counts: collections.Counter = collections.Counter()
    failures: list[ReliabilityFailure] = []
    walls = {}
    try:
        start = time.perf_counter()
        if args.cases:
            run_cases(args.cases, args.seed, base / "cases", counts, failures)
        walls["cases_s"] = round(time.perf_counter() - start, 1)

        start = time.perf_counter()
        kill_log = _kill_phase(args, base)
        walls["kills_s"] = round(time.perf_counter() - start, 1)

        start = time.perf_counter()
        writer_log, tune_counts = _writer_phase(args, base)
        walls["writers_s"] = round(time.perf_counter() - start, 1)

        start = time.perf_counter()
        user_code = _user_code_phase(base)
        walls["user_code_s"] = round(time.perf_counter() - start, 1)
    finally:
        shutil.rmtree(base, ignore_errors=True)

    summary = _summary(args, argv, counts, failures, walls, kill_log, writer_log, tune_counts, user_code)
    path = out / "summary.json"
    tmp = path.with_name(path.name + ".tmp")
    data = summary.to_dict()
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    tmp.replace(path)  # whole or not at all
    shown = ("cases_tried", "kills", "concurrent_writers", "user_code_walk", "outcomes", "wall_s")
    print(json.dumps({k: data[k] for k in shown if k in data}, indent=1))
    print(f"wrote {path}")
    return 0 if summary.all_zero else 1


if __name__ == "__main__":
    sys.exit(main())
