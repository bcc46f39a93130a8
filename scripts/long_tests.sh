#!/usr/bin/env bash
# The long tests: those marked `long`, left out of the default run (scripts/test.sh) to keep it under 8 minutes
# on 2 cores. Runs them and writes results/long-tests/junit.xml (the outcome of each) and summary.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
out=results/long-tests
mkdir -p "$out"
status=0
.venv/bin/python -m pytest -q -n 0 -m long --junitxml="$out/junit.xml.tmp" | tee "$out/summary.txt.tmp" || status=$?
mv "$out/junit.xml.tmp" "$out/junit.xml"
mv "$out/summary.txt.tmp" "$out/summary.txt"
exit "$status"
