#!/usr/bin/env bash
# The main job: set up if needed, then train -> audit -> attack -> report on embedded defaults
# (SQLite, local processes). Leaves the HTML report at runs/pipeline/report/report.html.
# With no arguments it replaces the previous runs/pipeline; any arguments go to `pgc pipeline`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ "$#" -eq 0 ]; then
  set -- --out runs/pipeline --force
fi
exec .venv/bin/pgc pipeline "$@"
