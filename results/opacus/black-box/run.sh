#!/bin/sh
# Regenerates results/opacus/black-box/ from the repository root after scripts/setup.sh (about 6 min on 2 cores): the
# example client (examples/opacus/linear_client.py, logistic regression, 200 records of 100 features), 5 local steps
# at noise multiplier 2, loss_reduction="sum", an input-space canary added (add/remove).
set -e
PGC=.venv/bin/pgc
S="--setting local_steps=5 --setting noise_multiplier=2 --setting loss_reduction=sum --record canary --samples 5000 --workers 2 --seed 0 --force --no-progress"
# Full batch (batch 200 of 200: sample rate 1). Opacus derives the sample rate from the loader's length,
# 1/ceil(N/batch): the data set with the canary (201 records) is sampled at 1/2, the one without at 1: violated
$PGC audit opacus examples/opacus/linear_client.py:make --setting batch_size=200 $S --out results/opacus/black-box/full-batch-canary-added.json
# Batch 199: two batches per pass with and without the canary, the same sample rate 1/2. The same trainings seen
# white-box (the update) and black-box (only the trained model's loss on the canary: membership inference)
$PGC audit opacus examples/opacus/linear_client.py:make --setting batch_size=199 $S --out results/opacus/black-box/white-box-update.json
$PGC audit opacus examples/opacus/linear_client.py:make --setting batch_size=199 $S --black-box --out results/opacus/black-box/black-box-loss.json
