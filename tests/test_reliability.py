"""Reliability of the ``pgc`` commands under hostile input, concurrency and kills.

Every test here fails on the code before the output-folder guard, the lock, the atomic swap, the stale
partial cleanup, the mechanism record, the transcript's finite check and the report's input checks.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from pgc.a3c import rundir
from pgc.a3c.rundir import MARKER_FILE, load_mechanism, load_run, output_lock
from pgc.a3c.trainer import TrainConfig, train_batch
from pgc.a3c.transcript import Transcript
from pgc.cli.main import main
from pgc.mechanisms import MECHANISMS, Laplace, MechanismUnavailableError

TRAIN = ["train", "--submissions", "60", "--workers", "3", "--no-progress"]


def _train(out, *extra) -> int:
    return main([*TRAIN, "--out", str(out), *extra])


def _one_line_error(err: str, rc: int) -> None:
    assert rc == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "error:" in lines[0] and "Traceback" not in err, err


# ---------------------------------------------------------------------------------------------
# 1. --force never deletes what pgc did not create
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", [".", "sub/..", "..", "HOME", "/"])
def test_force_refuses_working_parent_home_and_root(tmp_path, monkeypatch, capsys, target):
    work = tmp_path / "top" / "work"
    (work / "sub").mkdir(parents=True)
    (work / "mine.txt").write_text("precious")
    (tmp_path / "top" / "also-mine.txt").write_text("precious")
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.txt").write_text("precious")
    monkeypatch.chdir(work)
    monkeypatch.setenv("HOME", str(home))
    rc = _train(str(home) if target == "HOME" else target, "--force")
    _one_line_error(capsys.readouterr().err, rc)
    assert (work / "mine.txt").read_text() == "precious"
    assert (tmp_path / "top" / "also-mine.txt").read_text() == "precious"
    assert (home / "notes.txt").read_text() == "precious"


def test_force_refuses_a_folder_pgc_did_not_write(tmp_path, capsys):
    user = tmp_path / "photos"
    user.mkdir()
    (user / "cat.jpg").write_bytes(b"meow")
    rc = _train(user, "--force")
    err = capsys.readouterr().err
    _one_line_error(err, rc)
    assert "not written by pgc" in err and (user / "cat.jpg").read_bytes() == b"meow"


def test_force_replaces_its_own_output(tmp_path):
    out = tmp_path / "run"
    assert _train(out, "--seed", "1") == 0
    assert (out / MARKER_FILE).is_file()
    assert _train(out, "--seed", "2", "--force") == 0
    assert load_run(out)[1][0].summary["seed"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # no lock, partial or old folder left


def test_guard_refuses_unwritable_location_before_the_work(tmp_path, monkeypatch, capsys):
    import tempfile

    real = tempfile.mkstemp

    def read_only(*args, dir=None, **kw):
        if dir is not None and Path(dir) == tmp_path:
            raise OSError(errno.EROFS, "Read-only file system", str(dir))
        return real(*args, dir=dir, **kw)

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    monkeypatch.setattr("pgc.a3c.trainer.train_batch", lambda *a, **k: pytest.fail("trained first"))
    rc = _train(tmp_path / "run")
    err = capsys.readouterr().err
    _one_line_error(err, rc)
    assert "Read-only" in err


def test_disk_full_is_a_one_line_error_and_leaves_nothing(tmp_path, monkeypatch, capsys):
    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device", "checkpoint.pt")

    monkeypatch.setattr(rundir, "save_checkpoint", full)
    rc = _train(tmp_path / "run")
    err = capsys.readouterr().err
    _one_line_error(err, rc)
    assert "No space left" in err and list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------------------
# 2. two writers of one folder: one wins, the other exits 2
# ---------------------------------------------------------------------------------------------


def test_a_held_lock_makes_a_second_writer_exit_2(tmp_path, capsys):
    import fcntl

    out = tmp_path / "run"
    lock = rundir.lock_path(out)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)  # another process's lock: a separate open file
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        rc = _train(out)
    finally:
        os.close(fd)
    err = capsys.readouterr().err
    _one_line_error(err, rc)
    assert str(out) in err and "another process" in err and not out.exists()


def test_lock_is_reentrant_and_removed(tmp_path):
    out = tmp_path / "x"
    with output_lock(out) as lock, output_lock(out):
        assert lock.is_file()
    assert not lock.exists()


def _cli(*argv: str) -> list[str]:
    return [sys.executable, "-m", "pgc.cli", *argv]


# ---------------------------------------------------------------------------------------------
# 3 + 4. kills: the folder is old, new or absent; leftovers of dead writers are cleaned
# ---------------------------------------------------------------------------------------------


def _complete(out: Path) -> int | None:
    """The seed of a complete run folder, None if absent; fails on a half-written one."""
    if not out.exists():
        return None
    assert (out / MARKER_FILE).is_file()
    summary, trials = load_run(out)
    for t in trials:
        t.theta()
        assert len(t.transcript()) == t.summary["submissions"]
    return summary["trials"][0]["seed"]


@pytest.mark.long
def test_kill_minus_9_at_random_moments(tmp_path):
    out = tmp_path / "run"
    argv = _cli(
        "train",
        "--submissions",
        "800",
        "--workers",
        "3",
        "--trials",
        "4",
        "--no-progress",
        "--out",
        str(out),
        "--force",
    )
    t0 = time.monotonic()
    assert subprocess.run([*argv, "--seed", "0"], capture_output=True).returncode == 0
    full = time.monotonic() - t0
    rng = np.random.default_rng(np.random.SeedSequence(7))
    seeds_seen = {0}
    kills = 0
    while kills < 10:
        seed = kills + 1
        proc = subprocess.Popen([*argv, "--seed", str(seed)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.4, 1.05) * full)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills += 1
        state = _complete(out)  # old, new or absent, never half
        assert state is None or state in seeds_seen | {seed}
        if state is not None:
            seeds_seen.add(state)
    assert kills >= 10
    assert subprocess.run([*argv, "--seed", "99"], capture_output=True).returncode == 0
    assert _complete(out) == 99
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # stale partial/old folders removed


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_stale_partials_of_dead_writers_are_removed_live_ones_kept(tmp_path):
    out = tmp_path / "run"
    dead = tmp_path / f"run.pgc-{_dead_pid()}-abc.partial"
    live = tmp_path / f"run.pgc-{os.getppid()}-def.partial"  # a live process (pytest's parent)
    other = tmp_path / f"other.pgc-{_dead_pid()}-ghi.partial"
    for d in (dead, live, other):
        d.mkdir()
        (d / "f").write_text("x")
    assert _train(out) == 0
    assert not dead.exists() and live.exists() and other.exists()


def test_an_old_folder_moved_aside_by_a_killed_writer_is_restored(tmp_path):
    out = tmp_path / "run"
    assert _train(out, "--seed", "5") == 0
    aside = tmp_path / f"run.pgc-{_dead_pid()}-xyz.old"
    out.rename(aside)  # the writer died between "old aside" and "new in"
    with output_lock(out):
        rundir.remove_stale_partials(out)
    assert _complete(out) == 5 and not aside.exists()


def test_replacement_without_atomic_exchange_keeps_nothing_behind(tmp_path, monkeypatch):
    monkeypatch.setattr("pgc.outdirs._exchange", lambda a, b: False)
    out = tmp_path / "run"
    assert _train(out, "--seed", "1") == 0
    assert _train(out, "--seed", "2", "--force") == 0
    assert _complete(out) == 2 and sorted(p.name for p in tmp_path.iterdir()) == ["run"]


# ---------------------------------------------------------------------------------------------
# errors: one line, exit 2
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "config",
    [
        {"hyper": "x"},
        {"epsilon": True},
        {"hyper": {"cap": "200"}},
        {"physics": [1]},
        {"gravities": "9.8"},
        {"buffer_size": 1.5},
        {"stop_at_success": "yes"},
        {"mechanism": 3},
        {"epsilon": 1e300},
        {"seed": -1},
        {"clip": None, "epsilon": "x"},
        [1, 2],
    ],
)
def test_wrongly_typed_config_values(tmp_path, capsys, config):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps(config))
    rc = _train(tmp_path / "run", "--config", str(cfg))
    _one_line_error(capsys.readouterr().err, rc)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "argv, limit",
    [
        (["--trials", "100000000"], "100,000"),
        (["--epsilon", "1e300"], "1e+06"),
        (["--submissions", "9000000", "--trials", "5000"], "GiB"),
    ],
)
def test_sizes_checked_before_allocation(tmp_path, capsys, argv, limit):
    rc = _train(tmp_path / "run", *argv)
    err = capsys.readouterr().err
    _one_line_error(err, rc)
    assert limit in err


def test_truncated_transcript_is_a_clear_error(tmp_path):
    out = tmp_path / "run"
    assert _train(out) == 0
    path = out / "trial_000" / "transcript.npz"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(ValueError, match="truncated or corrupted"):
        load_run(out)[1][0].transcript()


# ---------------------------------------------------------------------------------------------
# 9. non-finite transcripts
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_transcript_is_refused(tmp_path, bad):
    out = tmp_path / "run"
    assert _train(out) == 0
    directory = out / "trial_000"
    t = load_run(out)[1][0].transcript()
    t.gradient[:] = bad  # NaN, or a float32 value that overflowed to inf
    t.save(directory)
    with pytest.raises(ValueError, match="non-finite"):
        Transcript.load(directory)


# ---------------------------------------------------------------------------------------------
# 8. a custom mechanism is recorded and rebuilt, or refused clearly
# ---------------------------------------------------------------------------------------------


class _Halved(Laplace):
    """A registered third-party mechanism (a Laplace subclass, so it runs through the Protocol)."""


def test_custom_mechanism_recorded_and_rebuilt(tmp_path):
    name = "halved-test"
    MECHANISMS[name] = lambda epsilon, clip=None, reduced_dim=None: _Halved(epsilon=epsilon, clip=clip or 0.02)
    try:
        mech = _Halved(epsilon=2.0, clip=0.02)
        res = train_batch([TrainConfig(submissions=30, workers=2)], mechanisms=[mech], record_transcripts=True)
        out = rundir.save_run(res, tmp_path / "run", wall_time=0.0)
        record = load_run(out)[1][0].summary["mechanism"]
        assert record["name"] == name and record["class"].endswith("_Halved")
        assert (
            record["params"]["epsilon"] == 2.0 and record["params"]["clip"] == 0.02 and len(record["fingerprint"]) == 64
        )
        again = load_mechanism(out)
        assert type(again) is _Halved and again.epsilon == 2.0 and again.clip == 0.02
    finally:
        del MECHANISMS[name]
    with pytest.raises(MechanismUnavailableError, match="not registered"):
        load_mechanism(out)


def test_unregistered_mechanism_cannot_be_rebuilt(tmp_path):
    class Private(Laplace):
        pass

    res = train_batch([TrainConfig(submissions=30, workers=2)], mechanisms=[Private(epsilon=1.0, clip=0.01)])
    out = rundir.save_run(res, tmp_path / "run", wall_time=0.0)
    assert load_run(out)[1][0].summary["mechanism"]["name"] is None
    with pytest.raises(MechanismUnavailableError, match="unregistered mechanism"):
        load_mechanism(out)


@pytest.mark.parametrize("name", [{"x": 1}, ["laplace"], 3])
def test_a_mechanism_record_whose_name_is_not_text_is_refused(name):
    from pgc.mechanisms import mechanism_record, rebuild_mechanism

    record = {**mechanism_record(Laplace(epsilon=1.0, clip=0.01)), "name": name}
    with pytest.raises(MechanismUnavailableError, match="malformed mechanism record"):
        rebuild_mechanism(record, where="run")


def test_builtin_mechanism_with_rounds_rebuilds_exactly(tmp_path):
    out = tmp_path / "run"
    assert _train(out, "--mechanism", "prs", "--epsilon", "7", "--rounds", "3") == 0
    mech = load_mechanism(out)
    assert mech == TrainConfig(mechanism="prs", epsilon=7, rounds=3).build_mechanism()


def test_audit_and_attack_refuse_a_run_whose_mechanism_they_cannot_rebuild(tmp_path, capsys):
    """A run trained with an unregistered mechanism is not audited or attacked as "laplace ε=1"."""
    from pgc.cli.main import main

    class Private(Laplace):
        pass

    res = train_batch(
        [TrainConfig(submissions=30, workers=2)], mechanisms=[Private(epsilon=1.0, clip=0.01)], record_transcripts=True
    )
    out = rundir.save_run(res, tmp_path / "run", wall_time=0.0)
    capsys.readouterr()
    assert (
        main(
            [
                "audit",
                "--run",
                str(out),
                "--samples",
                "200",
                "--mechanism-samples",
                "200",
                "--out",
                str(tmp_path / "a.json"),
            ]
        )
        == 2
    )
    assert "unregistered mechanism" in capsys.readouterr().err and not (tmp_path / "a.json").exists()
    assert main(["attack", "--run", str(out), "--targets", "5", "--out", str(tmp_path / "b.json")]) == 2
    assert "unregistered mechanism" in capsys.readouterr().err and not (tmp_path / "b.json").exists()


# ---------------------------------------------------------------------------------------------
# pgc replicate: the same output guard and lock as the other writers
# ---------------------------------------------------------------------------------------------


def test_replicate_guards_and_locks_its_reading_folders(tmp_path, monkeypatch, capsys):
    import fcntl

    monkeypatch.setattr("pgc.replication.runs.replicate", lambda *a, **k: pytest.fail("ran the grid"))
    monkeypatch.setattr("pgc.replication.runs.analyse", lambda *a, **k: pytest.fail("analysed"))
    quick = ["replicate", "--quick", "--no-progress"]
    foreign = tmp_path / "foreign" / "sampled"
    foreign.mkdir(parents=True)
    (foreign / "thesis.md").write_text("mine")
    rc = main([*quick, "--out", str(tmp_path / "foreign"), "--force"])
    err = capsys.readouterr().err
    _one_line_error(err, rc)
    assert "not written by pgc" in err and (foreign / "thesis.md").read_text() == "mine"

    out = tmp_path / "rep"
    out.mkdir()
    fd = os.open(rundir.lock_path(out / "sampled"), os.O_RDWR | os.O_CREAT)  # another writer holds it
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        rc = main([*quick, "--out", str(out)])
    finally:
        os.close(fd)
    err = capsys.readouterr().err
    _one_line_error(err, rc)
    assert str(out / "sampled") in err and "another process" in err and not (out / "sampled").exists()

    raw = tmp_path / "grid.raw.json"
    raw.write_text(json.dumps({"spec": {"reading": "sampled"}}))
    monkeypatch.setattr(
        "pgc.replication.runs.GridRun.from_dict",
        staticmethod(lambda d: type("R", (), {"spec": type("S", (), {"reading": "sampled"})()})()),
    )
    rc = main([*quick, "--from-raw", str(raw), "--out", str(tmp_path / "foreign"), "--force"])
    err = capsys.readouterr().err
    _one_line_error(err, rc)
    assert "not written by pgc" in err and (foreign / "thesis.md").read_text() == "mine"
    monkeypatch.chdir(tmp_path / "foreign" / "sampled")
    rc = main([*quick, "--out", "..", "--force"])  # OUT/sampled would be the working folder
    _one_line_error(capsys.readouterr().err, rc)
    assert (foreign / "thesis.md").read_text() == "mine"


@pytest.mark.parametrize("damage", ["trials_not_objects", "best_mu_missing", "fst_text"])
def test_a_damaged_raw_grid_is_refused_with_one_line(damage, tmp_path, capsys):
    raw = json.loads(
        (Path(__file__).resolve().parents[1] / "results/replicate/cap90k-laplace/sampled/grid.raw.json").read_text()
    )
    key = next(iter(raw["trials"]))
    if damage == "trials_not_objects":
        raw["trials"][key] = [1, 2]
    elif damage == "best_mu_missing":
        del raw["trials"][key][0]["best_mu"]
    else:
        raw["trials"][key][0]["fst"] = "soon"
    path = tmp_path / "grid.raw.json"
    path.write_text(json.dumps(raw))
    rc = main(["replicate", "--from-raw", str(path), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    _one_line_error(err, rc)
    assert str(path) in err and not (tmp_path / "out").exists()


def test_pool_workers_die_with_a_killed_command(tmp_path):
    """kill -9 of a command leaves none of its pool's workers behind (pgc.tasks.die_with_parent)."""
    code = (
        "import concurrent.futures as cf, multiprocessing, os, sys, time\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})\n"
        "from pgc.tasks import die_with_parent\n"
        "pool = cf.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context('fork'),"
        " initializer=die_with_parent, initargs=(os.getpid(),))\n"
        "futures = [pool.submit(time.sleep, 60) for _ in range(2)]\n"
        "time.sleep(0.5)\n"
        "print(' '.join(str(p) for p in pool._processes), flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    workers = [int(p) for p in proc.stdout.readline().split()]
    assert len(workers) == 2 and all(_alive(p) for p in workers)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in workers)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False
