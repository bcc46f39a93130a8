#!/bin/sh
# Regenerates results/ldp/one-number/ from the repository root after scripts/setup.sh (about 14 min on one core): every
# cell (all k and ε, 10⁶ releases per side) of the eight library protocols whose releases are one number at some k —
# reference GRR, HR, ADP; multi-freq-ldpy GRR, SS, ADP; pure-ldp DE, HR — then each part against the full bench run.
set -e
PGC=.venv/bin/pgc
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
OUT=results/ldp/one-number
$PGC bench ldp --libraries reference --protocols GRR HR ADP --samples 1000000 --out $OUT/reference.json
$PGC bench ldp --libraries multi-freq-ldpy --protocols GRR SS ADP --samples 1000000 --out $OUT/mfl.json
$PGC bench ldp --libraries pure-ldp --protocols DE HR --samples 1000000 --out $OUT/pure.json
for part in reference mfl pure; do
  .venv/bin/python scripts/compare_ldp_bench.py results/ldp/engine-check/bench.json $OUT/$part.json --tolerance 0.02
done > $OUT/compare.md
