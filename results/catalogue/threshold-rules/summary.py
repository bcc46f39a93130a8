"""Summary of run.sh's per-variant files against base.md: table.md. Usage: python summary.py DIR"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

VARIANTS = (
    "base",
    "A-lower-everywhere",
    "B-lower-for-central",
    "C-lower-where-noisy",
    "D-three-rules-held-out",
    "E-rules-at-median-rates",
    "F-vouched-central",
)
ALGORITHMS = ("ReportNoisyMax3", "ReportNoisyMax4", "LaplaceMechanism", "SVT6", "SVT34Parallel")


def sections(text: str) -> dict[str, str]:
    parts = re.split(r"^## ", text, flags=re.M)
    return {part.split("\n", 1)[0]: part for part in parts[1:]}


def per_seed(section: str) -> dict[int, float]:
    """seed → ε_LB from a markdown table whose first column is the seed and last the bound."""
    rows = re.findall(r"^\| (\d+) \|(?:.*\|)? ([-\d.]+) \|$", section, flags=re.M)
    return {int(seed): float(bound) for seed, bound in rows}


def load(directory: Path, name: str) -> tuple[str, dict[str, dict[int, float]], dict[int, float]]:
    parts = sections((directory / f"{name}.md").read_text())
    outside = next(v for k, v in parts.items() if k.startswith("Outside"))
    table = "\n".join(
        line
        for line in outside.splitlines()
        if line.startswith("| max") or line.startswith("| la") or line.startswith("| ga")
    )
    engine = {alg: per_seed(next(v for k, v in parts.items() if k.startswith(alg + " "))) for alg in ALGORITHMS}
    quick = per_seed(next(v for k, v in parts.items() if k.startswith("The quick start")))
    return table, engine, quick


def paired(new: dict[int, float], old: dict[int, float]) -> str:
    d = np.array([new[s] - old[s] for s in sorted(old)])
    changed = int(np.count_nonzero(np.abs(d) > 1e-12))
    return f"{d.mean():+.4f} ± {d.std(ddof=1) / np.sqrt(d.size):.4f} ({changed} change)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("directory", type=Path, help="the folder of run.sh's per-variant files")
    args = parser.parse_args()
    from pgc.cli.main import report_exception
    from pgc.errors import UserError

    try:
        if not (args.directory / "base.md").is_file():
            raise UserError(f"{args.directory} holds no base.md (run.sh writes it)")
        write_table(args.directory)
    except Exception as exc:  # bad input: one line (exit 2); a bug: the traceback (exit 3)
        return report_exception(exc, "summary.py")
    return 0


def write_table(directory: Path) -> None:
    """table.md's text on standard output, from ``directory``'s per-variant files."""
    runs = {name: load(directory, name) for name in VARIANTS if (directory / f"{name}.md").exists()}
    _, base_engine, base_quick = runs["base"]
    print("# Threshold rules of a continuous statistic: every variant beside the base\n")
    print("## Outside the engine (rules_study.py, 40 seeds): median ε_LB / mean / above 0.1\n")
    print("| variant | max-laplace | max-exponential | laplace | gaussian |")
    print("|---|---|---|---|---|")
    for name, (table, _, _) in runs.items():
        cells = [" / ".join(c.strip() for c in line.strip("|").split("|")[1:]) for line in table.splitlines()]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("\n## Fixed-pair audits (48 seeds): seeds above the claim 0.1; paired change of ε_LB against base\n")
    print("| variant | " + " | ".join(ALGORITHMS) + " | quick start score×3: mean; paired change |")
    print("|---|" + "---|" * (len(ALGORITHMS) + 1))
    for name, (_, engine, quick) in runs.items():
        cells = []
        for alg in ALGORITHMS:
            above = sum(v > 0.1 for v in engine[alg].values())
            change = "" if name == "base" else f"; {paired(engine[alg], base_engine[alg])}"
            cells.append(f"{above} of {len(engine[alg])}{change}")
        mean = np.mean(list(quick.values()))
        cells.append(f"{mean:.3f}" + ("" if name == "base" else f"; {paired(quick, base_quick)}"))
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    sys.exit(main())
