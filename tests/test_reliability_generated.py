"""Generated hostile inputs (hypothesis), kill -9 at random moments and concurrent writers.

Every generated case must end in success or in one ``error:`` line on stderr with exit code 2: never a
traceback, never a hang, never a file written outside the output folder. The generators live in
``tests/reliability_gen.py``; ``scripts/reliability_run.py`` runs them longer (results/reliability/).
"""

from __future__ import annotations

import itertools
import shutil

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import reliability_gen as gen

SETTINGS = dict(derandomize=True, deadline=None, database=None, print_blob=True,
                suppress_health_check=list(HealthCheck))
_COUNTER = itertools.count()


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return tmp_path_factory.mktemp("generated")


@pytest.fixture(scope="module")
def clean_run(base):
    return gen.make_run(base / "clean-run")


def _case_root(base):
    return gen.make_case_root(base, f"case{next(_COUNTER)}")


def _assert_ok(outcome, root):
    assert not outcome.problems(), (outcome.problems(), outcome.argv, outcome.err[-2000:])
    assert (root / "outside" / "precious.txt").read_text() == "precious"
    assert (root / "work" / "mine.txt").read_text() == "mine"


# ---------------------------------------------------------------------------------------------
# config files
# ---------------------------------------------------------------------------------------------


@settings(max_examples=40, **SETTINGS)
@given(doc=gen.config_documents())
def test_generated_config_files(base, doc):
    root = _case_root(base)
    (root / "work" / "c.json").write_bytes(doc)
    outcome = gen.run_case(["train", "--config", "c.json", *gen.TINY["train"], "--out", "out"], root)
    _assert_ok(outcome, root)
    if outcome.rc == 2:
        assert not (root / "work" / "out").exists()  # refused before anything was written
    shutil.rmtree(root)


# ---------------------------------------------------------------------------------------------
# argument vectors
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command, examples", [("train", 40), ("audit", 25), ("attack", 25), ("report", 20),
                                               ("tune", 15)])
def test_generated_argument_vectors(base, clean_run, command, examples):
    @settings(max_examples=examples, **SETTINGS)
    @given(argv=gen.argument_vectors(command))
    def check(argv):
        root = _case_root(base)
        shutil.copytree(clean_run, root / "work" / "run")
        (root / "work" / "fifo").parent.mkdir(exist_ok=True)
        import os

        os.mkfifo(root / "work" / "fifo")
        outcome = gen.run_case(argv, root)
        _assert_ok(outcome, root)
        shutil.rmtree(root)

    check()


def test_argparse_errors_are_one_line(base):
    root = _case_root(base)
    for argv in (["train", "--epsilon", "nan"], ["train", "--bogus"], ["audit", "--confidence", "2"],
                 ["tune", "--mode", "x"], ["report"], ["nope"]):
        outcome = gen.run_case(argv, root)
        assert outcome.rc == 2 and not outcome.problems(), (argv, outcome.err)


# ---------------------------------------------------------------------------------------------
# result files
# ---------------------------------------------------------------------------------------------


# what each reader reads: audit --run the summary and θ, attack --run the summary and the transcript
_SUMMARY = {"summary_json_type", "summary_truncated", "summary_binary", "summary_fifo"}
MUST_REFUSE = {"audit": _SUMMARY | {"checkpoint_garbage", "checkpoint_pickle", "trial_dir_escape"},
               "attack": _SUMMARY | {"truncate", "nan", "inf", "object_array", "huge_shape", "missing_array",
                                     "symlink_outside", "symlink_dev_zero", "fifo", "folder", "empty",
                                     "trial_dir_escape"},
               "report": _SUMMARY}


@pytest.mark.parametrize("reader, examples", [("audit", 12), ("attack", 20), ("report", 12)])
def test_generated_result_files(base, clean_run, reader, examples):
    @settings(max_examples=examples, **SETTINGS)
    @given(mutation=gen.mutations())
    def check(mutation):
        root = _case_root(base)
        run = root / "work" / "run"
        shutil.copytree(clean_run, run)
        trap = root / "work" / "out-unpickled"  # inside the allowed names: only its existence matters
        gen.mutate_run(run, mutation, trap)
        argv = [a.replace("{run}", "run") for a in gen.RESULT_READERS[reader]]
        outcome = gen.run_case(argv, root)
        _assert_ok(outcome, root)
        assert not trap.exists(), f"a pickle in a result file was executed ({mutation[0]})"
        if mutation[0] in MUST_REFUSE[reader]:
            assert outcome.rc == 2, (mutation[0], outcome.err)
        shutil.rmtree(root)

    check()


@settings(max_examples=25, **SETTINGS)
@given(doc=gen.result_documents())
def test_generated_result_documents_for_report(base, doc):
    name, blob = doc
    root = _case_root(base)
    (root / "work" / "res").mkdir()
    (root / "work" / "res" / name).write_bytes(blob)
    outcome = gen.run_case(["report", f"res/{name}", "--out", "out"], root)
    _assert_ok(outcome, root)
    shutil.rmtree(root)


@pytest.mark.parametrize("mutation", ["fifo", "summary_fifo", "symlink_dev_zero"])
def test_special_files_in_a_separate_process(base, clean_run, mutation):
    """FIFOs and devices where files belong: a real process must not block on them."""
    root = _case_root(base)
    run = root / "work" / "run"
    shutil.copytree(clean_run, run)
    gen.mutate_run(run, (mutation, 0, None), root / "work" / "out-unpickled")
    for reader in ("attack", "report"):
        argv = [a.replace("{run}", "run") for a in gen.RESULT_READERS[reader]]
        outcome = gen.run_case(argv, root, subprocess_=True)
        _assert_ok(outcome, root)
        assert outcome.rc == 2 or mutation not in MUST_REFUSE[reader], (reader, outcome.err)


# ---------------------------------------------------------------------------------------------
# kill -9 at random moments
# ---------------------------------------------------------------------------------------------


def test_kill_minus_9_train_tune_replicate_pipeline(tmp_path):
    rng = np.random.default_rng(np.random.SeedSequence(11))
    log = gen.KillLog()
    for kind in ("train", "tune", "replicate", "pipeline"):
        gen.kill_series(kind, tmp_path, rng, kills=2, log=log)
    assert log.kills == 8
    assert log.lost_results == 0 and log.failed_resumes == 0, log.details


# ---------------------------------------------------------------------------------------------
# concurrent writers
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["train", "audit", "report"])
def test_concurrent_writers_one_wins(tmp_path, clean_run, kind):
    log = gen.WriterLog()
    gen.concurrent_writers(kind, tmp_path, 3, log, run=clean_run)
    assert log.groups == 1 and log.bad == 0, log.details


def test_concurrent_tune_workers_share_one_study(tmp_path):
    log = gen.WriterLog()
    counts = gen.concurrent_tuners(tmp_path, 3, 6, log)
    assert log.bad == 0, log.details
    assert counts["COMPLETE"] + counts["PRUNED"] >= 6
