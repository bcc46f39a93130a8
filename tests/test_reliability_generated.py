"""Generated hostile inputs (hypothesis), kill -9 at random moments and concurrent writers.

Every generated case must end in success or in one ``error:`` line on stderr with exit code 2: never a
traceback, never a hang, never a file written outside the output folder. The generators live in
``tests/reliability_gen.py``; ``scripts/reliability_run.py`` runs them longer (results/reliability/).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import reliability_gen as gen
from hypothesis import HealthCheck, given, settings

SETTINGS = dict(
    derandomize=True, deadline=None, database=None, print_blob=True, suppress_health_check=list(HealthCheck)
)
_COUNTER = itertools.count()


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return tmp_path_factory.mktemp("generated")


@pytest.fixture(scope="module")
def clean_run(base):
    return gen.make_run(base / "clean-run")


def _name():
    return f"case{next(_COUNTER)}"


def _assert_ok(result):
    outcome, problems = result
    assert not problems, (problems, outcome.argv, outcome.err[-2000:])


# ---------------------------------------------------------------------------------------------
# config files
# ---------------------------------------------------------------------------------------------


@settings(max_examples=40, **SETTINGS)
@given(doc=gen.config_documents())
def test_generated_config_files(base, doc):
    _assert_ok(gen.config_case(base, _name(), doc))


# ---------------------------------------------------------------------------------------------
# argument vectors
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command, examples", [("train", 40), ("audit", 25), ("attack", 25), ("report", 20), ("tune", 15)]
)
def test_generated_argument_vectors(base, clean_run, command, examples):
    @settings(max_examples=examples, **SETTINGS)
    @given(argv=gen.argument_vectors(command))
    def check(argv):
        _assert_ok(gen.argv_case(base, _name(), clean_run, argv))

    check()


def test_argparse_errors_are_one_line(base):
    root = gen.make_case_root(base, _name())
    for argv in (
        ["train", "--epsilon", "nan"],
        ["train", "--bogus"],
        ["audit", "--confidence", "2"],
        ["tune", "--mode", "x"],
        ["report"],
        ["nope"],
    ):
        outcome = gen.run_case(argv, root)
        assert outcome.rc == 2 and not outcome.problems(), (argv, outcome.err)
        assert outcome.err.startswith("pgc") and "usage:" not in outcome.err


# ---------------------------------------------------------------------------------------------
# result files
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reader, examples", [("audit", 12), ("attack", 20), ("report", 12)])
def test_generated_result_files(base, clean_run, reader, examples):
    @settings(max_examples=examples, **SETTINGS)
    @given(mutation=gen.mutations())
    def check(mutation):
        _assert_ok(gen.result_case(base, _name(), clean_run, reader, mutation))

    check()


def test_a_pickled_checkpoint_is_refused_with_one_line(base, clean_run):
    """torch's warning about the foreign pickle protocol used to reach stderr as a second line."""
    outcome, problems = gen.result_case(base, _name(), clean_run, "audit", ("checkpoint_pickle", 0, None))
    assert outcome.rc == 2 and not problems, (problems, outcome.err)
    assert "could not be loaded safely" in outcome.err


@settings(max_examples=25, **SETTINGS)
@given(doc=gen.result_documents())
def test_generated_result_documents_for_report(base, doc):
    _assert_ok(gen.report_document_case(base, _name(), doc))


@settings(max_examples=30, **SETTINGS)
@given(damaged=gen.damaged_results())
def test_damaged_results_of_every_kind(base, damaged):
    """A committed result of each kind, fields deleted or replaced at any depth: read by pgc report (and
    pgc attack --plot, pgc replicate --from-raw), never a traceback."""
    _assert_ok(gen.damaged_result_case(base, _name(), damaged))


@pytest.mark.parametrize(
    "reader, mutation", [("attack", "fifo"), ("attack", "symlink_dev_zero"), ("report", "summary_fifo")]
)
def test_special_files_in_a_separate_process(base, clean_run, reader, mutation):
    """FIFOs and devices where files belong: a real process must not block on them."""
    outcome, problems = gen.result_case(base, _name(), clean_run, reader, (mutation, 0, None), subprocess_=True)
    assert outcome.rc == 2 and not problems, (problems, outcome.err)


# ---------------------------------------------------------------------------------------------
# kill -9 at random moments
# ---------------------------------------------------------------------------------------------


@pytest.mark.long
@pytest.mark.parametrize("kind", ["train", "tune", "replicate", "pipeline"])
def test_kill_minus_9_train_tune_replicate_pipeline(tmp_path, kind):
    rng = np.random.default_rng(np.random.SeedSequence([11, ["train", "tune", "replicate", "pipeline"].index(kind)]))
    log = gen.KillLog()
    gen.kill_series(kind, tmp_path, rng, kills=2, log=log)
    assert log.kills == 2
    assert log.lost_results == 0 and log.failed_resumes == 0, log.details


# ---------------------------------------------------------------------------------------------
# concurrent writers
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["train", "audit", "report"])
def test_concurrent_writers_one_wins(tmp_path, clean_run, kind):
    log = gen.WriterLog()
    gen.concurrent_writers(kind, tmp_path, 3, log, run=clean_run)
    assert log.groups == 1 and log.bad == 0, log.details


@pytest.mark.slow
def test_concurrent_tune_workers_share_one_study(tmp_path):
    log = gen.WriterLog()
    counts = gen.concurrent_tuners(tmp_path, 3, 6, log)
    assert log.bad == 0, log.details
    assert counts["COMPLETE"] + counts["PRUNED"] >= 6


@pytest.mark.slow
def test_tune_workers_starting_together_create_one_study_schema(tmp_path):
    """Four workers opening a fresh SQLite study at once used to race on its schema (IntegrityError)."""
    import subprocess

    procs = [
        subprocess.Popen(
            gen.cli("tune", "--export-only", "--out", str(tmp_path / "t")),
            env=gen.child_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    errors = [p.communicate(timeout=gen.SUBPROCESS_TIMEOUT_S)[1] for p in procs]
    for p, err in zip(procs, errors, strict=True):  # no study yet: every worker says so, none fails to open the storage
        assert p.returncode == 2 and "no study" in err and len(err.strip().splitlines()) == 1, err
    assert sorted(x.name for x in (tmp_path / "t").iterdir()) == [".pgc-output", "study.db"]


def test_pipeline_refuses_a_special_include_before_the_work(tmp_path, monkeypatch):
    import os

    root = gen.make_case_root(tmp_path, "case")
    os.mkfifo(root / "work" / "fifo")
    monkeypatch.setattr("pgc.a3c.trainer.train_batch", lambda *a, **k: pytest.fail("trained first"))
    outcome = gen.run_case(["pipeline", "--quick", "--include", "fifo", "--out", "out"], root)
    assert outcome.rc == 2 and not outcome.problems() and "not a regular file" in outcome.err, outcome.err
    assert not (root / "work" / "out").exists()
