#!/bin/sh
# Regenerates results/opacus/one-run/ from the repository root after scripts/setup.sh (about 4 min on 2 cores):
# gradient canaries in one real Opacus 1.6.0 training (examples/opacus/mlp_client.py: an MLP of 6,594 parameters,
# 10,000 records, Poisson batches of 1,000, 100 steps, σ = 1.4: Opacus's PRV ε = 3.95 at δ = 1e-5), audited in one
# run with 1,000 and 5,000 canaries, each by nine seeds (a seed draws the coins and the training's noise).
set -e
PGC=.venv/bin/pgc
OUT=results/opacus/one-run
for m in 1000 5000; do
  for seed in 0 1 2 3 4 5 6 7 8; do
    /usr/bin/time -f "%e s wall" $PGC audit opacus-one-run examples/opacus/mlp_client.py:make --canaries $m \
      --seed $seed --out $OUT/mlp-m$m-seed$seed.json --force --no-progress
  done
done
