#!/usr/bin/env bash
# Idempotent set-up: a virtual environment in .venv with pgc-audit and its dependencies, with the
# extras for scale-out (psycopg 3, optuna-dashboard, Ray), the audited third-party libraries (Flower,
# NVIDIA FLARE, multi-freq-ldpy, pure-ldp; all pinned in pyproject.toml) and, where no PostgreSQL server
# is installed, the Debian package postgresql, whose server the tests start as a throwaway cluster
# (pgc.tuning.postgres_cluster).
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
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ] || ! .venv/bin/python -c "import pgc, torch, psycopg, optuna_dashboard, ray, flwr, multi_freq_ldpy, pure_ldp, nvflare, opacus" 2>/dev/null; then
  .venv/bin/python -m pip install -q --upgrade pip 2>&1 | quiet
  .venv/bin/python -m pip install -q "torch==2.13.0" 2>&1 | quiet
  # setuptools warns on every editable install that a folder named like a package may shadow it: here the
  # packages are those folders
  PYTHONWARNINGS="ignore:Editable installation" \
    .venv/bin/python -m pip install -q -e ".[test,scale,references,flower,ldp,nvflare,opacus]" 2>&1 | quiet
  .venv/bin/python -c "import torch; assert torch.__version__.startswith('2.13.0'), torch.__version__"
  echo "$want" > "$stamp"
fi
# apt and dpkg refuse to run while another apt/dpkg process (an unattended upgrade, a second
# set-up) holds one of their locks. apt_lock_holder names the holder of a held lock: the locks are
# POSIX record locks, listed in /proc/locks by device and inode.
APT_LOCK_WAIT_S=${APT_LOCK_WAIT_S:-600}
APT_LOCK_FILES=${APT_LOCK_FILES:-/var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock /var/cache/apt/archives/lock}
apt_lock_holder() {
  local f ino pid
  for f in $APT_LOCK_FILES; do
    [ -e "$f" ] || continue
    ino=$(stat -c %i "$f") || continue
    pid=$(awk -v ino="$ino" '{ for (i = 2; i <= NF; i++) if ($i ~ /^[0-9a-f]+:[0-9a-f]+:[0-9]+$/) {
             split($i, part, ":"); if (part[3] == ino) { print $(i - 1); exit } } }' /proc/locks 2>/dev/null)
    if [ -n "$pid" ]; then
      echo "$f, held by process $pid ($(cat "/proc/$pid/comm" 2>/dev/null || echo gone))"
      return 0
    fi
  done
  return 1
}
# Wait (at most APT_LOCK_WAIT_S seconds, 600 by default) while another process holds an apt/dpkg lock.
wait_for_apt_lock() {
  local waited=0 holder
  while holder=$(apt_lock_holder); do
    if [ "$waited" -ge "$APT_LOCK_WAIT_S" ]; then
      echo "setup: gave up after ${waited}s waiting for the apt/dpkg lock $holder" >&2
      return 1
    fi
    if [ $((waited % 30)) -eq 0 ]; then
      echo "setup: waiting for another apt/dpkg process to finish: lock $holder (${waited}s of at most ${APT_LOCK_WAIT_S}s)" >&2
    fi
    sleep 5
    waited=$((waited + 5))
  done
}
APT_WAIT_OPT=(-o "DPkg::Lock::Timeout=$APT_LOCK_WAIT_S")  # apt >= 1.9.11 also waits for the dpkg lock itself
# Headless Chromium for the report's browser test (Debian package), only if missing.
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  (wait_for_apt_lock && apt-get "${APT_WAIT_OPT[@]}" update -qq \
     && wait_for_apt_lock && DEBIAN_FRONTEND=noninteractive apt-get "${APT_WAIT_OPT[@]}" install -y -qq chromium >/dev/null) \
    || echo "setup: could not install chromium; the report's browser test will fail" >&2
fi
# PostgreSQL server binaries (Debian package postgresql), only if missing.
if ! command -v initdb >/dev/null 2>&1 && ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
  wait_for_apt_lock || true  # pgc.tuning.postgres_cluster reports the failure if the lock stays held
fi
if ! why=$(.venv/bin/python -m pgc.tuning.postgres_cluster --install 2>&1 >/dev/null); then
  echo "setup: could not install postgresql (${why##*$'\n'}); the PostgreSQL tests will fail" >&2
fi
# compile (or load from cache) the numba kernel once
.venv/bin/python -c "from pgc.a3c.kernel import warm_up; warm_up()"
echo "setup: ok ($(.venv/bin/python -c 'import pgc, torch; print("pgc", pgc.__version__, "torch", torch.__version__)'))"
