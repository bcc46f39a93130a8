"""pgc-audit as users install it: a wheel of this checkout installed (not editable) into a fresh virtual
environment (``installed_pgc`` in conftest.py), run from an empty folder outside the repository.

The wheel holds four import names; ``pgc --help``, a user's own System from a file with a plain-dataclass claim
and a user's Flower ClientApp (the flower extra) run there, and every shipped reference the benchmarks read loads
there; nothing is written beside the installed package. The main job (the README's ``pgc pipeline --quick``, then
``pgc report`` on its results) and the benchmarks run in tests/test_newcomer.py, the main job by this wheel's
``pgc``."""

from __future__ import annotations

import json
import os
import subprocess
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

USER_SYSTEM = '''
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class MyClaim:  # a plain dataclass, not pgc's PrivacyClaim
    epsilon: float = 1.0
    delta: float = 0.0
    covers: tuple = ("value",)


@dataclass
class Coin:
    """Randomized response on one bit at ε = 1."""
    name: str = "my coin"
    claim: MyClaim = field(default_factory=MyClaim)
    channels: tuple = ("value",)

    def release(self, secret, n, rng, *, broadcast=None):
        keep = rng.random(n) < np.e / (1 + np.e)
        bit = np.where(keep, float(secret), 1.0 - float(secret))
        return {"value": bit[:, None]}

    def canaries(self):
        return {"0 vs 1": (0, 1)}


def make():
    return Coin()
'''


def run_installed(
    pgc: Path, *argv: str, cwd: Path, timeout: int = 600, progress_interval_s: str = "30"
) -> subprocess.CompletedProcess:
    """``argv`` run by the installed wheel's ``pgc`` (the checkout kept off the path), a progress line every
    ``progress_interval_s`` seconds."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PATH=f"{pgc.parent}{os.pathsep}{env.get('PATH', '')}", PGC_PROGRESS_INTERVAL_S=progress_interval_s)
    return subprocess.run([str(pgc), *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_the_wheel_installs_four_import_names(installed_pgc):
    wheel = next((installed_pgc.parents[2] / "dist").glob("pgc_audit-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        top = {name.split("/")[0] for name in z.namelist() if not name.split("/")[0].endswith(".dist-info")}
        assert top == {"audit", "attacks", "pgc", "reports"}
        shipped = {name for name in z.namelist() if name.startswith("pgc/references/")}
    from pgc.references import SHIPPED

    assert {f"pgc/references/{r}" for r in SHIPPED} <= shipped


def test_the_installed_package_imports_from_the_venv_not_the_checkout(installed_pgc, tmp_path):
    python = installed_pgc.parent / "python"
    out = subprocess.run(
        [
            str(python),
            "-c",
            "import pgc, audit, reports, attacks, pgc.cli.main as m; print(pgc.__file__); print(m.__file__)",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert all(str(installed_pgc.parents[1]) in path and str(ROOT) not in path for path in out), out


def test_pgc_help_and_a_users_system_with_a_plain_dataclass_claim(installed_pgc, tmp_path):
    r = run_installed(installed_pgc, "--help", cwd=tmp_path)
    assert r.returncode == 0 and "pipeline" in r.stdout, r.stderr
    (tmp_path / "my_system.py").write_text(USER_SYSTEM)
    r = run_installed(
        installed_pgc,
        "audit",
        "system",
        "./my_system.py:make",
        "--samples",
        "20000",
        "--out",
        "coin.json",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    result = json.loads((tmp_path / "coin.json").read_text())
    (row,) = [row for row in result["rows"] if row["channel"] == "value"]
    assert row["claimed_epsilon"] == 1.0 and 0.8 < row["epsilon_lower_bound"] <= 1.0 + 1e-9
    assert row["verdict"] == "consistent"
    # a claim this audit refutes (randomized response at ε = 1 claimed as ε = 0.5) sets the exit code
    (tmp_path / "my_strict.py").write_text(USER_SYSTEM.replace("epsilon: float = 1.0", "epsilon: float = 0.5"))
    r = run_installed(
        installed_pgc,
        "audit",
        "system",
        "./my_strict.py:make",
        "--samples",
        "20000",
        "--out",
        "strict.json",
        "--fail-on",
        "violated",
        cwd=tmp_path,
    )
    assert r.returncode == 1 and "violated" in r.stdout, r.stdout + r.stderr


@pytest.mark.slow
def test_a_users_flower_client_app_through_flowers_message_path(installed_pgc, tmp_path):
    import shutil

    shutil.copy(ROOT / "examples" / "flower" / "digits_app.py", tmp_path / "digits_app.py")  # the user's own app
    r = run_installed(
        installed_pgc,
        "audit",
        "flower",
        "./digits_app.py:app",
        "--pair",
        "one record removed",
        "--samples",
        "400",
        "--out",
        "flower.json",
        cwd=tmp_path,
    )
    assert r.returncode == 0 and "LocalDpMod" in r.stdout, r.stdout[-2000:] + r.stderr[-2000:]
    assert json.loads((tmp_path / "flower.json").read_text())["pair"] == "one record removed"


SHIPPED_FILES_LOAD = """
import json, sys
import numpy as np
from pgc.a3c.model import load_checkpoint
from pgc.benchmarks.one_run import DEFAULT_THETA
from pgc.benchmarks.systems import CONTRACT_THETA
from pgc.references import SHIPPED, reference_path
assert DEFAULT_THETA in SHIPPED and CONTRACT_THETA in SHIPPED, "the benchmarks read shipped files"
for relative in SHIPPED:
    path = reference_path(relative)
    assert "site-packages" in str(path), path  # the installed copy, not the checkout
    if relative.endswith(".pt"):
        load_checkpoint(path)
    elif relative.endswith(".npy"):
        np.load(path, allow_pickle=False)
    else:
        json.loads(path.read_text())
print(len(SHIPPED))
"""


def test_every_shipped_reference_the_benchmarks_read_loads_from_the_installed_package(installed_pgc, tmp_path):
    """The files ``pgc bench one-run`` and ``pgc bench systems`` read (and every other shipped reference) resolve
    to the installed package and load with their readers; the benchmarks themselves run end to end in
    tests/test_newcomer.py."""
    python = installed_pgc.parent / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    r = subprocess.run(
        [str(python), "-c", SHIPPED_FILES_LOAD], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert int(r.stdout.split()[-1]) >= 2
