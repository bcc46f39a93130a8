#!/bin/sh
# Regenerates results/opacus/one-run/steinke-shape/ from the repository root after scripts/setup.sh: the one-run audit
# of one real Opacus 1.6.0 training in the shape of Steinke, Nasr & Jagielski's white-box experiment — 50,000 records,
# Poisson batches of expected size 50,000/13 ≈ 3,846 (Opacus samples at 1/len(loader): batch_size 4,096 gives 13
# batches), 2,500 steps, σ = 4.25, C = 1: Opacus's PRV ε = 4.00 at δ = 1e-5 — with 1,000 and 5,000 gradient canaries,
# seed 0 (8 and 13 min on a 2-core machine, each beside other work), and the procedure's bound on ideal canaries in
# the same configuration, seeds 0–8 (52 s).
set -e
PGC=.venv/bin/pgc
OUT=results/opacus/one-run/steinke-shape
SHAPE="--setting records=50000 --setting batch_size=4096 --setting local_steps=2500 --setting noise_multiplier=4.25"
for m in 1000 5000; do
  /usr/bin/time -f "%e s wall" $PGC audit opacus-one-run examples/opacus/mlp_client.py:make --canaries $m $SHAPE \
    --seed 0 --out $OUT/steinke-shape-m$m-seed0.json --force --no-progress
done
.venv/bin/python scripts/one_run_ideal_canaries.py examples/opacus/mlp_client.py:make --canaries 1000 5000 \
  --seeds 0-8 $SHAPE
