#!/usr/bin/env bash
# Idempotent set-up: a virtual environment in .venv with pgc-audit and its dependencies.
# torch is installed first, pinned to the CPU build (torch==2.13.0) so that nothing pulls CUDA wheels.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip 2>&1 | grep -v '^WARNING: Location' || true
.venv/bin/python -m pip install -q "torch==2.13.0" 2>&1 | grep -v '^WARNING: Location' || true
.venv/bin/python -m pip install -q -e ".[test]" 2>&1 | grep -v '^WARNING: Location' || true
.venv/bin/python -c "import torch, pgc; assert torch.__version__.startswith('2.13.0'), torch.__version__"
# Headless Chromium for the report's browser test (Debian package), only if missing.
if ! command -v chromium >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
      || echo "setup: could not install chromium; the browser test will fail" >&2
  fi
fi
echo "setup: ok ($(.venv/bin/python -c 'import pgc, torch; print("pgc", pgc.__version__, "torch", torch.__version__)'))"
