#!/bin/sh
# Regenerates results/opacus/ from the repository root after scripts/setup.sh (about 28 min on 2 cores): the example
# client (examples/opacus/linear_client.py: logistic regression, 200 records of 100 features, batch 10, one local
# step, noise multiplier 1, C = 1, Opacus 1.6.0's PRV accountant) audited as the server sees it.
set -e
PGC=.venv/bin/pgc
# Opacus's default loss_reduction="mean", one record removed: violated through the update's scale
$PGC audit opacus examples/opacus/linear_client.py:make --samples 5000 --seed 0 --out results/opacus/mean-add-remove.json --force --no-progress
# loss_reduction="sum", the same pair: the update keeps the claim; the reported example count still leaks
$PGC audit opacus examples/opacus/linear_client.py:make_sum --samples 5000 --seed 0 --out results/opacus/sum-add-remove.json --force --no-progress
# Opacus's default, record 0 replaced by an input-space canary (the data set's size unchanged)
$PGC audit opacus examples/opacus/linear_client.py:make --relation replace-one --samples 5000 --seed 0 --out results/opacus/mean-replace-one.json --force --no-progress
# Shuffled batches (poisson_sampling=False) still accounted as Poisson by Opacus, against Poisson batches: an
# input-space canary added, loss_reduction="sum" (the mean reduction's data-set-size leak apart), one local step
$PGC audit opacus examples/opacus/linear_client.py:make --setting poisson_sampling=false --setting loss_reduction=sum --record canary --samples 5000 --seed 0 --out results/opacus/shuffled-canary-1step.json --force --no-progress
$PGC audit opacus examples/opacus/linear_client.py:make --setting poisson_sampling=true --setting loss_reduction=sum --record canary --samples 5000 --seed 0 --out results/opacus/poisson-canary-1step.json --force --no-progress
# One epoch of shuffled batches (20 local steps: the canary in exactly one batch, Chua et al.'s setting)
$PGC audit opacus examples/opacus/linear_client.py:make --setting poisson_sampling=false --setting loss_reduction=sum --setting local_steps=20 --record canary --samples 2000 --seed 0 --out results/opacus/shuffled-canary-epoch.json --force --no-progress
# Every local step seen (--per-step), two shuffled steps at sigma 0.5
$PGC audit opacus examples/opacus/linear_client.py:make --setting poisson_sampling=false --setting loss_reduction=sum --setting local_steps=2 --setting noise_multiplier=0.5 --record canary --per-step --samples 5000 --seed 0 --out results/opacus/shuffled-canary-per-step.json --force --no-progress
# The auditor's worst-case data for one pass of fixed-size batches (record 0 against 200 opposed records, 100 steps,
# sigma 0.8): shuffled batches break Opacus's Poisson-accounted epsilon in the steps (12 min); Poisson batches do not
# (6 min). The committed files were written to /tmp/oppres/ and copied here, as their command shows.
$PGC audit opacus examples/opacus/linear_client.py:make_opposed --setting batches=100 --per-step --samples 7500 --train-fraction 0.3334 --seed 0 --workers 2 --out results/opacus/opposed-shuffled.json --force --no-progress
$PGC audit opacus examples/opacus/linear_client.py:make_opposed --setting batches=100 --setting poisson_sampling=true --per-step --samples 3000 --train-fraction 0.3334 --seed 0 --workers 2 --out results/opacus/opposed-poisson.json --force --no-progress
# The adapter's speed against a plain per-release loop over the same Opacus objects
$PGC bench opacus --out results/opacus/bench.json > results/opacus/bench.txt
