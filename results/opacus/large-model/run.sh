#!/usr/bin/env bash
# The ~100,000-parameter client (examples/opacus/large_client.py: an MLP 100 → 980 → 2, 100,942 parameters, on the
# linear client's 200 records, batch 10, one local step, σ = 1, C = 1) audited on two worker processes, from the
# repository root after scripts/setup.sh:
#   bash results/opacus/large-model/run.sh > results/opacus/large-model/output.txt 2>&1
# README.md says what each part took on the 2-core, 23 GiB machine.
set -e
PGC=.venv/bin/pgc
D=results/opacus/large-model
# The goal: 2e4 releases per side within 10 min. Its address space capped at 20 GiB, so that running out of memory
# would be the command's own error line, not the kernel's OOM killer ending whatever process on the machine uses most
(ulimit -v 20971520; PGC_PROGRESS_INTERVAL_S=30 /usr/bin/time -f "%e s wall, %M KB peak resident (parent)" \
  $PGC audit opacus examples/opacus/large_client.py:make --samples 20000 --workers 2 --seed 0 \
  --out $D/audit-20000.json --force --progress)
# Where the time goes, per release and per statistic
.venv/bin/python $D/where_time_goes.py > $D/where_time_goes.txt
