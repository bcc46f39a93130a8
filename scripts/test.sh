#!/usr/bin/env bash
# The test command: set up if needed, the lint and format check (ruff) and the type check (mypy --strict on the modules
# pyproject.toml names), then the whole default test suite on two pytest-xdist workers (the machine's 2 cores;
# many tests wait on subprocesses); extra arguments go to pytest (-n 0: one process).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check --quiet .
.venv/bin/ruff format --check --quiet .
.venv/bin/mypy
exec .venv/bin/python -m pytest -q -n 2 --dist worksteal "$@"
