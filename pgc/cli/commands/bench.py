"""``pgc bench TARGET``: benchmarks that print their numbers and a ratio against a reference measured
in the same run. Each target is a module in :mod:`pgc.benchmarks` with ``help``,
``add_arguments(parser)`` and ``run(args) -> int``."""

from __future__ import annotations

import argparse
import importlib
import importlib.util

TARGETS = {
    "train": "pgc.benchmarks.train",
    "audit": "pgc.benchmarks.audit",
    "attack": "pgc.benchmarks.attack",
    "replicate": "pgc.benchmarks.replicate",
    "adversarial": "pgc.benchmarks.adversarial",
    "scale": "pgc.benchmarks.scale",
    "gaussian": "pgc.benchmarks.gaussian",
    "systems": "pgc.benchmarks.systems",
    "bandit": "pgc.benchmarks.bandit",
    "one-run": "pgc.benchmarks.one_run",
    "flower": "pgc.benchmarks.flower",
    "ldp": "pgc.benchmarks.ldp",
    "catalogue": "pgc.benchmarks.catalogue",
    "catalogue-oracle": "pgc.benchmarks.catalogue_oracle",
    "shapes": "pgc.benchmarks.shapes",
    "opacus": "pgc.benchmarks.opacus",
    "versions": "pgc.benchmarks.versions",
}


class BenchCommand:
    help = "benchmarks"

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        sub = p.add_subparsers(dest="target", metavar="TARGET", required=True)
        for name, module_name in TARGETS.items():
            if importlib.util.find_spec(module_name) is None:
                continue
            module = importlib.import_module(module_name)
            sp = sub.add_parser(name, help=module.help, description=module.help)
            module.add_arguments(sp)
            sp.set_defaults(_bench=module)

    def run(self, args: argparse.Namespace) -> int:
        return int(args._bench.run(args) or 0)
