#!/bin/sh
# Regenerates results/opacus/gradient-canary/ from the repository root after scripts/setup.sh (about 40 min on 2 cores):
# the white-box update audit of DP-SGD with a Dirac gradient canary (--record gradient), Opacus 1.6.0 as shipped.
# Full batch (examples/opacus/linear_client.py:make_full_batch: 50 records, every record in every step, one step,
# loss_reduction="sum"): each round is exactly a Gaussian mechanism, and the claim states its curve μ = 1/σ; σ is
# chosen so that dp-accounting's PLD ε (add/remove) at δ = 1e-5 is 1, 2 and 4. Poisson batches
# (make_poisson: 200 records, sample rate q = 0.1 and 0.01, one step) at PLD ε = 2: the threshold test's ε_LB.
set -e
PGC=.venv/bin/pgc
C=examples/opacus/linear_client.py
OUT=results/opacus/gradient-canary
for pair in "1 3.7306" "2 1.9938" "4 1.0812"; do
  set -- $pair
  $PGC audit opacus $C:make_full_batch --setting noise_multiplier=$2 --record gradient --samples 100000 --workers 2 \
    --seed 0 --out $OUT/full-batch-eps$1.json --force --no-progress
done
for pair in "0.1 0.9253" "0.01 0.5651"; do
  set -- $pair
  $PGC audit opacus $C:make_poisson --setting sample_rate=$1 --setting noise_multiplier=$2 --record gradient \
    --samples 100000 --workers 2 --seed 0 --out $OUT/poisson-q$1-eps2.json --force --no-progress
done
# PLD ε = 1 again at seeds 1 and 2 (one audit's μ_LB is one draw: its spread at 1e5 per side is about 0.007)
for seed in 1 2; do
  $PGC audit opacus $C:make_full_batch --setting noise_multiplier=3.7306 --record gradient --samples 100000 \
    --workers 2 --seed $seed --out $OUT/full-batch-eps1-seed$seed.json --force --no-progress
done
