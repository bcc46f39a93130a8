"""The floors of the house (docs/ARCHITECTURE.md), checked on the source: every import of a project
package points down or sideways within its floor, and the auditor imports no system package."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# floor of each package (a dotted name: the longest entry that prefixes a module's name is its package); a module
# may import packages on its own floor or below. The wheel installs four import names: audit, attacks, pgc, reports.
FLOORS = {
    "pgc": 0,
    "pgc.outdirs": 0,
    "pgc.contracts": 0,
    "pgc.errors": 0,
    "pgc.options": 0,
    "pgc.references": 0,  # the package root (its version only) and the output-folder guards
    "pgc.usercode": 0,  # whose code raised an exception: the user's or pgc-audit's
    "pgc.files": 0,  # atomic file writes and the JSON encoding of numbers
    "pgc.interrupts": 0,  # Ctrl-C that always ends a command and stops its atomic writes
    "pgc.mechanisms": 0,
    "pgc.systems": 0,
    "pgc.tasks": 0,
    "pgc.optim": 0,  # contracts and pure helpers
    "pgc.schemas": 1,  # result records (claims are the systems contract's PrivacyClaim)
    "pgc.a3c": 2,
    "pgc.gympg": 2,
    "pgc.fedlinucb": 2,
    "pgc.toysystems": 2,
    "pgc.dprl": 2,  # system packages
    "pgc.flower": 2,
    "pgc.ldp": 2,
    "pgc.nvflare": 2,
    "pgc.opacus": 2,
    "pgc.catalogue": 2,
    "pgc.engines": 3,  # where independent tasks run
    "audit": 4,
    "attacks": 4,  # the auditor and the attackers
    "reports": 5,  # reading results
    "pgc.audits": 6,
    "pgc.tuning": 6,
    "pgc.replication": 6,  # audits of one system, studies on audits and trainers
    "pgc.benchmarks": 7,  # the benchmarks of pgc bench, over everything but the command line
    "pgc.studies": 7,  # the studies the commands run (bandit, thesis, the pipeline's steps), over floors 0-6
    "pgc.cli": 8,  # the command line, on top
}
IMPORT_NAMES = {"audit", "attacks", "pgc", "reports"}
SYSTEM_PACKAGES = {name for name, floor in FLOORS.items() if floor == 2}
# allowed imports between two packages of one floor: the attackers use the auditor's bounds; every package of
# floor 0 may import the contracts, the user-error exception, the user-code classification, the file writes and the
# interrupt guard
SIDEWAYS = {("attacks", "audit")} | {
    (name, base)
    for name, floor in FLOORS.items()
    if floor == 0
    for base in ("pgc.contracts", "pgc.errors", "pgc.usercode", "pgc.files", "pgc.interrupts")
}


def package_of(module: str) -> str | None:
    """The FLOORS entry a dotted module name belongs to (the longest that prefixes it), None outside the project."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in FLOORS:
            return ".".join(parts[:n])
    return None


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules():
    for root in sorted(IMPORT_NAMES):
        for path in sorted((ROOT / root).rglob("*.py")):
            package = package_of(module_name(path))
            assert package is not None, f"{path.relative_to(ROOT)} belongs to no package of the floor table"
            yield package, path


def imported_packages(path: Path) -> set[str]:
    """Project packages a module imports (anywhere in it, lazily or not)."""
    out = set()
    here = module_name(path).split(".")
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):  # each imported name; a relative one against this module's package
            package = here if is_package else here[:-1]
            base = package[: len(package) - node.level + 1] if node.level else []
            prefix = ".".join(base + ([node.module] if node.module else []))
            names = [f"{prefix}.{alias.name}" for alias in node.names]
        else:
            continue
        # `from pgc.a3c import x` and `from pgc import a3c` both name pgc.a3c (the longest entry that prefixes)
        out |= {p for p in (package_of(name) for name in names) if p is not None}
    return out


def test_every_import_points_down_or_within_its_floor():
    upward = []
    for package, path in project_modules():
        for target in imported_packages(path) - {package}:
            same_floor = FLOORS[target] == FLOORS[package]
            if FLOORS[target] > FLOORS[package] or (same_floor and (package, target) not in SIDEWAYS):
                upward.append(f"{path.relative_to(ROOT)} ({package}) imports {target}")
    assert not upward, "imports against the floors:\n" + "\n".join(upward)


def test_the_auditor_imports_no_system_package():
    found = [
        f"{path.relative_to(ROOT)} imports {sorted(imported_packages(path) & SYSTEM_PACKAGES)}"
        for package, path in project_modules()
        if package == "audit" and imported_packages(path) & SYSTEM_PACKAGES
    ]
    assert not found, "\n".join(found)


def test_the_floor_table_knows_every_package_and_the_wheel_has_four_import_names():
    top = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests", "scripts", "results", "examples"}
    assert top == IMPORT_NAMES, f"top-level packages: {sorted(top)}"
    subpackages = {module_name(p.parent / "__init__.py") for p in (ROOT / "pgc").glob("*/__init__.py")}
    assert subpackages <= set(FLOORS), f"packages without a floor: {sorted(subpackages - set(FLOORS))}"
    import tomllib

    found = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]["include"]
    assert sorted(found) == sorted(f"{name}*" for name in IMPORT_NAMES)


def _floor_table(markdown: str, heading: str) -> set[tuple[int, str]]:
    """(floor, package) of every row of the table under ``heading`` whose first cell is a floor number."""
    section = markdown.split(heading, 1)[1].split("\n## ", 1)[0]
    rows = set()
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].isdigit():
            for name in re.findall(r"`([\w.]+)`", cells[1]):
                rows.add((int(cells[0]), name))
    return rows


def test_the_architecture_docs_show_the_floor_table():
    """docs/ARCHITECTURE.md and the README's Architecture list exactly the packages and floors enforced here."""
    want = {(floor, name) for name, floor in FLOORS.items()}
    for doc, heading in (("docs/ARCHITECTURE.md", "# Architecture"), ("README.md", "## Architecture")):
        shown = _floor_table((ROOT / doc).read_text(encoding="utf-8"), heading)
        assert shown == want, f"{doc}: missing {sorted(want - shown)}, extra {sorted(shown - want)}"


# Sizes count logical lines (one per statement, however the formatter wraps it): a module holds at most 320 (about
# 500 physical lines of hand-packed code), a function at most 50 (pylint's default max-statements).
MAX_MODULE_LINES = 320
MAX_FUNCTION_LINES = 50
# the compiled kernel (one numba function per hot loop) and the straight-line reference trial it is checked against
SIZE_EXEMPT = ("pgc/a3c/kernel/", "pgc/a3c/reference_trial.py")


def _sized_sources():
    for _, path in project_modules():
        yield path
    yield from sorted((ROOT / "scripts").glob("*.py"))


def _logical_line_ends(text):
    """The physical line each logical line (statement) of ``text`` ends on."""
    return [
        tok.start[0] for tok in tokenize.generate_tokens(io.StringIO(text).readline) if tok.type == tokenize.NEWLINE
    ]


def test_no_module_over_320_logical_lines():
    over = []
    for path in _sized_sources():
        rel = path.relative_to(ROOT).as_posix()
        lines = len(_logical_line_ends(path.read_text(encoding="utf-8")))
        if not rel.startswith(SIZE_EXEMPT) and lines > MAX_MODULE_LINES:
            over.append(f"{rel}: {lines} logical lines")
    assert not over, f"modules over {MAX_MODULE_LINES} logical lines:\n" + "\n".join(over)


def test_no_function_over_50_logical_lines():
    over = []
    for path in _sized_sources():
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(SIZE_EXEMPT):
            continue
        text = path.read_text(encoding="utf-8")
        ends = _logical_line_ends(text)
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = sum(node.lineno <= end <= node.end_lineno for end in ends)
                if length > MAX_FUNCTION_LINES:
                    over.append(f"{rel}:{node.lineno} {node.name}: {length} logical lines")
    assert not over, f"functions over {MAX_FUNCTION_LINES} logical lines:\n" + "\n".join(over)
