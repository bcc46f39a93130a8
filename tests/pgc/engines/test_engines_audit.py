"""Engines for ``pgc audit`` and ``pgc attack``: with ``--engine ray`` the independent audits and
attacks run as Ray tasks and the JSON result is the local engine's, timings aside."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys

import numpy as np
import pytest

import pgc.a3c.crafted
from pgc.a3c.model import load_checkpoint
from pgc.cli.main import main
from pgc.engines import RayEngine

TINY_SEARCH = pgc.a3c.crafted.SearchSettings(
    screen_controllers=8, screen_episodes=60, generations=4, population=6, episodes=60, restarts=1, detector_screen=4
)


@pytest.fixture
def ray_tasks_pickle_with_the_standard_pickle(ray_engine, monkeypatch):
    """The Ray engine, checking that every task it gets also survives the standard pickle (Ray's
    cloudpickle would hide a lambda or a nested function that a process pool refuses)."""
    original_map = RayEngine.map

    def checked_map(self, fn, *iterables):
        items = list(zip(*iterables, strict=False))
        pickle.loads(pickle.dumps(fn))
        pickle.loads(pickle.dumps(items))
        return original_map(self, fn, *(list(column) for column in zip(*items, strict=True)))

    monkeypatch.setattr(RayEngine, "map", checked_map)
    return ray_engine


def _without_timings(value):
    """A result without its timings and its command line (``--engine`` and ``--out`` differ between the two)."""
    if isinstance(value, dict):
        return {
            k: _without_timings(v)
            for k, v in value.items()
            if not (k.endswith("_time_s") or k in ("wall_s", "command", "argv"))
        }
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


def _results_by_engine(command: str, argv: list[str], tmp_path) -> dict[str, dict]:
    results = {}
    for engine in ("local", "ray"):
        out = tmp_path / engine / f"{command}.json"
        assert main([command, *argv, "--engine", engine, "--out", str(out), "--no-progress"]) == 0
        results[engine] = json.loads(out.read_text())
    return results


@pytest.mark.slow
def test_ray_engine_audit_run_pairs_identical_to_local(
    ray_tasks_pickle_with_the_standard_pickle, tmp_path, no_result_parsing
):
    run = tmp_path / "run"
    assert main(["train", "--submissions", "30", "--out", str(run), "--no-progress"]) == 0
    results = _results_by_engine(
        "audit",
        [
            "--run",
            str(run),
            "--initial",
            "--samples",
            "1000",
            "--mechanism-samples",
            "2000",
            "--pairs",
            "9.7:9.9",
            "5:15",
        ],
        tmp_path,
    )
    assert [(a["psi"], a["psi_prime"]) for a in results["ray"]["environment_audits"]] == [(9.7, 9.9), (5.0, 15.0)]
    assert _without_timings(results["ray"]) == _without_timings(results["local"])


@pytest.mark.slow
def test_ray_engine_audit_adversarial_pairs_identical_to_local(
    ray_tasks_pickle_with_the_standard_pickle, tmp_path, monkeypatch, no_result_parsing
):
    monkeypatch.setattr(pgc.a3c.crafted, "QUICK_SEARCH", TINY_SEARCH)  # travels to the tasks as an argument
    results = _results_by_engine(
        "audit",
        [
            "--mechanism",
            "laplace",
            "--epsilon",
            "1",
            "--adversarial-model",
            "--search-budget",
            "quick",
            "--pairs",
            "5:15",
            "5..15",
            "--search-trials",
            "2",
            "--samples",
            "1000",
        ],
        tmp_path,
    )
    ray, local = results["ray"], results["local"]
    assert len(ray["adversarial_audits"]) == 2 and "worst_pair_search" in ray["adversarial_audits"][1]
    assert _without_timings(ray) == _without_timings(local)
    for audit_ray, audit_local in zip(ray["adversarial_audits"], local["adversarial_audits"], strict=True):
        for objective, name in audit_ray["theta_files"].items():
            assert np.array_equal(
                load_checkpoint(tmp_path / "ray" / name),
                load_checkpoint(tmp_path / "local" / audit_local["theta_files"][objective]),
            )


@pytest.mark.slow
def test_ray_engine_audit_adversarial_curve_identical_to_local(
    ray_tasks_pickle_with_the_standard_pickle, tmp_path, monkeypatch, no_result_parsing
):
    monkeypatch.setattr(pgc.a3c.crafted, "QUICK_SEARCH", TINY_SEARCH)
    results = _results_by_engine(
        "audit",
        [
            "--mechanism",
            "laplace",
            "--adversarial-curve",
            "--search-budget",
            "quick",
            "--epsilons",
            "1",
            "4",
            "--distances",
            "2",
            "10",
            "--channels",
            "gradient,score",
            "--samples",
            "500",
        ],
        tmp_path,
    )
    curve = results["ray"]["curve"]
    assert [(p["delta_psi"], p["epsilon"]) for p in curve[::4]] == [(2.0, 1.0), (2.0, 4.0), (10.0, 1.0), (10.0, 4.0)]
    assert _without_timings(results["ray"]) == _without_timings(results["local"])


@pytest.mark.slow
def test_ray_engine_audit_self_test_identical_to_local(
    ray_tasks_pickle_with_the_standard_pickle, tmp_path, no_result_parsing
):
    results = _results_by_engine(
        "audit", ["--self-test", "--only", "laplace", "noise-too-small", "--samples", "3000"], tmp_path
    )
    assert len(results["ray"]["self_test"]) == 3
    assert _without_timings(results["ray"]) == _without_timings(results["local"])


def test_ray_engine_attack_budgets_identical_to_local(ray_tasks_pickle_with_the_standard_pickle, tmp_path):
    results = _results_by_engine(
        "attack",
        [
            "--model",
            "init:0",
            "--candidates",
            "9.7",
            "9.8",
            "9.9",
            "--targets",
            "40",
            "--budget",
            "10",
            "20",
            "--k",
            "1",
            "2",
            "--channels",
            "gradient,score",
            "--epochs",
            "2",
        ],
        tmp_path,
    )
    assert {(r["attacker"], r["budget"]) for r in results["ray"]["rows"]} == {
        (a, b) for a in ("likelihood", "learned", "side-channel") for b in (10, 20)
    }
    assert _without_timings(results["ray"]) == _without_timings(results["local"])


def test_ray_engine_attack_sweep_identical_to_local(ray_tasks_pickle_with_the_standard_pickle, tmp_path):
    results = _results_by_engine(
        "attack",
        [
            "--sweep",
            "--model",
            "init:0",
            "--model",
            "init:1",
            "--epsilons",
            "1",
            "inf",
            "--targets",
            "30",
            "--budget",
            "10",
            "--epochs",
            "2",
        ],
        tmp_path,
    )
    assert len(results["ray"]["settings"]) == 2 * 2 * 2  # models × ε × channel sets
    assert _without_timings(results["ray"]) == _without_timings(results["local"])


@pytest.mark.parametrize(
    "command, argv",
    [
        ("audit", ["--mechanism", "laplace", "--epsilon", "1", "--samples", "1000"]),
        ("attack", ["--model", "init:0", "--targets", "6", "--budget", "4"]),
    ],
)
@pytest.mark.parametrize(
    "engine_argv",
    [["--address", "127.0.0.1:6379"], ["--engine", "local", "--address", "127.0.0.1:6379"], ["--engine", "dask"]],
)
def test_engine_options_refused_with_one_line_error(command, argv, engine_argv, tmp_path, capsys):
    out = tmp_path / "x.json"
    try:
        code = main([command, *argv, *engine_argv, "--out", str(out), "--no-progress"])
    except SystemExit as exc:  # argparse (an unknown engine) exits 2 itself
        code = exc.code
    assert code == 2 and not out.exists()
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "error:" in err
    assert ("--address is only for --engine ray" in err) if "--address" in engine_argv else ("dask" in err)


def test_audit_and_attack_packages_take_an_executor_without_importing_an_engine():
    code = (
        "import sys, audit, pgc.audits.adversarial, audit.selftest, attacks, attacks.a3c.sweep, attacks.a3c.runner; "
        "bad = [m for m in ('ray', 'engines') if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
