#!/bin/sh
# Regenerates results/ldp/ from the repository root after scripts/setup.sh. One process, one core: the whole
# bench (615 cells at 1e6 per side plus 72 timed audits at 1e5 per side) took about 4 h on the 2-core machine.
set -e
PGC=.venv/bin/pgc
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
# every protocol of the reference oracles, multi-freq-ldpy and pure-ldp at ε ∈ {0.5, 1, 2, 4, 8}, k ∈ {2, 25, 100}:
# our certified ε_LB beside LDP-Auditor's method on the same releases and the exact ε (bench.json, .md, .png)
nice -n 10 $PGC bench ldp --samples 1000000 --timing-samples 100000 --out results/ldp/bench.json > results/ldp/bench.log
