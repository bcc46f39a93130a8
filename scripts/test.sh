#!/usr/bin/env bash
# The test command: the whole default test suite (about 10 minutes at most on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/python -m pytest -q "$@"
