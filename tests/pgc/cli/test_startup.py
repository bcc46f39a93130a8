"""Start-up: a command imports torch, numba, the PGC-A3C kernel or the auditor's statistics only when it runs
them. Each check runs ``pgc`` in a fresh interpreter (``python -c``), so ``sys.modules`` starts clean."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pgc.cli.commands.audit.subcommands import SUBCOMMANDS
from pgc.cli.main import COMMANDS

HEAVY = ("torch", "numba", "pgc.a3c", "statsmodels", "scipy", "pgc.audits")


def _loaded_after(argv: list[str], cwd, modules: tuple[str, ...] = HEAVY) -> tuple[int, list[str], str]:
    """Run ``pgc ARGV`` in a fresh interpreter: its exit code, which of ``modules`` it loaded, its stderr."""
    code = (
        "import json, sys\n"
        "from pgc.cli.main import main\n"
        "try:\n"
        f"    rc = main({argv!r})\n"
        "except SystemExit as exc:\n"
        "    rc = exc.code\n"
        f"print(json.dumps([rc, [m for m in {modules!r} if m in sys.modules]]), file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300)
    rc, loaded = json.loads(proc.stderr.strip().splitlines()[-1])
    return rc, loaded, proc.stderr


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_a_subcommands_help_imports_no_audit_and_no_torch(name, tmp_path):
    rc, loaded, err = _loaded_after(["audit", name, "--help"], tmp_path)
    assert rc == 0 and loaded == [], (loaded, err)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_commands_help_imports_neither_torch_nor_numba_nor_the_kernel(command, tmp_path):
    rc, loaded, err = _loaded_after([command, "--help"], tmp_path, modules=("torch", "numba", "pgc.a3c.kernel"))
    assert rc == 0 and loaded == [], (loaded, err)


@pytest.mark.parametrize(
    "argv",
    [
        ["audit", "--help"],
        ["audit", "system", "toy-laplace-count", "--bogus"],
        ["audit", "--sytem", "toy-laplace-count"],
        ["audit", "--system", "toy-laplace-count", "--samples", "3"],
    ],
)
def test_help_and_refused_options_import_no_audit_and_no_torch(argv, tmp_path):
    rc, loaded, err = _loaded_after(argv, tmp_path)
    assert rc in (0, 2) and loaded == [], (loaded, err)


def test_auditing_a_numpy_system_imports_neither_torch_nor_numba(tmp_path):
    argv = ["audit", "system", "toy-laplace-count", "--samples", "2000", "--no-progress", "--out", "a.json"]
    rc, loaded, err = _loaded_after(argv, tmp_path)
    assert rc == 0, err
    assert not {"torch", "numba", "pgc.a3c"} & set(loaded), loaded
    assert json.loads((tmp_path / "a.json").read_text())["verdict"] == "consistent"


def test_exporting_a_tuning_study_imports_neither_torch_nor_numba(tmp_path):
    """``pgc tune --export-only`` reads the study's storage: the trainer loads only where trials train."""
    rc, loaded, err = _loaded_after(["tune", "--export-only", "--out", "t"], tmp_path)
    assert rc == 2 and "no study" in err, err
    assert not {"torch", "numba"} & set(loaded), loaded


def test_the_a3c_parameter_count_imports_no_torch():
    """``pgc.a3c.DIM`` is a plain number (pgc.a3c.layout): reading it loads neither torch nor the model."""
    code = "import sys, pgc.a3c; print(pgc.a3c.DIM, 'torch' in sys.modules, 'pgc.a3c.model' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert out.stdout.split() == ["112", "False", "False"], out.stderr
