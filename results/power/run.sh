#!/bin/sh
# Regenerates results/power/*.json (about 40 s on 2 cores); run from the repository root after scripts/setup.sh.
set -e
.venv/bin/python -m audit.power_study results/power
