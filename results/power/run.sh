#!/bin/sh
# Regenerates results/power/*.json; run from the repository root after scripts/setup.sh.
# About 25 min on 2 cores in all (curve-vs-threshold ~10 min, detectability ~8 min, the rest a few minutes).
set -e
.venv/bin/python -m audit.power_study --out results/power "$@"
