"""Engines: the Ray engine gives bit-identical results to the local engine (train_batch, tune,
replicate), and the core package never imports Ray."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest

from pgc.a3c.trainer import TrainConfig, train_batch
from pgc.cli.main import main
from pgc.engines import LocalEngine, chunk_size, installed
from pgc.tuning import Evaluation, SearchSpace, StudySettings, export_study, run_study


def _same(a, b) -> None:
    for name in ("initial_theta", "theta", "scores"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert (a.updates, a.agent_steps, a.nonfinite_gradients, a.ticks) == (
        b.updates,
        b.agent_steps,
        b.nonfinite_gradients,
        b.ticks,
    )
    assert a.fst == b.fst or (np.isinf(a.fst) and np.isinf(b.fst))
    if a.transcript is not None:
        for k, v in vars(a.transcript).items():
            w = getattr(b.transcript, k)
            assert np.array_equal(v, w) if isinstance(v, np.ndarray) else v == w, k


CONFIGS = [
    TrainConfig(mechanism=m, epsilon=e, buffer_size=bs, submissions=600, seed=s)
    for s, (m, e, bs) in enumerate(
        [("laplace", 1.0, 1), ("prs", 5.0, 10), ("none", float("inf"), 1), ("prs", 50.0, 1), ("laplace", 10.0, 5)]
    )
]


@pytest.mark.slow
def test_ray_engine_train_batch_bit_identical_to_local(ray_engine):
    record = [True, False, False, True, False]
    local = train_batch(CONFIGS, record_transcripts=record)
    remote = train_batch(CONFIGS, record_transcripts=record, executor=ray_engine)
    forked = train_batch(CONFIGS, record_transcripts=record, executor=LocalEngine(2))
    assert len(remote) == len(local) == len(forked)
    for a, b, c in zip(local, remote, forked, strict=True):
        _same(a, b)
        _same(a, c)
    assert [r.config.seed for r in remote] == [c.seed for c in CONFIGS]  # input order kept


def test_ray_engine_installed_as_default_for_code_that_calls_train_batch(ray_engine):
    import ray

    calls = []

    class Spy:
        def map(self, fn, *its):
            calls.append(len(its[0]))
            return ray_engine.map(fn, *its)

    with installed(Spy()):
        out = train_batch(CONFIGS[:2])
    assert calls == [2]
    _same(out[0], train_batch(CONFIGS[:1])[0])
    assert ray.is_initialized()


def test_ray_engine_tune_study_identical_to_local(ray_engine, tmp_path):
    settings = StudySettings(
        space=SearchSpace(mechanisms=("laplace", "prs")),
        evaluation=Evaluation(runs_per_trial=3, submissions=200, rungs=(0.5, 1.0)),
        sampler="random",
        seed=4,
    )
    out = {}
    for name, executor in (("local", None), ("ray", ray_engine)):
        url = f"sqlite:///{tmp_path / (name + '.db')}"
        tasks = getattr(executor, "tasks", 0)
        run_study("s", url, settings, n_trials=4, batch=2, worker_id="w", executor=executor, log=lambda m: None)
        out[name] = [(t.params, t.values, t.fsts, t.state) for t in export_study("s", url).trials]
    assert out["ray"] == out["local"] and len(out["local"]) == 4
    assert ray_engine.tasks > tasks  # the training ran there, and the engine says where "there" is
    assert re.fullmatch(
        r"(a local Ray cluster started for this command|the Ray cluster at \S+|the Ray cluster this "
        r"process had already joined) \(\d+ CPUs\)",
        ray_engine.describe(),
    )


def test_ray_engine_replicate_command_identical_to_local(ray_engine, tmp_path):
    rows = {}
    for engine in ("local", "ray"):
        folder = tmp_path / engine
        assert (
            main(
                [
                    "replicate",
                    "--quick",
                    "--trials",
                    "2",
                    "--curve-trials",
                    "0",
                    "--cap",
                    "800",
                    "--engine",
                    engine,
                    "--out",
                    str(folder),
                    "--no-progress",
                ]
            )
            == 0
        )
        result = json.loads((folder / "sampled" / "replicate.json").read_text())
        rows[engine] = [(r["key"], r["successes"], r["median_fst"]) for r in result["settings"]]
        raw = json.loads((folder / "sampled" / "grid.raw.json").read_text())
        rows[engine + "-raw"] = raw["trials"]
    assert rows["ray"] == rows["local"] and rows["ray-raw"] == rows["local-raw"]


def test_core_package_does_not_import_ray_or_database_drivers():
    code = (
        "import sys, pgc, pgc.a3c.trainer, pgc.a3c.kernel, pgc.replication.grid, pgc.replication.search; "
        "bad = [m for m in ('ray', 'psycopg', 'optuna_dashboard', 'pgc.engines') if m in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_chunk_size_spreads_items_over_cpus():
    assert chunk_size(100, 2, 2) == 25
    assert chunk_size(3, 8, 2) == 1
    assert chunk_size(1, 1, 1) == 1


def test_core_package_imports_no_orchestration_or_analysis_package():
    """Layering: the PGC-A3C core (pgc.a3c) imports nothing from replication, audit, attacks, reports or tuning."""
    code = (
        "import sys, pkgutil, importlib, pgc.a3c; "
        "[importlib.import_module('pgc.a3c.' + m.name) for m in pkgutil.iter_modules(pgc.a3c.__path__)]; "
        "bad = [m for m in ('pgc.replication', 'audit', 'attacks', 'reports', 'pgc.tuning', 'pgc.engines', "
        "'pgc.cli') if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _square_after(item):
    import time

    n, pause = item
    time.sleep(pause)
    return n * n


def test_local_engine_map_each_keeps_input_order_whatever_finishes_first():
    from pgc.engines import LocalEngine

    items = [(3, 0.3), (1, 0.0), (2, 0.1)]  # the first job finishes last
    with LocalEngine(2) as engine:
        assert engine.map_each(_square_after, items, progress="jobs") == [9, 1, 4]
    assert LocalEngine(1).map_each(_square_after, items) == [9, 1, 4]
