#!/usr/bin/env bash
# Idempotent set-up: a virtual environment in .venv with pgc-audit and its dependencies, with the
# extras for scale-out (psycopg 3, optuna-dashboard, Ray) and the Debian PostgreSQL server that the
# tests start as a throwaway cluster (scripts/postgres.py).
# torch is installed first, pinned to the CPU build (torch==2.13.0), so nothing pulls CUDA wheels.
# Re-running is cheap: the pip steps are skipped while pyproject.toml is unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
quiet() { grep -v '^WARNING: Location' || true; }
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.pgc-setup-stamp
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ] || ! .venv/bin/python -c "import pgc, torch, psycopg, optuna_dashboard, ray" 2>/dev/null; then
  .venv/bin/python -m pip install -q --upgrade pip 2>&1 | quiet
  .venv/bin/python -m pip install -q "torch==2.13.0" 2>&1 | quiet
  .venv/bin/python -m pip install -q -e ".[test,scale]" 2>&1 | quiet
  .venv/bin/python -c "import torch; assert torch.__version__.startswith('2.13.0'), torch.__version__"
  echo "$want" > "$stamp"
fi
# Headless Chromium for the report's browser test (Debian package), only if missing.
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "setup: could not install chromium; the report's browser test will fail" >&2
fi
# PostgreSQL server binaries (Debian package postgresql), only if missing.
.venv/bin/python scripts/postgres.py --install >/dev/null \
  || echo "setup: could not install postgresql; the PostgreSQL tests will fail" >&2
# compile (or load from cache) the numba kernel once
.venv/bin/python -c "from pgc.kernel import warm_up; warm_up()"
echo "setup: ok ($(.venv/bin/python -c 'import pgc, torch; print("pgc", pgc.__version__, "torch", torch.__version__)'))"
