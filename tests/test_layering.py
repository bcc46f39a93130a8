"""The floors of the house (docs/ARCHITECTURE.md), checked on the source: every import of a project
package points down or sideways within its floor, and the auditor imports no system package."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# floor of each top-level package; a module may import packages on its own floor or below
FLOORS = {
    "mechanisms": 0, "systems": 0, "tasks": 0, "optim": 0,  # contracts and pure helpers
    "schemas": 1,  # result records (claims are the systems contract's PrivacyClaim)
    "pgc": 2, "gympg": 2, "fedlinucb": 2, "toysystems": 2, "dprl": 2, "flower_audit": 2,  # system packages
    "ldp_oracles": 2, "nvflare_audit": 2,
    "engines": 3,  # where independent tasks run
    "audit": 4, "attacks": 4,  # the auditor and the attackers
    "reports": 5,  # reading results
    "pgc_audits": 6, "tuning": 6, "replication": 6,  # audits of one system, studies built on audits and trainers
    "pgc_cli": 7,  # the command line, on top
}
SYSTEM_PACKAGES = {name for name, floor in FLOORS.items() if floor == 2}
SIDEWAYS = {("attacks", "audit")}  # allowed imports between two packages of one floor


def project_modules():
    for package in sorted(FLOORS):
        for path in sorted((ROOT / package).rglob("*.py")) if (ROOT / package).is_dir() else ():
            yield package, path


def imported_packages(path: Path) -> set[str]:
    """Top-level project packages a module imports (anywhere in it, lazily or not)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        out |= {name.split(".")[0] for name in names if name.split(".")[0] in FLOORS}
    return out


def test_every_import_points_down_or_within_its_floor():
    upward = []
    for package, path in project_modules():
        for target in imported_packages(path) - {package}:
            same_floor = FLOORS[target] == FLOORS[package]
            if FLOORS[target] > FLOORS[package] or (same_floor and (package, target) not in SIDEWAYS):
                upward.append(f"{path.relative_to(ROOT)} imports {target}")
    assert not upward, "imports against the floors:\n" + "\n".join(upward)


def test_the_auditor_imports_no_system_package():
    found = [f"{path.relative_to(ROOT)} imports {sorted(imported_packages(path) & SYSTEM_PACKAGES)}"
             for package, path in project_modules() if package == "audit"
             and imported_packages(path) & SYSTEM_PACKAGES]
    assert not found, "\n".join(found)


def test_the_floor_table_knows_every_package():
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests", "scripts", "results", "examples"}
    assert packages <= set(FLOORS), f"packages without a floor: {sorted(packages - set(FLOORS))}"


MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60
# the compiled kernel (one numba function per hot loop) and the straight-line reference trial it is checked against
SIZE_EXEMPT = ("pgc/kernel/", "pgc/reference_trial.py")


def _sized_sources():
    for _, path in project_modules():
        yield path
    yield from sorted((ROOT / "scripts").glob("*.py"))


def test_no_module_over_500_lines():
    over = []
    for path in _sized_sources():
        rel = path.relative_to(ROOT).as_posix()
        lines = path.read_text(encoding="utf-8").count("\n")
        if not rel.startswith(SIZE_EXEMPT) and lines > MAX_MODULE_LINES:
            over.append(f"{rel}: {lines} lines")
    assert not over, f"modules over {MAX_MODULE_LINES} lines:\n" + "\n".join(over)


def test_no_function_over_60_lines():
    over = []
    for path in _sized_sources():
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(SIZE_EXEMPT):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    over.append(f"{rel}:{node.lineno} {node.name}: {length} lines")
    assert not over, f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(over)
