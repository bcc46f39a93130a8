#!/usr/bin/env bash
# The main job: set up if needed, then train -> audit -> attack -> report on embedded defaults
# (SQLite, local processes). Leaves the HTML report under runs/pipeline/ (see README).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/pgc pipeline "$@"
