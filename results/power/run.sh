#!/bin/sh
# Regenerates results/power/*.json; run from the repository root after scripts/setup.sh.
# About 30 min on 2 cores in all (curve-vs-threshold ~10 min, detectability ~8 min, privacy profiles ~5 min,
# the rest a few minutes).
set -e
.venv/bin/python -m audit.power.study --out results/power "$@"
.venv/bin/python scripts/profile_study.py --out results/power --samples 100000 --seeds 5
