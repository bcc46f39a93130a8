#!/usr/bin/env bash
# The test command: set up if needed, then the whole default test suite (≈10 minutes at most on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest -q "$@"
